import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStateLedger } from '../../src/ledger/index.js';
import type { BeginRequest, Ledger } from '../../src/ledger/types.js';
import { BACKENDS, type OpenedState } from '../helpers/backends.js';
import { ManualClock } from '../helpers/clock.js';

// Team accounts read the transaction record per principal (the key id of an API-key call): spend per key, and a
// member's own calls and usage. Same answers on SQLite and PostgreSQL, pending calls included where calls are
// listed, and only calls that succeeded (net of refunds) counted as spend.

const USD = 1_000_000;

describe.each(BACKENDS)('ledger reads per principal ($name)', (backend) => {
  let state: OpenedState;
  let ledger: Ledger;
  let clock: ManualClock;

  beforeEach(async () => {
    state = await backend.open();
    clock = new ManualClock(Date.UTC(2026, 10, 20, 12));
    ledger = await openStateLedger(state.db, { clock, idempotencyTtlMs: 3_600_000, groupCommit: true });
  });
  afterEach(async () => {
    await ledger.close();
    await state.close();
  });

  const req = (accountId: string, micros: number, principal: string | null, action = 'scraperC/scrape') =>
    ({
      accountId,
      action,
      priceMicros: micros,
      holdMicros: micros,
      paymentMethod: principal?.startsWith('oauth:') ? 'oauth' : 'api_key',
      principal,
      holdTtlMs: 60_000,
    }) satisfies BeginRequest;

  async function begin(r: BeginRequest): Promise<string> {
    const b = await ledger.begin(r);
    if (b.kind !== 'started') throw new Error(b.kind);
    return b.callId;
  }

  async function spend(acct: string, micros: number, principal: string | null, action?: string) {
    const id = await begin(req(acct, micros, principal, action));
    await ledger.capture(id, { amountMicros: micros, provider: null, durationMs: 1, jobHandle: id });
    clock.advance(1_000);
    return id;
  }

  it('[team:spend-per-key] sums what each key (and app) spent in a range, net of refunds, failures not counted', async () => {
    const a = (await ledger.createAccount({ name: 'team' })).id;
    const other = (await ledger.createAccount({ name: 'other' })).id;
    await ledger.credit(a, 10 * USD, 'test');
    await ledger.credit(other, 10 * USD, 'test');
    await spend(a, 10_000, 'key_a');
    await spend(a, 20_000, 'key_a');
    const refunded = await spend(a, 50_000, 'key_b', 'videoasm/render');
    await spend(a, 30_000, 'key_b');
    await spend(a, 5_000, 'oauth:host');
    await spend(other, 70_000, 'key_a');
    const failed = await begin(req(a, 40_000, 'key_a'));
    await ledger.void(failed, { errorCode: 'upstream', provider: null, durationMs: 1 });
    await ledger.refundJob(a, refunded, 'job_failed');

    expect(await ledger.spendByPrincipal(a, {})).toEqual([
      { principal: 'key_a', micros: 30_000, calls: 2 },
      { principal: 'key_b', micros: 30_000, calls: 2 },
      { principal: 'oauth:host', micros: 5_000, calls: 1 },
    ]);
    // A range: from the fourth call (key_b's 30,000) on.
    const from = Date.UTC(2026, 10, 20, 12) + 3_000;
    expect(await ledger.spendByPrincipal(a, { fromMs: from })).toEqual([
      { principal: 'key_b', micros: 30_000, calls: 1 },
      { principal: 'oauth:host', micros: 5_000, calls: 1 },
    ]);
    expect(await ledger.spendByPrincipal(a, { toMs: Date.UTC(2026, 10, 20, 12) })).toEqual([]);
  });

  it("[team:member-own-usage] a member's calls and usage by day are those of its keys only, pending calls listed", async () => {
    const a = (await ledger.createAccount({ name: 'team' })).id;
    await ledger.credit(a, 10 * USD, 'test');
    await spend(a, 10_000, 'key_a');
    await spend(a, 20_000, 'key_b', 'propstats/properties');
    clock.set(Date.UTC(2026, 10, 21, 9));
    await spend(a, 30_000, 'key_c');
    await spend(a, 40_000, 'key_b');
    const pending = await begin(req(a, 1_000, 'key_b'));
    const failed = await begin(req(a, 2_000, 'key_a'));
    await ledger.void(failed, { errorCode: 'upstream', provider: null, durationMs: 1 });

    const mine = await ledger.transactionsOf(a, ['key_b', 'key_c'], 10);
    expect(mine.map((c) => [c.principal, c.status])).toEqual([
      ['key_b', 'pending'],
      ['key_b', 'succeeded'],
      ['key_c', 'succeeded'],
      ['key_b', 'succeeded'],
    ]);
    expect(mine[0]?.id).toBe(pending);
    expect((await ledger.transactionsOf(a, ['key_b', 'key_c'], 2)).map((c) => c.charged_micros)).toEqual([
      0, 40_000,
    ]);
    expect(await ledger.transactionsOf(a, ['key_b'], 10, { toMs: Date.UTC(2026, 10, 21) })).toHaveLength(1);
    expect(await ledger.transactionsOf(a, [], 10)).toEqual([]);
    expect((await ledger.transactionsOf(a, ['key_a'], 10)).map((c) => c.status)).toEqual([
      'failed',
      'succeeded',
    ]);

    expect(await ledger.usageByDayOf(a, ['key_b', 'key_c'], { fromMs: Date.UTC(2026, 10, 20) })).toEqual([
      { day: '2026-11-20', service: 'propstats', micros: 20_000, calls: 1 },
      { day: '2026-11-21', service: 'scraperC', micros: 70_000, calls: 2 },
    ]);
    expect(await ledger.usageByDayOf(a, [], {})).toEqual([]);
    await ledger.void(pending, { errorCode: 'x', provider: null, durationMs: 1 });
  });
});
