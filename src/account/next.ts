import type { Request, Response } from 'express';
import { type CookiePolicy, readCookie, setCookie } from '../../auth/oauth/guard.js';

// Where sign-in returns to. A page a person is sent to from outside (the top-up page an agent host opens) sends
// them through sign-in and straight back: the page's path rides along as `next`. `next` comes from the browser,
// so it is only ever a path of the dashboard itself (no scheme, no host, no `//`, no backslash, no dot segments),
// and the redirect puts it after the gateway's own base URL: it cannot lead anywhere else (an open redirect).

const MAX = 256;
/** /account, a path below it of plain segments, and an optional query of plain characters. */
const SHAPE = /^\/account(?:\/[A-Za-z0-9_~-][A-Za-z0-9._~-]*)*(?:\?[A-Za-z0-9._~%=&+-]*)?$/;
/** Pages sign-in must not return to: itself, sign-up and sign-out, the upstream sign-in. */
const NOT_BACK_TO = /^\/account\/(?:signin|signup|signout|federated)(?:[/?]|$)/;

/** `raw` when it is a dashboard path sign-in may return to, else undefined. */
export function safeNext(raw: unknown): string | undefined {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > MAX) return undefined;
  if (!SHAPE.test(raw) || NOT_BACK_TO.test(raw)) return undefined;
  return raw;
}

/** The sign-in page's path, returning to `next` when there is one worth returning to. */
export function signInPath(next: string | undefined): string {
  const back = safeNext(next);
  return back === undefined || back === '/account'
    ? '/account/signin'
    : `/account/signin?next=${encodeURIComponent(back)}`;
}

/** The page to return to after an upstream sign-in rides in a cookie on the upstream callback's path. */
const NEXT_COOKIE = 'tg_account_next';
const NEXT_PATH = '/oauth/federated';

/** Before sending the person to the upstream provider: remembers where to return (when worth it), 10 minutes. */
export function rememberNext(res: Response, policy: CookiePolicy, raw: unknown): void {
  const next = safeNext(raw);
  if (next) setCookie(res, policy, NEXT_COOKIE, encodeURIComponent(next), NEXT_PATH, 600);
}

/** Back from the upstream provider: where to return (checked again: the cookie is the browser's), once. */
export function takeNext(req: Request, res: Response, policy: CookiePolicy): string | undefined {
  const raw = readCookie(req, NEXT_COOKIE);
  if (raw === undefined) return undefined;
  setCookie(res, policy, NEXT_COOKIE, '', NEXT_PATH, 0);
  try {
    return safeNext(decodeURIComponent(raw));
  } catch {
    return undefined;
  }
}
