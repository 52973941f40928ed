import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStateLedger } from '../../src/ledger/index.js';
import type { BeginRequest, Ledger, SpendCap } from '../../src/ledger/types.js';
import { BACKENDS, type OpenedState } from '../helpers/backends.js';
import { ManualClock } from '../helpers/clock.js';

// The ledger's rules for caps (src/ledger/spend-caps.ts), on both backends: any number of caps on one hold, each
// a counter of a UTC day or month, checked and reserved with the hold, given back by capture (the unused part),
// void (all) and refunds (in the window the call was charged in); a key's limits and the counters they start
// from; what each key spent. The concurrency tests are the race of limits per key at the ledger.

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const T0 = Date.UTC(2026, 10, 28, 12); // a Saturday, 12:00 UTC; the month ends in 2 days

describe.each(BACKENDS)('spending caps ($name)', (backend) => {
  let state: OpenedState;
  let ledger: Ledger;
  let clock: ManualClock;

  beforeEach(async () => {
    state = await backend.open();
    clock = new ManualClock(T0);
    ledger = await openStateLedger(state.db, { clock, idempotencyTtlMs: DAY, groupCommit: true });
  });
  afterEach(async () => {
    await ledger.close();
    await state.close();
  });

  async function keyed(usd = 100): Promise<{ acct: string; key: string }> {
    const a = await ledger.createAccount({ name: 't' });
    await ledger.credit(a.id, usd * 1_000_000, 'test');
    const k = await ledger.insertApiKey({ accountId: a.id, hash: `h_${a.id}`, prefix: 'tg_sk_x' });
    return { acct: a.id, key: k.id };
  }

  const day = (key: string, limitMicros: number): SpendCap => ({
    scope: `key:${key}`,
    window: 'day',
    limitMicros,
  });
  const month = (key: string, limitMicros: number): SpendCap => ({
    scope: `key:${key}`,
    window: 'month',
    limitMicros,
  });

  function req(acct: string, key: string, micros: number, caps?: SpendCap[]): BeginRequest {
    return {
      accountId: acct,
      action: 'scraperC/scrape',
      priceMicros: micros,
      holdMicros: micros,
      paymentMethod: 'api_key',
      principal: key,
      holdTtlMs: 60_000,
      caps,
    };
  }

  /** Holds and captures `micros` (capturing `charge` of it). */
  async function spend(acct: string, key: string, micros: number, caps?: SpendCap[], charge = micros) {
    const r = await ledger.begin(req(acct, key, micros, caps));
    if (r.kind !== 'started') throw new Error(`not started: ${JSON.stringify(r)}`);
    await ledger.capture(r.callId, { amountMicros: charge, provider: null, durationMs: 1 });
    return r.callId;
  }

  it('[keys:limits-enforced] several caps on one hold: the first one passed refuses it, with what it counted and when it resets', async () => {
    const { acct, key } = await keyed();
    const door: SpendCap = { scope: '', window: 'day', limitMicros: 1_000_000 };
    const caps = [door, day(key, 50_000), month(key, 80_000)];
    await spend(acct, key, 40_000, caps);
    // The key's day: 40,000 + 20,000 > 50,000.
    expect(await ledger.begin(req(acct, key, 20_000, caps))).toEqual({
      kind: 'cap_reached',
      cap: caps[1],
      spentMicros: 40_000,
      resetsAt: Date.UTC(2026, 10, 29),
    });
    // Tomorrow the day starts over and the month goes on: 40,000 + 50,000 > 80,000.
    clock.set(T0 + DAY);
    await spend(acct, key, 40_000, caps);
    expect(await ledger.begin(req(acct, key, 1, caps))).toEqual({
      kind: 'cap_reached',
      cap: caps[2],
      spentMicros: 80_000,
      resetsAt: Date.UTC(2026, 11, 1),
    });
    // A refused hold counted nothing; a new month starts over.
    clock.set(Date.UTC(2026, 11, 1, 0, 0, 0, 1));
    await spend(acct, key, 50_000, caps);
    // Other keys and the account itself (no caps) are not affected.
    const other = await ledger.insertApiKey({ accountId: acct, hash: 'h_other', prefix: 'tg_sk_y' });
    expect((await ledger.begin(req(acct, other.id, 60_000, [day(other.id, 60_000)]))).kind).toBe('started');
    expect((await ledger.begin(req(acct, key, 60_000))).kind).toBe('started');
  });

  it('[keys:limits-enforced] capture gives the unused part back to every counter, void the whole hold', async () => {
    const { acct, key } = await keyed();
    const caps = [day(key, 100_000), month(key, 100_000)];
    const a = await ledger.begin(req(acct, key, 70_000, caps));
    if (a.kind !== 'started') throw new Error('not started');
    expect((await ledger.begin(req(acct, key, 40_000, caps))).kind).toBe('cap_reached');
    await ledger.capture(a.callId, { amountMicros: 30_000, provider: null, durationMs: 1 });
    const b = await ledger.begin(req(acct, key, 70_000, caps));
    if (b.kind !== 'started') throw new Error('not started');
    expect(await ledger.begin(req(acct, key, 1, caps))).toMatchObject({ spentMicros: 100_000 });
    await ledger.void(b.callId, { errorCode: 'upstream_error', provider: null, durationMs: 1 });
    expect(await ledger.begin(req(acct, key, 70_001, caps))).toMatchObject({
      kind: 'cap_reached',
      spentMicros: 30_000,
    });
    expect((await ledger.begin(req(acct, key, 70_000, caps))).kind).toBe('started');
  });

  it('[keys:refund-uncounts] a refund comes off the counters of the window the call was charged in', async () => {
    const { acct, key } = await keyed();
    const caps = [day(key, 100_000), month(key, 150_000)];
    const yesterday = await spend(acct, key, 60_000, caps);
    clock.set(T0 + DAY);
    await spend(acct, key, 80_000, caps);
    // The month has 140,000: 20,000 more is refused.
    expect(await ledger.begin(req(acct, key, 20_000, caps))).toMatchObject({ cap: caps[1] });
    expect((await ledger.refundCall(yesterday, 'operator')).refundedMicros).toBe(60_000);
    // The month gets 60,000 back; today's day counter (80,000) is not the refunded call's day.
    expect(await ledger.begin(req(acct, key, 20_001, caps))).toMatchObject({
      cap: caps[0],
      spentMicros: 80_000,
    });
    await spend(acct, key, 20_000, caps);
    // Now the day is full (100,000) and the month has 100,000 of 150,000.
    expect(await ledger.begin(req(acct, key, 1, caps))).toMatchObject({ cap: caps[0] });
    const monthOnly = [caps[1] as SpendCap];
    expect(await ledger.begin(req(acct, key, 50_001, monthOnly))).toMatchObject({ spentMicros: 100_000 });
    expect((await ledger.begin(req(acct, key, 50_000, monthOnly))).kind).toBe('started');
  });

  it('[keys:limits-stored] a key keeps its limits; a change sets, keeps or removes each; the counters start from what it already spent', async () => {
    const { acct, key } = await keyed();
    expect(await ledger.listApiKeys(acct)).toMatchObject([
      { id: key, max_call_micros: null, daily_limit_micros: null, monthly_limit_micros: null, actions: null },
    ]);
    // Charged before any limit: 30,000 this morning (no caps on those holds), 10,000 refunded.
    await spend(acct, key, 20_000);
    const refunded = await spend(acct, key, 10_000);
    await ledger.refundCall(refunded, 'operator');
    clock.set(T0 - DAY);
    await spend(acct, key, 25_000); // yesterday: this month, not today
    clock.set(T0);

    const row = await ledger.setApiKeyLimits(key, {
      max_call_micros: 5_000,
      daily_limit_micros: 50_000,
      monthly_limit_micros: 60_000,
      actions: ['scraperC', 'llm/chat.completions'],
    });
    expect(row).toMatchObject({
      id: key,
      max_call_micros: 5_000,
      daily_limit_micros: 50_000,
      monthly_limit_micros: 60_000,
      actions: ['scraperC', 'llm/chat.completions'],
    });
    // Today's counter starts at 20,000 (net of the refund), the month's at 45,000.
    const caps = [day(key, 50_000), month(key, 60_000)];
    expect(await ledger.begin(req(acct, key, 30_001, caps))).toMatchObject({
      cap: caps[0],
      spentMicros: 20_000,
    });
    expect(await ledger.begin(req(acct, key, 15_001, caps))).toMatchObject({
      cap: caps[1],
      spentMicros: 45_000,
    });
    // Absent: unchanged; null: removed.
    expect(await ledger.setApiKeyLimits(key, { daily_limit_micros: null, actions: null })).toMatchObject({
      max_call_micros: 5_000,
      daily_limit_micros: null,
      monthly_limit_micros: 60_000,
      actions: null,
    });
    // Set again, it never counts less than its counter does.
    await spend(acct, key, 10_000, caps);
    await ledger.setApiKeyLimits(key, { daily_limit_micros: 50_000 });
    expect(await ledger.begin(req(acct, key, 20_001, caps))).toMatchObject({ spentMicros: 30_000 });

    await expect(ledger.setApiKeyLimits(key, { daily_limit_micros: -1 })).rejects.toThrow(/non-negative/);
    await expect(ledger.setApiKeyLimits(key, { actions: [] })).rejects.toThrow(/non-empty/);
    expect(await ledger.setApiKeyLimits('key_nope', { daily_limit_micros: 1 })).toBeUndefined();
    await ledger.revokeApiKey(key);
    expect(await ledger.setApiKeyLimits(key, { daily_limit_micros: 1 })).toBeUndefined();
    const created = await ledger.insertApiKey({
      accountId: acct,
      hash: 'h_new',
      prefix: 'tg_sk_n',
      limits: { monthly_limit_micros: 7, actions: ['propstats'] },
    });
    expect(created).toMatchObject({
      monthly_limit_micros: 7,
      daily_limit_micros: null,
      actions: ['propstats'],
    });
    expect(await ledger.findApiKeyByHash('h_new')).toMatchObject({ monthly_limit_micros: 7 });
  });

  it('[keys:usage-read] keyUsage: each key with its limits and what it spent today and this month, net of refunds', async () => {
    const { acct, key } = await keyed();
    clock.advance(1); // keys list oldest first
    const other = await ledger.insertApiKey({
      accountId: acct,
      hash: 'h_o',
      prefix: 'tg_sk_o',
      limits: { daily_limit_micros: 1_000_000 },
    });
    clock.set(Date.UTC(2026, 10, 1, 0, 0, 0)); // the month's first instant
    await spend(acct, key, 5_000);
    clock.set(Date.UTC(2026, 9, 31, 23, 59, 59, 999)); // last month
    await spend(acct, key, 7_000);
    clock.set(T0);
    await spend(acct, key, 3_000);
    await ledger.refundCall(await spend(acct, key, 2_000), 'operator');
    await spend(acct, other.id, 4_000, undefined, 1_500);
    const failed = await ledger.begin(req(acct, key, 9_000));
    if (failed.kind !== 'started') throw new Error('not started');
    await ledger.void(failed.callId, { errorCode: 'upstream_error', provider: null, durationMs: 1 });
    // A call of an OAuth app is nobody's key.
    await ledger.begin({ ...req(acct, `oauth:c`, 1_000), paymentMethod: 'oauth' });

    expect(await ledger.keyUsage(acct)).toEqual([
      expect.objectContaining({
        id: key,
        day: '2026-11-28',
        month: '2026-11',
        spent_today_micros: 3_000,
        spent_month_micros: 8_000,
        daily_limit_micros: null,
      }),
      expect.objectContaining({
        id: other.id,
        spent_today_micros: 1_500,
        spent_month_micros: 1_500,
        daily_limit_micros: 1_000_000,
      }),
    ]);
    expect(await ledger.keyUsage('acct_none')).toEqual([]);
  });

  it('[keys:limit-change-cache] a limit change applies at once in the process that made it, within the key cache bound elsewhere', async () => {
    const { acct, key } = await keyed();
    await ledger.close();
    const TTL = 5_000;
    ledger = await openStateLedger(state.db, { clock, idempotencyTtlMs: DAY, keyCacheTtlMs: TTL });
    const elsewhere = await backend.share(state, { replicaId: 'r_other' });
    const other = await openStateLedger(elsewhere.db, { clock, idempotencyTtlMs: DAY, keyCacheTtlMs: TTL });
    try {
      const hash = `h_${acct}`;
      expect((await ledger.findApiKeyByHash(hash))?.daily_limit_micros).toBeNull();
      expect((await other.findApiKeyByHash(hash))?.daily_limit_micros).toBeNull();
      await ledger.setApiKeyLimits(key, { daily_limit_micros: 1_000 });
      // Here at once; in the other process (replica, or the CLI beside a SQLite gateway) once its entry is old.
      expect((await ledger.findApiKeyByHash(hash))?.daily_limit_micros).toBe(1_000);
      expect((await other.findApiKeyByHash(hash))?.daily_limit_micros).toBeNull();
      clock.advance(TTL);
      expect((await other.findApiKeyByHash(hash))?.daily_limit_micros).toBe(1_000);
    } finally {
      await other.close();
      await elsewhere.close();
      clock.set(T0);
    }
  });

  it('[keys:race] 1,000 parallel calls against a daily cap and a monthly cap never pass either by a micro-dollar', async () => {
    const { acct, key } = await keyed();
    // The month has 63,000 to go and the day 77,000: the month binds (6 calls of 10,000 … plus none partial).
    await spend(acct, key, 17_000, [month(key, 80_000)]);
    const caps = [day(key, 77_000), month(key, 80_000)];
    const results = await Promise.all(
      Array.from({ length: 1_000 }, async () => {
        const r = await ledger.begin(req(acct, key, 10_000, caps));
        if (r.kind !== 'started') return r.kind;
        await ledger.capture(r.callId, { amountMicros: 10_000, provider: null, durationMs: 1 });
        return r.kind;
      }),
    );
    expect(results.filter((k) => k === 'started')).toHaveLength(6);
    expect(results.filter((k) => k === 'cap_reached')).toHaveLength(994);
    const [usage] = await ledger.keyUsage(acct);
    expect(usage?.spent_month_micros).toBe(77_000);
    expect(usage?.spent_today_micros).toBe(77_000);
    expect((await ledger.balance(acct)).balance_micros).toBe(100_000_000 - 77_000);
  });
});
