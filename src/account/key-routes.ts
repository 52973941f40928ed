import type { Response, Router } from 'express';
import { parseLimit } from '../../auth/oauth/limits.js';
import { usd } from './html.js';
import type { SignedInContext } from './route-context.js';
import { actorOf } from './team.js';

// The dashboard's keys and connected apps. A key is made for its maker, or by an owner for another member (shown
// once to whoever made it); a key is revoked by its member or by an owner. Apps (OAuth grants) are the owners':
// their daily limits and disconnecting them. Every change goes on the account's event log.

export function keyRoutes(r: Router, c: SignedInContext): void {
  const { d, team, form, signedIn, allow, forbid, viewer, dashboard, go } = c;

  r.post('/account/keys', form, signedIn, async (req, res) => {
    const v = viewer(res);
    const name = typeof req.body.name === 'string' ? req.body.name.trim().slice(0, 60) || null : null;
    const made = await team.createKey(v, String(req.body.member_id ?? '') || undefined, name);
    if (made === 'forbidden') return forbid(res);
    if (made === 'no_member') return dashboard(req, res, 404, { error: 'No such member of this account.' });
    d.log.info(
      { account: v.accountId, key: made.row.id, member: made.member.id },
      'API key created on the dashboard',
    );
    const memberName = made.member.id === v.member.id ? undefined : made.member.name;
    await dashboard(req, res, 201, { newKey: { key: made.key, name, memberName } });
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
    go(res, '/account?done=limit_changed#apps');
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
