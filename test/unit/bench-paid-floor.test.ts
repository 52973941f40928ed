import { createPublicKey, type JsonWebKey, verify } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ScriptServer, startFakePage, startPaidFloor } from '../../bench/process.js';

// The bench's paid-call floor (bench/paid-floor.mjs) is what the shim's targets are read against: it must do
// what it claims — refuse an unknown key, answer the page with the shim's envelope after a durable charge, and
// carry a receipt signed by the key it publishes — or its figures say nothing.

let page: { url: string; close(): Promise<void> };
let floor: ScriptServer;

beforeAll(async () => {
  page = await startFakePage();
  floor = await startPaidFloor();
});
afterAll(async () => {
  await floor?.stop();
  await page?.close();
});

const call = (key: string, body: unknown) =>
  fetch(floor.url, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

describe('the paid-call floor of the bench', () => {
  it('[bench:paid-floor] refuses an unknown key and a body without a url', async () => {
    expect((await call('tg_sk_wrong', { url: page.url })).status).toBe(401);
    expect((await call(floor.key, { link: page.url })).status).toBe(422);
  });

  it('[bench:paid-floor] answers the page in the envelope, with a receipt of the charge', async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, () => call(floor.key, { url: page.url })));
    const ids = new Set<string>();
    for (const r of answers) {
      expect(r.status).toBe(200);
      const env = (await r.json()) as {
        ok: boolean;
        data: { markdown: string };
        charged_cents: number;
        transaction_id: string;
      };
      expect(env).toMatchObject({ ok: true, charged_cents: 1 });
      expect(env.data.markdown).toContain('payload');
      ids.add(env.transaction_id);
      const [header, claims, sig] = (r.headers.get('tollgate-receipt') ?? '').split('.') as [
        string,
        string,
        string,
      ];
      expect(JSON.parse(Buffer.from(header, 'base64url').toString())).toMatchObject({ alg: 'ES256' });
      const c = JSON.parse(Buffer.from(claims, 'base64url').toString());
      expect(c).toMatchObject({ jti: env.transaction_id, amount_micros: 10_000, charged_cents: 1 });
      const jwk = (await (await fetch(`${floor.url}/jwks`)).json()) as JsonWebKey;
      const key = createPublicKey({ key: jwk, format: 'jwk' });
      const ok = verify(
        'sha256',
        Buffer.from(`${header}.${claims}`),
        { key, dsaEncoding: 'ieee-p1363' },
        Buffer.from(sig, 'base64url'),
      );
      expect(ok).toBe(true);
    }
    expect(ids.size).toBe(20);
    // Every call answered is a committed charge: the ledger's balance moved by 20 × 1 cent.
    const ledger = (await (await fetch(`${floor.url}/ledger`)).json()) as {
      calls: number;
      revenue_micros: number;
    };
    expect(ledger).toEqual({ calls: 20, revenue_micros: 200_000 });
  });
});
