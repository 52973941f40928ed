import { GatewayError } from '../errors.js';
import { linkWithin } from '../lib/abort.js';
import { stages } from '../lib/stage-timing.js';
import { type HttpMethod, type ResponseData, UpstreamPool } from '../lib/upstream-pool.js';
import type { FetchedPage, WebFetcher, WebFetchOptions } from '../ports/index.js';
import { fetchFailure } from './fetch-failure.js';
import { headerValue } from './http.js';
import { checkUrl, compilePolicy, guardedLookup, type Resolver, type SsrfPolicy } from './ssrf-guard.js';

// Server-side fetches of a caller's URL: SSRF-guarded on every hop (the URL before connecting, the resolved
// address inside the socket's lookup), redirects followed by hand (at most MAX_REDIRECTS), a byte limit
// enforced while streaming, charset decoded from the header or the document's <meta>. The headless browser's
// requests come through `forward` (src/engine/browser.ts), so they are guarded the same way.

const MAX_REDIRECTS = 5;
const DEFAULT_MAX_BYTES = 10 * 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_CONNECTIONS = 1024;
export const USER_AGENT = 'Mozilla/5.0 (compatible; tollgate/0.1; +https://github.com/tollgate)';

export interface WebFetchConfig extends SsrfPolicy {
  userAgent?: string;
  /** Default byte limit of one response. */
  maxBytes?: number;
  /** Tests resolve names offline with this. */
  resolve?: Resolver;
  /**
   * Connections to one host (TOLLGATE_UPSTREAM_CONNECTIONS). A call beyond it waits in undici's queue, where its
   * deadline runs while the upstream is not even asked: sized for the calls in flight, a slow site sets their pace.
   */
  connections?: number;
}

export interface PageFetchOptions extends WebFetchOptions {
  /** Refuse (422, before reading the body) a response whose Content-Type is not text, HTML, XML or JSON. */
  textOnly?: boolean;
}

/** One request of the headless browser, passed through unchanged except for the guard. */
export interface ForwardRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: Buffer | undefined;
  signal: AbortSignal;
  timeoutMs: number;
  /**
   * Follow redirects here, checking every hop. Chromium follows a redirect that was answered through
   * interception without intercepting the next request, so only this side can guard the hops.
   */
  followRedirects?: boolean;
}

export interface ForwardResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** The URL that answered (after redirects when followed). */
  url: string;
}

export interface GuardedFetcher extends WebFetcher {
  fetchPage(url: string, opts: PageFetchOptions): Promise<FetchedPage>;
  forward(req: ForwardRequest): Promise<ForwardResponse>;
  /** Throws the guard's 400 for a URL that may not be fetched (scheme, credentials, IP literal, localhost). */
  check(url: string): void;
  close(): Promise<void>;
}

const TEXTUAL =
  /^(text\/|application\/(xhtml\+xml|xml|json|ld\+json|rss\+xml|atom\+xml|javascript)|[^;]*\+(xml|json))/i;
/** Request headers the browser sends that must not be forwarded as-is. */
const HOP_BY_HOP = new Set([
  'host',
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'accept-encoding',
  'content-length',
]);

export function isTextual(contentType: string): boolean {
  return contentType.trim() === '' || TEXTUAL.test(contentType.trim());
}

export function createWebFetcher(config: WebFetchConfig): GuardedFetcher {
  const policy = compilePolicy(config);
  const pool = new UpstreamPool({
    connect: { lookup: guardedLookup(policy, config.resolve) as never, timeout: 10_000 },
    connections: config.connections ?? DEFAULT_CONNECTIONS,
    keepAliveTimeout: 5_000,
  });
  const defaultMax = config.maxBytes ?? DEFAULT_MAX_BYTES;

  /**
   * The whole body, refused past `maxBytes` (before reading, when the page declares its length). Read with
   * plain stream events: an async iterator costs a promise per chunk on every scrape.
   */
  function readCapped(res: ResponseData, maxBytes: number): Promise<Buffer> {
    const body = res.body;
    const tooLarge = () =>
      new GatewayError(
        'upstream_rejected',
        `The page is larger than ${formatBytes(maxBytes)}; nothing was charged.`,
        {
          details: { max_bytes: maxBytes },
        },
      );
    if (Number(res.headers['content-length']) > maxBytes) {
      body.destroy();
      return Promise.reject(tooLarge());
    }
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      body.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes > maxBytes) {
          body.destroy();
          reject(tooLarge());
        } else chunks.push(chunk);
      });
      body.once('end', () =>
        resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, bytes)),
      );
      body.once('error', reject);
    });
  }

  async function fetchPage(url: string, opts: PageFetchOptions): Promise<FetchedPage> {
    const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const maxBytes = opts.maxBytes ?? defaultMax;
    // The hot path of every built-in scrape: a linked signal is ~1 µs where AbortSignal.any + timeout is ~27 µs.
    const linked = linkWithin(opts.signal, timeoutMs);
    const timedOut = () => linked.timedOut;
    try {
      let current = url;
      for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
        const target = checkUrl(current, policy);
        const headers: Record<string, string> = {
          'user-agent': config.userAgent ?? USER_AGENT,
          accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
          ...opts.headers,
        };
        if (opts.cookies) headers.cookie = opts.cookies;
        let res: ResponseData;
        stages()?.mark('scope + SSRF check');
        try {
          res = await pool.request(target.toString(), { method: 'GET', headers, signal: linked.signal });
        } catch (e) {
          throw fetchFailure(current, e, opts.signal, timedOut, timeoutMs);
        }
        const location = headerValue(res.headers.location);
        if (res.statusCode >= 300 && res.statusCode < 400 && location) {
          await res.body.dump();
          current = new URL(location, target).toString();
          continue;
        }
        const contentType = String(res.headers['content-type'] ?? '');
        if (opts.textOnly && !isTextual(contentType)) {
          await res.body.dump().catch(() => undefined);
          throw new GatewayError(
            'upstream_rejected',
            `${current} is not a web page (Content-Type ${contentType.split(';')[0]}); nothing was charged.`,
            { details: { content_type: contentType.split(';')[0] } },
          );
        }
        let buf: Buffer;
        try {
          buf = await readCapped(res, maxBytes);
        } catch (e) {
          throw fetchFailure(current, e, opts.signal, timedOut, timeoutMs);
        }
        stages()?.mark('upstream fetch');
        return {
          url: target.toString(),
          status: res.statusCode,
          contentType,
          body: decode(buf, contentType),
          bytes: buf.length,
        };
      }
      throw new GatewayError(
        'upstream_rejected',
        `More than ${MAX_REDIRECTS} redirects from ${url}; nothing was charged.`,
      );
    } finally {
      linked.dispose();
    }
  }

  async function forward(req: ForwardRequest): Promise<ForwardResponse> {
    const linked = linkWithin(req.signal, req.timeoutMs);
    const timedOut = () => linked.timedOut;
    try {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) {
        if (!HOP_BY_HOP.has(k.toLowerCase()) && !k.startsWith(':')) headers[k] = v;
      }
      let url = req.url;
      let method = req.method;
      let body = req.body;
      for (let hop = 0; ; hop++) {
        const target = checkUrl(url, policy);
        let res: ResponseData;
        try {
          res = await pool.request(target.toString(), {
            method: method as HttpMethod,
            headers,
            body,
            signal: linked.signal,
          });
        } catch (e) {
          throw fetchFailure(url, e, req.signal, timedOut, req.timeoutMs);
        }
        const location = headerValue(res.headers.location);
        if (
          req.followRedirects &&
          res.statusCode >= 300 &&
          res.statusCode < 400 &&
          location &&
          hop < MAX_REDIRECTS
        ) {
          await res.body.dump();
          url = new URL(location, target).toString();
          if (
            res.statusCode === 303 ||
            ((res.statusCode === 301 || res.statusCode === 302) && method === 'POST')
          ) {
            method = 'GET';
            body = undefined;
          }
          continue;
        }
        const out: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers)) {
          if (v === undefined || k === 'transfer-encoding' || k === 'connection') continue;
          out[k] = Array.isArray(v) ? v.join(k === 'set-cookie' ? '\n' : ', ') : v;
        }
        try {
          return { status: res.statusCode, headers: out, body: await readCapped(res, defaultMax), url };
        } catch (e) {
          throw fetchFailure(url, e, req.signal, timedOut, req.timeoutMs);
        }
      }
    } finally {
      linked.dispose();
    }
  }

  return {
    fetchPage,
    forward,
    check: (url) => void checkUrl(url, policy),
    close: () => pool.close(),
  };
}

function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${Math.round(n / 1024 / 1024)} MiB` : `${Math.round(n / 1024)} KiB`;
}

const META_CHARSET = /<meta[^>]+charset=["']?\s*([\w-]+)/i;

/** Decodes with the charset of the Content-Type header, else of a <meta> in the first KiB, else UTF-8. */
export function decode(buf: Buffer, contentType: string): string {
  let label = /charset=["']?([\w-]+)/i.exec(contentType)?.[1];
  if (!label) label = META_CHARSET.exec(buf.subarray(0, 1024).toString('latin1'))?.[1];
  return decoderFor((label ?? 'utf-8').toLowerCase()).decode(buf);
}

/** Decoders by charset label (a decoder holds no state between whole-buffer decodes); unknown labels: UTF-8. */
const DECODERS = new Map<string, TextDecoder>();
function decoderFor(label: string): TextDecoder {
  let d = DECODERS.get(label);
  if (!d) {
    try {
      d = new TextDecoder(label);
    } catch {
      d = new TextDecoder('utf-8');
    }
    // Labels come from the pages: a bounded cache.
    if (DECODERS.size >= 64) DECODERS.clear();
    DECODERS.set(label, d);
  }
  return d;
}
