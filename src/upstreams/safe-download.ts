import { GatewayError } from '../errors.js';
import { type LinkedSignal, linkWithin } from '../lib/abort.js';
import { type ResponseData, UpstreamPool } from '../lib/upstream-pool.js';
import type { Download, Downloader } from '../ports/index.js';
import { fetchFailure } from './fetch-failure.js';
import { headerValue } from './http.js';
import { checkUrl, compilePolicy, guardedLookup, type SsrfPolicy } from './ssrf-guard.js';

// Binary download of a caller's URL (files/upload_from_url). Same SSRF guard as the web engine — every hop's
// URL checked, every connection's resolved address checked inside the socket's lookup — but the body is
// streamed to the caller of `open` with a byte limit, never buffered whole: files go up to 100 MB.

const MAX_REDIRECTS = 5;
const DEFAULT_TIMEOUT_MS = 300_000;
const USER_AGENT = 'tollgate/0.1 (+https://github.com/tollgate)';

export function createDownloader(config: SsrfPolicy & { userAgent?: string }): Downloader & {
  close(): Promise<void>;
} {
  const policy = compilePolicy(config);
  const pool = new UpstreamPool({
    connect: { lookup: guardedLookup(policy) as never, timeout: 10_000 },
    connections: 16,
    keepAliveTimeout: 5_000,
  });

  async function open(
    url: string,
    opts: { signal: AbortSignal; maxBytes: number; timeoutMs?: number },
  ): Promise<Download> {
    const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    // Lives as long as the body: disposed once it was read to the end, refused, cancelled or failed.
    const linked = linkWithin(opts.signal, timeoutMs);
    const failure = (e: unknown) => fetchFailure(url, e, opts.signal, () => linked.timedOut, timeoutMs);
    try {
      let current = url;
      for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
        const target = checkUrl(current, policy);
        let res: ResponseData;
        try {
          res = await pool.request(target.toString(), {
            method: 'GET',
            headers: { 'user-agent': config.userAgent ?? USER_AGENT, accept: '*/*' },
            signal: linked.signal,
          });
        } catch (e) {
          throw failure(e);
        }
        const location = headerValue(res.headers.location);
        if (res.statusCode >= 300 && res.statusCode < 400 && location) {
          await res.body.dump();
          current = new URL(location, target).toString();
          continue;
        }
        if (res.statusCode < 200 || res.statusCode >= 300) {
          await res.body.dump().catch(() => undefined);
          throw new GatewayError(
            'upstream_rejected',
            `${url} answered HTTP ${res.statusCode}; nothing was stored or charged.`,
            { details: { target_status: res.statusCode } },
          );
        }
        const declared = headerValue(res.headers['content-length']);
        const contentLength = declared !== undefined && /^\d+$/.test(declared) ? Number(declared) : undefined;
        if (contentLength !== undefined && contentLength > opts.maxBytes) {
          res.body.destroy();
          throw tooLarge(url, opts.maxBytes);
        }
        const body = res.body;
        return {
          url: target.toString(),
          contentType: headerValue(res.headers['content-type']),
          contentLength,
          contentDisposition: headerValue(res.headers['content-disposition']),
          body: limited(body, opts.maxBytes, url, failure, linked),
          cancel: () => {
            body.destroy();
            linked.dispose();
          },
        };
      }
      throw new GatewayError(
        'upstream_rejected',
        `More than ${MAX_REDIRECTS} redirects from ${url}; nothing was charged.`,
      );
    } catch (e) {
      linked.dispose();
      throw e;
    }
  }

  return { open, close: () => pool.close() };
}

/** Passes chunks through until more than `maxBytes` arrived, then stops reading and refuses. */
async function* limited(
  body: ResponseData['body'],
  maxBytes: number,
  url: string,
  failure: (e: unknown) => unknown,
  linked: LinkedSignal,
): AsyncGenerator<Uint8Array> {
  let bytes = 0;
  try {
    for await (const chunk of body) {
      bytes += (chunk as Buffer).length;
      if (bytes > maxBytes) throw tooLarge(url, maxBytes);
      yield chunk as Buffer;
    }
  } catch (e) {
    throw failure(e);
  } finally {
    body.destroy();
    linked.dispose();
  }
}

function tooLarge(url: string, maxBytes: number): GatewayError {
  return new GatewayError(
    'payload_too_large',
    `The file at ${url} is larger than ${maxBytes} bytes (the limit); nothing was stored or charged.`,
    {
      details: {
        max_bytes: maxBytes,
        issues: [{ path: 'url', message: `file larger than ${maxBytes} bytes` }],
      },
    },
  );
}
