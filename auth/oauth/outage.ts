import type { Adapter } from 'oidc-provider';
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from '../../src/errors.js';

// The authorization server while its database does not answer. oidc-provider catches every error its endpoints
// raise and answers a bug's 500 (`server_error`) for anything that is not one of its own errors; a failure of
// the store is not a bug, so the store's failures reach the library as its kind of error: exposed, 503,
// `temporarily_unavailable` (RFC 6749 §4.1.2.1's code for it), never redirected to the client. The library then
// answers a JSON endpoint (token, registration, revocation) with that error body and renders an HTML page for a
// browser (renderError); the provider adds Retry-After to either. The original failure is the error's cause, so
// the gateway's health (src/run/db-health.ts) still recognises it.

export const TEMPORARILY_UNAVAILABLE = 'temporarily_unavailable';

/** The shape oidc-provider reads from an error it exposes (its OIDCProviderError's fields). */
export class TemporarilyUnavailable extends Error {
  readonly expose = true;
  readonly statusCode = 503;
  readonly status = 503;
  readonly error = TEMPORARILY_UNAVAILABLE;
  readonly error_description =
    "The gateway's database is not answering; nothing was charged. Retry in a few seconds.";
  /** Never sent to the client's redirect URI: the person sees the page, the client can retry later. */
  readonly allow_redirect = false;

  constructor(cause: unknown) {
    super(TEMPORARILY_UNAVAILABLE, { cause });
    this.name = 'TemporarilyUnavailable';
  }
}

export const RETRY_AFTER = String(DATABASE_RETRY_AFTER_SECONDS);

/** `fn`, with its database failures turned into the library's 503; any other failure is left as is. */
export function guarded<A extends unknown[], R>(
  fn: (...args: A) => Promise<R>,
  report: ((e: unknown) => void) | undefined,
): (...args: A) => Promise<R> {
  return async (...args) => {
    try {
      return await fn(...args);
    } catch (e) {
      if (e instanceof TemporarilyUnavailable || !isDatabaseUnavailable(e)) throw e;
      report?.(e);
      throw new TemporarilyUnavailable(e);
    }
  };
}

/** The store's adapter for one model, every method guarded. */
export function guardedAdapter(adapter: Adapter, report: ((e: unknown) => void) | undefined): Adapter {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(adapter)) {
    out[k] = typeof v === 'function' ? guarded(v.bind(adapter), report) : v;
  }
  return out as unknown as Adapter;
}
