import type { LookupAddress } from 'node:dns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshnessSeconds, publicUnlessStated } from '../../auth/oauth/cimd.js';
import { createMetadataFetcher, type MetadataFetcher } from '../../src/upstreams/metadata-fetch.js';
import type { Resolver } from '../../src/upstreams/ssrf-guard.js';
import { startTlsSite, TEST_CA, type TlsSite } from '../helpers/tls-site.js';

// The transport of client ID metadata documents on its own: the SSRF guard on every request, https only, no
// redirects, the byte limit (declared and streamed), one deadline, TLS verified against Node's roots (plus the
// test CA only when given); and the freshness that a document's cache headers give it.

const LIMITS = { maxBytes: 5 * 1024, timeoutMs: 1_000 };
let site: TlsSite;
let untrusted: TlsSite;
let allowed: MetadataFetcher;
const fetchers: MetadataFetcher[] = [];

function fetcher(o: Parameters<typeof createMetadataFetcher>[0]): MetadataFetcher {
  const f = createMetadataFetcher(o);
  fetchers.push(f);
  return f;
}

async function reason(p: Promise<unknown>): Promise<string> {
  return p.then(
    () => 'fetched',
    (e: Error) => `${e.name}: ${e.message}`,
  );
}

beforeAll(async () => {
  site = await startTlsSite();
  untrusted = await startTlsSite({ untrusted: true });
  for (const s of [site, untrusted]) {
    s.route('/client.json', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' });
      res.end('{"client_id":"x"}');
    });
  }
  site.route('/moved.json', (_req, res) => {
    res.writeHead(302, { location: '/client.json' }).end();
  });
  site.route('/big-declared.json', (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(1024 * 1024) });
    res.end(Buffer.alloc(1024 * 1024, 0x20));
  });
  site.route('/big-streamed.json', (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const chunk = Buffer.alloc(1024, 0x20);
    let sent = 0;
    const push = () => {
      while (sent < 4096 && res.write(chunk)) sent++;
      if (sent < 4096) res.once('drain', push);
      else res.end();
    };
    push();
  });
  site.route('/silent.json', () => undefined);
  allowed = fetcher({ allow: ['127.0.0.1'], ca: TEST_CA });
});
afterAll(async () => {
  for (const f of fetchers) await f.close();
  await site.close();
  await untrusted.close();
});

describe('[oauth:cimd-ssrf] the metadata fetcher', () => {
  it('fetches an https document from an allowed host, verifying its certificate', async () => {
    const r = await allowed.get(`${site.url}/client.json`, LIMITS);
    expect(r.status).toBe(200);
    expect(r.headers['cache-control']).toBe('max-age=60');
    expect(JSON.parse(r.body.toString())).toEqual({ client_id: 'x' });
  });

  it('refuses loopback, private and special addresses unless TOLLGATE_FETCH_ALLOW lists them', async () => {
    const strict = fetcher({ allow: [], ca: TEST_CA });
    expect(await reason(strict.get(`${site.url}/client.json`, LIMITS))).toMatch(/SSRF guard/);
    expect(await reason(strict.get('https://169.254.169.254/latest/meta-data', LIMITS))).toMatch(
      /SSRF guard/,
    );
    expect(await reason(strict.get('https://[::1]/client.json', LIMITS))).toMatch(/SSRF guard/);
    expect(await reason(strict.get('https://localhost/client.json', LIMITS))).toMatch(/SSRF guard/);
    // A public-looking name that resolves to an internal address is refused inside the socket's lookup.
    const resolve: Resolver = (_host, _o, cb) =>
      cb(null, [{ address: '10.0.0.7', family: 4 } satisfies LookupAddress]);
    const rebinding = fetcher({ allow: [], resolve });
    expect(await reason(rebinding.get('https://client.example/metadata.json', LIMITS))).toMatch(
      /SSRF guard: client\.example resolves to 10\.0\.0\.7/,
    );
  });

  it('fetches https only', async () => {
    expect(await reason(allowed.get(`http://127.0.0.1:1/client.json`, LIMITS))).toMatch(/only https/);
    expect(await reason(allowed.get('file:///etc/passwd', LIMITS))).toMatch(/SSRF guard/);
  });

  it('refuses a certificate that no trusted CA signed (and the test CA when not given)', async () => {
    const certificate = /unreachable \([A-Z_]*(CERT|SIGNATURE|ISSUER)[A-Z_]*\)/;
    expect(await reason(allowed.get(`${untrusted.url}/client.json`, LIMITS))).toMatch(certificate);
    const noTestCa = fetcher({ allow: ['127.0.0.1'] });
    expect(await reason(noTestCa.get(`${site.url}/client.json`, LIMITS))).toMatch(certificate);
  });

  it('never follows a redirect: the 3xx comes back as it is', async () => {
    const before = site.hits.get('/client.json') ?? 0;
    const r = await allowed.get(`${site.url}/moved.json`, LIMITS);
    expect(r.status).toBe(302);
    expect(site.hits.get('/client.json') ?? 0).toBe(before);
  });

  it('stops at the byte limit, declared or streamed', async () => {
    expect(await reason(allowed.get(`${site.url}/big-declared.json`, LIMITS))).toMatch(
      /larger than 5120 bytes \(Content-Length 1048576\)/,
    );
    expect(await reason(allowed.get(`${site.url}/big-streamed.json`, LIMITS))).toMatch(
      /larger than 5120 bytes/,
    );
  });

  it('gives up at the deadline', async () => {
    const started = Date.now();
    expect(await reason(allowed.get(`${site.url}/silent.json`, { ...LIMITS, timeoutMs: 300 }))).toMatch(
      /no complete answer within 300 ms/,
    );
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});

describe('[oauth:cimd-cache] freshness from cache headers', () => {
  const now = Date.parse('2026-07-28T12:00:00Z');
  const at = (s: number) => new Date(now + s * 1000).toUTCString();

  it('takes max-age, less the Age a cache on the way added', () => {
    expect(freshnessSeconds({ 'cache-control': 'public, max-age=600' }, now)).toBe(600);
    expect(freshnessSeconds({ 'cache-control': 'max-age=600', age: '100' }, now)).toBe(500);
    expect(freshnessSeconds({ 'cache-control': 'max-age=60', age: '100' }, now)).toBe(0);
    // max-age wins over Expires (RFC 9111 §4.2.1).
    expect(freshnessSeconds({ 'cache-control': 'max-age=10', expires: at(3600) }, now)).toBe(10);
  });

  it('treats no-store and no-cache as not reusable', () => {
    expect(freshnessSeconds({ 'cache-control': 'no-store' }, now)).toBe(0);
    expect(freshnessSeconds({ 'cache-control': 'max-age=600, no-cache' }, now)).toBe(0);
  });

  it('reads Expires against the response Date, and an unparseable Expires as stale', () => {
    expect(freshnessSeconds({ expires: at(900), date: at(0) }, now)).toBe(900);
    // The server's clock is an hour behind ours: its own Date is the reference, not our clock.
    expect(freshnessSeconds({ expires: at(-3000), date: at(-3600) }, now)).toBe(600);
    expect(freshnessSeconds({ expires: at(300) }, now)).toBe(300);
    expect(freshnessSeconds({ expires: '0' }, now)).toBe(0);
  });

  it('says nothing when the response says nothing (the 30 s floor applies)', () => {
    expect(freshnessSeconds({}, now)).toBeUndefined();
    expect(freshnessSeconds({ 'cache-control': 'public' }, now)).toBeUndefined();
  });
});

describe('[oauth:cimd] a document that does not state its token endpoint method', () => {
  it('is a public client; a registered (random id) client keeps the library default', () => {
    const doc = {
      client_id: 'https://host.example/c.json',
      token_endpoint_auth_method: 'client_secret_basic',
    };
    publicUnlessStated(doc);
    expect(doc.token_endpoint_auth_method).toBe('none');
    const registered = { client_id: 'Xy7_random', token_endpoint_auth_method: 'client_secret_basic' };
    publicUnlessStated(registered);
    expect(registered.token_endpoint_auth_method).toBe('client_secret_basic');
    const withSecret = {
      client_id: 'https://host.example/c.json',
      token_endpoint_auth_method: 'client_secret_basic',
      client_secret: 's',
    };
    publicUnlessStated(withSecret);
    expect(withSecret.token_endpoint_auth_method).toBe('client_secret_basic');
  });
});
