import type { Response, Router } from 'express';
import { hasLimits } from '../../auth/api-keys.js';
import { parseLimit } from '../../auth/oauth/limits.js';
import type { KeyLimits } from '../ledger/types.js';
import { type LimitInput, LimitInputError, parseLimitInput } from '../run/key-limit-input.js';
import { usd } from './html.js';
import { LIMIT_FIELDS, LIMIT_LABELS } from './keys-view.js';
import { can } from './roles.js';
import type { SignedInContext } from './route-context.js';
import { actorOf } from './team.js';

// The dashboard's keys and connected apps. A key is made for its maker, or by an owner for another member (shown
// once to whoever made it); a key is revoked by its member or by an owner. Only owners set or change a key's
// limits; a key another role makes has the limits of the key its session signed in with (docs/decisions.md
// "Teams × limits"). Apps (OAuth grants) are the owners': their daily limits and disconnecting them. Every change
// goes on the account's event log.

/** A key's limits from a form: empty fields are no limit (`none`) when changing, left out when creating. */
function limitsFrom(body: Record<string, unknown>, emptyIs: 'none' | 'absent'): Partial<KeyLimits> | string {
  const input: LimitInput = {};
  for (const f of Object.keys(LIMIT_FIELDS) as Array<keyof typeof LIMIT_FIELDS>) {
    const raw = body[LIMIT_FIELDS[f]];
    const v = typeof raw === 'string' ? raw.trim() : '';
    if (v !== '') input[f] = v;
    else if (emptyIs === 'none') input[f] = 'none';
  }
  try {
    return parseLimitInput(input, LIMIT_LABELS);
  } catch (e) {
    if (e instanceof LimitInputError) return `${e.message}.`;
    throw e;
  }
}

/** The limits a key carries, as the changes that give another key the same. */
function copyOf(k: KeyLimits): Partial<KeyLimits> {
  return {
    max_call_micros: k.max_call_micros,
    daily_limit_micros: k.daily_limit_micros,
    monthly_limit_micros: k.monthly_limit_micros,
    actions: k.actions,
  };
}

export function keyRoutes(r: Router, c: SignedInContext): void {
  const { d, team, form, signedIn, allow, forbid, viewer, session, dashboard, go } = c;

  r.post('/account/keys', form, signedIn, async (req, res) => {
    const v = viewer(res);
    const name = typeof req.body.name === 'string' ? req.body.name.trim().slice(0, 60) || null : null;
    const asked = limitsFrom(req.body as Record<string, unknown>, 'absent');
    if (typeof asked === 'string') return dashboard(req, res, 400, { error: asked });
    let limits = asked;
    if (!can(v.role, 'keys.others')) {
      // Only an owner sets limits; and a member cannot escape its key's limits by making a new key.
      if (Object.keys(asked).length > 0) return forbid(res);
      const keyId = session(res).keyId;
      const signedInWith = keyId
        ? (await d.ledger.listApiKeys(v.accountId)).find((k) => k.id === keyId)
        : undefined;
      limits = signedInWith && hasLimits(signedInWith) ? copyOf(signedInWith) : {};
    }
    const made = await team.createKey(v, String(req.body.member_id ?? '') || undefined, name, limits);
    if (made === 'forbidden') return forbid(res);
    if (made === 'no_member') return dashboard(req, res, 404, { error: 'No such member of this account.' });
    d.log.info(
      { account: v.accountId, key: made.row.id, member: made.member.id },
      'API key created on the dashboard',
    );
    const memberName = made.member.id === v.member.id ? undefined : made.member.name;
    await dashboard(req, res, 201, { newKey: { key: made.key, name, memberName } });
  });

  r.post('/account/keys/limits', form, signedIn, allow('keys.others'), async (req, res) => {
    const id = String(req.body.key_id ?? '');
    const limits = limitsFrom(req.body as Record<string, unknown>, 'none');
    if (typeof limits === 'string') return dashboard(req, res, 400, { error: limits });
    const row = await team.setKeyLimits(viewer(res), id, limits);
    if (!row) return dashboard(req, res, 404, { error: 'No such active key on this account.' });
    d.log.info({ account: row.account_id, key: id, limits }, 'API key limits changed on the dashboard');
    // From the page a refused call sent the person to (./limit-page.ts): back there.
    go(
      res,
      req.body.back === 'limit'
        ? `/account/limit?key=${encodeURIComponent(id)}&done=key_limits_changed`
        : '/account?done=key_limits_changed#keys',
    );
  });

  r.post('/account/keys/revoke', form, signedIn, async (req, res) => {
    if (!(await team.revokeKey(viewer(res), String(req.body.key_id ?? ''))))
      return dashboard(req, res, 404, { error: 'No such active key on this account.' });
    go(res, '/account?done=key_revoked#keys');
  });

  const connected = async (res: Response, clientId: string) =>
    (await d.apps.list(viewer(res).accountId)).find((a) => a.client_id === clientId);

  r.post('/account/apps/limit', form, signedIn, allow('apps'), async (req, res) => {
    const client = String(req.body.client_id ?? '');
    const app = await connected(res, client);
    if (!app) return dashboard(req, res, 404, { error: 'That app is not connected to this account.' });
    const limit = parseLimit(req.body as Record<string, unknown>);
    if (limit === 'invalid')
      return dashboard(req, res, 400, { error: 'Enter a daily limit in USD, such as 2.50 (above 0).' });
    const v = viewer(res);
    await d.apps.setLimit(v.accountId, client, limit);
    await team.audit.record({
      accountId: v.accountId,
      actor: actorOf(v),
      action: 'app.limit_changed',
      subject: { id: client, name: app.client_name ?? client },
      detail: { limit: limit === undefined ? null : usd(limit), limit_micros: limit ?? null },
    });
    go(
      res,
      req.body.back === 'limit'
        ? `/account/limit?app=${encodeURIComponent(client)}&done=limit_changed`
        : '/account?done=limit_changed#apps',
    );
  });

  r.post('/account/apps/revoke', form, signedIn, allow('apps'), async (req, res) => {
    const client = String(req.body.client_id ?? '');
    const v = viewer(res);
    const app = await connected(res, client);
    if (!app || (await d.apps.revoke(v.accountId, client)) === 0) {
      return dashboard(req, res, 404, { error: 'That app is not connected to this account.' });
    }
    await team.audit.record({
      accountId: v.accountId,
      actor: actorOf(v),
      action: 'app.disconnected',
      subject: { id: client, name: app.client_name ?? client },
    });
    go(res, '/account?done=app_revoked#apps');
  });
}
