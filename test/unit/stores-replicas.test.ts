import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import { newId } from '../../src/lib/ids.js';
import { openRateLimiter } from '../../src/run/rate-limit.js';
import { openReceiptKeyStore } from '../../src/run/receipt-keys.js';
import { generateReceiptKey } from '../../src/run/receipts.js';
import { type NewPayment, openPaymentStore } from '../../src/run/x402/payment-store.js';
import { openFileMetaStore } from '../../src/storage/file-meta.js';
import { openHandleStore } from '../../src/storage/handles.js';
import { openFileStorage } from '../../src/storage/index.js';
import { BACKENDS, type BackendCase, type OpenedState } from '../helpers/backends.js';
import { ManualClock } from '../helpers/clock.js';

// The stores that replicas share: what one replica writes, another reads; races between replicas resolve to
// one winner. Every suite runs on both backends (SQLite: a second connection to the same file); the suites at
// the end are about PostgreSQL alone (several replicas are not possible on SQLite).

const PG = BACKENDS.find((b) => b.name === 'postgres') as BackendCase;
const REQ = { scheme: 'exact', network: 'eip155:8453' } as unknown as PaymentRequirements;
const PAYLOAD = { x402Version: 2 } as PaymentPayload;

let clock: ManualClock;
beforeEach(() => {
  clock = new ManualClock(Date.UTC(2026, 10, 23, 12));
});

function payment(key: string, extra: Partial<NewPayment> = {}): NewPayment {
  return {
    key,
    payer: '0xpayer',
    action: 'scraperC/scrape',
    fingerprint: 'fp1',
    payload: PAYLOAD,
    requirements: REQ,
    expiresAt: clock.now() + 300_000,
    ...extra,
  };
}

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (e) {
    return e instanceof GatewayError ? e.code : String(e);
  }
}

describe.each(BACKENDS)('stores shared by two replicas ($name)', (backend) => {
  let a: OpenedState;
  let b: OpenedState;
  beforeEach(async () => {
    a = await backend.open({ replicaId: 'r_a' });
    b = await backend.share(a, { replicaId: 'r_b' });
  });
  afterEach(async () => {
    await b.close();
    await a.close();
  });

  it('a handle minted by one replica resolves on the other, for its owner only', async () => {
    const ha = openHandleStore(a.db, clock);
    const hb = openHandleStore(b.db, clock);
    const h = await ha.mint('acct_1', 'crawl', 'upstream-1', { n: 1 });
    expect(await hb.resolve('acct_1', 'crawl', h)).toMatchObject({
      handle: h,
      ref: 'upstream-1',
      data: { n: 1 },
    });
    expect(await hb.resolve('acct_2', 'crawl', h)).toBeUndefined();
    expect(await hb.resolve('acct_1', 'render', h)).toBeUndefined();
    await hb.update(h, { n: 2 });
    expect((await ha.lookup(h))?.data).toEqual({ n: 2 });
    clock.advance(1);
    const newer = await hb.mint('acct_1', 'crawl', 'upstream-1');
    expect((await ha.findByRef('acct_1', 'crawl', 'upstream-1'))?.handle).toBe(newer);
  });

  it('[x402:replay-runs-once] one payment presented to both replicas at once: exactly one reservation', async () => {
    const sa = openPaymentStore(a.db, clock);
    const sb = openPaymentStore(b.db, clock);
    for (let i = 0; i < 5; i++) {
      const claims = await Promise.all([
        sa.reserve(payment(`k${i}`)),
        sb.reserve(payment(`k${i}`)),
        sa.reserve(payment(`k${i}`)),
        sb.reserve(payment(`k${i}`)),
      ]);
      expect(claims.filter((c) => c.kind === 'reserved')).toHaveLength(1);
      expect(claims.filter((c) => c.kind === 'taken')).toHaveLength(3);
    }
    // Settle states are shared: a transition on one replica is seen (and refused again) on the other.
    expect(await sa.transition('k0', 'reserved', 'settling')).toBe(true);
    expect(await sb.transition('k0', 'reserved', 'settling')).toBe(false);
    expect(await sb.transition('k0', 'settling', 'settled', { receipt: { success: true } as never })).toBe(
      true,
    );
    expect(await sa.get('k0')).toMatchObject({ status: 'settled', receipt: { success: true } });
  });

  it('a payment-identifier id is held by one live payment; it moves on only from one that collected nothing', async () => {
    const sa = openPaymentStore(a.db, clock);
    const sb = openPaymentStore(b.db, clock);
    expect(await sa.reserve(payment('p1', { paymentId: 'id-1' }))).toEqual({ kind: 'reserved' });
    const taken = await sb.reserve(payment('p2', { paymentId: 'id-1' }));
    expect(taken).toMatchObject({ kind: 'taken', row: { key: 'p1', paymentId: 'id-1' } });
    expect(await sa.transition('p1', 'reserved', 'released')).toBe(true);
    expect(await sb.reserve(payment('p2', { paymentId: 'id-1' }))).toEqual({ kind: 'reserved' });
    expect((await sa.byPaymentId('0xpayer', 'id-1'))?.key).toBe('p2');
    expect((await sa.get('p1'))?.paymentId).toBeUndefined();
  });

  it('[x402:recovery-spares-live-calls] recovery at start takes back its own payments; on the timer it never touches a running call', async () => {
    const sa = openPaymentStore(a.db, clock);
    await sa.reserve(payment('running'));
    await sa.reserve(payment('settling'));
    await sa.transition('settling', 'reserved', 'settling');
    // The sweeper's recovery: this replica's payments belong to its calls, which are running.
    expect(await sa.recover(false)).toEqual({ released: 0, unknown: 0 });
    expect((await sa.get('running'))?.status).toBe('reserved');
    // At start, whatever its previous run left mid-call can no longer finish.
    expect(await sa.recover(true)).toEqual({ released: 1, unknown: 1 });
    expect((await sa.get('settling'))?.status).toBe('unknown');
  });

  it('two replicas starting at once end up with one receipt key', async () => {
    const keys = await Promise.all(
      [a, b, a, b].map((s) => openReceiptKeyStore(s.db, clock).loadOrCreate(generateReceiptKey)),
    );
    expect(new Set(keys).size).toBe(1);
    expect(await openReceiptKeyStore(b.db, clock).loadOrCreate(() => 'never used')).toBe(keys[0]);
  });

  it('a pending file is stored at most once, whichever replicas race', async () => {
    const ma = openFileMetaStore(a.db);
    const mb = openFileMetaStore(b.db);
    const file = {
      file_id: newId('file', clock.now()),
      owner: 'acct_1',
      filename: 'x.bin',
      size_bytes: 10,
      mime: null,
      tags: ['red', 'blue'],
      note: null,
      status: 'pending' as const,
      source_url: null,
      created_at: clock.now(),
    };
    await ma.insert(file);
    const won = await Promise.all(
      [ma, mb, ma, mb].map((m, i) =>
        m.markStored(file.file_id, { size_bytes: 10 + i, mime: null, stored_at: 1 }),
      ),
    );
    expect(won.filter(Boolean)).toHaveLength(1);
    expect(await mb.get(file.file_id)).toMatchObject({ status: 'stored', tags: ['red', 'blue'] });
    expect(await mb.list('acct_1', { tag: 'blue', limit: 10, offset: 0 })).toMatchObject({ total: 1 });
    expect(await mb.list('acct_1', { tag: 'green', limit: 10, offset: 0 })).toEqual({ files: [], total: 0 });
    expect(await mb.list('acct_1', { filename: 'x.bin', limit: 10, offset: 5 })).toEqual({
      files: [],
      total: 1,
    });
  });

  it('a file link signed by one replica verifies on the other (generated secret)', async () => {
    const log = pino({ level: 'silent' });
    const open = (s: OpenedState) =>
      openFileStorage({
        location: { kind: 'local' },
        state: s.db,
        dataDir: s.db.dataDir,
        meta: openFileMetaStore(s.db),
        clock,
        log,
        publicUrl: () => 'https://gw.example',
      });
    const [fa, fb] = await Promise.all([open(a), open(b)]);
    try {
      const file = await fa.library.create('acct_1', { filename: 'a.txt', size_bytes: 3 });
      const url = new URL((await fa.library.link(file, 'PUT')).url);
      const id = url.pathname.split('/').pop() as string;
      const expires = url.searchParams.get('expires') ?? undefined;
      const sig = url.searchParams.get('signature') ?? undefined;
      expect(await fb.gatewayLinks?.authorize(id, 'PUT', expires, sig)).toMatchObject({
        file_id: file.file_id,
      });
      expect(await code(fb.gatewayLinks?.authorize(id, 'GET', expires, sig) as Promise<unknown>)).toBe(
        'forbidden',
      );
    } finally {
      await fa.close();
      await fb.close();
    }
  });

  it('a rate limit refills at its configured rate', async () => {
    const rl = openRateLimiter(a.db, 2, 2, () => clock.now());
    await rl.take('acct_1');
    await rl.take('acct_1');
    expect(await code(rl.take('acct_1'))).toBe('rate_limited');
    expect(await code(rl.take('acct_2'))).toBe('ok');
    clock.advance(500);
    expect(await code(rl.take('acct_1'))).toBe('ok');
    const refused = await rl.take('acct_1').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(GatewayError);
    expect((refused as GatewayError).retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(await code(openRateLimiter(a.db, 0, 1, () => 0).take('acct_1'))).toBe('ok');
  });
});

describe('replicas on one PostgreSQL', () => {
  let a: OpenedState;
  let b: OpenedState;
  beforeEach(async () => {
    a = await PG.open({ replicaId: 'r_a' });
    b = await PG.share(a, { replicaId: 'r_b' });
  });
  afterEach(async () => {
    await b.close();
    await a.close();
  });

  it('[http:rate-limit] an account gets its burst once across replicas, not once per replica', async () => {
    const limiters = [a, b].map((s) => openRateLimiter(s.db, 1, 5, () => clock.now()));
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, i) => code((limiters[i % 2] as (typeof limiters)[0]).take('acct_1'))),
    );
    expect(outcomes.filter((o) => o === 'ok')).toHaveLength(5);
    expect(outcomes.filter((o) => o === 'rate_limited')).toHaveLength(15);
    // Refilled for both: one token per second, taken by whichever replica asks first.
    clock.advance(1000);
    expect(await code((limiters[1] as (typeof limiters)[0]).take('acct_1'))).toBe('ok');
    expect(await code((limiters[0] as (typeof limiters)[0]).take('acct_1'))).toBe('rate_limited');
  });

  it('[x402:recovery-spares-live-calls] recover() touches only its own payments at start, and those of replicas whose lease expired', async () => {
    const sa = openPaymentStore(a.db, clock);
    const sb = openPaymentStore(b.db, clock);
    await sa.reserve(payment('mine'));
    await sb.reserve(payment('live'));
    await sb.reserve(payment('live-settling'));
    await sb.transition('live-settling', 'reserved', 'settling');
    expect(await sa.recover(false)).toEqual({ released: 0, unknown: 0 });
    expect(await sa.recover(true)).toEqual({ released: 1, unknown: 0 });
    expect((await sa.get('live'))?.status).toBe('reserved');
    // r_b's lease runs out: its calls are gone, so a survivor's recover releases and marks unknown.
    await a.db.stores
      .insertInto('replicas')
      .values({ id: 'r_b', started_at: clock.now() - 60_000, lease_expires_at: clock.now() - 1 })
      .execute();
    expect(await sa.recover(false)).toEqual({ released: 1, unknown: 1 });
    expect((await sb.get('live-settling'))?.status).toBe('unknown');
  });
});
