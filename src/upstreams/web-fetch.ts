import { Agent, type Dispatcher, request } from 'undici';
import type { FetchedPage, WebFetcher, WebFetchOptions } from '../../tools/context.js';
import { GatewayError } from '../errors.js';
import {
  checkUrl,
  compilePolicy,
  guardedLookup,
  type SsrfPolicy,
  SsrfRefusal,
  ssrfRefused,
} from './ssrf-guard.js';

// The built-in engine's plain HTTP fetch of a caller's URL: SSRF-guarded on every hop, redirects followed by
// hand (at most MAX_REDIRECTS), a byte limit enforced while streaming, charset decoded from the header or the
// document's <meta>.

const MAX_REDIRECTS = 5;
const DEFAULT_MAX_BYTES = 10 * 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 30_000;
const USER_AGENT = 'tollgate/0.1 (+https://github.com/tollgate)';

export interface WebFetchConfig extends SsrfPolicy {
  userAgent?: string;
}

export function createWebFetcher(config: WebFetchConfig): WebFetcher & { close(): Promise<void> } {
  const policy = compilePolicy(config);
  const dispatcher: Dispatcher = new Agent({
    connect: { lookup: guardedLookup(policy) as never, timeout: 10_000 },
    connections: 32,
    keepAliveTimeout: 5_000,
  });

  async function fetchPage(url: string, opts: WebFetchOptions): Promise<FetchedPage> {
    const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const maxBytes = opts.maxBytes ?? DEFAULT_MAX_BYTES;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = AbortSignal.any([opts.signal, timeout]);
    let current = url;
    for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
      const target = checkUrl(current, policy);
      const headers: Record<string, string> = {
        'user-agent': config.userAgent ?? USER_AGENT,
        accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
        ...opts.headers,
      };
      if (opts.cookies) headers.cookie = opts.cookies;
      let res: Dispatcher.ResponseData;
      try {
        res = await request(target.toString(), { dispatcher, method: 'GET', headers, signal });
      } catch (e) {
        throw fetchFailure(current, e, opts.signal, timeout, timeoutMs);
      }
      if (res.statusCode >= 300 && res.statusCode < 400 && res.headers.location) {
        await res.body.dump();
        const loc = Array.isArray(res.headers.location) ? res.headers.location[0] : res.headers.location;
        current = new URL(loc as string, target).toString();
        continue;
      }
      const contentType = String(res.headers['content-type'] ?? '');
      const chunks: Buffer[] = [];
      let bytes = 0;
      try {
        for await (const chunk of res.body) {
          bytes += (chunk as Buffer).length;
          if (bytes > maxBytes) {
            res.body.destroy();
            throw new GatewayError(
              'upstream_rejected',
              `The page is larger than ${Math.round(maxBytes / 1024 / 1024)} MiB; nothing was charged.`,
              { details: { max_bytes: maxBytes } },
            );
          }
          chunks.push(chunk as Buffer);
        }
      } catch (e) {
        if (e instanceof GatewayError) throw e;
        throw fetchFailure(current, e, opts.signal, timeout, timeoutMs);
      }
      const buf = Buffer.concat(chunks);
      return {
        url: target.toString(),
        status: res.statusCode,
        contentType,
        body: decode(buf, contentType),
        bytes,
      };
    }
    throw new GatewayError(
      'upstream_rejected',
      `More than ${MAX_REDIRECTS} redirects from ${url}; nothing was charged.`,
    );
  }

  return { fetchPage, close: () => dispatcher.close() };
}

function fetchFailure(
  url: string,
  e: unknown,
  callerSignal: AbortSignal,
  timeout: AbortSignal,
  timeoutMs: number,
): unknown {
  if (callerSignal.aborted) return callerSignal.reason ?? e;
  const cause = (e as { cause?: unknown })?.cause;
  if (e instanceof SsrfRefusal) return ssrfRefused(url, e.reason);
  if (cause instanceof SsrfRefusal) return ssrfRefused(url, cause.reason);
  if (timeout.aborted) {
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
    {
      cause: e,
    },
  );
}

const META_CHARSET = /<meta[^>]+charset=["']?\s*([\w-]+)/i;

/** Decodes with the charset of the Content-Type header, else of a <meta> in the first KiB, else UTF-8. */
export function decode(buf: Buffer, contentType: string): string {
  let label = /charset=["']?([\w-]+)/i.exec(contentType)?.[1];
  if (!label) label = META_CHARSET.exec(buf.subarray(0, 1024).toString('latin1'))?.[1];
  try {
    return new TextDecoder(label ?? 'utf-8').decode(buf);
  } catch {
    return new TextDecoder('utf-8').decode(buf);
  }
}
