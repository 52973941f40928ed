import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStateLedger } from '../../src/ledger/index.js';
import { type Ledger, LedgerStateError } from '../../src/ledger/types.js';
import { ReplicaLease } from '../../src/pg/replicas.js';
import { BACKENDS, type BackendCase, type OpenedState } from '../helpers/backends.js';
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

// Money invariants under concurrency: on each backend from one process, and on PostgreSQL from several
// replicas (pools) sharing one ledger, including the sweep of a replica that died with holds pending.

const HOUR = 3_600_000;
const TTL = 24 * HOUR;

/** Entries sum to zero, and every account's balance and held amount equal their entries and pending holds. */
async function assertConservation(state: OpenedState, ledger: Ledger): Promise<void> {
  const [total] = await sqlOn<{ s: number }>(
    state.db,
    'SELECT CAST(coalesce(sum(amount_micros), 0) AS bigint) AS s FROM entries',
  );
  expect(total?.s).toBe(0);
  const sums = await sqlOn<{ account_id: string; s: number }>(
    state.db,
    'SELECT account_id, CAST(sum(amount_micros) AS bigint) AS s FROM entries GROUP BY account_id',
  );
  const held = await sqlOn<{ account_id: string; s: number }>(state.db, PENDING_HOLDS[state.db.kind]);
  const of = (rows: Array<{ account_id: string; s: number }>, id: string) =>
    rows.find((r) => r.account_id === id)?.s ?? 0;
  for (const a of await ledger.listAccounts()) {
    expect(a.balance_micros, a.id).toBe(of(sums, a.id));
    expect(a.held_micros, a.id).toBe(of(held, a.id));
  }
}

describe.each(BACKENDS)('ledger under concurrency ($name)', (backend) => {
  let state: OpenedState;
  let ledger: Ledger;
  const clock = new ManualClock(Date.UTC(2026, 10, 22, 12));

  beforeEach(async () => {
    state = await backend.open();
    ledger = await openStateLedger(state.db, { clock, idempotencyTtlMs: TTL });
  });
  afterEach(async () => {
    await ledger.close();
    await state.close();
  });

  it('[billing:no-overdraft] 200 parallel holds against a balance for k: exactly k start, nothing overspent', async () => {
    const k = 37;
    const acct = (await ledger.createAccount({ name: 'k' })).id;
    await ledger.credit(acct, k * 10_000, 'test');
    const results = await Promise.all(Array.from({ length: 200 }, () => ledger.begin(req(acct, 10_000))));
    const started = results.filter((r) => r.kind === 'started');
    expect(started).toHaveLength(k);
    expect(results.filter((r) => r.kind === 'insufficient')).toHaveLength(200 - k);
    // Capture them all at once: the balance ends at exactly zero.
    await Promise.all(
      started.map((r) => ledger.capture(r.callId, { amountMicros: 10_000, provider: null, durationMs: 1 })),
    );
    expect(await ledger.balance(acct)).toEqual({ balance_micros: 0, held_micros: 0, available_micros: 0 });
    await assertConservation(state, ledger);
  });

  it('[billing:hold-resolves-once] parallel capture and void of the same hold: exactly one wins', async () => {
    const acct = (await ledger.createAccount({ name: 'c' })).id;
    await ledger.credit(acct, 1_000_000, 'test');
    const calls = await Promise.all(
      Array.from(
        { length: 20 },
        async () => ((await ledger.begin(req(acct, 10_000))) as { callId: string }).callId,
      ),
    );
    for (const call of calls) {
      const outcomes = await Promise.allSettled([
        ledger.capture(call, { amountMicros: 10_000, provider: null, durationMs: 1 }),
        ledger.capture(call, { amountMicros: 10_000, provider: null, durationMs: 1 }),
        ledger.void(call, { errorCode: 'x', provider: null, durationMs: 1 }),
      ]);
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
      for (const o of outcomes)
        if (o.status === 'rejected') expect(o.reason).toBeInstanceOf(LedgerStateError);
    }
    await assertConservation(state, ledger);
  });
});

const pgBackend = BACKENDS.find((b) => b.name === 'postgres') as BackendCase;

function poolOf(s: OpenedState) {
  if (s.db.kind !== 'postgres') throw new Error('not a PostgreSQL state');
  return s.db.pool;
}

describe('ledger shared by replicas (postgres)', () => {
  const clock = new ManualClock(Date.UTC(2026, 10, 22, 12));
  let state: OpenedState;
  let other: OpenedState;
  let r1: Ledger;
  let r2: Ledger;

  beforeEach(async () => {
    clock.set(Date.UTC(2026, 10, 22, 12));
    state = await pgBackend.open({ replicaId: 'r1' });
    other = await pgBackend.share(state, { replicaId: 'r2' });
    r1 = await openStateLedger(state.db, { clock, idempotencyTtlMs: TTL });
    r2 = await openStateLedger(other.db, { clock, idempotencyTtlMs: TTL });
  });
  afterEach(async () => {
    await r1.close();
    await r2.close();
    await other.close();
    await state.close();
  });

  async function funded(micros: number): Promise<string> {
    const a = await r1.createAccount({ name: 'r' });
    await r1.credit(a.id, micros, 'test');
    return a.id;
  }

  it('[billing:no-overdraft] k of N holds split across two replicas: exactly k start', async () => {
    const k = 23;
    const acct = await funded(k * 10_000);
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => (i % 2 ? r1 : r2).begin(req(acct, 10_000))),
    );
    expect(results.filter((r) => r.kind === 'started')).toHaveLength(k);
    expect((await r2.balance(acct)).available_micros).toBe(0);
    await assertConservation(state, r1);
  });

  it('[billing:hold-resolves-once] the same hold captured from two replicas at once is charged once', async () => {
    const acct = await funded(1_000_000);
    for (let i = 0; i < 20; i++) {
      const call = ((await r1.begin(req(acct, 10_000))) as { callId: string }).callId;
      const outcomes = await Promise.allSettled([
        r1.capture(call, { amountMicros: 10_000, provider: null, durationMs: 1 }),
        r2.capture(call, { amountMicros: 10_000, provider: null, durationMs: 1 }),
      ]);
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
      const lost = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
      expect(lost.reason).toBeInstanceOf(LedgerStateError);
      expect((lost.reason as Error).message).toMatch(/already posted/);
    }
    expect((await r2.balance(acct)).balance_micros).toBe(1_000_000 - 20 * 10_000);
    await assertConservation(state, r1);
  });

  it('[billing:idempotent-replay] one idempotency key across replicas runs once and replays, charging once', async () => {
    const acct = await funded(1_000_000);
    const idem = { idempotency: { key: 'k1', fingerprint: 'fp' } };
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => (i % 2 ? r1 : r2).begin(req(acct, 10_000, idem))),
    );
    const started = results.filter((r) => r.kind === 'started');
    expect(started).toHaveLength(1);
    expect(results.filter((r) => r.kind === 'in_flight')).toHaveLength(29);
    const call = (started[0] as { callId: string }).callId;
    await r2.capture(call, { amountMicros: 10_000, provider: null, durationMs: 1, response: { ok: 1 } });
    const replays = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 ? r1 : r2).begin(req(acct, 10_000, idem))),
    );
    for (const r of replays) expect(r).toEqual({ kind: 'replay', callId: call, response: { ok: 1 } });
    expect((await r1.balance(acct)).balance_micros).toBe(990_000);
    expect(await r1.transactions(acct, 10)).toHaveLength(1);
  });

  it('a daily cap holds across replicas', async () => {
    const acct = await funded(10_000_000);
    const cap = { caps: [{ scope: 'oauth:client1', window: 'day' as const, limitMicros: 100_000 }] };
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => (i % 2 ? r1 : r2).begin(req(acct, 30_000, cap))),
    );
    expect(results.filter((r) => r.kind === 'started')).toHaveLength(3);
    expect(results.filter((r) => r.kind === 'cap_reached')).toHaveLength(37);
  });

  it('[billing:crash-recovery] a replica whose lease expired has its holds voided once by another; a live one is untouched', async () => {
    const acct = await funded(10_000_000);
    const lease1 = new ReplicaLease(poolOf(state), {
      replicaId: 'r1',
      leaseMs: 30_000,
      clock,
    });
    const lease2 = new ReplicaLease(poolOf(other), {
      replicaId: 'r2',
      leaseMs: 30_000,
      clock,
    });
    await lease1.start();
    await lease2.start();
    try {
      const mine = await Promise.all(Array.from({ length: 5 }, () => r1.begin(req(acct, 10_000))));
      const theirs = await Promise.all(Array.from({ length: 4 }, () => r2.begin(req(acct, 10_000))));
      // r1 stops renewing (it crashed); r2 renews. Neither hold has reached its TTL yet.
      clock.advance(31_000);
      await lease2.renew();
      expect(await r2.sweep(clock.now())).toEqual({ expiredHolds: 0, purgedKeys: 0, orphanedHolds: 5 });
      for (const r of mine)
        expect(await r2.getCall((r as { callId: string }).callId)).toMatchObject({
          status: 'failed',
          error_code: 'orphaned_by_replica',
        });
      for (const r of theirs)
        expect((await r1.getCall((r as { callId: string }).callId))?.status).toBe('pending');
      expect((await r1.balance(acct)).held_micros).toBe(40_000);
      // Once only: a second sweep, and a sweep by the dead replica itself (it never orphans itself), find nothing.
      expect(await r2.sweep(clock.now())).toMatchObject({ orphanedHolds: 0 });
      expect(await r1.sweep(clock.now())).toMatchObject({ orphanedHolds: 0, expiredHolds: 0 });
      // voidAllPending at r1's restart voids its own holds only, never the live r2's.
      await r1.begin(req(acct, 10_000));
      expect(await r1.voidAllPending('orphaned_by_restart')).toBe(1);
      expect((await r1.balance(acct)).held_micros).toBe(40_000);
      await assertConservation(state, r1);
    } finally {
      await lease1.close();
      await lease2.close();
    }
    const rows = await sqlOn(state.db, 'SELECT id FROM replicas');
    expect(rows).toEqual([]);
  });

  it('[billing:crash-recovery] every replica sweeping at once voids each expired hold exactly once', async () => {
    const third = await pgBackend.share(state, { replicaId: 'r3' });
    const r3 = await openStateLedger(third.db, { clock, idempotencyTtlMs: TTL });
    try {
      const acct = await funded(10_000_000);
      const n = 60;
      await Promise.all(
        Array.from({ length: n }, (_, i) =>
          [r1, r2, r3][i % 3]?.begin(req(acct, 10_000, { holdTtlMs: 1_000 })),
        ),
      );
      clock.advance(2_000);
      const sweeps = await Promise.all([r1, r2, r3, r1, r2, r3].map((l) => l.sweep(clock.now())));
      expect(sweeps.reduce((s, r) => s + r.expiredHolds, 0)).toBe(n);
      expect(await r1.balance(acct)).toMatchObject({ held_micros: 0, balance_micros: 10_000_000 });
      const [failed] = await sqlOn<{ n: number }>(
        state.db,
        "SELECT CAST(count(*) AS bigint) AS n FROM calls WHERE status = 'failed' AND error_code = 'hold_expired'",
      );
      expect(failed?.n).toBe(n);
      await assertConservation(state, r1);
    } finally {
      await r3.close();
      await third.close();
    }
  });

  it('a lease renews itself every third of its period, and a closed one stays gone', async () => {
    const real = { now: () => Date.now() };
    const lease = new ReplicaLease(poolOf(state), { replicaId: 'r_timer', leaseMs: 300, clock: real });
    const expiry = async () =>
      (
        await sqlOn<{ lease_expires_at: number }>(
          state.db,
          "SELECT lease_expires_at FROM replicas WHERE id = 'r_timer'",
        )
      )[0]?.lease_expires_at;
    await lease.start();
    const first = (await expiry()) as number;
    await new Promise((r) => setTimeout(r, 350));
    expect((await expiry()) as number).toBeGreaterThan(first);
    await lease.close();
    await new Promise((r) => setTimeout(r, 250));
    expect(await expiry()).toBeUndefined();
  });
});
