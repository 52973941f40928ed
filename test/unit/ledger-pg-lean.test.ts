import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrate } from '../../src/db/migrate.js';
import { MIGRATIONS } from '../../src/db/migrations/index.js';
import { PgLedger } from '../../src/ledger/pg/pg-ledger.js';
import { type Ledger, LedgerStateError } from '../../src/ledger/types.js';
import { openPgPool, type PgPool } from '../../src/pg/pool.js';
import { beginRequest as req } from '../helpers/begin-request.js';
import { ManualClock } from '../helpers/clock.js';
import { createTestDatabase, type TestDatabase } from '../helpers/pg.js';

// The PostgreSQL ledger's lean pair (migration 3, src/ledger/pg/pg-pair.ts): upgrading a ledger with holds in
// flight, the plain and the full paths meeting on one hold across replicas, a hold the ledger never recorded,
// and the rules the dropped CHECKs and foreign keys used to state.

const DAY = 86_400_000;

async function started(r: Promise<unknown>): Promise<string> {
  const res = (await r) as { kind: string; callId: string };
  expect(res.kind).toBe('started');
  return res.callId;
}

const one = async <T>(pool: PgPool, text: string, values: unknown[] = []): Promise<T> =>
  (await pool.query(text, values)).rows[0] as T;

/** Entries sum to zero; every balance (system ones through accounts_v) equals its entries, every held amount its pending holds. */
async function assertConservation(pool: PgPool, ledger: Ledger): Promise<void> {
  expect(
    (await one<{ s: number }>(pool, 'SELECT coalesce(sum(amount_micros), 0)::bigint AS s FROM entries')).s,
  ).toBe(0);
  const sums = new Map(
    (
      await pool.query<{ a: string; s: number }>(
        'SELECT account_id AS a, sum(amount_micros)::bigint AS s FROM entries GROUP BY 1',
      )
    ).rows.map((r) => [r.a, r.s]),
  );
  const held = new Map(
    (
      await pool.query<{ a: string; s: number }>(
        'SELECT account_id AS a, sum(amount_micros)::bigint AS s FROM pending_holds GROUP BY 1',
      )
    ).rows.map((r) => [r.a, r.s]),
  );
  for (const a of await ledger.listAccounts()) {
    expect(a.balance_micros, a.id).toBe(sums.get(a.id) ?? 0);
    expect(a.held_micros, a.id).toBe(held.get(a.id) ?? 0);
  }
}

describe('PostgreSQL ledger: the lean pair (migration 3)', () => {
  const clock = new ManualClock(Date.UTC(2026, 10, 25, 12));
  let db: TestDatabase;
  let pool: PgPool;
  let other: PgPool;

  beforeEach(async () => {
    clock.set(Date.UTC(2026, 10, 25, 12));
    db = await createTestDatabase('tg_lean');
    pool = openPgPool(db.url, { max: 8 });
    other = openPgPool(db.url, { max: 8 });
  });
  afterEach(async () => {
    await pool.end();
    await other.end();
    await db.drop();
  });

  const ledgerOn = (p: PgPool, replicaId: string, durableHolds = false) =>
    new PgLedger(p, { clock, idempotencyTtlMs: DAY, replicaId, durableHolds });

  it('[billing:hold-resolves-once] [billing:double-entry] an upgrade keeps holds in flight, their keys and the revenue', async () => {
    // A ledger at migration 2, used through its own functions: a captured call (revenue on a shard), a pending
    // plain hold and a pending hold with an idempotency key.
    await migrate(pool, { migrations: MIGRATIONS.filter((m) => m.version !== 3 && m.version !== 5) });
    const now = clock.now();
    await pool.query(
      "INSERT INTO accounts (id, name, kind, created_at) VALUES ('acct_old', 'old', 'customer', $1)",
      [now],
    );
    await pool.query("SELECT tg_transfer('acct_old', 'sys_funding', 100000, 'topup', NULL, 'seed', $1)", [
      now,
    ]);
    const begin = async (call: string, key: string | null) =>
      pool.query(
        `SELECT * FROM tg_begin('acct_old', 'scraperC/scrape', 10000, 10000, 'api_key', 'k', $1, $2, 60000, NULL, NULL,
                                0, NULL, NULL, $3, $4, 'r_old', $5, false)`,
        [key, key ? 'fp' : null, now, DAY, call],
      );
    await begin('txn_done', null);
    await pool.query("SELECT tg_capture('txn_done', 10000, 'p', 1, 'null', NULL, NULL, $1)", [now]);
    await begin('txn_plain', null);
    await begin('txn_keyed', 'key1');

    // Migration 5 (caps per key) builds on 3's tables: it follows it.
    expect((await migrate(pool)).applied.map((m: { version: number }) => m.version)).toEqual([3, 5]);
    const ledger = ledgerOn(pool, 'r_new');
    expect(await ledger.balance('acct_old')).toEqual({
      balance_micros: 90_000,
      held_micros: 20_000,
      available_micros: 70_000,
    });
    expect((await ledger.getAccount('sys_revenue'))?.balance_micros).toBe(10_000);
    expect((await pool.query('SELECT call_id, replica_id FROM pending_holds ORDER BY call_id')).rows).toEqual(
      [
        { call_id: 'txn_keyed', replica_id: 'r_old' },
        { call_id: 'txn_plain', replica_id: 'r_old' },
      ],
    );
    expect(
      (await one<{ r: string }>(pool, "SELECT replica_id AS r FROM calls WHERE id = 'txn_done'")).r,
    ).toBe('r_old');
    // The holds taken before the upgrade resolve once, on either path.
    await ledger.capture('txn_plain', { amountMicros: 4_000, provider: 'p', durationMs: 1 });
    await expect(
      ledger.capture('txn_plain', { amountMicros: 4_000, provider: 'p', durationMs: 1 }),
    ).rejects.toThrow(/already posted/);
    await ledger.void('txn_keyed', { errorCode: 'upstream_error', provider: 'p', durationMs: 1 });
    // The key was released with the void: the same key runs again.
    const again = await ledger.begin(
      req('acct_old', 10_000, { idempotency: { key: 'key1', fingerprint: 'fp' } }),
    );
    expect(again.kind).toBe('started');
    expect((await ledger.getAccount('sys_revenue'))?.balance_micros).toBe(14_000);
    expect(await ledger.balance('acct_old')).toMatchObject({ balance_micros: 86_000, held_micros: 10_000 });
    await assertConservation(pool, ledger);
  });

  it('[billing:hold-resolves-once] capture, void and the sweeps of two replicas race for each hold: exactly one resolves it', async () => {
    await migrate(pool);
    const r1 = ledgerOn(pool, 'r1');
    const r2 = ledgerOn(other, 'r2');
    const acct = (await r1.createAccount({ name: 'race' })).id;
    await r1.credit(acct, 10_000_000, 'test');
    const calls = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        started((i % 2 ? r1 : r2).begin(req(acct, 10_000, { holdTtlMs: 1_000 }))),
      ),
    );
    clock.advance(2_000); // every hold has expired: the sweeps of both replicas race the capture and the void
    const [outcomes, sweeps] = await Promise.all([
      Promise.all(
        calls.map((call, i) =>
          Promise.allSettled([
            (i % 2 ? r2 : r1).capture(call, { amountMicros: 10_000, provider: null, durationMs: 1 }),
            (i % 2 ? r1 : r2).void(call, { errorCode: 'x', provider: null, durationMs: 1 }),
          ]),
        ),
      ),
      Promise.all([r1.sweep(clock.now()), r2.sweep(clock.now())]),
    ]);
    let captured = 0;
    let resolved = 0;
    for (const [i, pair] of outcomes.entries()) {
      const won = pair.filter((o) => o.status === 'fulfilled').length;
      expect(won, calls[i]).toBeLessThanOrEqual(1);
      resolved += won;
      for (const o of pair) if (o.status === 'rejected') expect(o.reason).toBeInstanceOf(LedgerStateError);
      if (pair[0]?.status === 'fulfilled') captured++;
    }
    // Each hold resolved exactly once: by its capture, its void, or one of the sweeps.
    expect(resolved + sweeps.reduce((n, r) => n + r.expiredHolds, 0)).toBe(calls.length);
    expect((await pool.query("SELECT 1 FROM calls WHERE status = 'pending'")).rowCount).toBe(0);
    expect(await r2.balance(acct)).toEqual({
      balance_micros: 10_000_000 - captured * 10_000,
      held_micros: 0,
      available_micros: 10_000_000 - captured * 10_000,
    });
    await assertConservation(pool, r1);
  });

  it('[billing:unknown-hold] a capture or void of a hold the ledger never recorded says so and moves nothing', async () => {
    await migrate(pool);
    const ledger = ledgerOn(pool, 'r1');
    const acct = (await ledger.createAccount({ name: 'u' })).id;
    await ledger.credit(acct, 50_000, 'test');
    const capture = ledger.capture('txn_never_recorded', {
      amountMicros: 10_000,
      provider: null,
      durationMs: 1,
    });
    await expect(capture).rejects.toBeInstanceOf(LedgerStateError);
    await expect(
      ledger.capture('txn_never_recorded', { amountMicros: 10_000, provider: null, durationMs: 1 }),
    ).rejects.toThrow(/no hold for call txn_never_recorded/);
    await expect(
      ledger.void('txn_never_recorded', { errorCode: 'x', provider: null, durationMs: 1 }),
    ).rejects.toThrow(/no hold for call/);
    expect(await ledger.getCall('txn_never_recorded')).toBeUndefined();
    expect(await ledger.balance(acct)).toEqual({
      balance_micros: 50_000,
      held_micros: 0,
      available_micros: 50_000,
    });
    await assertConservation(pool, ledger);
  });

  it('[billing:no-overdraft] durable holds: 1,000 parallel holds on a balance for 25, across two replicas, start exactly 25', async () => {
    await migrate(pool);
    const r1 = ledgerOn(pool, 'r1', true);
    const r2 = ledgerOn(other, 'r2', true);
    const acct = (await r1.createAccount({ name: 'k' })).id;
    await r1.credit(acct, 25 * 10_000, 'test');
    const results = await Promise.all(
      Array.from({ length: 1000 }, (_, i) => (i % 2 ? r1 : r2).begin(req(acct, 10_000))),
    );
    const ok = results.filter((r) => r.kind === 'started') as Array<{ callId: string }>;
    expect(ok).toHaveLength(25);
    for (const r of results.filter((x) => x.kind === 'insufficient'))
      expect(r).toMatchObject({ availableMicros: expect.any(Number), requiredMicros: 10_000 });
    await Promise.all(
      ok.map((r, i) =>
        (i % 2 ? r2 : r1).capture(r.callId, { amountMicros: 10_000, provider: null, durationMs: 1 }),
      ),
    );
    expect(await r1.balance(acct)).toEqual({ balance_micros: 0, held_micros: 0, available_micros: 0 });
    await assertConservation(pool, r1);
  });

  it('[billing:double-entry] keeps the rules the dropped CHECKs and foreign keys stated: account kinds and lines, one charge and one refund per call', async () => {
    await migrate(pool);
    await expect(
      pool.query("INSERT INTO accounts (id, kind, created_at) VALUES ('acct_bad', 'admin', 0)"),
    ).rejects.toThrow(/violates check/);
    await expect(
      pool.query(
        "INSERT INTO accounts (id, kind, credit_line_micros, created_at) VALUES ('sys_x', 'system', 5, 0)",
      ),
    ).rejects.toThrow(/violates check/);
    const ledger = ledgerOn(pool, 'r1');
    const acct = (await ledger.createAccount({ name: 'c' })).id;
    await ledger.credit(acct, 50_000, 'test');
    const call = await started(ledger.begin(req(acct, 10_000)));
    await ledger.capture(call, { amountMicros: 10_000, provider: null, durationMs: 1 });
    // A second charge of the same call, written by hand, is refused by the index.
    await expect(
      pool.query(
        "INSERT INTO entries (transfer_id, account_id, amount_micros, kind, call_id, created_at) VALUES ('t2', $1, -1, 'charge', $2, 0), ('t2', 'sys_revenue', 1, 'charge', $2, 0)",
        [acct, call],
      ),
    ).rejects.toThrow(/entries_once/);
    // And a refund: once by the ledger, and a second one by hand is refused too.
    const job = await started(ledger.begin(req(acct, 10_000)));
    await ledger.capture(job, { amountMicros: 10_000, provider: null, durationMs: 1, jobHandle: 'h1' });
    expect(await ledger.refundJob(acct, 'h1', 'job_failed')).toEqual({ refundedMicros: 10_000, callId: job });
    await expect(
      pool.query(
        "INSERT INTO entries (transfer_id, account_id, amount_micros, kind, call_id, created_at) VALUES ('t3', $1, 1, 'refund', $2, 0), ('t3', 'sys_revenue', -1, 'refund', $2, 0)",
        [acct, job],
      ),
    ).rejects.toThrow(/entries_once/);
    expect(await ledger.balance(acct)).toMatchObject({ balance_micros: 40_000, held_micros: 0 });
    await expect(ledger.begin(req('acct_missing', 10_000))).rejects.toThrow(/unknown account/);
    await assertConservation(pool, ledger);
  });
});
