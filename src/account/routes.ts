import { randomBytes } from 'node:crypto';
import express, { type NextFunction, type Request, type Response, Router } from 'express';
import type { Logger } from 'pino';
import { createApiKey, hasLimits, verifyApiKey } from '../../auth/api-keys.js';
import type { OtherSignIn } from '../../auth/oauth/context.js';
import { OTHER_FLOW_PREFIX } from '../../auth/oauth/federated.js';
import { AttemptLimiter, clientIp } from '../../auth/oauth/guard.js';
import type { OAuthStore } from '../../auth/oauth/store.js';
import type { Alerts } from '../alerts/index.js';
import type { StateDb } from '../backend.js';
import type { Billing } from '../billing/index.js';
import type { ApiKeyRow, LedgerRecords } from '../ledger/types.js';
import type { Clock } from '../lib/clock.js';
import { availability, type UnavailableListing } from '../run/availability.js';
import type { RunDeps } from '../run/execute.js';
import { priceList } from '../run/price-list.js';
import { alertRoutes } from './alert-routes.js';
import { type Apps, dashboardData } from './dashboard.js';
import { dashboardBody } from './dashboard-view.js';
import { fixPages } from './fix-pages.js';
import { type Frame, sendHtml } from './html.js';
import { keyRoutes } from './key-routes.js';
import { limitPage } from './limit-page.js';
import { rememberNext, safeNext, signInPath, takeNext } from './next.js';
import { keyOncePage, landingPage, messagePage, signInPage, signUpPage } from './pages.js';
import { paymentRoutes } from './payment-routes.js';
import { can, type Permission, ROLE_LABELS } from './roles.js';
import type { DashboardExtra } from './route-context.js';
import { openAccountSessions, type Session } from './sessions.js';
import { forgetUpstreamSignIns, Team, type Viewer } from './team.js';
import { scopeOf, teamRoutes, teamViewOf } from './team-routes.js';

// The people-facing door: / (what this gateway is), sign-up and sign-in (API key, or the upstream OpenID Connect
// provider), and /account, the dashboard (balance and credit line, usage chart, transactions with filters and
// CSV, API keys, connected apps, card, top-ups, and the team: members, invitations, spend per member and key, the
// event log). Every POST needs its CSRF token; sign-ins and sign-ups are rate limited per client IP. Every signed-in
// route knows the member behind the session, read afresh on each request, and its role decides what it may do
// (./roles.ts). Money moves only through billing and the lifecycle, never here.

export interface AccountPagesDeps {
  /** Where dashboard sessions live (SQLite, or the PostgreSQL every replica shares). */
  state: StateDb;
  ledger: LedgerRecords;
  billing: Billing | undefined;
  /** The alerts page (/account/alerts); none: it answers 404. */
  alerts?: Alerts | undefined;
  apps: Apps;
  upstream: { name: string; start(res: Response, flow: string): Promise<boolean> } | undefined;
  signup: 'open' | 'closed';
  signupsPerHour: number;
  signInAttemptsPerMinute: number;
  welcomeLineMicros: number;
  x402: boolean;
  publicUrl: () => string;
  clock: Clock;
  log: Logger;
  version: string;
  /** The landing page's price list: what GET /api/run lists, by the same rule (src/run/price-list.ts). */
  prices?: { services: RunDeps['services']; mode: UnavailableListing };
  /** The OAuth store: when an account's first owner is removed, its upstream identity and keyless grants go. */
  oauthStore?: Pick<OAuthStore, 'unlinkIdentities' | 'grantsOf' | 'grantKey' | 'dropGrant'> | undefined;
}

const FLASH: Record<string, string> = {
  key_revoked: 'The key was revoked: it stops working at once.',
  limit_changed: 'The daily limit was changed.',
  key_limits_changed: 'The key’s limits were changed: they apply within seconds.',
  app_revoked: 'The app was disconnected: its tokens stop working at once.',
  settle_settled: 'Your card was charged for what you drew; the credit line is restored.',
  settle_declined: 'Your card was declined: see the reason above.',
  settle_nothing_due: 'Nothing to pay now: less than $0.50 is drawn.',
  settle_pending: 'The charge is in progress.',
  settle_unknown: 'The payment processor did not answer; the charge is retried shortly.',
  cancelled: 'Checkout was cancelled; nothing was charged.',
  session_ended:
    'Your session ended: the key it signed in with was revoked, or given limits while its member is an owner. Sign in again.',
  signed_out: 'You are signed out.',
  member_removed:
    'You are no longer a member of that account: your session ended and your keys were revoked.',
  removed: 'The member was removed: its keys and its sessions stopped at once.',
  invite_revoked: 'The invitation was withdrawn: its link no longer works.',
  role_changed: 'The role was changed.',
  role_same: 'The role was already that one.',
};

export async function accountPages(
  d: AccountPagesDeps,
): Promise<{ router: Router; otherSignIn: OtherSignIn; errorPage: ErrorPage }> {
  const secure = () => d.publicUrl().startsWith('https:');
  const base = () => new URL(d.publicUrl()).pathname.replace(/\/+$/, '');
  const sessions = await openAccountSessions(d.state, { secure, basePath: base }, () => d.clock.now());
  const team = new Team({
    state: d.state,
    ledger: d.ledger,
    clock: d.clock,
    log: d.log,
    forgetFounder: d.oauthStore && forgetUpstreamSignIns(d.oauthStore),
  });
  const signIns = new AttemptLimiter(d.signInAttemptsPerMinute, () => d.clock.now());
  const signUps = sessions.windowLimiter(d.signupsPerHour, 3_600_000);
  const form = express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 20 });
  const r = Router();

  const send = (res: Response, status: number, f: Frame) => sendHtml(res, status, f, base());
  const say: ErrorPage = (res, status, heading, message) => send(res, status, messagePage(heading, message));
  const go = (res: Response, path: string) => res.redirect(303, `${base()}${path}`);
  const cookiePolicy = () => ({ secure: secure(), basePath: base() });
  const ip = (req: Request) => clientIp(req, secure());

  function limited(res: Response, wait: number | undefined, what: string): boolean {
    if (wait === undefined) return false;
    res.setHeader('Retry-After', String(wait));
    say(res, 429, 'Too many attempts', `Too many ${what} from your network. Wait ${wait} seconds.`);
    return true;
  }

  function refused(res: Response): void {
    say(
      res,
      403,
      'Request refused',
      'The form was missing its security token. Reload the page and try again.',
    );
  }

  const signIn = (req: Request, res: Response, status = 200, error?: string, flash?: string) =>
    send(
      res,
      status,
      signInPage({
        csrf: sessions.preCsrf(req, res),
        upstreamName: d.upstream?.name,
        signupOpen: d.signup === 'open',
        error,
        flash,
        // The page to return to after signing in (./next.ts), from the link or the form that failed.
        next: safeNext(req.method === 'GET' ? req.query.next : req.body?.next),
      }),
    );

  /**
   * The browser's live session and the member behind it. It ends here when the key it signed in with was revoked
   * since, or its member was removed from the account (read from the shared database: on every replica at once).
   */
  async function sessionOf(
    req: Request,
    res: Response,
  ): Promise<{ s: Session; v: Viewer } | 'ended' | 'removed' | undefined> {
    const s = await sessions.find(req);
    if (!s) return undefined;
    let ended: 'ended' | 'removed' | undefined;
    let key: ApiKeyRow | undefined;
    if (s.keyId !== null) {
      key = (await d.ledger.listApiKeys(s.accountId)).find((k) => k.id === s.keyId);
      if (!key || key.revoked_at !== null) ended = 'ended';
    }
    const v = ended ? undefined : await team.viewerOf(s);
    // An owner's key given limits since (or a limited key's member made an owner): it could lift them here.
    if (v && key && hasLimits(key) && can(v.role, 'keys.others')) ended = 'ended';
    if (!v || ended) {
      await sessions.drop(s);
      await sessions.end(req, res);
      return ended ?? 'removed';
    }
    return { s, v };
  }

  /** Signed-in routes: a session (else to sign-in) and, for POSTs, its CSRF token. */
  const signedIn = async (req: Request, res: Response, next: NextFunction) => {
    const found = await sessionOf(req, res);
    if (found === undefined || typeof found === 'string') {
      if (req.method !== 'GET') return refused(res);
      if (found === 'ended') return go(res, '/account/signin?done=session_ended');
      if (found === 'removed') return go(res, '/account/signin?done=member_removed');
      return go(res, signInPath(req.originalUrl));
    }
    if (req.method === 'POST' && !sessions.verify(req, found.s)) return refused(res);
    res.locals.session = found.s;
    res.locals.viewer = found.v;
    next();
  };
  const session = (res: Response) => res.locals.session as Session;
  const viewer = (res: Response) => res.locals.viewer as Viewer;

  /** What a role may not do is refused, and nothing changes. */
  const forbid = (res: Response) =>
    say(
      res,
      403,
      'Not allowed',
      `Your role on this account (${ROLE_LABELS[viewer(res).role]}) does not allow this. Ask an owner of the account.`,
    );
  /** A route only some roles may use (./roles.ts). */
  const allow = (p: Permission) => (_req: Request, res: Response, next: NextFunction) =>
    can(viewer(res).role, p) ? next() : forbid(res);

  async function dashboard(req: Request, res: Response, status = 200, extra: DashboardExtra = {}) {
    const s = session(res);
    const v = viewer(res);
    const done = typeof req.query.done === 'string' ? FLASH[req.query.done] : undefined;
    const cancelled = req.query.checkout === 'cancelled' ? FLASH.cancelled : undefined;
    const csrf = sessions.csrfFor(s);
    const query = req.query as Record<string, unknown>;
    const { newInvite, ...rest } = extra;
    // Read once for the page: the account's keys with their members, and its members.
    const [keys, members] = await Promise.all([team.keysOf(v.accountId), team.store.members(v.accountId)]);
    const view = await dashboardData({ ...d, now: () => d.clock.now() }, s.accountId, {
      csrf,
      scope: scopeOf(v, { keys, members }),
      signedInKey: s.keyId,
      query,
      flash: done ?? cancelled,
      ...rest,
    });
    if (!view) return say(res, 404, 'No such account', 'This account no longer exists.');
    const teamView = can(v.role, 'team.view')
      ? await teamViewOf({ d, team }, v, csrf, query, newInvite, { keys, members })
      : undefined;
    send(res, status, {
      title: 'Your account',
      body: dashboardBody(view, teamView),
      account: { id: s.accountId, signOut: { action: '/account/signout', csrf } },
    });
  }

  // ---- public ------------------------------------------------------------------------------------------------

  r.get('/', (_req, res) => {
    send(
      res,
      200,
      landingPage({
        publicUrl: d.publicUrl(),
        version: d.version,
        signup: d.signup === 'open' || d.upstream !== undefined,
        welcomeLine: d.billing ? d.welcomeLineMicros : undefined,
        x402: d.x402,
        prices: d.prices ? priceList(availability(d.prices.services), d.prices.mode) : [],
      }),
    );
  });

  r.get('/account/signin', async (req, res) => {
    const s = await sessionOf(req, res);
    if (s && typeof s !== 'string') return go(res, safeNext(req.query.next) ?? '/account');
    const done = typeof req.query.done === 'string' ? FLASH[req.query.done] : undefined;
    signIn(req, res, 200, undefined, done);
  });

  r.post('/account/signin', form, async (req, res) => {
    if (!sessions.verify(req, undefined)) return refused(res);
    if (limited(res, signIns.take(`account-signin:${ip(req)}`), 'sign-in attempts')) return;
    const key = typeof req.body.api_key === 'string' ? req.body.api_key.trim() : '';
    const check = await verifyApiKey(d.ledger, key);
    // One message for every refusal: whether a key exists, or was revoked, is nobody's business here.
    if (!check.ok) return signIn(req, res, 401, 'That API key was not accepted. Check it and try again.');
    const { accountId, keyId } = check.principal;
    const member = await team.memberForKey(accountId, keyId);
    if (!member || member.removed_at !== null) {
      return signIn(req, res, 403, 'That key belongs to a member who was removed from the account.');
    }
    // A key with limits of an owner: signed in, it could lift its own limits or make a key without them. A member's
    // or billing member's limited key may sign in: it cannot change limits (docs/decisions.md, teams × limits).
    if (check.principal.limits && can(member.role, 'keys.others'))
      return signIn(
        req,
        res,
        403,
        'That key has limits and belongs to an owner of the account, who could lift them here: sign in with an unrestricted key.',
      );
    await sessions.start(res, accountId, keyId, member.id);
    go(res, safeNext(req.body.next) ?? '/account');
  });

  r.get('/account/signup', (req, res) => {
    send(
      res,
      200,
      signUpPage({
        csrf: sessions.preCsrf(req, res),
        upstreamName: d.upstream?.name,
        open: d.signup === 'open',
        welcomeLine: d.billing ? d.welcomeLineMicros : undefined,
      }),
    );
  });

  r.post('/account/signup', form, async (req, res) => {
    if (!sessions.verify(req, undefined)) return refused(res);
    if (d.signup !== 'open')
      return say(res, 403, 'Sign-up is closed', 'Ask the operator of this gateway for an account.');
    if (limited(res, await signUps.take(`signup:${ip(req)}`), 'sign-ups')) return;
    const name = typeof req.body.name === 'string' ? req.body.name.trim().slice(0, 60) : '';
    const account = await d.ledger.createAccount({ name: name || null });
    const { key, row } = await createApiKey(d.ledger, account.id, 'default');
    // Its first owner; the session is not tied to this key: revoking it later should not sign its holder out.
    const founder = await team.founder(account.id);
    await sessions.start(res, account.id, null, founder.id);
    d.log.info({ account: account.id, key: row.id }, 'account created by sign-up');
    send(res, 201, keyOncePage({ key, accountId: account.id, welcome: true }));
  });

  r.post('/account/federated', form, async (req, res) => {
    if (!sessions.verify(req, undefined)) return refused(res);
    if (limited(res, signIns.take(`account-signin:${ip(req)}`), 'sign-in attempts')) return;
    if (!d.upstream) return signIn(req, res, 404, 'Upstream sign-in is not configured on this gateway.');
    const flow = `${OTHER_FLOW_PREFIX}account:${randomBytes(12).toString('base64url')}`;
    rememberNext(res, cookiePolicy(), req.body.next);
    if (!(await d.upstream.start(res, flow))) {
      signIn(req, res, 502, `${d.upstream.name} cannot be reached right now. Use an API key, or retry.`);
    }
  });

  const otherSignIn: OtherSignIn = async (req, res, result) => {
    // The account's upstream identity is its first owner's.
    const founder = await team.founder(result.accountId);
    if (founder.removed_at !== null) return say(res, 403, 'Not a member', FLASH.member_removed as string);
    await sessions.start(res, result.accountId, null, founder.id);
    const next = takeNext(req, res, cookiePolicy());
    if (!result.created) return go(res, next ?? '/account');
    // A new person: the first key of the account, shown once.
    const { key } = await createApiKey(d.ledger, result.accountId, 'default');
    send(res, 201, keyOncePage({ key, accountId: result.accountId, welcome: true }));
  };

  // ---- signed in ---------------------------------------------------------------------------------------------

  r.get('/account', signedIn, (req, res) => dashboard(req, res));

  r.post('/account/signout', form, signedIn, async (req, res) => {
    await sessions.end(req, res);
    go(res, '/account/signin?done=signed_out');
  });

  const csrf = (s: Session) => sessions.csrfFor(s);
  const ctx = { d, team, form, signedIn, allow, forbid, viewer, session, csrf, dashboard, send, go };
  keyRoutes(r, ctx);
  // The page a call refused by its own limit sends a person to: every role (only owners change limits there).
  limitPage(r, ctx);
  const ownCalls = async (res: Response) => {
    const v = viewer(res);
    return can(v.role, 'history.account') ? undefined : (await team.visibleKeys(v)).map((k) => k.id);
  };
  paymentRoutes(r, { d, form, signedIn, allow, session, ownCalls, dashboard, send, say, go });
  // The pages that fix a refused call (top-up, card) and the alerts are about the account's money: its owners and
  // billing members'.
  const paying = (req: Request, res: Response, next: NextFunction) =>
    signedIn(req, res, () => allow('payments')(req, res, next));
  fixPages(r, { d, signedIn: paying, session, send, csrf });
  alertRoutes(r, { d, form, signedIn: paying, session, send, go, csrf });
  teamRoutes(r, {
    ...ctx,
    sessions,
    refused,
    limited: (req, res) => limited(res, signIns.take(`account-join:${ip(req)}`), 'attempts'),
  });

  // Errors no route handled (a database that does not answer), for a browser: a page, not a JSON body.
  return { router: r, otherSignIn, errorPage: say };
}

/** Renders an error as a page of this frame (src/http/app.ts `errorPage`). */
export type ErrorPage = (res: Response, status: number, heading: string, message: string) => void;
