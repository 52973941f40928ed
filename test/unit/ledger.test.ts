import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteLedger } from '../../src/ledger/sqlite/sqlite-ledger.js';
import type { BeginRequest, Ledger } from '../../src/ledger/types.js';
import { ManualClock } from '../../src/lib/clock.js';
import { openSqlite, type SqliteDb } from '../../src/lib/sqlite.js';

const HOUR = 3_600_000;

let db: SqliteDb;
let ledger: Ledger;
let clock: ManualClock;

beforeEach(() => {
  db = openSqlite(':memory:');
  clock = new ManualClock(Date.UTC(2026, 10, 22, 12));
  ledger = new SqliteLedger(db, { clock, idempotencyTtlMs: 24 * HOUR });
});
afterEach(async () => {
  await ledger.close();
  db.close();
});

async function funded(micros: number): Promise<string> {
  const a = await ledger.createAccount({ name: 't' });
  if (micros > 0) await ledger.credit(a.id, micros, 'test');
  return a.id;
}

function req(accountId: string, micros: number, extra: Partial<BeginRequest> = {}): BeginRequest {
  return {
    accountId,
    action: 'scraperC/scrape',
    priceMicros: micros,
    holdMicros: micros,
    paymentMethod: 'api_key',
    principal: 'key_test',
    holdTtlMs: 60_000,
    ...extra,
  };
}

async function started(r: Promise<unknown>): Promise<string> {
  const res = (await r) as { kind: string; callId: string };
  expect(res.kind).toBe('started');
  return res.callId;
}

/** Conservation: cached balances equal the sums of entries, and all entries sum to zero. */
function assertConservation(): void {
  const total = db.prepare('SELECT coalesce(sum(amount_micros), 0) AS s FROM entries').get() as { s: number };
  expect(total.s).toBe(0);
  const drift = db
    .prepare(
      `SELECT a.id, a.balance_micros, coalesce((SELECT sum(amount_micros) FROM entries e WHERE e.account_id = a.id), 0) AS sum
       FROM accounts a`,
    )
    .all() as Array<{ id: string; balance_micros: number; sum: number }>;
  for (const row of drift) expect(row.balance_micros, row.id).toBe(row.sum);
  const held = db
    .prepare(
      `SELECT a.id, a.held_micros, coalesce((SELECT sum(amount_micros) FROM holds h WHERE h.account_id = a.id AND h.status = 'pending'), 0) AS sum
       FROM accounts a`,
    )
    .all() as Array<{ id: string; held_micros: number; sum: number }>;
  for (const row of held) expect(row.held_micros, row.id).toBe(row.sum);
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
    assertConservation();
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
    assertConservation();
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
    assertConservation();
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

  it('the CHECK constraint backstops the admission check', () => {
    const acct = db
      .prepare("INSERT INTO accounts (id, kind, created_at) VALUES ('acct_raw', 'customer', 0)")
      .run();
    expect(acct.changes).toBe(1);
    expect(() => db.prepare("UPDATE accounts SET held_micros = 5 WHERE id = 'acct_raw'").run()).toThrow(
      /CHECK/,
    );
  });
});

describe('entries', () => {
  it('[billing:double-entry] are append-only: UPDATE and DELETE fail', async () => {
    const acct = await funded(10_000);
    expect(acct).toBeTruthy();
    expect(() => db.prepare('UPDATE entries SET amount_micros = 1').run()).toThrow(/append-only/);
    expect(() => db.prepare('DELETE FROM entries').run()).toThrow(/append-only/);
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
      if (step % 50 === 0) assertConservation();
    }
    assertConservation();
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
    expect(await ledger.sweep(clock.now())).toEqual({ expiredHolds: 0, purgedKeys: 1 });
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
    expect(await ledger.refundJob(acct, 'rnd_1', 'job_failed')).toEqual({ refundedMicros: 0, callId: call });
    expect((await ledger.balance(acct)).balance_micros).toBe(2_000_000);
    expect(await ledger.getCall(call)).toMatchObject({
      status: 'refunded',
      charged_micros: 1_000_000,
      refunded_micros: 1_000_000,
    });
    expect(await ledger.refundJob(acct, 'unknown', 'job_failed')).toEqual({ refundedMicros: 0 });
    assertConservation();
  });

  it('concurrent refunds of the same job pay back once', async () => {
    const acct = await funded(1_000_000);
    const call = await started(ledger.begin(req(acct, 500_000)));
    await ledger.capture(call, { amountMicros: 500_000, provider: null, durationMs: 1, jobHandle: 'j' });
    const rs = await Promise.all(Array.from({ length: 10 }, () => ledger.refundJob(acct, 'j', 'x')));
    expect(rs.filter((r) => r.refundedMicros > 0)).toHaveLength(1);
    expect((await ledger.balance(acct)).balance_micros).toBe(1_000_000);
    assertConservation();
  });
});

describe('expiry and recovery', () => {
  it('[billing:crash-recovery] the sweeper voids holds past their expiry, and only those', async () => {
    const acct = await funded(100_000);
    const old = await started(ledger.begin(req(acct, 10_000, { holdTtlMs: 1_000 })));
    const fresh = await started(ledger.begin(req(acct, 10_000, { holdTtlMs: 60_000 })));
    clock.advance(2_000);
    expect(await ledger.sweep(clock.now())).toEqual({ expiredHolds: 1, purgedKeys: 0 });
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
    expect(await ledger.sweep(clock.now())).toEqual({ expiredHolds: 0, purgedKeys: 0 });
    assertConservation();
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
  const cap = { dailyCap: { limitMicros: 100_000 } };

  it('counts holds and charges of the UTC day, released parts included', async () => {
    const acct = await funded(1_000_000);
    const a = await started(ledger.begin(req(acct, 60_000, cap)));
    const refused = await ledger.begin(req(acct, 50_000, cap));
    expect(refused).toMatchObject({ kind: 'daily_cap', spentMicros: 60_000, limitMicros: 100_000 });
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
    expect(refused).toMatchObject({ kind: 'daily_cap', resetsAt: Date.UTC(2026, 10, 23) });
    clock.set(Date.UTC(2026, 10, 23, 0, 0, 0, 1));
    await started(ledger.begin(req(acct, 100_000, cap)));
  });

  it('holds under concurrency: parallel admissions never exceed the cap', async () => {
    const acct = await funded(10_000_000);
    const results = await Promise.all(Array.from({ length: 40 }, () => ledger.begin(req(acct, 30_000, cap))));
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
    assertConservation();
  });

  it('a batch of holds commits without fsync; a capture (money moving) commits with synchronous=FULL', async () => {
    const acct = await funded(100_000);
    expect(db.pragma('synchronous', { simple: true })).toBe(2);
    const call = await started(ledger.begin(req(acct, 10_000)));
    expect(db.pragma('synchronous', { simple: true })).toBe(1); // NORMAL: the hold rides on the next fsync
    await ledger.capture(call, { amountMicros: 10_000, provider: null, durationMs: 1 });
    expect(db.pragma('synchronous', { simple: true })).toBe(2); // FULL for the capture's commit
  });

  it('durability pragmas are on', () => {
    expect(db.pragma('synchronous', { simple: true })).toBe(2); // FULL
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
  });
});
