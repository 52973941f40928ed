import type { Request, Response, Router } from 'express';
import { LIMIT_CHOICES, limitChoice } from '../../auth/oauth/limits.js';
import type { KeyUsage } from '../ledger/types.js';
import { escapeHtml, notice, postForm, usd } from './html.js';
import { limitInputs } from './keys-view.js';
import { can } from './roles.js';
import type { SignedInContext } from './route-context.js';

// The page a call refused by its caller's own limit sends a person to (src/run/fixes.ts `raise_limit`): an API
// key's maximum per call, daily or monthly limit (`/account/limit?key=<key id>`), or an OAuth app's daily limit
// (`?app=<client id>`). An agent host opens it from inside the call (URL elicitation, src/mcp/top-up.ts), and the
// refusal names it in words. An owner raises the limit here, with the dashboard's own forms; anyone else is told
// that only an owner can, and who the owners are (docs/decisions.md "Teams × limits"). Signed out, sign-in brings
// the person straight back (./next.ts). It acts only on the account signed in.

const FLASH: Record<string, string> = {
  key_limits_changed: 'The key’s limits were changed. Go back to your agent: its next call runs with them.',
  limit_changed: 'The app’s daily limit was changed. Go back to your agent: its next call runs with it.',
};

const AFTER =
  '<p class="hint">Then go back to your agent: the call it is waiting on runs once its limit allows it. Nothing was charged for it.</p>';

function keyFacts(k: KeyUsage): string {
  const of = (spent: number, limit: number | null, when: string) =>
    limit === null ? `${usd(spent)} ${when}` : `${usd(spent)} of ${usd(limit)} ${when}`;
  const facts = [
    `<span class="today" data-micros="${k.spent_today_micros}">${of(k.spent_today_micros, k.daily_limit_micros, 'today')}</span>`,
    `<span class="month" data-micros="${k.spent_month_micros}">${of(k.spent_month_micros, k.monthly_limit_micros, 'this month')}</span> (UTC)`,
    k.max_call_micros === null ? 'no maximum per call' : `at most ${usd(k.max_call_micros)} per call`,
    k.actions === null ? 'every action' : `only ${escapeHtml(k.actions.join(', '))}`,
  ];
  return `<p>Key <code>${escapeHtml(k.prefix)}</code>${k.name ? ` “${escapeHtml(k.name)}”` : ''}: ${facts.join('; ')}.</p>`;
}

export function limitPage(r: Router, c: SignedInContext): void {
  const { d, team } = c;

  async function owners(accountId: string): Promise<string> {
    const names = (await team.store.members(accountId))
      .filter((m) => m.role === 'owner' && m.removed_at === null)
      .map((m) => escapeHtml(m.name));
    return names.length === 0 ? 'an owner of the account' : `an owner of the account (${names.join(', ')})`;
  }

  r.get('/account/limit', c.signedIn, async (req: Request, res: Response) => {
    const v = c.viewer(res);
    const s = c.session(res);
    const csrf = c.csrf(s);
    const page = (status: number, title: string, body: string) =>
      c.send(res, status, {
        title,
        narrow: true,
        account: { id: s.accountId, signOut: { action: '/account/signout', csrf } },
        body: `${body}\n<p><a href="/account">Your dashboard</a></p>`,
      });
    /** Not an owner: who can raise it, and where (`facts`: what the viewer may see of it). */
    const askOwner = async (facts: string, what: string, where: string) =>
      page(
        200,
        'An owner must raise this limit',
        `<h1>An owner must raise this limit</h1>
<section>${facts}<p id="ask-owner">Only an owner of the account changes ${what}: ask ${await owners(v.accountId)} to raise it (dashboard, ${where}). Then retry the call; nothing was charged for it.</p></section>`,
      );
    const flash = notice(typeof req.query.done === 'string' ? FLASH[req.query.done] : undefined);
    const keyId = typeof req.query.key === 'string' ? req.query.key : undefined;
    const appId = typeof req.query.app === 'string' ? req.query.app : undefined;

    if (keyId !== undefined) {
      const visible = new Set((await team.visibleKeys(v)).map((k) => k.id));
      const key = (await d.ledger.keyUsage(v.accountId)).find((k) => k.id === keyId && k.revoked_at === null);
      if (!key) {
        return page(
          404,
          'No such key',
          `<h1>No such key</h1><p>This account (<code>${escapeHtml(v.accountId)}</code>) has no active key <code>${escapeHtml(keyId)}</code>. Sign in to the account of the agent’s key.</p>`,
        );
      }
      if (!can(v.role, 'keys.others')) {
        // Another member's key: only that it exists and who can raise it, not what it spends.
        return askOwner(visible.has(key.id) ? keyFacts(key) : '', 'a key’s limits', 'API keys');
      }
      const form = postForm(
        '/account/keys/limits',
        csrf,
        `<input type="hidden" name="key_id" value="${escapeHtml(key.id)}"><input type="hidden" name="back" value="limit">${limitInputs('raise', key)}<div><button type="submit">Save the limits</button></div>`,
        ' class="row"',
      );
      return page(
        200,
        'Raise the limit',
        `<h1>Raise this key’s limit to continue</h1>
${flash}<section>${keyFacts(key)}${AFTER}</section>
<section aria-labelledby="limits-h"><h2 id="limits-h">Its limits</h2>${form}<p class="hint">USD amounts, such as 2.50; empty for no limit.</p></section>`,
      );
    }

    if (appId !== undefined) {
      if (!can(v.role, 'apps')) {
        return askOwner('', 'a connected app’s daily limit', 'Connected apps');
      }
      const app = (await d.apps.list(v.accountId)).find((a) => a.client_id === appId);
      if (!app) {
        return page(
          404,
          'No such app',
          `<h1>No such app</h1><p>No app <code>${escapeHtml(appId)}</code> is connected to this account (<code>${escapeHtml(v.accountId)}</code>).</p>`,
        );
      }
      const spent = await d.ledger.capSpend(v.accountId, `oauth:${app.client_id}`, 'day');
      const current =
        app.daily_limit_micros === null ? 'no daily limit' : `${usd(app.daily_limit_micros)} per day`;
      const chosen = limitChoice(app.daily_limit_micros ?? undefined);
      const options = LIMIT_CHOICES.map(
        (o) =>
          `<option value="${o.value}"${o.value === chosen ? ' selected' : ''}>${escapeHtml(o.label)}</option>`,
      ).join('');
      const form = postForm(
        '/account/apps/limit',
        csrf,
        `<input type="hidden" name="client_id" value="${escapeHtml(app.client_id)}"><input type="hidden" name="back" value="limit">
<div><label for="raise-limit">Daily limit</label><select id="raise-limit" name="daily_limit"><option value="custom"${chosen === 'custom' ? ' selected' : ''}>Another amount…</option>${options}</select></div>
<div><label for="raise-custom">Amount (USD)</label><input type="text" id="raise-custom" name="custom_limit_usd" inputmode="decimal" size="6"></div>
<div><button type="submit">Save the limit</button></div>`,
        ' class="row"',
      );
      return page(
        200,
        'Raise the limit',
        `<h1>Raise this app’s daily limit to continue</h1>
${flash}<section><p>App <strong>${escapeHtml(app.client_name ?? app.client_id)}</strong>: <span class="today" data-micros="${spent}">${usd(spent)}</span> spent or held today (UTC), ${current}.</p>${AFTER}</section>
<section aria-labelledby="limits-h"><h2 id="limits-h">Its daily limit</h2>${form}</section>`,
      );
    }
    c.go(res, '/account#keys');
  });
}
