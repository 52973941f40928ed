import { GatewayError } from '../errors.js';
import { SsrfRefusal, ssrfRefused } from './ssrf-guard.js';

/**
 * Why a fetch of a caller's URL failed, as a GatewayError: the caller cancelled (its own reason), the SSRF guard
 * refused an address (400 naming url), a timeout (504), a name that does not resolve (422), anything else (502).
 * Shared by the page fetcher and the binary downloader.
 */
export function fetchFailure(
  url: string,
  e: unknown,
  callerSignal: AbortSignal,
  timedOut: () => boolean,
  timeoutMs: number,
): unknown {
  if (e instanceof GatewayError) return e;
  if (callerSignal.aborted) return callerSignal.reason ?? e;
  const cause = (e as { cause?: unknown })?.cause;
  if (e instanceof SsrfRefusal) return ssrfRefused(url, e.reason);
  if (cause instanceof SsrfRefusal) return ssrfRefused(url, cause.reason);
  if (timedOut()) {
    return new GatewayError(
      'upstream_timeout',
      `${url} did not answer within ${timeoutMs / 1000}s; nothing was charged.`,
    );
  }
  const code = (e as { code?: string })?.code ?? (cause as { code?: string })?.code;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return new GatewayError(
      'upstream_rejected',
      `The host of ${url} does not resolve; nothing was charged.`,
      { cause: e },
    );
  }
  return new GatewayError(
    'upstream_error',
    `Fetching ${url} failed (${code ?? 'network error'}); nothing was charged.`,
    { cause: e },
  );
}
