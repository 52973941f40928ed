import { rootCertificates } from 'node:tls';
import { linkSignals } from '../lib/abort.js';
import { UpstreamPool } from '../lib/upstream-pool.js';
import {
  checkUrl,
  compilePolicy,
  guardedLookup,
  type Resolver,
  type SsrfPolicy,
  SsrfRefusal,
} from './ssrf-guard.js';

// Small documents fetched for the authorization server at URLs that a stranger chose: OAuth client ID metadata
// documents (the client id is the URL) and the key sets they may name. Every request goes through the SSRF guard
// (the URL before connecting, each resolved address inside the socket's lookup, TOLLGATE_FETCH_ALLOW to let
// tests and intranets through), https only, no redirects (the document must live at the client id itself), a
// byte limit checked against Content-Length and again while streaming, and one deadline for the whole exchange.

const CONNECT_TIMEOUT_MS = 2_000;
const USER_AGENT = 'tollgate/0.1 (OAuth client metadata)';

export interface MetadataFetchConfig extends SsrfPolicy {
  /**
   * PEM certificates trusted besides Node's bundled roots. Only tests set it (their documents are served over
   * https on loopback with a test CA); operators with a private CA use NODE_EXTRA_CA_CERTS instead.
   */
  ca?: string | undefined;
  /** Tests resolve names offline with this. */
  resolve?: Resolver;
}

export interface MetadataRequest {
  maxBytes: number;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  accept?: string;
}

export interface MetadataResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** Why a document could not be fetched, in words for the operator's log (never shown to the client). */
export class MetadataFetchError extends Error {
  override readonly name = 'MetadataFetchError';
}

export interface MetadataFetcher {
  get(url: string, req: MetadataRequest): Promise<MetadataResponse>;
  close(): Promise<void>;
}

export function createMetadataFetcher(config: MetadataFetchConfig): MetadataFetcher {
  const policy = compilePolicy(config);
  const pool = new UpstreamPool({
    connect: {
      lookup: guardedLookup(policy, config.resolve) as never,
      timeout: CONNECT_TIMEOUT_MS,
      // A `ca` replaces Node's roots rather than adding to them, so the bundled roots come first.
      ...(config.ca ? { ca: [...rootCertificates, config.ca] } : {}),
    },
    connections: 8,
    keepAliveTimeout: 5_000,
  });

  async function get(url: string, req: MetadataRequest): Promise<MetadataResponse> {
    let target: URL;
    try {
      target = checkUrl(url, policy);
    } catch (e) {
      throw new MetadataFetchError(`refused by the SSRF guard: ${(e as Error).message}`);
    }
    if (target.protocol !== 'https:') throw new MetadataFetchError('only https URLs are fetched');
    const linked = linkSignals([req.signal], req.timeoutMs);
    try {
      // undici's request never follows redirects: a 3xx comes back as it is, and the caller refuses it.
      const res = await pool.request(target, {
        method: 'GET',
        headers: { accept: req.accept ?? 'application/json', 'user-agent': USER_AGENT },
        signal: linked.signal,
      });
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.headers)) {
        if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
      }
      const declared = Number(headers['content-length']);
      if (declared > req.maxBytes) {
        res.body.destroy();
        throw new MetadataFetchError(`larger than ${req.maxBytes} bytes (Content-Length ${declared})`);
      }
      const chunks: Buffer[] = [];
      let bytes = 0;
      for await (const chunk of res.body) {
        bytes += (chunk as Buffer).length;
        if (bytes > req.maxBytes) {
          res.body.destroy();
          throw new MetadataFetchError(`larger than ${req.maxBytes} bytes`);
        }
        chunks.push(chunk as Buffer);
      }
      return { status: res.statusCode, headers, body: Buffer.concat(chunks) };
    } catch (e) {
      throw failure(e, linked.timedOut, req);
    } finally {
      linked.dispose();
    }
  }

  return { get, close: () => pool.close() };
}

function failure(e: unknown, timedOut: boolean, req: MetadataRequest): MetadataFetchError {
  if (e instanceof MetadataFetchError) return e;
  const cause = (e as { cause?: unknown })?.cause;
  const refusal = e instanceof SsrfRefusal ? e : cause instanceof SsrfRefusal ? cause : undefined;
  if (refusal) return new MetadataFetchError(`refused by the SSRF guard: ${refusal.reason}`);
  if (timedOut) return new MetadataFetchError(`no complete answer within ${req.timeoutMs} ms`);
  if (req.signal?.aborted) return new MetadataFetchError('abandoned by the caller (deadline)');
  const code = (e as { code?: string })?.code ?? (cause as { code?: string })?.code;
  return new MetadataFetchError(`unreachable (${code ?? (e as Error)?.message ?? 'network error'})`);
}
