import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import { readCookie, setCookie } from '../../auth/oauth/guard.js';
import { sha256Hex } from '../lib/hash.js';
import { migrate, type SqliteDb } from '../lib/sqlite.js';

// Dashboard sessions and the protections of the dashboard's forms.
//
// - A session is a random 256-bit token in a cookie (HttpOnly, SameSite=Lax, Secure behind TLS, path /account),
//   stored only as its SHA-256. It lasts 12 hours. One signed in with an API key ends when that key is revoked
//   (checked on every request), like an OAuth grant made with it.
// - Every form carries a CSRF token: HMAC(key, session id) once signed in; before that (sign-in, sign-up),
//   HMAC(key, a random cookie of this browser). A cross-site POST has neither our key nor the cookie's value.

const MIGRATIONS = [
  `
  CREATE TABLE account_sessions (
    id_hash    TEXT PRIMARY KEY,
    account_id TEXT NOT NULL,
    -- The API key the session signed in with (NULL: sign-up or an upstream sign-in).
    key_id     TEXT,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
  );
  CREATE INDEX account_sessions_expiry ON account_sessions(expires_at);
  CREATE TABLE account_secrets (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
  );
  `,
];

export const SESSION_COOKIE = 'tg_session';
const PRE_COOKIE = 'tg_account_csrf';
export const SESSION_TTL_MS = 12 * 3_600_000;

export interface Session {
  /** SHA-256 of the token: what CSRF tokens are bound to. */
  id: string;
  accountId: string;
  keyId: string | null;
}

export interface CookieSettings {
  secure: () => boolean;
  basePath: () => string;
}

export class AccountSessions {
  private readonly s;
  private readonly formKey: Buffer;

  constructor(
    db: SqliteDb,
    private readonly cookies: CookieSettings,
    private readonly now: () => number,
  ) {
    migrate(db, 'account', MIGRATIONS);
    this.s = {
      ins: db.prepare(
        'INSERT INTO account_sessions (id_hash, account_id, key_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?)',
      ),
      get: db.prepare<[string, number], { account_id: string; key_id: string | null }>(
        'SELECT account_id, key_id FROM account_sessions WHERE id_hash = ? AND expires_at > ?',
      ),
      del: db.prepare('DELETE FROM account_sessions WHERE id_hash = ?'),
      purge: db.prepare('DELETE FROM account_sessions WHERE expires_at <= ?'),
      secret: db.prepare<[string], { value: string }>('SELECT value FROM account_secrets WHERE name = ?'),
      insSecret: db.prepare(
        'INSERT INTO account_secrets (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING',
      ),
    };
    this.s.insSecret.run('form_key', randomBytes(32).toString('base64url'));
    this.formKey = Buffer.from((this.s.secret.get('form_key') as { value: string }).value, 'base64url');
  }

  private policy() {
    return { secure: this.cookies.secure(), basePath: this.cookies.basePath() };
  }

  /** Starts a session for the account and sets its cookie. */
  start(res: Response, accountId: string, keyId: string | null): Session {
    const token = randomBytes(32).toString('base64url');
    const id = sha256Hex(token);
    const now = this.now();
    this.s.purge.run(now);
    this.s.ins.run(id, accountId, keyId, now, now + SESSION_TTL_MS);
    setCookie(res, this.policy(), SESSION_COOKIE, token, '/account', SESSION_TTL_MS / 1000);
    return { id, accountId, keyId };
  }

  /** The browser's session, if its cookie names a live one. */
  find(req: Request): Session | undefined {
    const token = readCookie(req, SESSION_COOKIE);
    if (!token || !/^[A-Za-z0-9_-]{43}$/.test(token)) return undefined;
    const id = sha256Hex(token);
    const row = this.s.get.get(id, this.now());
    return row ? { id, accountId: row.account_id, keyId: row.key_id } : undefined;
  }

  end(req: Request, res: Response): void {
    const token = readCookie(req, SESSION_COOKIE);
    if (token) this.s.del.run(sha256Hex(token));
    setCookie(res, this.policy(), SESSION_COOKIE, '', '/account', 0);
  }

  drop(session: Session): void {
    this.s.del.run(session.id);
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

/** A fixed window per key (sign-ups per client IP per hour): enough to stop scripted account creation. */
export class WindowLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number,
  ) {}

  /** Counts an attempt; returns the seconds to wait when over the limit, else undefined. */
  take(key: string): number | undefined {
    const now = this.now();
    if (this.windows.size > 10_000) {
      for (const [k, w] of this.windows) if (now - w.start >= this.windowMs) this.windows.delete(k);
    }
    let w = this.windows.get(key);
    if (!w || now - w.start >= this.windowMs) {
      w = { start: now, count: 0 };
      this.windows.set(key, w);
    }
    w.count += 1;
    if (w.count <= this.limit) return undefined;
    return Math.max(1, Math.ceil((w.start + this.windowMs - now) / 1000));
  }
}
