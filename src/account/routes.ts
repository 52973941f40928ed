import { randomBytes } from 'node:crypto';
import express, { type NextFunction, type Request, type Response, Router } from 'express';
import type { Logger } from 'pino';
import { createApiKey, hasLimits, verifyApiKey } from '../../auth/api-keys.js';
import type { OtherSignIn } from '../../auth/oauth/context.js';
import { OTHER_FLOW_PREFIX } from '../../auth/oauth/federated.js';
import { AttemptLimiter, clientIp } from '../../auth/oauth/guard.js';
import { parseLimit } from '../../auth/oauth/limits.js';
import type { StateDb } from '../backend.js';
import type { Billing } from '../billing/index.js';
import type { KeyLimits, LedgerRecords } from '../ledger/types.js';
import type { Clock } from '../lib/clock.js';
import { availability, type UnavailableListing } from '../run/availability.js';
import type { RunDeps } from '../run/execute.js';
import { type LimitInput, LimitInputError, parseLimitInput } from '../run/key-limit-input.js';
import { priceList } from '../run/price-list.js';
import { type Apps, dashboardData } from './dashboard.js';
import { dashboardBody } from './dashboard-view.js';
import { type Frame, sendHtml } from './html.js';
import { LIMIT_FIELDS, LIMIT_LABELS } from './keys-view.js';
import { keyOncePage, landingPage, messagePage, signInPage, signUpPage } from './pages.js';
import { paymentRoutes } from './payment-routes.js';
import { openAccountSessions, type Session } from './sessions.js';

// The people-facing door: / (what this gateway is), sign-up and sign-in (API key, or the upstream OpenID Connect
// provider), and /account, the dashboard (balance and credit line, usage chart, transactions with filters and
// CSV, API keys, connected apps, card, top-ups). Every POST needs its CSRF token; sign-ins and sign-ups are
// rate limited per client IP. Money moves only through billing and the lifecycle, never here.

export interface AccountPagesDeps {
  /** Where dashboard sessions live (SQLite, or the PostgreSQL every replica shares). */
  state: StateDb;
  ledger: LedgerRecords;
  billing: Billing | undefined;
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
    'Your session ended (the key it signed in with was revoked, or given limits). Sign in again with an unrestricted key.',
  signed_out: 'You are signed out.',
};

export async function accountPages(
  d: AccountPagesDeps,
): Promise<{ router: Router; otherSignIn: OtherSignIn }> {
  const secure = () => d.publicUrl().startsWith('https:');
  const base = () => new URL(d.publicUrl()).pathname.replace(/\/+$/, '');
  const sessions = await openAccountSessions(d.state, { secure, basePath: base }, () => d.clock.now());
  const signIns = new AttemptLimiter(d.signInAttemptsPerMinute, () => d.clock.now());
  const signUps = sessions.windowLimiter(d.signupsPerHour, 3_600_000);
  const form = express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 20 });
  const r = Router();

  const send = (res: Response, status: number, f: Frame) => sendHtml(res, status, f, base());
  const go = (res: Response, path: string) => res.redirect(303, `${base()}${path}`);
  const ip = (req: Request) => clientIp(req, secure());

  function limited(res: Response, wait: number | undefined, what: string): boolean {
    if (wait === undefined) return false;
    res.setHeader('Retry-After', String(wait));
    send(
      res,
      429,
      messagePage('Too many attempts', `Too many ${what} from your network. Wait ${wait} seconds.`),
    );
    return true;
  }

  function refused(res: Response): void {
    send(
      res,
      403,
      messagePage(
        'Request refused',
        'The form was missing its security token. Reload the page and try again.',
      ),
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
      }),
    );

  /** The browser's live session; a session signed in with a key that was revoked since ends here. */
  async function sessionOf(req: Request, res: Response): Promise<Session | 'ended' | undefined> {
    const s = await sessions.find(req);
    if (!s) return undefined;
    if (s.keyId !== null) {
      const key = (await d.ledger.listApiKeys(s.accountId)).find((k) => k.id === s.keyId);
      // A key given limits since is an agent's key now: it may not manage keys (docs/decisions.md).
      if (!key || key.revoked_at !== null || hasLimits(key)) {
        await sessions.drop(s);
        await sessions.end(req, res);
        return 'ended';
      }
    }
    return s;
  }

  /** Signed-in routes: a session (else to sign-in) and, for POSTs, its CSRF token. */
  const signedIn = async (req: Request, res: Response, next: NextFunction) => {
    const s = await sessionOf(req, res);
    if (s === undefined || s === 'ended') {
      if (req.method !== 'GET') return refused(res);
      return go(res, s === 'ended' ? '/account/signin?done=session_ended' : '/account/signin');
    }
    if (req.method === 'POST' && !sessions.verify(req, s)) return refused(res);
    res.locals.session = s;
    next();
  };
  const session = (res: Response) => res.locals.session as Session;

  async function dashboard(
    req: Request,
    res: Response,
    status = 200,
    extra: { error?: string; newKey?: { key: string; name: string | null } } = {},
  ) {
    const s = session(res);
    const done = typeof req.query.done === 'string' ? FLASH[req.query.done] : undefined;
    const cancelled = req.query.checkout === 'cancelled' ? FLASH.cancelled : undefined;
    const view = await dashboardData({ ...d, now: () => d.clock.now() }, s.accountId, {
      csrf: sessions.csrfFor(s),
      signedInKey: s.keyId,
      query: req.query as Record<string, unknown>,
      flash: done ?? cancelled,
      ...extra,
    });
    if (!view) return send(res, 404, messagePage('No such account', 'This account no longer exists.'));
    send(res, status, {
      title: 'Your account',
      body: dashboardBody(view),
      account: { id: s.accountId, signOut: { action: '/account/signout', csrf: sessions.csrfFor(s) } },
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
    if (s && s !== 'ended') return go(res, '/account');
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
    // A key with limits is for an agent: signed in here it could lift its own limits or make an unlimited key.
    if (check.principal.limits)
      return signIn(
        req,
        res,
        403,
        'That key has limits (an agent’s key), so it cannot sign in here: use an unrestricted key of the account.',
      );
    await sessions.start(res, check.principal.accountId, check.principal.keyId);
    go(res, '/account');
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
      return send(
        res,
        403,
        messagePage('Sign-up is closed', 'Ask the operator of this gateway for an account.'),
      );
    if (limited(res, await signUps.take(`signup:${ip(req)}`), 'sign-ups')) return;
    const name = typeof req.body.name === 'string' ? req.body.name.trim().slice(0, 60) : '';
    const account = await d.ledger.createAccount({ name: name || null });
    const { key, row } = await createApiKey(d.ledger, account.id, 'default');
    // The session is not tied to this key: revoking it later should not sign its only holder out.
    await sessions.start(res, account.id, null);
    d.log.info({ account: account.id, key: row.id }, 'account created by sign-up');
    send(res, 201, keyOncePage({ key, accountId: account.id, welcome: true }));
  });

  r.post('/account/federated', form, async (req, res) => {
    if (!sessions.verify(req, undefined)) return refused(res);
    if (limited(res, signIns.take(`account-signin:${ip(req)}`), 'sign-in attempts')) return;
    if (!d.upstream) return signIn(req, res, 404, 'Upstream sign-in is not configured on this gateway.');
    const flow = `${OTHER_FLOW_PREFIX}account:${randomBytes(12).toString('base64url')}`;
    if (!(await d.upstream.start(res, flow))) {
      signIn(req, res, 502, `${d.upstream.name} cannot be reached right now. Use an API key, or retry.`);
    }
  });

  const otherSignIn: OtherSignIn = async (_req, res, result) => {
    await sessions.start(res, result.accountId, null);
    if (!result.created) return go(res, '/account');
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

  /** A key's limits from a form: empty fields are no limit (`none`) when changing, left out when creating. */
  function limitsFrom(
    body: Record<string, unknown>,
    emptyIs: 'none' | 'absent',
  ): Partial<KeyLimits> | string {
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

  r.post('/account/keys', form, signedIn, async (req, res) => {
    const name = typeof req.body.name === 'string' ? req.body.name.trim().slice(0, 60) || null : null;
    const limits = limitsFrom(req.body as Record<string, unknown>, 'absent');
    if (typeof limits === 'string') return dashboard(req, res, 400, { error: limits });
    const { key, row } = await createApiKey(d.ledger, session(res).accountId, name, limits);
    d.log.info({ account: row.account_id, key: row.id }, 'API key created on the dashboard');
    await dashboard(req, res, 201, { newKey: { key, name } });
  });

  r.post('/account/keys/limits', form, signedIn, async (req, res) => {
    const id = String(req.body.key_id ?? '');
    const key = (await d.ledger.listApiKeys(session(res).accountId)).find((k) => k.id === id);
    if (!key || key.revoked_at !== null)
      return dashboard(req, res, 404, { error: 'No such active key on this account.' });
    const limits = limitsFrom(req.body as Record<string, unknown>, 'none');
    if (typeof limits === 'string') return dashboard(req, res, 400, { error: limits });
    await d.ledger.setApiKeyLimits(id, limits);
    d.log.info({ account: key.account_id, key: id, limits }, 'API key limits changed on the dashboard');
    go(res, '/account?done=key_limits_changed#keys');
  });

  r.post('/account/keys/revoke', form, signedIn, async (req, res) => {
    const id = String(req.body.key_id ?? '');
    const mine = (await d.ledger.listApiKeys(session(res).accountId)).some((k) => k.id === id);
    if (!mine || !(await d.ledger.revokeApiKey(id)))
      return dashboard(req, res, 404, { error: 'No such active key on this account.' });
    go(res, '/account?done=key_revoked#keys');
  });

  const connected = async (res: Response, clientId: string) =>
    (await d.apps.list(session(res).accountId)).some((a) => a.client_id === clientId);

  r.post('/account/apps/limit', form, signedIn, async (req, res) => {
    const client = String(req.body.client_id ?? '');
    if (!(await connected(res, client)))
      return dashboard(req, res, 404, { error: 'That app is not connected to this account.' });
    const limit = parseLimit(req.body as Record<string, unknown>);
    if (limit === 'invalid')
      return dashboard(req, res, 400, { error: 'Enter a daily limit in USD, such as 2.50 (above 0).' });
    await d.apps.setLimit(session(res).accountId, client, limit);
    go(res, '/account?done=limit_changed#apps');
  });

  r.post('/account/apps/revoke', form, signedIn, async (req, res) => {
    const client = String(req.body.client_id ?? '');
    if ((await d.apps.revoke(session(res).accountId, client)) === 0) {
      return dashboard(req, res, 404, { error: 'That app is not connected to this account.' });
    }
    go(res, '/account?done=app_revoked#apps');
  });

  paymentRoutes(r, { d, form, signedIn, session, dashboard, send, go });

  return { router: r, otherSignIn };
}
