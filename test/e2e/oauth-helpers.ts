import { createHash, randomBytes } from 'node:crypto';
import { sha256Hex } from '../../src/lib/hash.js';
import type { Gateway } from '../../src/main.js';

// Helpers for the OAuth tests: a user agent without a browser (a cookie jar that honours paths, manual
// redirects, our forms filled in), PKCE, raw registration, and in-memory OAuthClientProviders for the SDKs.

export class CookieJar {
  private readonly cookies = new Map<string, { value: string; path: string }>();
  /** Sends requests for the public URL `from` to the listener `to` (a gateway whose public URL is not its own). */
  rewrite: { from: string; to: string } | undefined;

  store(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair = '', ...attrs] = line.split(';').map((s) => s.trim());
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      let path = '/';
      let expired = value === '';
      for (const a of attrs) {
        const [k = '', v = ''] = a.split('=');
        if (k.toLowerCase() === 'path') path = v;
        if (k.toLowerCase() === 'max-age' && Number(v) <= 0) expired = true;
        if (k.toLowerCase() === 'expires' && Date.parse(v) < Date.now()) expired = true;
      }
      const key = `${name}\u0000${path}`;
      if (expired) this.cookies.delete(key);
      else this.cookies.set(key, { value, path });
    }
  }

  header(url: string): string {
    const path = new URL(url).pathname;
    return [...this.cookies.entries()]
      .filter(([, c]) => path === c.path || path.startsWith(c.path.endsWith('/') ? c.path : `${c.path}/`))
      .map(([k, c]) => `${k.split('\u0000')[0]}=${c.value}`)
      .join('; ');
  }

  names(): string[] {
    return [...this.cookies.keys()].map((k) => k.split('\u0000')[0] as string);
  }
}

export interface Hop {
  status: number;
  location: string | null;
  text: string;
  res: Response;
}

/** One request without following redirects, cookies from and into the jar. */
export async function hop(
  jar: CookieJar,
  url: string,
  init: { method?: string; form?: Record<string, string>; headers?: Record<string, string> } = {},
): Promise<Hop> {
  const headers: Record<string, string> = { ...init.headers };
  if (jar.rewrite && url.startsWith(jar.rewrite.from))
    url = jar.rewrite.to + url.slice(jar.rewrite.from.length);
  const cookie = jar.header(url);
  if (cookie) headers.cookie = cookie;
  let body: string | undefined;
  if (init.form) {
    body = new URLSearchParams(init.form).toString();
    headers['content-type'] = 'application/x-www-form-urlencoded';
  }
  const res = await fetch(url, {
    method: init.method ?? (body ? 'POST' : 'GET'),
    headers,
    body,
    redirect: 'manual',
  });
  jar.store(res);
  const location = res.headers.get('location');
  return {
    status: res.status,
    location: location ? new URL(location, url).href : null,
    text: await res.text(),
    res,
  };
}

/** The CSRF token and the action of the form whose action ends with `suffix`. */
export function formOf(html: string, suffix: string): { action: string; csrf: string } {
  for (const m of html.matchAll(/<form method="post" action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/g)) {
    const action = (m[1] as string).replaceAll('&#38;', '&');
    if (!action.endsWith(suffix)) continue;
    const csrf = /name="csrf" value="([^"]+)"/.exec(m[2] as string)?.[1] ?? '';
    return { action, csrf };
  }
  throw new Error(`no form ending with ${suffix} in:\n${html.slice(0, 2000)}`);
}

export interface SignInOptions {
  apiKey: string;
  /** Use the upstream provider's button instead of the API key. */
  federated?: boolean;
  /** A choice of the consent form: '1', '5', '20', 'none' or 'custom' (with customUsd). */
  dailyLimit?: string;
  customUsd?: string;
  jar?: CookieJar;
}

/**
 * Plays the user from the authorization URL to the client's redirect: sign in with an API key, consent, and
 * return the final redirect URL (carrying code, state and iss). Every page on the way is returned too.
 */
export async function signInAndConsent(
  authorizationUrl: string,
  redirectUri: string,
  o: SignInOptions,
): Promise<{ callback: URL; pages: Hop[] }> {
  const jar = o.jar ?? new CookieJar();
  const pages: Hop[] = [];
  let next: Hop = await hop(jar, authorizationUrl);
  for (let i = 0; i < 20; i++) {
    if (next.location?.startsWith(redirectUri)) return { callback: new URL(next.location), pages };
    if (next.status >= 300 && next.status < 400 && next.location) {
      next = await hop(jar, next.location);
      continue;
    }
    if (next.status !== 200) throw new Error(`unexpected ${next.status}: ${next.text.slice(0, 500)}`);
    pages.push(next);
    if (o.federated && next.text.includes('/federated"')) {
      const f = formOf(next.text, '/federated');
      next = await hop(jar, f.action, { form: { csrf: f.csrf } });
    } else if (next.text.includes('action="') && next.text.includes('/login"')) {
      const f = formOf(next.text, '/login');
      next = await hop(jar, f.action, { form: { csrf: f.csrf, api_key: o.apiKey } });
    } else if (next.text.includes('/consent"')) {
      const f = formOf(next.text, '/consent');
      const form: Record<string, string> = { csrf: f.csrf, daily_limit: o.dailyLimit ?? '5' };
      if (o.customUsd !== undefined) form.custom_limit_usd = o.customUsd;
      next = await hop(jar, f.action, { form });
    } else {
      throw new Error(`unexpected page: ${next.text.slice(0, 500)}`);
    }
  }
  throw new Error('too many hops');
}

export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export async function register(
  baseUrl: string,
  metadata: Record<string, unknown>,
): Promise<Record<string, string>> {
  const res = await fetch(`${baseUrl}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(metadata),
  });
  const body = (await res.json()) as Record<string, string>;
  if (res.status !== 201) throw new Error(`registration failed ${res.status}: ${JSON.stringify(body)}`);
  return body;
}

export async function tokenRequest(baseUrl: string, form: Record<string, string>) {
  const res = await fetch(`${baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  // biome-ignore lint/suspicious/noExplicitAny: token responses are read loosely in assertions
  return { status: res.status, body: (await res.json()) as any };
}

/** A native (loopback) public client's registration, as the MCP SDKs send it. */
export function nativeClient(redirectUri: string, extra: Record<string, unknown> = {}) {
  return {
    client_name: 'Test MCP host',
    redirect_uris: [redirectUri],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    application_type: 'native',
    ...extra,
  };
}

/** What the v1 and v2 SDK clients persist between steps, in memory; the authorization URL is captured. */
export class MemoryOAuthProvider {
  authorizationUrl: URL | undefined;
  // biome-ignore lint/suspicious/noExplicitAny: the SDKs' client-information and token types differ by version
  private info: any;
  // biome-ignore lint/suspicious/noExplicitAny: as above
  private saved: any;
  private verifier = '';
  // biome-ignore lint/suspicious/noExplicitAny: as above
  private discovery: any;

  constructor(
    readonly redirectUrl: string,
    readonly name = 'SDK test host',
  ) {}

  get clientMetadata() {
    return {
      client_name: this.name,
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: unknown) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: unknown) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
  saveDiscoveryState(state: unknown) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
}

export interface CodeFlowOptions extends Omit<SignInOptions, 'apiKey'> {
  apiKey: string;
  redirectUri: string;
  scope?: string;
  state?: string;
  resource?: string;
  extra?: Record<string, string>;
}

/** The authorization request of a PKCE client, played through sign-in and consent to the code. */
export async function codeFlow(baseUrl: string, clientId: string, o: CodeFlowOptions) {
  const p = pkce();
  const params = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: o.redirectUri,
    scope: o.scope ?? 'mcp offline_access',
    resource: o.resource ?? `${baseUrl}/mcp`,
    code_challenge: p.challenge,
    code_challenge_method: 'S256',
    state: o.state ?? randomBytes(8).toString('hex'),
    prompt: 'consent',
    ...o.extra,
  });
  const { callback, pages } = await signInAndConsent(
    `${baseUrl}/oauth/authorize?${params}`,
    o.redirectUri,
    o,
  );
  return { code: callback.searchParams.get('code') as string, verifier: p.verifier, callback, pages };
}

/** Registers a native client and runs the code flow to tokens. */
export async function connectedClient(baseUrl: string, apiKey: string, o: Partial<CodeFlowOptions> = {}) {
  const redirectUri = o.redirectUri ?? 'http://127.0.0.1:9/callback';
  const client = await register(baseUrl, nativeClient(redirectUri));
  const flow = await codeFlow(baseUrl, client.client_id as string, { ...o, apiKey, redirectUri });
  const tok = await tokenRequest(baseUrl, {
    grant_type: 'authorization_code',
    code: flow.code,
    code_verifier: flow.verifier,
    redirect_uri: redirectUri,
    client_id: client.client_id as string,
  });
  if (tok.status !== 200) throw new Error(`token request failed: ${JSON.stringify(tok.body)}`);
  return {
    clientId: client.client_id as string,
    redirectUri,
    accessToken: tok.body.access_token as string,
    refreshToken: tok.body.refresh_token as string,
    tokenBody: tok.body,
    flow,
  };
}

/** Raw JSON-RPC against /mcp (a 2025-era stateless request needs no prior initialize for tools/call). */
export async function mcpPost(baseUrl: string, token: string, body: unknown) {
  const res = await fetch(`${baseUrl}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
    },
    body: JSON.stringify(body),
  });
  return { status: res.status, challenge: res.headers.get('www-authenticate'), text: await res.text() };
}

export const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

/** Makes a stored access token expired, as if its time had run out (on either backend). */
export async function expireToken(gw: Gateway, token: string): Promise<void> {
  const past = Math.floor(Date.now() / 1000) - 5;
  const byToken = <Q extends { where(c: 'model' | 'id_hash', op: '=', v: string): Q }>(q: Q) =>
    q.where('model', '=', 'AccessToken').where('id_hash', '=', sha256Hex(token));
  const db = gw.state.stores;
  const row = await byToken(db.selectFrom('oauth_store').select('payload')).executeTakeFirstOrThrow();
  const payload = JSON.stringify({ ...JSON.parse(row.payload), exp: past });
  await byToken(db.updateTable('oauth_store').set({ payload, expires_at: past * 1000 })).execute();
}
