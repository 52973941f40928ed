import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import { readCookie, setCookie } from '../../auth/oauth/guard.js';
import type { StateDb } from '../backend.js';
import { sha256Hex } from '../lib/hash.js';
import { openSessionStore, type SessionStore } from './session-store.js';

// Dashboard sessions and the protections of the dashboard's forms.
//
// - A session is a random 256-bit token in a cookie (HttpOnly, SameSite=Lax, Secure behind TLS, path /account),
//   stored only as its SHA-256. It lasts 12 hours. One signed in with an API key ends when that key is revoked
//   (checked on every request), like an OAuth grant made with it.
// - Every form carries a CSRF token: HMAC(key, session id) once signed in; before that (sign-in, sign-up),
//   HMAC(key, a random cookie of this browser). A cross-site POST has neither our key nor the cookie's value.

export const SESSION_COOKIE = 'tg_session';
const PRE_COOKIE = 'tg_account_csrf';
export const SESSION_TTL_MS = 12 * 3_600_000;

export interface Session {
  /** SHA-256 of the token: what CSRF tokens are bound to. */
  id: string;
  accountId: string;
  keyId: string | null;
  /** The team member it acts as (null: a session from before teams, resolved by its key or as the first owner). */
  memberId: string | null;
}

export interface CookieSettings {
  secure: () => boolean;
  basePath: () => string;
}

/** Opens the dashboard's sessions on this state (its form key is read, or generated once, here). */
export async function openAccountSessions(
  state: StateDb,
  cookies: CookieSettings,
  now: () => number,
): Promise<AccountSessions> {
  const store = openSessionStore(state);
  const formKey = await store.secret('form_key', () => randomBytes(32).toString('base64url'));
  return new AccountSessions(store, Buffer.from(formKey, 'base64url'), cookies, now);
}

export class AccountSessions {
  constructor(
    private readonly store: SessionStore,
    private readonly formKey: Buffer,
    private readonly cookies: CookieSettings,
    private readonly now: () => number,
  ) {}

  /** A fixed-window limiter counted in this state (shared by every replica). */
  windowLimiter(limit: number, windowMs: number): WindowLimiter {
    return new WindowLimiter(this.store, limit, windowMs, this.now);
  }

  private policy() {
    return { secure: this.cookies.secure(), basePath: this.cookies.basePath() };
  }

  /** Starts a session for a member of the account and sets its cookie. */
  async start(res: Response, accountId: string, keyId: string | null, memberId: string): Promise<Session> {
    const token = randomBytes(32).toString('base64url');
    const id = sha256Hex(token);
    const now = this.now();
    await this.store.add(id, { accountId, keyId, memberId }, now, now + SESSION_TTL_MS);
    setCookie(res, this.policy(), SESSION_COOKIE, token, '/account', SESSION_TTL_MS / 1000);
    return { id, accountId, keyId, memberId };
  }

  /** The browser's session, if its cookie names a live one. */
  async find(req: Request): Promise<Session | undefined> {
    const token = readCookie(req, SESSION_COOKIE);
    if (!token || !/^[A-Za-z0-9_-]{43}$/.test(token)) return undefined;
    const id = sha256Hex(token);
    const row = await this.store.get(id, this.now());
    return row ? { id, ...row } : undefined;
  }

  async end(req: Request, res: Response): Promise<void> {
    const token = readCookie(req, SESSION_COOKIE);
    if (token) await this.store.remove(sha256Hex(token));
    setCookie(res, this.policy(), SESSION_COOKIE, '', '/account', 0);
  }

  drop(session: Session): Promise<void> {
    return this.store.remove(session.id);
  }

  /** The CSRF token of a signed-in browser's forms. */
  csrfFor(session: Session): string {
    return this.mac(`session\u0000${session.id}`);
  }

  /** The CSRF token of the forms before sign-in, setting this browser's random cookie if it has none. */
  preCsrf(req: Request, res: Response): string {
    let secret = readCookie(req, PRE_COOKIE);
    if (!secret || !/^[A-Za-z0-9_-]{43}$/.test(secret)) {
      secret = randomBytes(32).toString('base64url');
      setCookie(res, this.policy(), PRE_COOKIE, secret, '/account', 3600);
      // The upstream's callback (under /oauth) does not need it: it is bound by its own state cookie.
    }
    return this.mac(`pre\u0000${secret}`);
  }

  /** Checks a form's token against the session (signed in) or this browser's cookie (before sign-in). */
  verify(req: Request, session: Session | undefined): boolean {
    const given = (req.body as Record<string, unknown> | undefined)?.csrf;
    if (typeof given !== 'string') return false;
    let expected: string;
    if (session) expected = this.csrfFor(session);
    else {
      const secret = readCookie(req, PRE_COOKIE);
      if (!secret) return false;
      expected = this.mac(`pre\u0000${secret}`);
    }
    const a = Buffer.from(given);
    const b = Buffer.from(expected);
    return a.length === b.length && timingSafeEqual(a, b);
  }

  private mac(what: string): string {
    return createHmac('sha256', this.formKey).update(what).digest('base64url');
  }
}

/**
 * A fixed window per key (sign-ups per client IP per hour): enough to stop scripted account creation. Counted in
 * the state every replica shares, so a client spreading its attempts over replicas gets the same limit.
 */
export class WindowLimiter {
  constructor(
    private readonly counter: Pick<SessionStore, 'countAttempt'>,
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number,
  ) {}

  /** Counts an attempt; returns the seconds to wait when over the limit, else undefined. */
  async take(key: string): Promise<number | undefined> {
    const now = this.now();
    const w = await this.counter.countAttempt(key, now, this.windowMs);
    if (w.count <= this.limit) return undefined;
    return Math.max(1, Math.ceil((w.start + this.windowMs - now) / 1000));
  }
}
