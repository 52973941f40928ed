import { closeSync, mkdtempSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openStateLedger } from '../../src/ledger/index.js';
import { startCheckpointer } from '../../src/ledger/sqlite/checkpointer.js';
import { GroupCommit } from '../../src/ledger/sqlite/group-commit.js';
import { SqliteLedger } from '../../src/ledger/sqlite/sqlite-ledger.js';
import type { Ledger } from '../../src/ledger/types.js';
import { systemClock } from '../../src/lib/clock.js';
import { openSqlite, type SqliteDb } from '../../src/lib/sqlite.js';
import { BACKENDS, type OpenedState } from '../helpers/backends.js';
import { beginRequest as req } from '../helpers/begin-request.js';
import { ManualClock } from '../helpers/clock.js';
import { sqlOn } from '../helpers/state-sql.js';

/** Pending holds per account: SQLite keeps every hold with its status; PostgreSQL only the pending ones. */
const PENDING_HOLDS = {
  sqlite:
    "SELECT account_id, CAST(sum(amount_micros) AS bigint) AS s FROM holds WHERE status = 'pending' GROUP BY account_id",
  postgres:
    'SELECT account_id, CAST(sum(amount_micros) AS bigint) AS s FROM pending_holds GROUP BY account_id',
} as const;

const HOUR = 3_600_000;

// One behaviour, two backends: every test below runs on SQLite and on PostgreSQL.
describe.each(BACKENDS)('ledger ($name)', (backend) => {
  let state: OpenedState;
  let ledger: Ledger;
  let clock: ManualClock;

  beforeEach(async () => {
    state = await backend.open();
    clock = new ManualClock(Date.UTC(2026, 10, 22, 12));
    // As the gateway runs it: on SQLite, holds in memory and group commit with the fsync off the event loop.
    ledger = await openStateLedger(state.db, { clock, idempotencyTtlMs: 24 * HOUR, groupCommit: true });
  });
  afterEach(async () => {
    await ledger.close();
    await state.close();
  });

  const sql = <T = Record<string, unknown>>(text: string) => sqlOn<T>(state.db, text);

  async function funded(micros: number): Promise<string> {
    const a = await ledger.createAccount({ name: 't' });
    if (micros > 0) await ledger.credit(a.id, micros, 'test');
    return a.id;
  }

  async function started(r: Promise<unknown>): Promise<string> {
    const res = (await r) as { kind: string; callId: string };
    expect(res.kind).toBe('started');
    return res.callId;
  }

  /** Conservation: cached balances equal the sums of entries, and all entries sum to zero. */
  async function assertConservation(): Promise<void> {
    const [total] = await sql<{ s: number }>(
      'SELECT CAST(coalesce(sum(amount_micros), 0) AS bigint) AS s FROM entries',
    );
    expect(total?.s).toBe(0);
    const sums = await sql<{ account_id: string; s: number }>(
      'SELECT account_id, CAST(sum(amount_micros) AS bigint) AS s FROM entries GROUP BY account_id',
    );
    const held = await sql<{ account_id: string; s: number }>(PENDING_HOLDS[state.db.kind]);
    const of = (rows: Array<{ account_id: string; s: number }>, id: string) =>
      rows.find((r) => r.account_id === id)?.s ?? 0;
    // Balances as the ledger reports them (on PostgreSQL a system account's balance is spread over shards).
    for (const a of await ledger.listAccounts()) {
      expect(a.balance_micros, a.id).toBe(of(sums, a.id));
      expect(a.held_micros, a.id).toBe(of(held, a.id));
    }
  }

  describe('holds', () => {
    it('[billing:hold-resolves-once] capture posts the amount, releases the hold, and only once', async () => {
      const acct = await funded(1_000_000);
      const call = await started(ledger.begin(req(acct, 10_000)));
      expect(await ledger.balance(acct)).toEqual({
        balance_micros: 1_000_000,
        held_micros: 10_000,
        available_micros: 990_000,
      });
      expect(await ledger.capture(call, { amountMicros: 10_000, provider: 'x', durationMs: 5 })).toEqual({
        chargedMicros: 10_000,
      });
      expect(await ledger.balance(acct)).toEqual({
        balance_micros: 990_000,
        held_micros: 0,
        available_micros: 990_000,
      });
      await expect(
        ledger.capture(call, { amountMicros: 10_000, provider: 'x', durationMs: 5 }),
      ).rejects.toThrow(/already posted/);
      await expect(ledger.void(call, { errorCode: 'x', provider: null, durationMs: 1 })).rejects.toThrow(
        /already posted/,
      );
      expect(await ledger.balance(acct)).toEqual({
        balance_micros: 990_000,
        held_micros: 0,
        available_micros: 990_000,
      });
      const tx = await ledger.getCall(call);
      expect(tx).toMatchObject({
        status: 'succeeded',
        charged_micros: 10_000,
        provider: 'x',
        price_micros: 10_000,
      });
      await assertConservation();
    });

    it('[billing:hold-resolves-once] a capture above the hold is refused and moves nothing', async () => {
      const acct = await funded(1_000_000);
      const call = await started(ledger.begin(req(acct, 10_000)));
      await expect(
        ledger.capture(call, { amountMicros: 10_001, provider: null, durationMs: 1 }),
      ).rejects.toThrow(/exceeds hold/);
      expect((await ledger.balance(acct)).held_micros).toBe(10_000);
      // A partial capture posts less and releases the rest.
      await ledger.capture(call, { amountMicros: 2_500, provider: null, durationMs: 1 });
      expect(await ledger.balance(acct)).toEqual({
        balance_micros: 997_500,
        held_micros: 0,
        available_micros: 997_500,
      });
      await assertConservation();
    });

    it('[billing:charge-only-on-success] void releases everything and records the failure', async () => {
      const acct = await funded(50_000);
      const call = await started(ledger.begin(req(acct, 10_000)));
      await ledger.void(call, { errorCode: 'upstream_error', provider: 'v', durationMs: 3 });
      expect(await ledger.balance(acct)).toEqual({
        balance_micros: 50_000,
        held_micros: 0,
        available_micros: 50_000,
      });
      expect(await ledger.getCall(call)).toMatchObject({
        status: 'failed',
        charged_micros: 0,
        error_code: 'upstream_error',
      });
      await expect(ledger.void(call, { errorCode: 'x', provider: null, durationMs: 1 })).rejects.toThrow(
        /already voided/,
      );
      await assertConservation();
    });

    it('[billing:no-overdraft] refuses a hold above the available balance, counting other holds', async () => {
      const acct = await funded(25_000);
      await started(ledger.begin(req(acct, 10_000)));
      await started(ledger.begin(req(acct, 10_000)));
      const third = await ledger.begin(req(acct, 10_000));
      expect(third).toEqual({ kind: 'insufficient', availableMicros: 5_000, requiredMicros: 10_000 });
      expect((await ledger.balance(acct)).available_micros).toBe(5_000);
    });

    it('[billing:no-overdraft] N concurrent holds against a balance for k: exactly k start', async () => {
      const k = 7;
      const acct = await funded(k * 10_000);
      const results = await Promise.all(Array.from({ length: 50 }, () => ledger.begin(req(acct, 10_000))));
      expect(results.filter((r) => r.kind === 'started')).toHaveLength(k);
      expect(results.filter((r) => r.kind === 'insufficient')).toHaveLength(50 - k);
      const b = await ledger.balance(acct);
      expect(b.available_micros).toBe(0);
      expect(b.balance_micros - b.held_micros).toBeGreaterThanOrEqual(0);
    });

    it('the CHECK constraint backstops the admission check', async () => {
      await sql("INSERT INTO accounts (id, kind, created_at) VALUES ('acct_raw', 'customer', 0)");
      await expect(sql("UPDATE accounts SET held_micros = 5 WHERE id = 'acct_raw'")).rejects.toThrow(
        /check/i,
      );
    });
  });

  describe('entries', () => {
    it('[billing:double-entry] are append-only: UPDATE and DELETE fail', async () => {
      const acct = await funded(10_000);
      expect(acct).toBeTruthy();
      await expect(sql('UPDATE entries SET amount_micros = 1')).rejects.toThrow(/append-only/);
      await expect(sql('DELETE FROM entries')).rejects.toThrow(/append-only/);
    });

    it('[billing:double-entry] a random sequence of operations keeps every balance equal to its entries', async () => {
      // Seeded, so a failure replays.
      let seed = 42;
      const rand = () => {
        seed = (seed * 1103515245 + 12345) & 0x7fffffff;
        return seed / 0x7fffffff;
      };
      const accounts = [await funded(200_000), await funded(50_000), await funded(0)];
      const open: string[] = [];
      for (let step = 0; step < 400; step++) {
        const r = rand();
        const acct = accounts[Math.floor(rand() * accounts.length)] as string;
        if (r < 0.1) await ledger.credit(acct, Math.floor(rand() * 20_000) + 1, 'top-up');
        else if (r < 0.5) {
          const res = await ledger.begin(req(acct, Math.floor(rand() * 30_000)));
          if (res.kind === 'started') open.push(res.callId);
        } else if (open.length > 0) {
          const call = open.splice(Math.floor(rand() * open.length), 1)[0] as string;
          const held = (await ledger.getCall(call))?.hold_micros ?? 0;
          if (r < 0.8)
            await ledger.capture(call, {
              amountMicros: Math.floor(rand() * (held + 1)),
              provider: null,
              durationMs: 1,
            });
          else await ledger.void(call, { errorCode: 'x', provider: null, durationMs: 1 });
        }
        if (step % 50 === 0) await assertConservation();
      }
      await assertConservation();
      for (const a of accounts) expect((await ledger.balance(a)).available_micros).toBeGreaterThanOrEqual(0);
    });
  });

  describe('idempotency', () => {
    const idem = (key: string, fingerprint = 'fp1') => ({ idempotency: { key, fingerprint } });

    it('[billing:idempotent-replay] a finished call replays its stored response and never charges twice', async () => {
      const acct = await funded(100_000);
      const call = await started(ledger.begin(req(acct, 10_000, idem('k1'))));
      await ledger.capture(call, {
        amountMicros: 10_000,
        provider: null,
        durationMs: 1,
        response: { ok: true, data: 42 },
      });
      const again = await ledger.begin(req(acct, 10_000, idem('k1')));
      expect(again).toEqual({ kind: 'replay', callId: call, response: { ok: true, data: 42 } });
      expect((await ledger.balance(acct)).balance_micros).toBe(90_000);
      expect(await ledger.transactions(acct, 10)).toHaveLength(1);
    });

    it('[billing:idempotency-mismatch] the same key with another body is a mismatch', async () => {
      const acct = await funded(100_000);
      const call = await started(ledger.begin(req(acct, 10_000, idem('k1', 'fp1'))));
      expect(await ledger.begin(req(acct, 10_000, idem('k1', 'fp2')))).toEqual({
        kind: 'mismatch',
        callId: call,
      });
    });

    it('[billing:idempotency-in-flight] the same key while the call runs is in flight', async () => {
      const acct = await funded(100_000);
      const call = await started(ledger.begin(req(acct, 10_000, idem('k1'))));
      expect(await ledger.begin(req(acct, 10_000, idem('k1')))).toEqual({ kind: 'in_flight', callId: call });
      const results = await Promise.all(
        Array.from({ length: 20 }, () => ledger.begin(req(acct, 10_000, idem('k2')))),
      );
      expect(results.filter((r) => r.kind === 'started')).toHaveLength(1);
      expect(results.filter((r) => r.kind === 'in_flight')).toHaveLength(19);
    });

    it('keys are scoped per account', async () => {
      const a = await funded(100_000);
      const b = await funded(100_000);
      await started(ledger.begin(req(a, 10_000, idem('same'))));
      await started(ledger.begin(req(b, 10_000, idem('same', 'other'))));
    });

    it('a failed call releases its key, so a retry runs again', async () => {
      const acct = await funded(100_000);
      const call = await started(ledger.begin(req(acct, 10_000, idem('k1'))));
      await ledger.void(call, { errorCode: 'upstream_error', provider: null, durationMs: 1 });
      const retry = await started(ledger.begin(req(acct, 10_000, idem('k1'))));
      expect(retry).not.toBe(call);
    });

    it('keys are kept at least the TTL, then forgotten', async () => {
      const acct = await funded(100_000);
      const call = await started(ledger.begin(req(acct, 10_000, idem('k1'))));
      await ledger.capture(call, { amountMicros: 10_000, provider: null, durationMs: 1, response: 'r' });
      clock.advance(23 * HOUR);
      expect((await ledger.begin(req(acct, 10_000, idem('k1')))).kind).toBe('replay');
      clock.advance(2 * HOUR);
      expect(await ledger.sweep(clock.now())).toMatchObject({ expiredHolds: 0, purgedKeys: 1 });
      expect((await ledger.begin(req(acct, 10_000, idem('k1')))).kind).toBe('started');
    });
  });

  describe('refunds', () => {
    it('[billing:failed-job-refunded] refunds the call that started a job, once, as a compensating transfer', async () => {
      const acct = await funded(2_000_000);
      const call = await started(ledger.begin(req(acct, 1_000_000)));
      await ledger.capture(call, {
        amountMicros: 1_000_000,
        provider: null,
        durationMs: 1,
        jobHandle: 'rnd_1',
      });
      expect((await ledger.balance(acct)).balance_micros).toBe(1_000_000);
      const other = await funded(0);
      expect(await ledger.refundJob(other, 'rnd_1', 'job_failed')).toEqual({ refundedMicros: 0 });
      expect(await ledger.refundJob(acct, 'rnd_1', 'job_failed')).toEqual({
        refundedMicros: 1_000_000,
        callId: call,
      });
      expect(await ledger.refundJob(acct, 'rnd_1', 'job_failed')).toEqual({
        refundedMicros: 0,
        callId: call,
      });
      expect((await ledger.balance(acct)).balance_micros).toBe(2_000_000);
      expect(await ledger.getCall(call)).toMatchObject({
        status: 'refunded',
        charged_micros: 1_000_000,
        refunded_micros: 1_000_000,
      });
      expect(await ledger.refundJob(acct, 'unknown', 'job_failed')).toEqual({ refundedMicros: 0 });
      await assertConservation();
    });

    it('concurrent refunds of the same job pay back once', async () => {
      const acct = await funded(1_000_000);
      const call = await started(ledger.begin(req(acct, 500_000)));
      await ledger.capture(call, { amountMicros: 500_000, provider: null, durationMs: 1, jobHandle: 'j' });
      const rs = await Promise.all(Array.from({ length: 10 }, () => ledger.refundJob(acct, 'j', 'x')));
      expect(rs.filter((r) => r.refundedMicros > 0)).toHaveLength(1);
      expect((await ledger.balance(acct)).balance_micros).toBe(1_000_000);
      await assertConservation();
    });
  });

  describe('expiry and recovery', () => {
    it('[billing:crash-recovery] the sweeper voids holds past their expiry, and only those', async () => {
      const acct = await funded(100_000);
      const old = await started(ledger.begin(req(acct, 10_000, { holdTtlMs: 1_000 })));
      const fresh = await started(ledger.begin(req(acct, 10_000, { holdTtlMs: 60_000 })));
      clock.advance(2_000);
      expect(await ledger.sweep(clock.now())).toMatchObject({ expiredHolds: 1, purgedKeys: 0 });
      expect(await ledger.getCall(old)).toMatchObject({
        status: 'failed',
        error_code: 'hold_expired',
        charged_micros: 0,
      });
      expect((await ledger.getCall(fresh))?.status).toBe('pending');
      expect(await ledger.balance(acct)).toEqual({
        balance_micros: 100_000,
        held_micros: 10_000,
        available_micros: 90_000,
      });
      await expect(
        ledger.capture(old, { amountMicros: 10_000, provider: null, durationMs: 1 }),
      ).rejects.toThrow(/expired/);
      expect(await ledger.sweep(clock.now())).toMatchObject({ expiredHolds: 0, purgedKeys: 0 });
      await assertConservation();
    });

    it('[billing:crash-recovery] voidAllPending releases every pending hold', async () => {
      const acct = await funded(100_000);
      await started(ledger.begin(req(acct, 10_000)));
      await started(ledger.begin(req(acct, 20_000, { idempotency: { key: 'k', fingerprint: 'f' } })));
      expect(await ledger.voidAllPending('orphaned_by_restart')).toBe(2);
      expect(await ledger.balance(acct)).toEqual({
        balance_micros: 100_000,
        held_micros: 0,
        available_micros: 100_000,
      });
      // The in-flight key was released with its hold.
      expect(
        (await ledger.begin(req(acct, 20_000, { idempotency: { key: 'k', fingerprint: 'f' } }))).kind,
      ).toBe('started');
    });
  });

  describe('daily cap', () => {
    const cap = { caps: [{ scope: '', window: 'day' as const, limitMicros: 100_000 }] };

    it('counts holds and charges of the UTC day, released parts included', async () => {
      const acct = await funded(1_000_000);
      const a = await started(ledger.begin(req(acct, 60_000, cap)));
      const refused = await ledger.begin(req(acct, 50_000, cap));
      expect(refused).toMatchObject({
        kind: 'cap_reached',
        spentMicros: 60_000,
        cap: { limitMicros: 100_000 },
      });
      // Capturing less than held frees the difference for the day.
      await ledger.capture(a, { amountMicros: 10_000, provider: null, durationMs: 1 });
      await started(ledger.begin(req(acct, 50_000, cap)));
    });

    it('resets at the next UTC midnight and reports when', async () => {
      const acct = await funded(1_000_000);
      clock.set(Date.UTC(2026, 10, 22, 23, 59, 59, 900));
      const a = await started(ledger.begin(req(acct, 100_000, cap)));
      await ledger.capture(a, { amountMicros: 100_000, provider: null, durationMs: 1 });
      const refused = await ledger.begin(req(acct, 1, cap));
      expect(refused).toMatchObject({ kind: 'cap_reached', resetsAt: Date.UTC(2026, 10, 23) });
      clock.set(Date.UTC(2026, 10, 23, 0, 0, 0, 1));
      await started(ledger.begin(req(acct, 100_000, cap)));
    });

    it('[alerts:cap-crossing] capSpend reads what counts against a cap in its window: captured plus held, per scope', async () => {
      const acct = await funded(1_000_000);
      const app = { caps: [{ scope: 'oauth:c1', window: 'day' as const, limitMicros: 100_000 }] };
      const key = {
        caps: [
          { scope: 'key:key_1', window: 'day' as const, limitMicros: 100_000 },
          { scope: 'key:key_1', window: 'month' as const, limitMicros: 500_000 },
        ],
      };
      const a = await started(ledger.begin(req(acct, 30_000, app)));
      expect(await ledger.capSpend(acct, 'oauth:c1', 'day')).toBe(30_000);
      await ledger.capture(a, { amountMicros: 20_000, provider: null, durationMs: 1 });
      const b = await started(ledger.begin(req(acct, 40_000, app)));
      expect(await ledger.capSpend(acct, 'oauth:c1', 'day')).toBe(60_000);
      await ledger.void(b, { errorCode: 'upstream_error', provider: null, durationMs: 1 });
      expect(await ledger.capSpend(acct, 'oauth:c1', 'day')).toBe(20_000);
      expect(await ledger.capSpend(acct, 'oauth:c2', 'day')).toBe(0);
      expect(await ledger.capSpend(acct, '', 'day')).toBe(0);
      // A key's day and month, held then captured.
      const k = await started(ledger.begin(req(acct, 25_000, key)));
      expect(await ledger.capSpend(acct, 'key:key_1', 'day')).toBe(25_000);
      expect(await ledger.capSpend(acct, 'key:key_1', 'month')).toBe(25_000);
      await ledger.capture(k, { amountMicros: 15_000, provider: null, durationMs: 1 });
      expect(await ledger.capSpend(acct, 'key:key_1', 'month')).toBe(15_000);
      // The next UTC day: the day's counters start over, the month's goes on.
      clock.set(Date.UTC(2026, 10, 23, 0, 0, 0, 1));
      expect(await ledger.capSpend(acct, 'oauth:c1', 'day')).toBe(0);
      expect(await ledger.capSpend(acct, 'key:key_1', 'day')).toBe(0);
      expect(await ledger.capSpend(acct, 'key:key_1', 'month')).toBe(15_000);
    });

    it('holds under concurrency: parallel admissions never exceed the cap', async () => {
      const acct = await funded(10_000_000);
      const results = await Promise.all(
        Array.from({ length: 40 }, () => ledger.begin(req(acct, 30_000, cap))),
      );
      expect(results.filter((r) => r.kind === 'started')).toHaveLength(3);
    });
  });

  describe('write queue', () => {
    it('a failing operation in a batch rolls back alone', async () => {
      const acct = await funded(100_000);
      const [ok1, bad, ok2] = await Promise.allSettled([
        ledger.begin(req(acct, 10_000)),
        ledger.credit('acct_missing', 5, 'x'),
        ledger.begin(req(acct, 10_000)),
      ]);
      expect(ok1.status).toBe('fulfilled');
      expect(bad.status).toBe('rejected');
      expect(ok2.status).toBe('fulfilled');
      expect((await ledger.balance(acct)).held_micros).toBe(20_000);
      await assertConservation();
    });
  });

  // ---- credit lines, settlements and card money (docs/spec.md §5: "a welcome credit line of 2 USD once a card is on
  // file; the card settles only actual usage"; docs/decisions.md "Card payments and the credit line") ---------

  const USD = 1_000_000;
  const CENT = 10_000;

  async function withLine(prepaid: number, line = 2 * USD, card = `fp_${Math.random()}`): Promise<string> {
    const acct = await funded(prepaid);
    expect(
      await ledger.grantCreditLine({ accountId: acct, micros: line, cardFingerprint: card, memo: 'welcome' }),
    ).toMatchObject({
      kind: 'granted',
    });
    return acct;
  }

  async function spend(acct: string, micros: number): Promise<void> {
    const call = await started(ledger.begin(req(acct, micros)));
    await ledger.capture(call, { amountMicros: micros, provider: null, durationMs: 1 });
  }

  const settle = (accountId: string, minMicros = 1) =>
    ledger.beginSettlement({ accountId, minMicros, stepMicros: CENT, memo: 'settlement' });

  describe('credit lines', () => {
    it('[billing:credit-line] usage beyond the prepaid balance draws on the line, never past it', async () => {
      const acct = await withLine(500_000);
      expect(await ledger.balance(acct)).toEqual({
        balance_micros: 500_000,
        held_micros: 0,
        available_micros: 2_500_000,
      });
      await spend(acct, 800_000);
      expect(await ledger.balance(acct)).toMatchObject({
        balance_micros: -300_000,
        available_micros: 1_700_000,
      });
      expect(await ledger.creditLine(acct)).toMatchObject({
        limit_micros: 2 * USD,
        drawn_micros: 300_000,
        frozen: null,
      });
      // Concurrent holds against prepaid + line: exactly the affordable ones start.
      const results = await Promise.all(Array.from({ length: 40 }, () => ledger.begin(req(acct, 100_000))));
      expect(results.filter((r) => r.kind === 'started')).toHaveLength(17);
      expect(results.find((r) => r.kind === 'insufficient')).toEqual({
        kind: 'insufficient',
        availableMicros: 0,
        requiredMicros: 100_000,
      });
      for (const r of results) {
        if (r.kind === 'started')
          await ledger.capture(r.callId, { amountMicros: 100_000, provider: null, durationMs: 1 });
      }
      expect(await ledger.balance(acct)).toMatchObject({
        balance_micros: -2 * USD,
        held_micros: 0,
        available_micros: 0,
      });
      expect((await ledger.begin(req(acct, 1))).kind).toBe('insufficient');
      await assertConservation();
    });

    it('[billing:credit-line-once] a line is granted once per account and once per card fingerprint', async () => {
      const a = await funded(0);
      const b = await funded(0);
      const grant = (accountId: string, cardFingerprint: string) =>
        ledger.grantCreditLine({ accountId, micros: 2 * USD, cardFingerprint, memo: 'welcome' });
      expect((await grant(a, 'card-1')).kind).toBe('granted');
      expect(await grant(a, 'card-2')).toEqual({ kind: 'account_has_line' });
      expect(await grant(b, 'card-1')).toEqual({ kind: 'card_has_line' });
      expect(await ledger.creditLine(b)).toMatchObject({ limit_micros: 0, granted_at: null });
      expect((await ledger.balance(b)).available_micros).toBe(0);
      // Many accounts racing with one card: one line.
      const others = await Promise.all(Array.from({ length: 8 }, () => funded(0)));
      const results = await Promise.all(others.map((o) => grant(o, 'card-3')));
      expect(results.filter((r) => r.kind === 'granted')).toHaveLength(1);
      // The grant is in the account's history (a limit, not money: amount 0).
      const [mv] = await ledger.movements(a, 10);
      expect(mv).toMatchObject({
        kind: 'line',
        amount_micros: 0,
        status: 'succeeded',
        meta: { line_micros: 2 * USD },
      });
      await assertConservation();
    });

    it('[billing:line-frozen] a frozen line takes no new hold; the prepaid balance still pays; holds in flight capture', async () => {
      const acct = await withLine(300_000);
      const inflight = await started(ledger.begin(req(acct, 1_000_000))); // 0.30 prepaid + 0.70 of the line
      await ledger.freezeCreditLine(acct, 'the card was declined');
      expect(await ledger.balance(acct)).toMatchObject({ available_micros: -700_000 });
      expect(await ledger.begin(req(acct, 10_000))).toEqual({
        kind: 'insufficient',
        availableMicros: -700_000,
        requiredMicros: 10_000,
        lineFrozen: { reason: 'the card was declined' },
      });
      // The hold admitted before the freeze still posts (it was within the line when it was taken).
      await ledger.capture(inflight, { amountMicros: 1_000_000, provider: null, durationMs: 1 });
      expect(await ledger.creditLine(acct)).toMatchObject({
        drawn_micros: 700_000,
        frozen: { reason: 'the card was declined' },
      });
      // A second freeze keeps the first reason; a top-up makes prepaid money usable again, the line stays frozen.
      await ledger.freezeCreditLine(acct, 'another reason');
      await ledger.recordExternal({
        accountId: acct,
        kind: 'topup',
        micros: 1_000_000,
        externalRef: 'cs_1',
        memo: 'top-up',
      });
      expect(await ledger.balance(acct)).toMatchObject({
        balance_micros: 300_000,
        available_micros: 300_000,
      });
      await started(ledger.begin(req(acct, 300_000)));
      expect((await ledger.creditLine(acct)).frozen?.reason).toBe('the card was declined');
      await ledger.freezeCreditLine(acct, null);
      expect(await ledger.balance(acct)).toMatchObject({ available_micros: 2 * USD });
      await assertConservation();
    });
  });

  describe('settlements', () => {
    it('[billing:settle-actual-usage] reserves exactly what was drawn (whole cents), once, and restores the line when paid', async () => {
      const acct = await withLine(0);
      await spend(acct, 1_234_567);
      expect(await settle(acct, 2 * USD)).toEqual({ kind: 'nothing_due', drawnMicros: 1_234_567 });
      const s = await settle(acct);
      expect(s).toMatchObject({ kind: 'started', micros: 1_230_000 });
      const id = (s as { movementId: string }).movementId;
      // One in flight per account, even when asked concurrently.
      const again = await Promise.all(Array.from({ length: 5 }, () => settle(acct)));
      for (const r of again) expect(r).toEqual({ kind: 'pending', movementId: id, micros: 1_230_000 });
      expect(await ledger.creditLine(acct)).toMatchObject({
        settling: { movement_id: id, micros: 1_230_000 },
      });
      expect(await ledger.pendingSettlements(clock.now() + 1, 10)).toHaveLength(1);
      // Nothing moved yet.
      expect((await ledger.balance(acct)).balance_micros).toBe(-1_234_567);
      expect(await ledger.finishSettlement(id, { ok: true, externalRef: 'pi_1' })).toEqual({
        kind: 'settled',
        micros: 1_230_000,
      });
      expect(await ledger.balance(acct)).toMatchObject({
        balance_micros: -4_567,
        available_micros: 2 * USD - 4_567,
      });
      expect(await ledger.finishSettlement(id, { ok: true, externalRef: 'pi_1' })).toEqual({
        kind: 'already',
        status: 'succeeded',
      });
      expect(await ledger.finishSettlement(id, { ok: false, reason: 'late decline' })).toEqual({
        kind: 'already',
        status: 'succeeded',
      });
      expect(await ledger.creditLine(acct)).toMatchObject({
        drawn_micros: 4_567,
        frozen: null,
        settling: null,
      });
      expect(await ledger.getMovement(id)).toMatchObject({
        kind: 'settlement',
        status: 'succeeded',
        amount_micros: 1_230_000,
        external_ref: 'pi_1',
      });
      expect((await settle(acct)).kind).toBe('nothing_due');
      await assertConservation();
    });

    it('[billing:declined-freezes-line] a declined settlement freezes the line; a success reported later still credits and unfreezes', async () => {
      const acct = await withLine(0);
      await spend(acct, 600_000);
      const s = (await settle(acct)) as { movementId: string };
      expect(
        await ledger.finishSettlement(s.movementId, {
          ok: false,
          reason: 'card declined (insufficient funds)',
          externalRef: 'pi_9',
        }),
      ).toEqual({
        kind: 'failed',
      });
      expect(await ledger.finishSettlement(s.movementId, { ok: false, reason: 'again' })).toEqual({
        kind: 'already',
        status: 'failed',
      });
      expect(await ledger.creditLine(acct)).toMatchObject({
        drawn_micros: 600_000,
        frozen: { reason: 'card declined (insufficient funds)' },
        settling: null,
      });
      expect((await ledger.begin(req(acct, 1))).kind).toBe('insufficient');
      // A frozen line is not settled by the scheduler's query.
      expect(await ledger.drawnAccounts(1, 10)).toEqual([]);
      // The same usage can be settled again (a new card), and a success unfreezes.
      const retry = (await settle(acct)) as { movementId: string; micros: number };
      expect(retry.micros).toBe(600_000);
      expect((await ledger.finishSettlement(retry.movementId, { ok: true, externalRef: 'pi_10' })).kind).toBe(
        'settled',
      );
      expect(await ledger.creditLine(acct)).toMatchObject({ drawn_micros: 0, frozen: null });
      // The first attempt reported paid after all (out of order): the money moved, so it is recorded.
      expect(await ledger.finishSettlement(s.movementId, { ok: true, externalRef: 'pi_9' })).toEqual({
        kind: 'settled',
        micros: 600_000,
      });
      expect((await ledger.balance(acct)).balance_micros).toBe(600_000);
      await assertConservation();
    });

    it('settles at most the line and lists what is due', async () => {
      const a = await withLine(0, 1 * USD);
      const b = await withLine(0, 2 * USD);
      await spend(a, 900_000);
      await spend(b, 300_000);
      expect(await ledger.drawnAccounts(1, 10)).toEqual([
        { account_id: a, drawn_micros: 900_000 },
        { account_id: b, drawn_micros: 300_000 },
      ]);
      expect(await ledger.drawnAccounts(500_000, 10)).toEqual([{ account_id: a, drawn_micros: 900_000 }]);
      const s = (await settle(a)) as { micros: number };
      expect(s.micros).toBe(900_000);
    });
  });

  describe('card money', () => {
    it('[billing:topup-once] a top-up is credited once per outside reference, however often it is reported', async () => {
      const acct = await funded(0);
      const topup = () =>
        ledger.recordExternal({
          accountId: acct,
          kind: 'topup',
          micros: 5 * USD,
          externalRef: 'cs_test_1',
          memo: 'top-up',
        });
      const first = await topup();
      expect(first).toMatchObject({ kind: 'recorded', movedMicros: 5 * USD, unrecoveredMicros: 0 });
      const replays = await Promise.all(Array.from({ length: 10 }, topup));
      for (const r of replays)
        expect(r).toEqual({ kind: 'duplicate', movementId: (first as { movementId: string }).movementId });
      expect((await ledger.balance(acct)).balance_micros).toBe(5 * USD);
      expect(await ledger.movementByRef('topup', 'cs_test_1')).toMatchObject({
        account_id: acct,
        amount_micros: 5 * USD,
      });
      await assertConservation();
    });

    it('[billing:refund-dispute-debit] refunds and disputes debit what the prepaid balance still holds; the rest is unrecovered', async () => {
      const acct = await withLine(0);
      await ledger.recordExternal({
        accountId: acct,
        kind: 'topup',
        micros: 5 * USD,
        externalRef: 'cs_a',
        memo: 'top-up',
      });
      const held = await started(ledger.begin(req(acct, 1 * USD)));
      const refund = await ledger.recordExternal({
        accountId: acct,
        kind: 'refund',
        micros: 3 * USD,
        externalRef: 're_1',
        memo: 'refund',
      });
      expect(refund).toMatchObject({ kind: 'recorded', movedMicros: 3 * USD, unrecoveredMicros: 0 });
      // 2 USD prepaid, 1 held: a dispute of 5 takes the 1 USD that is free and leaves the hold alone.
      const dispute = await ledger.recordExternal({
        accountId: acct,
        kind: 'dispute',
        micros: 5 * USD,
        externalRef: 'dp_1',
        memo: 'dispute',
      });
      expect(dispute).toMatchObject({ kind: 'recorded', movedMicros: 1 * USD, unrecoveredMicros: 4 * USD });
      expect(await ledger.balance(acct)).toMatchObject({ balance_micros: 1 * USD, held_micros: 1 * USD });
      await ledger.capture(held, { amountMicros: 1 * USD, provider: null, durationMs: 1 });
      // Nothing is left to take, and the line never pays for a refund.
      await spend(acct, 500_000);
      const nothing = await ledger.recordExternal({
        accountId: acct,
        kind: 'refund',
        micros: 1 * USD,
        externalRef: 're_2',
        memo: 'refund',
      });
      expect(nothing).toMatchObject({ movedMicros: 0, unrecoveredMicros: 1 * USD });
      expect((await ledger.balance(acct)).balance_micros).toBe(-500_000);
      const mv = await ledger.movementByRef('dispute', 'dp_1');
      expect(mv).toMatchObject({
        amount_micros: -1 * USD,
        meta: { requested_micros: 5 * USD, unrecovered_micros: 4 * USD },
      });
      // A won dispute (Stripe reinstates the 5 USD) gives back what it took, not what it could not take.
      const back = await ledger.recordExternal({
        accountId: acct,
        kind: 'dispute_reversal',
        micros: 5 * USD,
        externalRef: 'dp_1',
        memo: 'dispute won',
      });
      expect(back).toMatchObject({ movedMicros: 1 * USD });
      expect((await ledger.balance(acct)).balance_micros).toBe(500_000);
      await assertConservation();
    });

    it('[billing:history-complete] credits, top-ups, grants and settlements are listed with the calls', async () => {
      const acct = await funded(1 * USD);
      clock.advance(1_000);
      await ledger.grantCreditLine({
        accountId: acct,
        micros: 2 * USD,
        cardFingerprint: 'fp-h',
        memo: 'line',
      });
      clock.advance(1_000);
      await ledger.recordExternal({
        accountId: acct,
        kind: 'topup',
        micros: 2 * USD,
        externalRef: 'cs_h',
        memo: 'top-up',
      });
      clock.advance(1_000);
      await spend(acct, 4 * USD);
      clock.advance(1_000);
      const s = (await settle(acct)) as { movementId: string };
      await ledger.finishSettlement(s.movementId, { ok: true, externalRef: 'pi_h' });
      const all = await ledger.movements(acct, 10);
      expect(all.map((m) => [m.kind, m.amount_micros, m.status])).toEqual([
        ['settlement', 1 * USD, 'succeeded'],
        ['topup', 2 * USD, 'succeeded'],
        ['line', 0, 'succeeded'],
        ['credit', 1 * USD, 'succeeded'],
      ]);
      const start = Date.UTC(2026, 10, 22, 12);
      expect(
        (await ledger.movements(acct, 10, { fromMs: start + 1_000, toMs: start + 3_000 })).map((m) => m.kind),
      ).toEqual(['topup', 'line']);
      expect(await ledger.transactions(acct, 10, { toMs: start + 3_000 })).toEqual([]);
      expect(await ledger.transactions(acct, 10, { fromMs: start + 3_000 })).toHaveLength(1);
    });
  });

  describe('usage', () => {
    it('[billing:usage-by-day] sums what succeeded per UTC day and service, net of refunds', async () => {
      const acct = await funded(10 * USD);
      const day1 = Date.UTC(2026, 10, 20, 23, 59);
      clock.set(day1);
      await spend(acct, 10_000);
      const c = await started(ledger.begin(req(acct, 50_000, { action: 'videoasm/render' })));
      await ledger.capture(c, { amountMicros: 50_000, provider: null, durationMs: 1, jobHandle: 'r1' });
      clock.set(Date.UTC(2026, 10, 21, 0, 1));
      await spend(acct, 10_000);
      await spend(acct, 20_000);
      await ledger.refundJob(acct, 'r1', 'job_failed');
      const failed = await started(ledger.begin(req(acct, 10_000)));
      await ledger.void(failed, { errorCode: 'x', provider: null, durationMs: 1 });
      expect(await ledger.usageByDay(acct, { fromMs: Date.UTC(2026, 10, 20) })).toEqual([
        { day: '2026-11-20', service: 'scraperC', micros: 10_000, calls: 1 },
        { day: '2026-11-20', service: 'videoasm', micros: 0, calls: 1 },
        { day: '2026-11-21', service: 'scraperC', micros: 30_000, calls: 2 },
      ]);
      expect(await ledger.usageByDay(acct, { fromMs: Date.UTC(2026, 10, 21) })).toHaveLength(1);
    });
  });

  describe('invariants with lines and card money', () => {
    it('[billing:double-entry] [billing:credit-line] a random sequence keeps entries summing to zero and balances within their lines', async () => {
      let seed = 7;
      const rand = () => {
        seed = (seed * 1103515245 + 12345) & 0x7fffffff;
        return seed / 0x7fffffff;
      };
      const accounts = [
        await withLine(0, USD, 'r1'),
        await withLine(300_000, 2 * USD, 'r2'),
        await funded(100_000),
      ];
      const open: string[] = [];
      const settling: string[] = [];
      for (let step = 0; step < 500; step++) {
        const r = rand();
        const acct = accounts[Math.floor(rand() * accounts.length)] as string;
        const amount = Math.floor(rand() * 400_000) + 1;
        if (r < 0.35) {
          const res = await ledger.begin(req(acct, amount));
          if (res.kind === 'started') open.push(res.callId);
        } else if (r < 0.6 && open.length > 0) {
          const call = open.splice(Math.floor(rand() * open.length), 1)[0] as string;
          const held = (await ledger.getCall(call))?.hold_micros ?? 0;
          await ledger.capture(call, {
            amountMicros: Math.floor(rand() * (held + 1)),
            provider: null,
            durationMs: 1,
          });
        } else if (r < 0.7) {
          const s = await settle(acct);
          if (s.kind === 'started') settling.push(s.movementId);
        } else if (r < 0.8 && settling.length > 0) {
          const id = settling.splice(Math.floor(rand() * settling.length), 1)[0] as string;
          const ok = rand() < 0.7;
          await ledger.finishSettlement(
            id,
            ok ? { ok, externalRef: `pi_${id}` } : { ok, reason: 'declined' },
          );
        } else if (r < 0.85) {
          await ledger.freezeCreditLine(acct, rand() < 0.5 ? 'declined' : null);
        } else {
          const kinds = ['topup', 'refund', 'refund_reversal', 'dispute', 'dispute_reversal'] as const;
          const kind = kinds[Math.floor(rand() * kinds.length)] as 'topup';
          await ledger.recordExternal({
            accountId: acct,
            kind,
            micros: amount,
            externalRef: `ref_${step % 40}`,
            memo: kind,
          });
        }
        if (step % 50 === 0) await assertConservation();
      }
      await assertConservation();
      for (const a of accounts) {
        const b = await ledger.balance(a);
        const line = await ledger.creditLine(a);
        expect(b.balance_micros - b.held_micros + line.limit_micros).toBeGreaterThanOrEqual(0);
        expect(line.drawn_micros).toBeLessThanOrEqual(line.limit_micros);
      }
    });
  });
});

// SQLite's one durable commit per paid call (PostgreSQL: synchronous_commit, checked by the bench).
describe('SQLite group commit', () => {
  let dir: string;
  let db: SqliteDb;
  let ledger: SqliteLedger;
  /** The fdatasyncs asked for and not yet finished: a test finishes them by hand. */
  let syncs: Array<(err: NodeJS.ErrnoException | null) => void>;
  const clock = new ManualClock(Date.UTC(2026, 10, 22, 12));
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tg-group-'));
    const path = join(dir, 'tollgate.db');
    db = openSqlite(path);
    syncs = [];
    ledger = new SqliteLedger(db, {
      clock,
      idempotencyTtlMs: 24 * HOUR,
      durability: { kind: 'group', walPath: `${path}-wal`, sync: (_fd, done) => syncs.push(done) },
    });
  });
  afterEach(async () => {
    for (const done of syncs.splice(0)) done(null);
    await ledger.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const settled = async (p: Promise<unknown>) => {
    let done = false;
    p.then(
      () => {
        done = true;
      },
      () => {
        done = true;
      },
    );
    await new Promise((r) => setImmediate(r));
    return done;
  };
  async function account(micros: number): Promise<string> {
    const made = ledger.createAccount({ name: 't' });
    syncs.shift()?.(null);
    const acct = (await made).id;
    const credited = ledger.credit(acct, micros, 'test');
    syncs.shift()?.(null);
    await credited;
    return acct;
  }

  it('[billing:one-durable-commit] a hold writes nothing; a capture is acknowledged only after its fdatasync', async () => {
    const acct = await account(100_000);
    const changes = db.prepare('SELECT total_changes() AS n');
    const before = (changes.get() as { n: number }).n;
    const call = ((await ledger.begin(req(acct, 10_000))) as { callId: string }).callId;
    expect((changes.get() as { n: number }).n).toBe(before); // the hold is a reservation in memory
    expect(await ledger.balance(acct)).toMatchObject({ held_micros: 10_000, available_micros: 90_000 });

    const capture = ledger.capture(call, { amountMicros: 10_000, provider: null, durationMs: 1 });
    // Committed (visible, the reservation released into the posted balance) but not yet acknowledged.
    expect(syncs).toHaveLength(1);
    expect(await settled(capture)).toBe(false);
    expect(await ledger.balance(acct)).toMatchObject({ balance_micros: 90_000, held_micros: 0 });
    syncs.shift()?.(null);
    expect(await capture).toEqual({ chargedMicros: 10_000 });
  });

  it('[billing:one-durable-commit] captures arriving during an fdatasync commit together and share the next one', async () => {
    const acct = await account(1_000_000);
    const calls = await Promise.all(
      Array.from({ length: 20 }, () =>
        ledger.begin(req(acct, 1_000)).then((r) => (r as { callId: string }).callId),
      ),
    );
    const first = ledger.capture(calls[0] as string, { amountMicros: 1_000, provider: null, durationMs: 1 });
    const rest = calls
      .slice(1)
      .map((c) => ledger.capture(c, { amountMicros: 1_000, provider: null, durationMs: 1 }));
    expect(syncs).toHaveLength(1); // the others wait for the fsync in flight
    // Not yet committed: their money is still reserved, never counted twice.
    expect(await ledger.balance(acct)).toMatchObject({ balance_micros: 999_000, held_micros: 19_000 });
    syncs.shift()?.(null);
    await first;
    expect(syncs).toHaveLength(1); // one batch, one fsync for all nineteen
    expect(await ledger.balance(acct)).toMatchObject({ balance_micros: 980_000, held_micros: 0 });
    expect(await settled(Promise.all(rest))).toBe(false);
    syncs.shift()?.(null);
    await Promise.all(rest);
    expect(syncs).toHaveLength(0);
  });

  it('[billing:one-durable-commit] a lone call syncs on the event loop; with company, on the pool', async () => {
    const path = join(dir, 'alone.db');
    const aloneDb = openSqlite(path);
    let alone = true;
    const inline: number[] = [];
    const pooled: Array<(err: NodeJS.ErrnoException | null) => void> = [];
    const l = new SqliteLedger(aloneDb, {
      clock,
      idempotencyTtlMs: HOUR,
      durability: {
        kind: 'group',
        walPath: `${path}-wal`,
        sync: (_fd, done) => pooled.push(done),
        alone: () => alone,
        syncNow: (fd) => inline.push(fd),
      },
    });
    try {
      const acct = (await l.createAccount({ name: 'alone' })).id; // its own commit: synced inline
      await l.credit(acct, 100_000, 'test');
      const call = ((await l.begin(req(acct, 10_000))) as { callId: string }).callId;
      await l.capture(call, { amountMicros: 10_000, provider: null, durationMs: 1 });
      expect(inline.length).toBe(3);
      expect(pooled).toHaveLength(0);
      alone = false;
      const next = ((await l.begin(req(acct, 10_000))) as { callId: string }).callId;
      const capture = l.capture(next, { amountMicros: 10_000, provider: null, durationMs: 1 });
      expect(await settled(capture)).toBe(false); // waits for the pool's fdatasync
      expect(pooled).toHaveLength(1);
      pooled.shift()?.(null);
      await capture;
      expect(inline.length).toBe(3);
      expect((await l.getCall(next))?.status).toBe('succeeded');
    } finally {
      for (const done of pooled.splice(0)) done(null);
      await l.close();
      aloneDb.close();
    }
  });

  it('a void releases at once and waits for no fsync; its failure record rides on the next commit', async () => {
    const acct = await account(100_000);
    const call = ((await ledger.begin(req(acct, 10_000))) as { callId: string }).callId;
    await ledger.void(call, { errorCode: 'upstream_error', provider: null, durationMs: 1 });
    expect(syncs).toHaveLength(0);
    expect(await ledger.getCall(call)).toMatchObject({ status: 'failed', error_code: 'upstream_error' });
    expect(await ledger.balance(acct)).toMatchObject({ balance_micros: 100_000, held_micros: 0 });
  });

  it('a failed fdatasync stops the ledger: the waiting capture and every later write are refused', async () => {
    const acct = await account(100_000);
    const a = ((await ledger.begin(req(acct, 10_000))) as { callId: string }).callId;
    const capture = ledger.capture(a, { amountMicros: 10_000, provider: null, durationMs: 1 });
    const err = Object.assign(new Error('EIO: i/o error'), { code: 'EIO' });
    syncs.shift()?.(err);
    await expect(capture).rejects.toThrow(/could not sync its journal/);
    await expect(ledger.credit(acct, 1, 'after')).rejects.toThrow(/could not sync its journal/);
  });

  it('the ledger connection never checkpoints itself and does not fsync inside COMMIT', () => {
    expect(db.pragma('synchronous', { simple: true })).toBe(0); // OFF: the fdatasync is the ledger's own
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
  });
});

describe('SQLite checkpoints', () => {
  it('[billing:one-durable-commit] run on their own thread and keep the WAL bounded under a stream of commits', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tg-ckpt-'));
    const path = join(dir, 'tollgate.db');
    const db = openSqlite(path);
    const ledger = new SqliteLedger(db, {
      clock: systemClock,
      idempotencyTtlMs: HOUR,
      durability: { kind: 'group', walPath: `${path}-wal` },
    });
    try {
      const acct = (await ledger.createAccount({ name: 'ckpt' })).id;
      await ledger.credit(acct, 1e12, 'test');
      const started = Date.now();
      let sizes = 0;
      // The WAL header's checkpoint sequence counts the times the writer started the WAL over.
      const restarts = () => {
        const header = Buffer.alloc(32);
        const fd = openSync(`${path}-wal`, 'r');
        readSync(fd, header, 0, 32, 0);
        closeSync(fd);
        return header.readUInt32BE(12);
      };
      // Captures until the WAL has started over twice (at least 1.5 s; a slow machine commits fewer per second,
      // so the bound is the count, with 40 s as the limit). Without checkpoints the WAL would only grow.
      while ((Date.now() - started < 1_500 || restarts() < 2) && Date.now() - started < 40_000) {
        const calls = await Promise.all(
          Array.from({ length: 50 }, () =>
            ledger.begin(req(acct, 1)).then((r) => (r as { callId: string }).callId),
          ),
        );
        await Promise.all(
          calls.map((c) => ledger.capture(c, { amountMicros: 1, provider: null, durationMs: 1 })),
        );
        sizes = Math.max(sizes, statSync(`${path}-wal`).size);
      }
      const frames = db.prepare('SELECT count(*) AS n FROM calls').get() as { n: number };
      expect(frames.n).toBeGreaterThan(500);
      // Restarted from its beginning again and again: far smaller than the pages all those commits wrote.
      const pageSize = db.pragma('page_size', { simple: true }) as number;
      expect(restarts()).toBeGreaterThanOrEqual(2);
      expect(sizes).toBeLessThan(frames.n * 4 * pageSize);
    } finally {
      await ledger.close();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('run their thread only while commits come: it starts with a commit, leaves when idle, and comes back', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tg-ckpt-idle-'));
    const path = join(dir, 'tollgate.db');
    const db = openSqlite(path);
    db.pragma('wal_autocheckpoint = 0');
    const checkpointer = startCheckpointer(path, () => undefined, { intervalMs: 20, idleMs: 150 });
    const commits = new GroupCommit(db, { kind: 'group', walPath: `${path}-wal` });
    commits.attach(checkpointer.gate);
    const write = (i: number) =>
      commits.write({ durable: true, run: () => db.prepare('INSERT INTO t VALUES (?)').run(i) });
    try {
      db.exec('CREATE TABLE t (x INTEGER)');
      expect(checkpointer.running()).toBe(false); // nothing committed through the ledger yet
      await write(1);
      expect(checkpointer.running()).toBe(true);
      await vi.waitFor(() => expect(checkpointer.running()).toBe(false), { timeout: 3_000, interval: 20 });
      // Everything it left behind was copied into the database: the next commit restarts the WAL.
      await write(2);
      expect(checkpointer.running()).toBe(true);
      expect(db.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 2 });
    } finally {
      await commits.close();
      await checkpointer.stop();
      expect(checkpointer.running()).toBe(false);
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
