import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStateLedger } from '../../src/ledger/index.js';
import type { Ledger } from '../../src/ledger/types.js';
import { openSqlite, type SqliteDb } from '../../src/lib/sqlite.js';
import { classifyingFacilitator } from '../../src/run/x402/facilitator.js';
import { remoteFacilitator } from '../../src/run/x402/facilitator-remote.js';
import { type NewPayment, openPaymentStore, RETAIN_MS } from '../../src/run/x402/payment-store.js';
import { BACKENDS, type OpenedState } from '../helpers/backends.js';
import { ManualClock } from '../helpers/clock.js';
import { sqlOn } from '../helpers/state-sql.js';

// The durable half of x402: the payment store's state machine, the ledger's provisional funding (double entry
// whatever happens), and how facilitator answers are sorted into definite and unknown outcomes.

let db: SqliteDb;
let clock: ManualClock;
beforeEach(() => {
  db = openSqlite(':memory:');
  clock = new ManualClock(Date.UTC(2026, 10, 22, 12));
});
afterEach(() => db.close());

const REQ = { scheme: 'exact', network: 'eip155:8453' } as unknown as PaymentRequirements;
const PAYLOAD = { x402Version: 2 } as PaymentPayload;

function payment(key: string, fingerprint = 'fp1'): NewPayment {
  return {
    key,
    payer: '0xPayer',
    action: 'scraperC/scrape',
    fingerprint,
    payload: PAYLOAD,
    requirements: REQ,
    expiresAt: clock.now() + 300_000,
  };
}

describe.each(BACKENDS)('x402 payment store ($name)', (backend) => {
  let state: OpenedState;
  beforeEach(async () => {
    state = await backend.open();
  });
  afterEach(() => state.close());

  it('[x402:replay-runs-once] one claim per nonce; a released payment can be claimed again', async () => {
    const s = openPaymentStore(state.db, clock);
    expect(await s.reserve(payment('k1'))).toEqual({ kind: 'reserved' });
    const taken = await s.reserve(payment('k1', 'fp2'));
    expect(taken).toMatchObject({ kind: 'taken', row: { status: 'reserved', fingerprint: 'fp1' } });
    // Concurrent claims: exactly one wins.
    const claims = await Promise.all(Array.from({ length: 10 }, () => s.reserve(payment('k2'))));
    expect(claims.filter((c) => c.kind === 'reserved')).toHaveLength(1);

    expect(await s.transition('k1', 'reserved', 'released')).toBe(true);
    expect(await s.reserve(payment('k1', 'fp2'))).toEqual({ kind: 'reserved' });
    expect((await s.get('k1'))?.fingerprint).toBe('fp2');
  });

  it('[x402:settlement-unknown-503] transitions are conditional; a restart turns work in progress into released/unknown', async () => {
    const s = openPaymentStore(state.db, clock);
    await s.reserve(payment('a'));
    await s.reserve(payment('b'));
    expect(await s.transition('a', 'settling', 'settled')).toBe(false);
    expect(await s.transition('b', 'reserved', 'settling', { envelope: { ok: true, data: 1 } })).toBe(true);
    expect(await s.recover(true)).toEqual({ released: 1, unknown: 1 });
    expect((await s.get('a'))?.status).toBe('released');
    expect(await s.get('b')).toMatchObject({ status: 'unknown', envelope: { ok: true, data: 1 } });
    const receipt = { success: true, transaction: '0xabc', network: 'eip155:8453' as const };
    expect(await s.transition('b', 'unknown', 'settling')).toBe(true);
    expect(await s.transition('b', 'settling', 'settled', { receipt })).toBe(true);
    expect(await s.get('b')).toMatchObject({ status: 'settled', receipt, envelope: { ok: true, data: 1 } });

    // Finished rows are kept a day past their validity (replays), unknown ones until resolved.
    await s.reserve(payment('c'));
    await s.transition('c', 'reserved', 'settling');
    await s.transition('c', 'settling', 'unknown');
    clock.advance(300_000 + RETAIN_MS + 1);
    expect(await s.purge(clock.now())).toBe(2);
    expect(await s.get('c')).toBeDefined();
  });
});

describe.each(BACKENDS)('x402 in the ledger ($name)', (backend) => {
  let state: OpenedState;
  let ledger: Ledger;
  beforeEach(async () => {
    state = await backend.open();
    ledger = await openStateLedger(state.db, { clock, idempotencyTtlMs: 86_400_000 });
    await ledger.createAccount({ id: 'x402_0xpayer', kind: 'x402', name: 'x402 payer' });
  });
  afterEach(async () => {
    await ledger.close();
    await state.close();
  });

  const begin = (micros = 10_000) =>
    ledger.begin({
      accountId: 'x402_0xpayer',
      action: 'scraperC/scrape',
      priceMicros: micros,
      holdMicros: micros,
      paymentMethod: 'x402',
      principal: 'x402:0xPayer',
      holdTtlMs: 60_000,
      funding: { micros, memo: 'x402 payment' },
    });

  function entries() {
    return sqlOn<{ account_id: string; amount_micros: number; kind: string }>(
      state.db,
      'SELECT account_id, amount_micros, kind FROM entries ORDER BY id',
    );
  }
  async function sumIsZero() {
    expect((await entries()).reduce((s, e) => s + e.amount_micros, 0)).toBe(0);
  }

  it('[x402:ledger-double-entry] success: funded with the hold, charged on capture, nets to zero', async () => {
    const r = await begin();
    expect(r.kind).toBe('started');
    expect(await ledger.balance('x402_0xpayer')).toEqual({
      balance_micros: 10_000,
      held_micros: 10_000,
      available_micros: 0,
    });
    await ledger.capture((r as { callId: string }).callId, {
      amountMicros: 10_000,
      provider: null,
      durationMs: 1,
    });
    expect(await ledger.balance('x402_0xpayer')).toMatchObject({ balance_micros: 0, held_micros: 0 });
    expect((await entries()).filter((e) => e.kind === 'charge')).toEqual([
      { account_id: 'x402_0xpayer', amount_micros: -10_000, kind: 'charge' },
      { account_id: 'sys_revenue', amount_micros: 10_000, kind: 'charge' },
    ]);
    await sumIsZero();
  });

  it('[x402:ledger-double-entry] [x402:no-settle-on-failure] void and expiry reverse the funding: nothing charged, nothing left', async () => {
    const a = (await begin()) as { callId: string };
    await ledger.void(a.callId, { errorCode: 'upstream_error', provider: null, durationMs: 1 });
    const b = (await begin()) as { callId: string };
    clock.advance(60_001);
    expect((await ledger.sweep(clock.now())).expiredHolds).toBe(1);
    expect(await ledger.balance('x402_0xpayer')).toEqual({
      balance_micros: 0,
      held_micros: 0,
      available_micros: 0,
    });
    expect((await entries()).some((e) => e.kind === 'charge')).toBe(false);
    expect((await ledger.getCall(b.callId))?.status).toBe('failed');
    await sumIsZero();
    // A partial capture reverses the unused funding too.
    const c = (await begin()) as { callId: string };
    await ledger.capture(c.callId, { amountMicros: 4_000, provider: null, durationMs: 1 });
    expect(await ledger.balance('x402_0xpayer')).toMatchObject({ balance_micros: 0 });
    await sumIsZero();
  });
});

describe('facilitator outcomes', () => {
  const settled = { success: true, transaction: '0x1', network: 'eip155:8453' as const };
  const client = (verify: () => Promise<unknown>, settle: () => Promise<unknown>) =>
    classifyingFacilitator({
      verify,
      settle,
      getSupported: async () => ({}),
    } as unknown as FacilitatorClient);

  it('[x402:facilitator-outcomes] transport errors, malformed and pending answers are unknown, never failed', async () => {
    const boom = async () => {
      throw new Error('socket hang up');
    };
    const f = client(boom, boom);
    expect((await f.verify(PAYLOAD, REQ)).kind).toBe('unavailable');
    expect((await f.settle(PAYLOAD, REQ)).kind).toBe('unknown');
    const odd = client(
      async () => 'ok',
      async () => ({ tx: 1 }),
    );
    expect((await odd.verify(PAYLOAD, REQ)).kind).toBe('unavailable');
    expect((await odd.settle(PAYLOAD, REQ)).kind).toBe('unknown');
    const pending = client(boom, async () => ({
      ...settled,
      success: false,
      errorReason: 'settlement_pending',
    }));
    expect(await pending.settle(PAYLOAD, REQ)).toMatchObject({
      kind: 'unknown',
      receipt: { transaction: '0x1' },
    });
    const refused = client(
      async () => ({ isValid: false, invalidReason: 'insufficient_funds' }),
      async () => ({ ...settled, success: false, errorReason: 'insufficient_funds', transaction: '' }),
    );
    expect(await refused.verify(PAYLOAD, REQ)).toMatchObject({
      kind: 'invalid',
      reason: 'insufficient_funds',
    });
    expect((await refused.settle(PAYLOAD, REQ)).kind).toBe('failed');
    expect((await client(boom, async () => settled).settle(PAYLOAD, REQ)).kind).toBe('settled');
  });

  it('[x402:facilitator-outcomes] [x402:remote-facilitator] the remote client sends the auth header and reads 4xx answers; 5xx is unknown', async () => {
    const seen: Array<{ path: string; auth: string | undefined; body: unknown }> = [];
    let settleStatus = 500;
    const server = createServer(async (req, res) => {
      let raw = '';
      for await (const c of req) raw += c;
      seen.push({ path: req.url ?? '', auth: req.headers['x-api-key'] as string, body: JSON.parse(raw) });
      if (req.url === '/verify') {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ isValid: false, invalidReason: 'invalid_exact_evm_signature' }));
      } else {
        res.writeHead(settleStatus, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ ...settled, success: false, errorReason: 'unexpected_settle_error' }));
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const f = remoteFacilitator({ url, authHeader: { name: 'X-Api-Key', value: 'k1' }, timeoutMs: 2000 });
    try {
      expect(await f.verify(PAYLOAD, REQ)).toMatchObject({
        kind: 'invalid',
        reason: 'invalid_exact_evm_signature',
      });
      expect(seen[0]).toEqual({
        path: '/verify',
        auth: 'k1',
        body: { x402Version: 2, paymentPayload: PAYLOAD, paymentRequirements: REQ },
      });
      expect((await f.settle(PAYLOAD, REQ)).kind).toBe('unknown');
      settleStatus = 400;
      expect((await f.settle(PAYLOAD, REQ)).kind).toBe('failed');
    } finally {
      await f.close();
      server.close();
    }
  });
});
