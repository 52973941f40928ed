import type { Request } from 'express';
import type { Client, Configuration, KoaContextWithOIDC } from 'oidc-provider';
import type { Logger } from 'pino';
import { type AttemptLimiter, clientIp } from './guard.js';

// Client ID metadata documents (draft-ietf-oauth-client-id-metadata-document, the MCP authorization spec's
// preferred way for a host to identify itself): the client id is an https URL and the document there is the
// registration. oidc-provider does the protocol (which ids are URLs, the document's checks: client_id equal to
// the URL, no shared secrets, https URIs; the cache and one fetch per URL at a time); this module gives it
// tollgate's transport and policy: the SSRF-guarded fetcher, size and time limits, freshness from the
// response's cache headers, a per-IP budget for fetches and public clients only.

/** The SSRF-guarded GET of src/upstreams/metadata-fetch.ts, injected by the composition root. */
export type MetadataGet = (
  url: string,
  req: { maxBytes: number; timeoutMs: number; signal?: AbortSignal | undefined; accept?: string },
) => Promise<{ status: number; headers: Record<string, string>; body: Buffer }>;

/** The draft's advice and the library's default: a client metadata document is small. */
export const CIMD_MAX_BYTES = 5 * 1024;
/** Any document the library fetches (metadata documents, and key sets a client may name), read no further. */
const FETCH_MAX_BYTES = 64 * 1024;
/** The library aborts its fetches after 2.5 s; the same deadline covers connect, headers and body here. */
export const FETCH_TIMEOUT_MS = 2_500;
/**
 * Cache bounds (seconds) around the freshness a response declares. The floor bounds how often one client id
 * makes us fetch (a document marked no-store is still kept 30 s); the ceiling bounds how long a changed
 * document (a redirect URI withdrawn) goes unnoticed.
 */
export const CIMD_CACHE_FLOOR_S = 30;
export const CIMD_CACHE_CEILING_S = 86_400;

const NULL_BODY = new Set([101, 204, 205, 304]);

export interface CimdPolicy {
  get: MetadataGet;
  /** The registration budget per client IP: a cache miss costs one, as a registration does. */
  limiter: AttemptLimiter;
  /** Behind a TLS proxy the client IP is the proxy's last X-Forwarded-For entry. */
  behindProxy: () => boolean;
  log: Logger;
}

/** The parts of the library's configuration that CIMD needs. */
export function cimdConfiguration(p: CimdPolicy): Pick<Configuration, 'fetch' | 'fetchResponseBodyLimits'> & {
  feature: NonNullable<NonNullable<Configuration['features']>['clientIdMetadataDocument']>;
} {
  // The client ids each request has fetched. The library looks a client up again when rendering an
  // authorization error; a second miss in the same request means the first fetch failed (a success is cached),
  // and fetching again would only double the wait (a silent host: 2 × 2.5 s) and the budget spent.
  const fetched = new WeakMap<object, Set<string>>();
  return {
    fetch: libraryFetch(p.get, p.log),
    fetchResponseBodyLimits: {
      'client_id metadata document': CIMD_MAX_BYTES,
      jwks_uri: FETCH_MAX_BYTES,
      sector_identifier_uri: FETCH_MAX_BYTES,
    },
    feature: {
      enabled: true,
      ack: 'draft-02',
      cacheDuration: { min: CIMD_CACHE_FLOOR_S, max: CIMD_CACHE_CEILING_S },
      // Called on a cache miss only. Outside a request (our consent page looking the client up) there is no
      // caller to charge, and the interaction that led there was charged already.
      async allowFetch(ctx: KoaContextWithOIDC | undefined, clientId: string) {
        if (!ctx?.req) return true;
        const seen = fetched.get(ctx) ?? new Set<string>();
        if (seen.has(clientId)) return false;
        fetched.set(ctx, seen.add(clientId));
        const ip = clientIp(ctx.req as unknown as Request, p.behindProxy());
        if (p.limiter.take(`register:${ip}`) === undefined) return true;
        p.log.info({ client_id: clientId, ip }, 'oauth: metadata document fetch refused (rate limit)');
        return false;
      },
      // A document can only describe a public client: nothing in it can be a shared secret, and a key-based
      // client (private_key_jwt) would make every token request fetch a second document (its key set).
      async allowClient(_ctx: KoaContextWithOIDC, client: Client) {
        if (client.clientAuthMethod === 'none') return true;
        p.log.info(
          { client_id: client.clientId, method: client.clientAuthMethod },
          'oauth: metadata document refused: token_endpoint_auth_method must be none',
        );
        return false;
      },
    },
  };
}

/**
 * The library's `fetch`, carried by the SSRF-guarded fetcher (its own `dispatcher` option is ignored: ours
 * does the same guarding, with TOLLGATE_FETCH_ALLOW). The library reads `cache-control: max-age` or `expires`
 * only, so a 200's freshness is computed here from the full set of headers and handed over as one max-age.
 */
function libraryFetch(get: MetadataGet, log: Logger): NonNullable<Configuration['fetch']> {
  return async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if ((init?.method ?? 'GET').toUpperCase() !== 'GET') {
      throw new TypeError(`only GET is fetched for the authorization server, not ${init?.method}`);
    }
    let res: Awaited<ReturnType<MetadataGet>>;
    try {
      res = await get(url, {
        maxBytes: FETCH_MAX_BYTES,
        timeoutMs: FETCH_TIMEOUT_MS,
        signal: init?.signal ?? undefined,
        accept: new Headers(init?.headers).get('accept') ?? 'application/json',
      });
    } catch (e) {
      log.info({ url, reason: (e as Error).message }, 'oauth: client metadata fetch failed');
      throw e;
    }
    const headers = new Headers();
    for (const [k, v] of Object.entries(res.headers)) {
      if (k !== 'cache-control' && k !== 'expires') headers.set(k, v);
    }
    if (res.status === 200) {
      const fresh = freshnessSeconds(res.headers, Date.now());
      if (fresh !== undefined) headers.set('cache-control', `max-age=${fresh}`);
    } else {
      log.info({ url, status: res.status }, 'oauth: client metadata fetch answered other than 200');
    }
    return new Response(NULL_BODY.has(res.status) ? null : new Uint8Array(res.body), {
      status: res.status,
      headers,
    });
  };
}

/**
 * How many more seconds a response may be reused (RFC 9111 §4.2): 0 for no-store or no-cache (we never
 * revalidate), max-age less the Age a cache on the way added, else Expires relative to the response's own Date
 * (an unparseable Expires means already stale); undefined when the response says nothing (the floor applies).
 */
export function freshnessSeconds(headers: Record<string, string>, nowMs: number): number | undefined {
  const directives = (headers['cache-control'] ?? '')
    .toLowerCase()
    .split(',')
    .map((d) => d.trim());
  if (directives.includes('no-store') || directives.includes('no-cache')) return 0;
  const maxAge = directives.map((d) => /^max-age\s*=\s*"?(\d+)"?$/.exec(d)?.[1]).find((v) => v !== undefined);
  let lifetime = maxAge === undefined ? undefined : Number(maxAge);
  if (lifetime === undefined && headers.expires !== undefined) {
    const expires = Date.parse(headers.expires);
    const date = Date.parse(headers.date ?? '');
    lifetime = Number.isNaN(expires) ? 0 : Math.floor((expires - (Number.isNaN(date) ? nowMs : date)) / 1000);
  }
  if (lifetime === undefined) return undefined;
  const age = /^\d+$/.test(headers.age ?? '') ? Number(headers.age) : 0;
  return Math.max(0, lifetime - age);
}

/**
 * A metadata document that does not state token_endpoint_auth_method describes a public client: RFC 7591's
 * default (client_secret_basic) cannot apply to a document anyone can read, and the library refuses a stated
 * secret method before this runs. Called with the library's client metadata, defaults already filled in: a
 * client id that is an https URL is a document (registered clients get random ids), and client_secret_basic
 * without a secret can only be that default.
 */
export function publicUnlessStated(metadata: Record<string, unknown>): void {
  const id = metadata.client_id;
  if (typeof id !== 'string' || !id.startsWith('https://')) return;
  if (metadata.token_endpoint_auth_method === 'client_secret_basic' && metadata.client_secret === undefined) {
    metadata.token_endpoint_auth_method = 'none';
  }
}

/** The host a metadata-document client was fetched from (shown on the consent page), or undefined. */
export function cimdHost(client: Client | undefined): string | undefined {
  const flagged = (client as { clientIdMetadataDocument?: boolean } | undefined)?.clientIdMetadataDocument;
  return flagged ? URL.parse(client?.clientId ?? '')?.host : undefined;
}
