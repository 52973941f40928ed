import { type AuditEvent, describeAuditEvent } from './audit.js';
import { escapeHtml, isoMinute, postForm, secretBox, usd } from './html.js';
import { can, ROLE_LABELS, ROLES, type Role } from './roles.js';
import type { Viewer } from './team.js';
import type { SpendView } from './team-spend.js';
import { founderId, type InviteRow, type MemberRow } from './team-store.js';

// The dashboard's team sections (members and invitations, spend per member and per key, the event log), shown to
// owners (who manage them) and billing (who reads them). Tables are `cards` like the others, so they read as short
// cards on a phone (docs/decisions.md "Pages on a phone").

export interface TeamView {
  csrf: string;
  viewer: Viewer;
  members: MemberRow[];
  invites: InviteRow[];
  spend: SpendView;
  events: AuditEvent[];
  /** An invitation just made: its link, shown this once. */
  newInvite?: { link: string; role: Role; name: string | null; expiresAt: number } | undefined;
}

const roleOptions = (current: Role) =>
  ROLES.map((r) => `<option value="${r}"${r === current ? ' selected' : ''}>${ROLE_LABELS[r]}</option>`).join(
    '',
  );

const money = (micros: number) => `<td class="num price" data-micros="${micros}">${usd(micros)}</td>`;

function membersSection(v: TeamView): string {
  const manage = can(v.viewer.role, 'team.manage');
  const names = new Map(v.members.map((m) => [m.id, m.name]));
  const active = v.members.filter((m) => m.removed_at === null);
  const rows = active
    .map((m, i) => {
      const you = m.id === v.viewer.member.id ? ' <span class="hint">(you)</span>' : '';
      const by =
        m.id === founderId(m.account_id)
          ? 'first owner'
          : `invited by ${m.invited_by ? escapeHtml(names.get(m.invited_by) ?? m.invited_by) : 'the operator'}`;
      const name = escapeHtml(m.name);
      const actions = manage
        ? `<td class="wide">${postForm(
            '/account/team/role',
            v.csrf,
            `<input type="hidden" name="member_id" value="${escapeHtml(m.id)}"><div><label for="role-${i}">Role</label><select id="role-${i}" name="role">${roleOptions(m.role)}</select></div><div><button type="submit" class="secondary" aria-label="Change the role of ${name}">Change</button></div>`,
            ' class="row"',
          )}</td><td class="wide">${postForm(
            '/account/team/remove',
            v.csrf,
            `<input type="hidden" name="member_id" value="${escapeHtml(m.id)}"><button type="submit" class="danger" aria-label="Remove ${name}">Remove</button>`,
          )}</td>`
        : '';
      return `<tr data-member="${escapeHtml(m.id)}"><td class="lead">${name}${you}</td><td class="meta" data-role="${m.role}">${ROLE_LABELS[m.role]}</td><td class="meta">since ${isoMinute(m.created_at)}</td><td class="meta">${by}</td>${actions}</tr>`;
    })
    .join('');
  const head = manage ? '<th scope="col">Change role</th><th scope="col">Remove</th>' : '';
  return `<div class="scroll"><table id="members-table" class="cards"><caption>Everyone who can sign in to this account; they spend from its one balance</caption>
<thead><tr><th scope="col">Member</th><th scope="col">Role</th><th scope="col">Joined (UTC)</th><th scope="col">Invited by</th>${head}</tr></thead>
<tbody>${rows}</tbody></table></div>`;
}

function invitesPart(v: TeamView): string {
  if (!can(v.viewer.role, 'team.manage')) return '';
  const names = new Map(v.members.map((m) => [m.id, m.name]));
  const shown = v.newInvite
    ? `<div class="notice" role="status"><p><strong>An invitation for ${escapeHtml(v.newInvite.name ?? 'a new member')} as ${ROLE_LABELS[v.newInvite.role]}.</strong> Send this link to them; it is shown only this once, works once, and expires ${isoMinute(v.newInvite.expiresAt)} UTC.</p>
${secretBox('invite-link', v.newInvite.link, 'Copy the invitation link')}</div>`
    : '';
  const rows = v.invites
    .map((inv) => {
      const who = escapeHtml(inv.name ?? '(no name given)');
      const withdraw = postForm(
        '/account/team/invites/revoke',
        v.csrf,
        `<input type="hidden" name="invite_id" value="${escapeHtml(inv.id)}"><button type="submit" class="danger" aria-label="Withdraw the invitation of ${who}">Withdraw</button>`,
      );
      const by = inv.created_by ? escapeHtml(names.get(inv.created_by) ?? inv.created_by) : 'the operator';
      return `<tr><td class="lead">${who}</td><td class="meta">${ROLE_LABELS[inv.role]}</td><td class="meta">by ${by}</td><td class="meta">expires ${isoMinute(inv.expires_at)}</td><td class="wide">${withdraw}</td></tr>`;
    })
    .join('');
  const pending = rows
    ? `<div class="scroll"><table id="invites-table" class="cards"><caption>Invitations not yet accepted</caption>
<thead><tr><th scope="col">For</th><th scope="col">Role</th><th scope="col">Made by</th><th scope="col">Expires (UTC)</th><th scope="col"><span class="hint">Action</span></th></tr></thead>
<tbody>${rows}</tbody></table></div>`
    : '';
  return `<h3>Invite someone</h3>
${shown}
${postForm(
  '/account/team/invite',
  v.csrf,
  `<div><label for="invite-name">Their name</label><input type="text" id="invite-name" name="name" maxlength="60" autocomplete="off"></div>
<div><label for="invite-role">Role</label><select id="invite-role" name="role">${roleOptions('member')}</select></div>
<div><button type="submit">Make an invitation link</button></div>`,
  ' class="row"',
)}
<p class="hint">Owner: everything, members and roles. Billing: card, top-ups, history and CSV, its own keys. Member: its own keys and usage.</p>
${pending}`;
}

export function teamSection(v: TeamView): string {
  return `<section aria-labelledby="team-h" id="team">
<h2 id="team-h">Team</h2>
${membersSection(v)}
${invitesPart(v)}
</section>`;
}

export function spendSection(v: TeamView): string {
  const s = v.spend;
  const qs = new URLSearchParams({ from: s.from, to: s.to }).toString();
  const members = s.members
    .map(
      (m) =>
        `<tr data-member="${escapeHtml(m.member.id)}"><td class="lead">${escapeHtml(m.member.name)}${m.member.removed_at === null ? '' : ' <span class="hint">(removed)</span>'}</td><td class="meta">${ROLE_LABELS[m.member.role]}</td><td class="meta">${m.calls} call(s)</td>${money(m.micros)}</tr>`,
    )
    .join('');
  const keys = s.keys
    .map(
      (k) =>
        `<tr data-key="${escapeHtml(k.key.id)}"><td class="lead"><code>${escapeHtml(k.key.prefix)}</code> ${escapeHtml(k.key.name ?? '')}</td><td class="meta">${escapeHtml(k.member?.name ?? '')}</td><td class="meta">${k.key.revoked_at === null ? `${k.calls} call(s)` : `revoked · ${k.calls} call(s)`}</td>${money(k.micros)}</tr>`,
    )
    .join('');
  const others = s.others
    .map(
      (o) =>
        `<tr><td class="lead"><code>${escapeHtml(o.principal)}</code></td><td class="meta">app or other credential</td><td class="meta">${o.calls} call(s)</td>${money(o.micros)}</tr>`,
    )
    .join('');
  return `<section aria-labelledby="spend-h" id="spend">
<h2 id="spend-h">Spend per member and per key</h2>
<p>${s.from} to ${s.to} (UTC; the transaction filter's dates when set): <strong id="spend-total" data-micros="${s.totalMicros}">${usd(s.totalMicros)}</strong> in calls that succeeded, net of refunds.</p>
<p><a class="button secondary" href="/account/team/spend.csv?${qs}" download>Download spend CSV</a></p>
<h3>Per member</h3>
<div class="scroll"><table id="spend-members" class="cards"><caption>Each member's keys together</caption>
<thead><tr><th scope="col">Member</th><th scope="col">Role</th><th scope="col">Calls</th><th scope="col" class="num">Spent</th></tr></thead>
<tbody>${members || '<tr><td colspan="4">No members.</td></tr>'}</tbody></table></div>
<h3>Per key</h3>
<div class="scroll"><table id="spend-keys" class="cards"><caption>Keys with spend in the period, or still active; apps by their client</caption>
<thead><tr><th scope="col">Key</th><th scope="col">Member</th><th scope="col">Calls</th><th scope="col" class="num">Spent</th></tr></thead>
<tbody>${keys + others || '<tr><td colspan="4">No keys.</td></tr>'}</tbody></table></div>
</section>`;
}

export function eventsSection(v: TeamView): string {
  const rows = v.events
    .map(
      (e) =>
        `<tr data-action="${escapeHtml(e.action)}"><td class="meta">${isoMinute(e.created_at)}</td><td class="lead">${escapeHtml(describeAuditEvent(e))}</td></tr>`,
    )
    .join('');
  return `<section aria-labelledby="events-h" id="events">
<h2 id="events-h">Who did what</h2>
<div class="scroll"><table id="events-table" class="cards"><caption>The account's event log, newest first (invitations, members, roles, keys, limits, apps)</caption>
<thead><tr><th scope="col">When (UTC)</th><th scope="col">What</th></tr></thead>
<tbody>${rows || '<tr><td colspan="2">Nothing yet.</td></tr>'}</tbody></table></div>
</section>`;
}
