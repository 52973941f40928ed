import type { LookupAddress } from 'node:dns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import {
  addressRefusal,
  checkUrl,
  compilePolicy,
  guardedLookup,
  type Resolver,
  SsrfRefusal,
} from '../../src/upstreams/ssrf-guard.js';
import { createWebFetcher } from '../../src/upstreams/web-fetch.js';
import { html, startSite, type TestSite } from '../helpers/site.js';
import { REFUSED_URLS } from './ssrf-corpus.js';

// The SSRF guard on its own: every spelling of an internal address is refused before connecting, names are
// refused by the address they resolve to inside the socket's lookup (so the checked address is the connected
// one), and TOLLGATE_FETCH_ALLOW lets listed hosts and CIDRs through.

const STRICT = compilePolicy({ allow: [] });

function refusal(url: string): GatewayError | undefined {
  try {
    checkUrl(url, STRICT);
    return undefined;
  } catch (e) {
    return e as GatewayError;
  }
}

/** A resolver answering from a table, as DNS would for names pointing at internal addresses. */
function fakeResolver(table: Record<string, string[]>): Resolver {
  return (hostname, _opts, cb) => {
    const ips = table[hostname];
    if (!ips) {
      const err = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
      return cb(err, []);
    }
    cb(
      null,
      ips.map((address): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 })),
    );
  };
}

describe('[ssrf:refuse-private] the SSRF guard refuses internal targets', () => {
  it(`refuses all ${REFUSED_URLS.length} internal spellings, schemes and credentials with invalid_input on url`, () => {
    expect(REFUSED_URLS.length).toBeGreaterThanOrEqual(30);
    const passed = REFUSED_URLS.filter((u) => refusal(u) === undefined);
    expect(passed).toEqual([]);
    for (const u of REFUSED_URLS) {
      const e = refusal(u) as GatewayError;
      expect(e.code, u).toBe('invalid_input');
      expect(e.status, u).toBe(400);
      expect(JSON.stringify(e.details), u).toContain('"path":"url"');
    }
  });

  it('remembers the verdict on an IP literal without ever letting a refused one through, within a bound', () => {
    const policy = compilePolicy({ allow: ['10.1.0.0/16'] });
    for (let i = 0; i < 3; i++) {
      expect(() => checkUrl('http://169.254.169.254/latest/meta-data/', policy)).toThrow(/linkLocal/);
      expect(() => checkUrl('http://[::ffff:127.0.0.1]/', policy)).toThrow(/Refused/);
      expect(checkUrl('http://10.1.2.3/', policy).hostname).toBe('10.1.2.3');
      expect(checkUrl('http://8.8.8.8/', policy).hostname).toBe('8.8.8.8');
    }
    for (let i = 0; i < 5_000; i++) checkUrl(`http://8.8.${i >> 8}.${i & 255}/`, policy);
    expect(policy.verdicts.size).toBeLessThanOrEqual(4096);
    expect(() => checkUrl('http://127.0.0.1/', policy)).toThrow(/loopback/);
  });

  it('lets public addresses and names through checkUrl', () => {
    for (const u of ['http://8.8.8.8/', 'https://example.com/a?b=1', 'http://[2606:4700::1111]/']) {
      expect(refusal(u), u).toBeUndefined();
    }
  });

  it('classifies addresses by range, including embedded IPv4 forms', () => {
    expect(addressRefusal('8.8.8.8', STRICT)).toBeNull();
    expect(addressRefusal('2606:4700::1111', STRICT)).toBeNull();
    for (const ip of [
      '127.0.0.1',
      '::ffff:10.0.0.1',
      '::7f00:1',
      '64:ff9b::a9fe:a9fe',
      '100::1',
      'fec0::1',
    ]) {
      expect(addressRefusal(ip, STRICT), ip).not.toBeNull();
    }
  });
});

describe('[ssrf:dns-rebinding] names are judged by the address the socket connects to', () => {
  let site: TestSite;
  beforeAll(async () => {
    site = await startSite({
      '/': (_q, r) => void r.writeHead(200, { 'content-type': 'text/html' }).end(html('hi')),
    });
  });
  afterAll(() => site.close());

  it('refuses a name resolving to an internal address, and never connects to it', async () => {
    const port = new URL(site.url).port;
    const resolve = fakeResolver({
      'rebind.test': ['127.0.0.1'],
      'mixed.test': ['93.184.216.34', '10.1.2.3'],
      'meta.test': ['169.254.169.254'],
      'v6.test': ['::1'],
    });
    const fetcher = createWebFetcher({ allow: [], resolve });
    for (const host of ['rebind.test', 'mixed.test', 'meta.test', 'v6.test']) {
      const err = await fetcher
        .fetchPage(`http://${host}:${port}/`, { signal: AbortSignal.timeout(5000) })
        .then(
          () => undefined,
          (e: unknown) => e as GatewayError,
        );
      expect(err?.code, host).toBe('invalid_input');
      expect(err?.message, host).toContain('resolves to');
    }
    expect(site.hits.get('/') ?? 0).toBe(0);
    await fetcher.close();
  });

  it('the lookup hook itself refuses, for any socket that uses it', async () => {
    const lookup = guardedLookup(STRICT, fakeResolver({ 'inside.test': ['192.168.0.7'] }));
    const err = await new Promise<unknown>((r) => lookup('inside.test', {}, (e) => r(e)));
    expect(err).toBeInstanceOf(SsrfRefusal);
  });
});

describe('[ssrf:fetch-allow] TOLLGATE_FETCH_ALLOW', () => {
  let site: TestSite;
  beforeAll(async () => {
    site = await startSite({
      '/': (_q, r) => void r.writeHead(200, { 'content-type': 'text/html' }).end(html('ok')),
    });
  });
  afterAll(() => site.close());

  it('lets an allowed CIDR or host through and still refuses the rest', async () => {
    const port = new URL(site.url).port;
    for (const allow of [['127.0.0.0/8'], ['127.0.0.1'], ['localhost']]) {
      const f = createWebFetcher({ allow });
      const url = allow[0] === 'localhost' ? `http://localhost:${port}/` : `${site.url}/`;
      const page = await f.fetchPage(url, { signal: AbortSignal.timeout(5000) });
      expect(page.status, allow.join()).toBe(200);
      expect(() => checkUrl('http://10.0.0.1/', compilePolicy({ allow }))).toThrow(GatewayError);
      await f.close();
    }
  });
});
