import type { LookupAddress } from 'node:dns';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { retryDelayMs } from '../../src/alerts/delivery.js';
import { newSigningSecret, signatureHeader } from '../../src/alerts/sign.js';
import { GatewayError } from '../../src/errors.js';
import type { Resolver } from '../../src/upstreams/ssrf-guard.js';
import { createWebhookPoster, SsrfRefusal } from '../../src/upstreams/webhook-post.js';
import { verifyTollgateSignature } from '../helpers/alerts.js';
import { REFUSED_URLS } from './ssrf-corpus.js';

// The alert webhook's outbound side: the SSRF guard when a URL is saved (every spelling of an internal address,
// names that resolve inside, plain http) and again inside the socket's lookup at delivery (DNS rebinding), no
// redirect followed; the signature a receiver checks; the backoff.

const resolveTo =
  (...addresses: string[]): Resolver =>
  (_host, _o, cb) =>
    cb(
      null,
      addresses.map(
        (address) => ({ address, family: address.includes(':') ? 6 : 4 }) satisfies LookupAddress,
      ),
    );

async function refusal(p: Promise<unknown>): Promise<GatewayError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(GatewayError);
  return e as GatewayError;
}

let server: Server;
let base: string;
const seen: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    if (req.url === '/redirect')
      return void res.writeHead(302, { location: 'http://169.254.169.254/' }).end();
    res.writeHead(204).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('[alerts:webhook-ssrf] the webhook URL passes the SSRF guard', () => {
  it(`refuses ${REFUSED_URLS.length} internal URLs when saved, with a 400 naming webhook_url`, async () => {
    const poster = createWebhookPoster({ allow: [] });
    for (const url of REFUSED_URLS) {
      const e = await refusal(poster.check(url, 'webhook_url'));
      expect(e.status, url).toBe(400);
      expect(e.code).toBe('invalid_input');
      expect(e.message, url).toMatch(/^webhook_url: refused: /);
      expect(e.details?.issues, url).toEqual([{ path: 'webhook_url', message: expect.any(String) }]);
    }
    await poster.close();
  });

  it('refuses names that resolve to an internal address, and plain http to hosts not let through', async () => {
    const inside = createWebhookPoster({ allow: [], resolve: resolveTo('93.184.216.34', '10.0.0.7') });
    expect((await refusal(inside.check('https://hooks.example/t', 'webhook_url'))).message).toMatch(
      /hooks\.example resolves to 10\.0\.0\.7 is a private address/,
    );
    const outside = createWebhookPoster({ allow: [], resolve: resolveTo('93.184.216.34') });
    expect(await outside.check('https://hooks.example/t', 'webhook_url')).toBe('https://hooks.example/t');
    expect((await refusal(outside.check('http://hooks.example/t', 'webhook_url'))).message).toMatch(
      /plain http is only allowed to hosts TOLLGATE_FETCH_ALLOW lets through; use https/,
    );
    // The operator's list lets a host (or network) through, over plain http too.
    const intranet = createWebhookPoster({ allow: ['127.0.0.1', 'hooks.internal'] });
    expect(await intranet.check(`${base}/hook`, 'webhook_url')).toBe(`${base}/hook`);
    await Promise.all([inside, outside, intranet].map((p) => p.close()));
  });

  it('checks again at delivery inside the socket lookup: a name that rebinds to an internal address is refused, never connected', async () => {
    let calls = 0;
    const rebinding: Resolver = (host, o, cb) =>
      resolveTo(calls++ === 0 ? '93.184.216.34' : '169.254.169.254')(host, o, cb);
    const poster = createWebhookPoster({ allow: [], resolve: rebinding });
    expect(await poster.check('https://hooks.example/t', 'webhook_url')).toBe('https://hooks.example/t');
    const e = await poster.post('https://hooks.example/t', '{}', {}, 2_000).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(e).toBeInstanceOf(SsrfRefusal);
    expect((e as SsrfRefusal).reason).toMatch(/hooks\.example resolves to 169\.254\.169\.254/);
    await poster.close();
  });

  it('never follows a redirect: the 3xx is the answer', async () => {
    const poster = createWebhookPoster({ allow: ['127.0.0.1'] });
    seen.length = 0;
    expect(await poster.post(`${base}/redirect`, '{}', {}, 2_000)).toEqual({ status: 302 });
    expect(await poster.post(`${base}/ok`, '{}', {}, 2_000)).toEqual({ status: 204 });
    expect(seen).toEqual(['POST /redirect', 'POST /ok']);
    await poster.close();
  });
});

describe('[alerts:signed] the signature', () => {
  /** The receiver's check (test/helpers/alerts.ts, as docs/operator.md shows it), with now in seconds. */
  const verifySignature = (secret: string, body: string, header: string, nowSeconds: number) =>
    verifyTollgateSignature(secret, body, header, nowSeconds * 1000);

  it('is HMAC-SHA256 over "<t>.<body>" like Stripe; a receiver refuses altered, stale or foreign ones', () => {
    const secret = newSigningSecret();
    expect(secret).toMatch(/^tgwhsec_[A-Za-z0-9_-]{43}$/);
    const body = JSON.stringify({ id: 'evt_1', type: 'alert.test' });
    const header = signatureHeader(secret, body, 1_800_000_000);
    expect(header).toMatch(/^t=1800000000,v1=[0-9a-f]{64}$/);
    expect(verifySignature(secret, body, header, 1_800_000_100)).toBe(true);
    expect(verifySignature(secret, `${body} `, header, 1_800_000_100)).toBe(false);
    expect(verifySignature(secret, body, header, 1_800_000_301)).toBe(false);
    expect(verifySignature(newSigningSecret(), body, header, 1_800_000_000)).toBe(false);
    expect(verifySignature(secret, body, 'v1=abc', 1_800_000_000)).toBe(false);
  });

  it('[alerts:retry-backoff] retries back off exponentially from 30 s, at most 2 h apart', () => {
    expect([1, 2, 3, 4, 5, 8, 9, 10].map(retryDelayMs)).toEqual([
      30_000, 60_000, 120_000, 240_000, 480_000, 3_840_000, 7_200_000, 7_200_000,
    ]);
  });
});
