import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { GatewayError } from '../errors.js';
import { linkSignals } from '../lib/abort.js';
import { UpstreamPool } from '../lib/upstream-pool.js';
import {
  type CompiledPolicy,
  checkUrl,
  compilePolicy,
  guardedLookup,
  hostAllowed,
  inAllowedCidr,
  type Resolver,
  type SsrfPolicy,
  SsrfRefusal,
} from './ssrf-guard.js';

// Alert webhooks: a POST to a URL an account holder chose, so it goes through the SSRF guard like every fetch of
// a caller's URL. Checked when saved (the URL, and every address its name resolves to now) and again at every
// delivery inside the socket's lookup (the address checked is the address connected: a name that resolves
// elsewhere later, DNS rebinding, is refused then). https, or plain http only to a host TOLLGATE_FETCH_ALLOW lets
// through (an intranet, tests). Redirects are never followed: a 3xx is a failed delivery. The answer's body is
// read and dropped, up to a small limit.

const CONNECT_TIMEOUT_MS = 5_000;
const MAX_ANSWER_BYTES = 64 * 1024;
const USER_AGENT = 'tollgate/0.1 (alerts; +https://github.com/tollgate)';

export interface WebhookPostConfig extends SsrfPolicy {
  /** Tests resolve names offline with this. */
  resolve?: Resolver | undefined;
}

export interface WebhookAnswer {
  status: number;
}

export interface WebhookPoster {
  /** Refuses (400 naming `field`) a URL that may not be a webhook: not http(s), not public, not resolvable. */
  check(url: string, field: string): Promise<string>;
  /** POSTs `body`; resolves with the answer's status, rejects with the reason it could not be delivered. */
  post(
    url: string,
    body: string,
    headers: Record<string, string>,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<WebhookAnswer>;
  close(): Promise<void>;
}

/** Plain http only to a host name, or an address in a network, that TOLLGATE_FETCH_ALLOW lists. */
function plainHttpAllowed(u: URL, policy: CompiledPolicy): boolean {
  const host = u.hostname.replace(/^\[|\]$/g, '');
  return hostAllowed(host, policy) || (ipaddr.isValid(host) && inAllowedCidr(ipaddr.parse(host), policy));
}

/** The reason in the guard's refusal ("Refused to fetch <url>: <reason>. Only public …"). */
function reasonOf(e: unknown, url: string): string {
  if (e instanceof SsrfRefusal) return e.reason;
  const m = (e as Error).message ?? String(e);
  const start = m.startsWith(`Refused to fetch ${url}: `) ? `Refused to fetch ${url}: `.length : 0;
  const end = m.indexOf('. Only public');
  return m.slice(start, end > start ? end : undefined);
}

export function createWebhookPoster(config: WebhookPostConfig): WebhookPoster {
  const policy = compilePolicy(config);
  const lookup = guardedLookup(policy, config.resolve);
  const pool = new UpstreamPool({
    connect: { lookup: lookup as never, timeout: CONNECT_TIMEOUT_MS },
    connections: 16,
    keepAliveTimeout: 10_000,
  });

  const refusedField = (field: string, message: string) =>
    new GatewayError('invalid_input', `${field}: ${message}`, {
      details: { issues: [{ path: field, message }] },
    });

  /** The URL as the guard sees it, or why not. */
  function parse(url: string): URL {
    const u = checkUrl(url, policy);
    if (u.protocol === 'http:' && !plainHttpAllowed(u, policy)) {
      throw new SsrfRefusal(
        'plain http is only allowed to hosts TOLLGATE_FETCH_ALLOW lets through; use https',
      );
    }
    if (u.hash) throw new SsrfRefusal('a URL with a #fragment is not a webhook URL');
    return u;
  }

  async function check(url: string, field: string): Promise<string> {
    let u: URL;
    try {
      u = parse(url);
    } catch (e) {
      throw refusedField(
        field,
        `refused: ${reasonOf(e, url)}. Only a public https address can receive alerts`,
      );
    }
    const host = u.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) === 0) {
      // Every address the name resolves to now must be public (checked again at each delivery).
      await new Promise<void>((resolve, reject) =>
        lookup(host, { all: true }, (err) =>
          err
            ? reject(
                refusedField(
                  field,
                  err instanceof SsrfRefusal
                    ? `refused: ${err.reason}. Only a public https address can receive alerts`
                    : `${host} does not resolve (${(err as NodeJS.ErrnoException).code ?? err.message})`,
                ),
              )
            : resolve(),
        ),
      );
    }
    return u.toString();
  }

  const post: WebhookPoster['post'] = async (url, body, headers, timeoutMs, signal) => {
    const target = parse(url);
    const linked = linkSignals([signal], timeoutMs);
    try {
      // undici's request never follows redirects: a 3xx comes back as it is.
      const res = await pool.request(target, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': USER_AGENT, ...headers },
        body,
        signal: linked.signal,
      });
      let bytes = 0;
      for await (const chunk of res.body) {
        bytes += (chunk as Buffer).length;
        if (bytes > MAX_ANSWER_BYTES) {
          res.body.destroy();
          break;
        }
      }
      return { status: res.statusCode };
    } catch (e) {
      const cause = (e as { cause?: unknown })?.cause;
      if (e instanceof SsrfRefusal) throw e;
      if (cause instanceof SsrfRefusal) throw cause;
      if (linked.timedOut) throw new Error(`no answer within ${timeoutMs} ms`);
      if (signal?.aborted) throw new Error('abandoned: the gateway is stopping');
      const code = (e as { code?: string })?.code ?? (cause as { code?: string })?.code;
      throw new Error(`unreachable (${code ?? (e as Error)?.message ?? 'network error'})`);
    } finally {
      linked.dispose();
    }
  };

  return { check, post, close: () => pool.close() };
}

export { SsrfRefusal } from './ssrf-guard.js';
