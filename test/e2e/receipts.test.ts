import { rmSync } from 'node:fs';
import { createLocalJWKSet, decodeProtectedHeader, type JWTPayload, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openReceiptKeyStore } from '../../src/run/receipt-keys.js';
import { generateReceiptKey, loadReceiptSigner } from '../../src/run/receipts.js';
import { startChain, type TestChain } from '../helpers/anvil.js';
import { BACKENDS, type BackendCase } from '../helpers/backends.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { newPayer, paidFetch, x402Env } from '../helpers/x402.js';
import { connectClient } from './mcp-clients.js';

// Receipts: every paid response carries a JWT signed by the gateway (ES256). The test plays the payer who
// keeps it: it fetches the JWK Set at the well-known URL and verifies with that alone, through `jose` (a JOSE
// library that knows nothing of tollgate).

/** A barrier for `n` calls: each waits until the n-th has arrived. */
const together = {
  n: 0,
  waiting: [] as Array<() => void>,
  arrive(): Promise<void> {
    return new Promise<void>((resolve) => {
      together.waiting.push(resolve);
      if (together.waiting.length >= together.n) for (const go of together.waiting.splice(0)) go();
    });
  },
};

let chain: TestChain;
let t: TestGateway;
const merchant = newPayer().address;

beforeAll(async () => {
  chain = await startChain();
  t = await startGateway({
    env: x402Env(chain, merchant),
    handlers: {
      'scraperC/scrape': async (input: { url: string }) => {
        // Calls to the `together` page wait until all of them are in flight (the concurrent-receipts test).
        if (input.url.includes('together')) await together.arrive();
        return { raw: '<html>ok</html>' };
      },
    },
    keepData: true, // the restart test reopens it
  });
});
afterAll(async () => {
  await t?.close();
  if (t) rmSync(t.dataDir, { recursive: true, force: true });
  await chain?.close();
});

const path = '/api/run/scraperC/scrape';
const body = { url: 'https://example.com/', browser: false };

async function verify(receipt: string): Promise<JWTPayload & Record<string, unknown>> {
  const jwks = await (await fetch(`${t.url}/.well-known/tollgate-receipts.json`)).json();
  const { payload } = await jwtVerify(receipt, createLocalJWKSet(jwks), {
    issuer: t.url,
    typ: 'tollgate-receipt+jwt',
    algorithms: ['ES256'],
  });
  return payload as JWTPayload & Record<string, unknown>;
}

describe('receipts', () => {
  it('[receipt:signed] [receipt:verifiable] an API-key call: the header verifies with the published key alone', async () => {
    const { key, accountId } = await t.account('1');
    const r = await t.post(path, body, { key });
    expect(r.status).toBe(200);
    const receipt = String(r.headers['tollgate-receipt']);
    const claims = await verify(receipt);
    expect(claims).toMatchObject({
      iss: t.url,
      jti: r.body.transaction_id,
      action: 'scraperC/scrape',
      amount_micros: r.body.charged_cents * 10_000,
      charged_cents: r.body.charged_cents,
      currency: 'USD',
      payment_method: 'api_key',
      account: accountId,
    });
    expect(Math.abs((claims.iat as number) - Date.now() / 1000)).toBeLessThan(60);

    const jwks = await fetch(`${t.url}/.well-known/tollgate-receipts.json`);
    expect(jwks.headers.get('content-type')).toMatch(/jwk-set\+json/);
    const published = (await jwks.json()) as { keys: Array<Record<string, unknown>> };
    expect(published.keys).toHaveLength(1);
    expect(published.keys[0]).not.toHaveProperty('d');
    expect(published.keys[0]?.kid).toBe(decodeProtectedHeader(receipt).kid);

    // Any change to what it says breaks the signature.
    const [h, p, s] = receipt.split('.') as [string, string, string];
    const claimsJson = JSON.parse(Buffer.from(p, 'base64url').toString());
    const forged = Buffer.from(JSON.stringify({ ...claimsJson, amount_micros: 1 })).toString('base64url');
    await expect(verify(`${h}.${forged}.${s}`)).rejects.toThrow(/signature/);
  });

  it('[receipt:signed] calls in flight together each get a receipt that verifies for their own transaction', async () => {
    // Each signs on libuv's pool while its capture commits (src/run/execute.ts): 12 calls held until all are in
    // flight, so their signatures and captures interleave, and no receipt may carry another call's claims.
    const { key } = await t.account('1');
    together.n = 12;
    const rs = await Promise.all(
      Array.from({ length: together.n }, (_, i) =>
        t.post(path, { url: `https://example.com/together/${i}`, browser: false }, { key }),
      ),
    );
    const jtis = new Set<string>();
    for (const r of rs) {
      expect(r.status).toBe(200);
      const claims = await verify(String(r.headers['tollgate-receipt']));
      expect(claims.jti).toBe(r.body.transaction_id);
      expect(claims.charged_cents).toBe(r.body.charged_cents);
      jtis.add(String(claims.jti));
    }
    expect(jtis.size).toBe(together.n);
  });

  it('[receipt:signed] a replayed call (Idempotency-Key) gets a receipt for the same transaction, marked replayed', async () => {
    const { key } = await t.account('1');
    const headers = { 'idempotency-key': `receipt-${Date.now()}` };
    const first = await t.post(path, body, { key, headers });
    const again = await t.post(path, body, { key, headers });
    expect(again.headers['idempotent-replayed']).toBe('true');
    const claims = await verify(String(again.headers['tollgate-receipt']));
    expect(claims.jti).toBe(first.body.transaction_id);
    expect(claims.replayed).toBe(true);
  });

  it('[receipt:signed] an x402 call: the receipt names the settlement transaction and the payer', async () => {
    const payer = newPayer();
    await chain.mint(payer.address, 1_000_000n);
    const res = await paidFetch(payer)(`${t.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    const settled = JSON.parse(Buffer.from(res.headers.get('payment-response') ?? '', 'base64').toString());
    const claims = await verify(res.headers.get('tollgate-receipt') ?? '');
    const json = (await res.json()) as { transaction_id: string };
    expect(claims).toMatchObject({
      jti: json.transaction_id,
      payment_method: 'x402',
      amount_micros: 10_000,
      x402: {
        scheme: 'exact',
        network: 'eip155:8453',
        payer: payer.address,
        transaction: settled.transaction,
        amount: '10000',
      },
    });
    expect(res.headers.get('access-control-expose-headers')).toMatch(/Tollgate-Receipt/);
  });

  it('[receipt:signed] over MCP the receipt is in the result _meta', async () => {
    const { key } = await t.account('1');
    const c = await connectClient('v2-modern', t.url, key);
    try {
      const r = await c.callTool('scraperC_scrape', body);
      expect(r.isError).toBeFalsy();
      const claims = await verify(r._meta['tollgate/receipt']);
      expect(claims).toMatchObject({ jti: r.structuredContent.transaction_id, payment_method: 'api_key' });
    } finally {
      await c.close();
    }
  });

  it('[receipt:key] one key per database, whoever creates it first; an operator key takes precedence', async () => {
    const state = await (BACKENDS[0] as BackendCase).open();
    const clock = { now: () => Date.now() };
    const a = openReceiptKeyStore(state.db, clock);
    const b = openReceiptKeyStore(state.db, clock);
    const [one, two] = await Promise.all([
      loadReceiptSigner(undefined, a, () => 'x'),
      loadReceiptSigner(undefined, b, () => 'x'),
    ]);
    expect(one.jwks()).toEqual(two.jwks());
    const own = generateReceiptKey();
    const configured = await loadReceiptSigner(own, a, () => 'x');
    expect(configured.jwks().keys[0]?.x).toBe(JSON.parse(own).x);
    await expect(loadReceiptSigner('{"kty":"EC","d":"x"}', a, () => 'x')).rejects.toThrow(/P-256/);
    await state.close();
  });

  it('[receipt:key] the generated key survives a restart (the database keeps it)', async () => {
    const before = await (await fetch(`${t.url}/.well-known/tollgate-receipts.json`)).json();
    const dataDir = t.dataDir;
    const env = x402Env(chain, merchant);
    await t.close();
    t = await startGateway({ env, dataDir });
    const after = await (await fetch(`${t.url}/.well-known/tollgate-receipts.json`)).json();
    expect(after).toEqual(before);
  });
});
