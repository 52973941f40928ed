import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';

// Protections for our own forms: CSRF tokens, cookie settings, and a limit on sign-in attempts per client IP.

/** Cookie settings shared by our cookies: HttpOnly, SameSite=Lax, Secure whenever the public URL is https. */
export interface CookiePolicy {
  secure: boolean;
  /** The public URL's path ('' at the root), prefixed to every cookie path. */
  basePath: string;
}

export function setCookie(
  res: Response,
  policy: CookiePolicy,
  name: string,
  value: string,
  path: string,
  maxAgeSeconds: number,
): void {
  const attrs = [
    `${name}=${value}`,
    `Path=${policy.basePath}${path}`,
    `Max-Age=${maxAgeSeconds}`,
    'HttpOnly',
    'SameSite=Lax',
  ];
  if (policy.secure) attrs.push('Secure');
  res.append('Set-Cookie', attrs.join('; '));
}

export function readCookie(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

const CSRF_COOKIE = 'tg_oauth_csrf';
const CSRF_PATH = '/oauth/interaction';

/**
 * Double-submit CSRF protection bound to the interaction: the browser holds a random cookie, and each form
 * carries HMAC(key, uid + cookie). A forged cross-site POST has neither the cookie's value nor our key, so it
 * cannot produce a matching token, even knowing the interaction's uid.
 */
export class Csrf {
  constructor(
    private readonly key: () => Buffer,
    private readonly policy: CookiePolicy,
  ) {}

  /** The token for this interaction's forms, setting the browser's cookie first if it has none. */
  issue(req: Request, res: Response, uid: string): string {
    let secret = readCookie(req, CSRF_COOKIE);
    if (!secret || !/^[A-Za-z0-9_-]{43}$/.test(secret)) {
      secret = randomBytes(32).toString('base64url');
      setCookie(res, this.policy, CSRF_COOKIE, secret, CSRF_PATH, 3600);
    }
    return this.token(uid, secret);
  }

  verify(req: Request, uid: string): boolean {
    const secret = readCookie(req, CSRF_COOKIE);
    const given = (req.body as Record<string, unknown> | undefined)?.csrf;
    if (!secret || typeof given !== 'string') return false;
    const expected = Buffer.from(this.token(uid, secret));
    const actual = Buffer.from(given);
    return actual.length === expected.length && timingSafeEqual(actual, expected);
  }

  private token(uid: string, secret: string): string {
    return createHmac('sha256', this.key()).update(`csrf\u0000${uid}\u0000${secret}`).digest('base64url');
  }
}

/**
 * The client's IP. Behind a TLS-terminating proxy (an https public URL in front of this plain-http server) the
 * proxy's own address is every client's, so the last X-Forwarded-For entry, the one the proxy appended, is
 * used; a client can prepend entries but not change that one.
 */
export function clientIp(req: Request, behindProxy: boolean): string {
  const direct = req.socket.remoteAddress ?? 'unknown';
  if (!behindProxy) return direct;
  const xff = req.headers['x-forwarded-for'];
  const list = (Array.isArray(xff) ? xff.join(',') : (xff ?? '')).split(',').map((s) => s.trim());
  return list.filter(Boolean).at(-1) ?? direct;
}

/** A fixed one-minute window per key: enough to stop guessing at sign-in without any shared state. */
export class AttemptLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts an attempt; returns the seconds to wait when over the limit, else undefined. */
  take(key: string): number | undefined {
    const now = this.now();
    if (this.windows.size > 10_000) this.prune(now);
    let w = this.windows.get(key);
    if (!w || now - w.start >= 60_000) {
      w = { start: now, count: 0 };
      this.windows.set(key, w);
    }
    w.count += 1;
    if (w.count <= this.perMinute) return undefined;
    return Math.max(1, Math.ceil((w.start + 60_000 - now) / 1000));
  }

  private prune(now: number): void {
    for (const [k, w] of this.windows) if (now - w.start >= 60_000) this.windows.delete(k);
  }
}
