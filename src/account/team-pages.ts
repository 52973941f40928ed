import { alert, escapeHtml, type Frame, isoMinute, postForm, secretBox } from './html.js';
import { ROLE_LABELS, type Role } from './roles.js';

// The pages of an invitation link: what it invites to (a GET changes nothing, so a link preview cannot use it up),
// and, once accepted, the new member's first API key, shown once: it is how the member signs in on its own.

export interface JoinView {
  csrf: string;
  token: string;
  accountName: string;
  invitedBy: string;
  role: Role;
  name: string | null;
  expiresAt: number;
  error?: string | undefined;
}

export function joinPage(v: JoinView): Frame {
  return {
    title: 'Join a team account',
    narrow: true,
    body: `<h1>Join ${escapeHtml(v.accountName)}</h1>
${alert(v.error)}
<section>
<p>${escapeHtml(v.invitedBy)} invites you to this tollgate account as <strong>${ROLE_LABELS[v.role]}</strong>. Its calls are
paid from the account's one balance; you get an API key of your own, which also signs you in to the dashboard.</p>
<p class="hint">The link works once and expires ${isoMinute(v.expiresAt)} UTC.</p>
${postForm(
  '/account/join',
  v.csrf,
  `<input type="hidden" name="token" value="${escapeHtml(v.token)}">
<label for="member-name">Your name <span class="hint">(the account's owners see it)</span></label>
<input class="wide" id="member-name" name="name" type="text" maxlength="60" required autocomplete="name" value="${escapeHtml(v.name ?? '')}">
<p><button type="submit">Join the account</button></p>`,
)}
</section>`,
  };
}

export function joinedPage(v: { key: string; accountName: string; role: Role; name: string }): Frame {
  return {
    title: 'You joined the account',
    narrow: true,
    body: `<h1>Welcome, ${escapeHtml(v.name)}</h1>
<section>
<p>You are a member of <strong>${escapeHtml(v.accountName)}</strong> as ${ROLE_LABELS[v.role]}. This is your own API key.
<strong>It is shown only this once</strong>: store it now. Sign in to the dashboard with it next time.</p>
<label for="api-key">API key</label>
${secretBox('api-key', v.key, 'Copy the API key')}
<p class="hint">Use it as <code>Authorization: Bearer &lt;key&gt;</code>. You can make more keys of your own on the dashboard.</p>
<p><a class="button" href="/account">I stored it: go to the dashboard</a></p>
</section>`,
  };
}

export const INVITE_GONE =
  'This invitation link is not valid: it was already used, withdrawn, or it expired. Ask for a new one.';
