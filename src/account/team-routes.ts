import type { Request, Response, Router } from 'express';
import { parseFilters } from './dashboard.js';
import type { DashboardScope } from './dashboard-view.js';
import { sendCsv } from './html.js';
import { messagePage } from './pages.js';
import { can, isRole } from './roles.js';
import type { SignedInContext } from './route-context.js';
import type { AccountSessions } from './sessions.js';
import { actorOf, type MemberKey, NAME_MAX, type Viewer } from './team.js';
import { INVITE_GONE, joinedPage, joinPage } from './team-pages.js';
import { spendCsv, spendRange, teamSpend } from './team-spend.js';
import type { MemberRow } from './team-store.js';
import type { TeamView } from './team-view.js';

type Known = { keys: MemberKey[]; members: MemberRow[] };

// The team routes: invitation links (made and withdrawn by owners, accepted by the invitee in its own browser),
// removing members and changing roles (owners), spend per member and per key as CSV (owners and billing). Every
// POST needs its CSRF token; accepting is rate limited per client IP like sign-ins. The dashboard's own routes
// (keys, apps, payments) check roles where they are (routes.ts, payment-routes.ts).

export interface TeamRouteContext extends SignedInContext {
  sessions: AccountSessions;
  refused: (res: Response) => void;
  /** Counts an attempt from this client; true when it was refused (429 sent). */
  limited: (req: Request, res: Response) => boolean;
}

/** What of the account this viewer sees: its keys (an owner: all), and (a member) its own calls only. */
export function scopeOf(v: Viewer, known: Known): DashboardScope {
  const keys = can(v.role, 'keys.others')
    ? known.keys
    : known.keys.filter((k) => k.member_id === v.member.id);
  return {
    role: v.role,
    memberId: v.member.id,
    memberName: v.member.name,
    keys,
    members: known.members.map((m) => ({ id: m.id, name: m.name, active: m.removed_at === null })),
    principals: can(v.role, 'history.account') ? undefined : keys.map((k) => k.id),
  };
}

const text = (v: unknown, max = NAME_MAX) => (typeof v === 'string' ? v.trim().slice(0, max) : '');

/** What the team sections show this viewer (owners and billing). */
export async function teamViewOf(
  c: Pick<TeamRouteContext, 'd' | 'team'>,
  v: Viewer,
  csrf: string,
  query: Record<string, unknown>,
  newInvite?: TeamView['newInvite'],
  known?: Known,
): Promise<TeamView> {
  const now = c.d.clock.now();
  const { filters } = parseFilters(query);
  const [members, invites, spend, events] = await Promise.all([
    known?.members ?? c.team.store.members(v.accountId),
    can(v.role, 'team.manage') ? c.team.store.openInvites(v.accountId, now) : [],
    teamSpend(c.d.ledger, c.team, v.accountId, spendRange(filters, now), known),
    c.team.audit.list(v.accountId, 100),
  ]);
  return { csrf, viewer: v, members, invites, spend, events, newInvite };
}

export function teamRoutes(r: Router, c: TeamRouteContext): void {
  const { d, team, sessions, form, signedIn, allow, viewer, dashboard, send, go, refused } = c;
  const gone = (res: Response) => send(res, 410, messagePage('Invitation not valid', INVITE_GONE));

  async function joinForm(req: Request, res: Response, token: string, status = 200, error?: string) {
    const found = await team.invitation(token);
    if (!found) return gone(res);
    const { invite } = found;
    send(
      res,
      status,
      joinPage({
        csrf: sessions.preCsrf(req, res),
        token,
        accountName: found.accountName,
        invitedBy: found.invitedBy,
        role: invite.role,
        name: invite.name,
        expiresAt: invite.expires_at,
        error,
      }),
    );
  }

  // The link itself: a GET only shows what it invites to (link previews and scanners fetch GETs).
  r.get('/account/join', (req, res) => joinForm(req, res, text(req.query.token, 100)));

  r.post('/account/join', form, async (req, res) => {
    if (!sessions.verify(req, undefined)) return refused(res);
    if (c.limited(req, res)) return;
    const token = text(req.body.token, 100);
    const name = text(req.body.name);
    if (!name) return joinForm(req, res, token, 400, 'Enter your name.');
    const joined = await team.accept(token, name);
    if (!joined) return gone(res);
    // Signed in as the new member: not tied to its key, so revoking that key later does not sign it out.
    await sessions.start(res, joined.member.account_id, null, joined.member.id);
    send(
      res,
      201,
      joinedPage({
        key: joined.key,
        accountName: joined.accountName,
        role: joined.member.role,
        name: joined.member.name,
      }),
    );
  });

  r.post('/account/team/invite', form, signedIn, allow('team.manage'), async (req, res) => {
    const v = viewer(res);
    const role = req.body.role;
    if (!isRole(role)) return dashboard(req, res, 400, { error: 'Choose a role: owner, billing or member.' });
    const name = text(req.body.name) || null;
    const { token, invite } = await team.invite(v.accountId, actorOf(v), role, name);
    d.log.info({ account: v.accountId, invite: invite.id, role }, 'invitation made on the dashboard');
    const link = `${d.publicUrl()}/account/join?token=${token}`;
    await dashboard(req, res, 201, { newInvite: { link, role, name, expiresAt: invite.expires_at } });
  });

  r.post('/account/team/invites/revoke', form, signedIn, allow('team.manage'), async (req, res) => {
    if (!(await team.revokeInvite(viewer(res), String(req.body.invite_id ?? '')))) {
      return dashboard(req, res, 404, { error: 'No such open invitation on this account.' });
    }
    go(res, '/account?done=invite_revoked#team');
  });

  /** A removal or role change the team refused: nothing changed. */
  const refusedChange = (req: Request, res: Response, kind: 'not_found' | 'last_owner') =>
    kind === 'not_found'
      ? dashboard(req, res, 404, { error: 'No such member of this account.' })
      : dashboard(req, res, 409, {
          error: 'That is the last owner of the account: make another member an owner first.',
        });

  r.post('/account/team/remove', form, signedIn, allow('team.manage'), async (req, res) => {
    const v = viewer(res);
    const id = String(req.body.member_id ?? '');
    const r = await team.remove(v, id);
    if (r.kind === 'not_found' || r.kind === 'last_owner') return refusedChange(req, res, r.kind);
    if (id === v.member.id) return go(res, '/account/signin?done=member_removed');
    go(res, '/account?done=removed#team');
  });

  r.post('/account/team/role', form, signedIn, allow('team.manage'), async (req, res) => {
    const role = req.body.role;
    if (!isRole(role)) return dashboard(req, res, 400, { error: 'Choose a role: owner, billing or member.' });
    const r = await team.setRole(viewer(res), String(req.body.member_id ?? ''), role);
    if (r.kind === 'not_found' || r.kind === 'last_owner') return refusedChange(req, res, r.kind);
    go(res, `/account?done=${r.kind === 'changed' ? 'role_changed' : 'role_same'}#team`);
  });

  r.get('/account/team/spend.csv', signedIn, allow('team.view'), async (req, res) => {
    const v = viewer(res);
    const { filters } = parseFilters(req.query as Record<string, unknown>);
    const view = await teamSpend(d.ledger, team, v.accountId, spendRange(filters, d.clock.now()));
    sendCsv(res, `tollgate-${v.accountId}-spend-${view.from}-${view.to}.csv`, spendCsv(view));
  });
}
