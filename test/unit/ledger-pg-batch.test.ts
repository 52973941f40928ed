import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrate } from '../../src/db/migrate.js';
import { Batches } from '../../src/ledger/pg/pg-batch.js';
import { PgLedger } from '../../src/ledger/pg/pg-ledger.js';
import { LedgerStateError } from '../../src/ledger/types.js';
import { openPgPool, type PgPool } from '../../src/pg/pool.js';
import { beginRequest } from '../helpers/begin-request.js';
import { ManualClock } from '../helpers/clock.js';
import { createTestDatabase, type TestDatabase } from '../helpers/pg.js';

// The PostgreSQL ledger's batches (src/ledger/pg/pg-batch.ts, the batch statements of pg-pair.ts): plain holds
// and captures that arrive while others run go out as one statement. What must not change: nobody overspends,
// each hold resolves once, entries sum to zero, and a batch that fails leaves each call to its own path.

const DAY = 86_400_000;
const CENT = 10_000;

const req = (accountId: string) => beginRequest(accountId, CENT);

const capture = (micros = CENT) => ({ amountMicros: micros, provider: 'p', durationMs: 3 });

/** The pool, counting the batch statements it runs (and their sizes), and failing them on request. */
function watched(pool: PgPool) {
  const seen = { batches: [] as Array<{ name: string; size: number }>, fail: undefined as Error | undefined };
  const proxy = new Proxy(pool, {
    get(target, prop, receiver) {
      if (prop !== 'query') return Reflect.get(target, prop, receiver);
      return (q: unknown, ...rest: unknown[]) => {
        const named = q as { name?: string; values?: unknown[][] };
        if (typeof named === 'object' && named.name?.includes('_batch')) {
          seen.batches.push({ name: named.name, size: named.values?.[0]?.length ?? 0 });
          if (seen.fail) return Promise.reject(seen.fail);
        }
        return (target.query as (...a: unknown[]) => unknown)(q, ...rest);
      };
    },
  });
  return { pool: proxy, seen };
}

describe('Batches', () => {
  it('sends a lone item at once and alone, and what arrives while batches run in the next one', async () => {
    const sent: number[][] = [];
    const gates: Array<() => void> = [];
    const b = new Batches<number>(async (items) => {
      sent.push(items);
      await new Promise<void>((r) => gates.push(r));
      return items.map((i) => i % 2 === 0);
    }, 2);
    const first = b.add(0);
    expect(sent).toEqual([[0]]);
    const second = b.add(1);
    expect(sent).toEqual([[0], [1]]);
    // Two batches run: these wait, then go out together.
    const rest = [2, 3, 4].map((i) => b.add(i));
    expect(sent).toHaveLength(2);
    gates[0]?.();
    expect(await first).toBe(true);
    await new Promise((r) => setImmediate(r));
    expect(sent[2]).toEqual([2, 3, 4]);
    gates[1]?.();
    gates[2]?.();
    expect(await second).toBe(false);
    expect(await Promise.all(rest)).toEqual([true, false, true]);
  });

  it('rejects every item of a batch that failed, and goes on with the next', async () => {
    let n = 0;
    const b = new Batches<number>(async (items) => {
      if (n++ === 0) throw new Error('down');
      return items.map(() => true);
    }, 1);
    await expect(b.add(1)).rejects.toThrow('down');
    expect(await b.add(2)).toBe(true);
  });
});

describe('PostgreSQL ledger: plain holds and captures in batches', () => {
  const clock = new ManualClock(Date.UTC(2026, 10, 29, 12));
  let db: TestDatabase;
  let raw: PgPool;

  beforeEach(async () => {
    db = await createTestDatabase('tg_batch');
    raw = openPgPool(db.url, { max: 8 });
    await migrate(raw);
  });
  afterEach(async () => {
    await raw.end();
    await db.drop();
  });

  const ledgerOn = (p: PgPool, durableHolds = false) =>
    new PgLedger(p, { clock, idempotencyTtlMs: DAY, replicaId: 'r1', durableHolds });

  async function funded(ledger: PgLedger, cents: number): Promise<string> {
    const acct = (await ledger.createAccount({})).id;
    await ledger.credit(acct, cents * CENT, 'test');
    return acct;
  }

  /** `n` plain holds of a cent at once, every one started. */
  async function started(ledger: PgLedger, acct: string, n: number): Promise<string[]> {
    return Promise.all(
      Array.from({ length: n }, async () => {
        const r = await ledger.begin(req(acct));
        if (r.kind !== 'started') throw new Error(r.kind);
        return r.callId;
      }),
    );
  }

  async function conserved(): Promise<void> {
    const sum = await raw.query<{ s: number }>(
      'SELECT coalesce(sum(amount_micros), 0)::bigint AS s FROM entries',
    );
    expect(sum.rows[0]?.s).toBe(0);
    const off = await raw.query(
      `SELECT a.id FROM accounts a
        WHERE a.kind = 'customer'
          AND (a.balance_micros <> (SELECT coalesce(sum(amount_micros), 0) FROM entries e WHERE e.account_id = a.id)
           OR a.held_micros <> (SELECT coalesce(sum(amount_micros), 0) FROM pending_holds h WHERE h.account_id = a.id))`,
    );
    expect(off.rows).toEqual([]);
  }

  for (const durable of [false, true]) {
    it(`[billing:no-overdraft] ${durable ? 'durable' : 'async'} holds: 1,000 parallel plain calls over 3 accounts, one funded for 25, charge each what it had`, async () => {
      const { pool, seen } = watched(raw);
      const ledger = ledgerOn(pool, durable);
      const poor = (await ledger.createAccount({ name: 'poor' })).id;
      const rich = [(await ledger.createAccount({})).id, (await ledger.createAccount({})).id];
      await ledger.credit(poor, 25 * CENT, 'test');
      for (const a of rich) await ledger.credit(a, 1000 * CENT, 'test');
      const accounts = [poor, ...rich];
      const results = await Promise.all(
        Array.from({ length: 1000 }, async (_, i) => {
          const acct = accounts[i % 3] as string;
          const r = await ledger.begin(req(acct));
          if (r.kind !== 'started') return { acct, kind: r.kind };
          await ledger.capture(r.callId, capture());
          return { acct, kind: r.kind };
        }),
      );
      const startedOn = (a: string) => results.filter((r) => r.acct === a && r.kind === 'started').length;
      expect(startedOn(poor)).toBe(25);
      expect(results.filter((r) => r.acct === poor && r.kind === 'insufficient')).toHaveLength(334 - 25);
      for (const a of rich) expect(startedOn(a)).toBe(333);
      expect(await ledger.balance(poor)).toEqual({ balance_micros: 0, held_micros: 0, available_micros: 0 });
      for (const a of rich) expect((await ledger.balance(a)).balance_micros).toBe(667 * CENT);
      // The batches ran, and carried more than one call each.
      const begins = seen.batches.filter((b) => b.name.startsWith('tg_begin_plain_batch'));
      const captures = seen.batches.filter((b) => b.name === 'tg_capture_plain_batch');
      expect(begins.length).toBeGreaterThan(0);
      expect(captures.length).toBeGreaterThan(0);
      expect(Math.max(...captures.map((b) => b.size))).toBeGreaterThan(1);
      expect((await raw.query("SELECT 1 FROM calls WHERE status = 'pending'")).rowCount).toBe(0);
      const charged = await raw.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM calls WHERE status = 'succeeded' AND charged_micros = $1 AND provider = 'p' AND duration_ms = 3",
        [CENT],
      );
      expect(charged.rows[0]?.n).toBe(25 + 2 * 333);
      await conserved();
    });
  }

  it('[billing:hold-resolves-once] [billing:double-entry] two replicas mix batched plain calls with keyed and capped ones, voids and sweeps on shared accounts: each hold resolves once, nothing overspent', async () => {
    const other = openPgPool(db.url, { max: 8 });
    try {
      const r1 = ledgerOn(raw);
      const r2 = new PgLedger(other, { clock, idempotencyTtlMs: DAY, replicaId: 'r2' });
      const accts: string[] = [];
      for (let i = 0; i < 4; i++) {
        const a = (await r1.createAccount({})).id;
        await r1.credit(a, (i === 0 ? 40 : 500) * CENT, 'test');
        accts.push(a);
      }
      const cap = { scope: '', window: 'day' as const, limitMicros: 30 * CENT };
      const outcomes = await Promise.all(
        Array.from({ length: 600 }, async (_, i) => {
          const on = i % 2 ? r1 : r2;
          const acct = accts[i % 4] as string;
          const extra =
            i % 7 === 0
              ? { idempotency: { key: `k${i}`, fingerprint: `f${i}` } }
              : i % 11 === 0
                ? { caps: [cap] }
                : {};
          const r = await on.begin({ ...req(acct), ...extra, holdTtlMs: i % 13 === 0 ? 1 : 60_000 });
          if (r.kind !== 'started') return { acct, charged: 0, kind: r.kind };
          // Some are voided, some left to expire and be swept, the rest captured, by either replica.
          const by = i % 3 ? r1 : r2;
          if (i % 5 === 0) {
            await by.void(r.callId, { errorCode: 'upstream_error', provider: null, durationMs: 1 });
            return { acct, charged: 0, kind: 'voided' };
          }
          if (i % 13 === 0) return { acct, charged: 0, kind: 'left' };
          // Some are metered below their hold: the rest of the hold goes back to the account.
          const amount = i % 17 === 1 ? 4_000 : CENT;
          await by.capture(r.callId, capture(amount));
          return { acct, charged: amount, kind: 'captured' };
        }),
      );
      clock.advance(10);
      const swept = (await r1.sweep(clock.now())).expiredHolds + (await r2.sweep(clock.now())).expiredHolds;
      expect(swept).toBe(outcomes.filter((o) => o.kind === 'left').length);
      expect((await raw.query("SELECT 1 FROM calls WHERE status = 'pending'")).rowCount).toBe(0);
      for (const a of accts) {
        const charged = outcomes.filter((o) => o.acct === a).reduce((n, o) => n + o.charged, 0);
        const b = await r1.balance(a);
        expect(b.held_micros, a).toBe(0);
        expect(b.balance_micros, a).toBe((a === accts[0] ? 40 : 500) * CENT - charged);
        expect(b.balance_micros, a).toBeGreaterThanOrEqual(0);
      }
      // The poor account ran out: refusals there, and exactly its 40 cents charged at most.
      expect(outcomes.some((o) => o.acct === accts[0] && o.kind === 'insufficient')).toBe(true);
      await conserved();
    } finally {
      await other.end();
    }
  });

  it('[billing:hold-resolves-once] two captures of one call in one batch charge it once; the other is told it is posted', async () => {
    const ledger = ledgerOn(raw);
    const acct = await funded(ledger, 100);
    const ids = await started(ledger, acct, 8);
    // Two batches' worth in flight first, so the doubled captures queue into one batch.
    const target = ids[7] as string;
    const outcomes = await Promise.allSettled([
      ...ids.slice(0, 4).map((id) => ledger.capture(id, capture())),
      ledger.capture(target, capture()),
      ledger.capture(target, capture()),
      ...ids.slice(4, 7).map((id) => ledger.capture(id, capture())),
    ]);
    const onTarget = outcomes.slice(4, 6);
    expect(onTarget.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    const lost = onTarget.find((o) => o.status === 'rejected') as PromiseRejectedResult;
    expect(lost.reason).toBeInstanceOf(LedgerStateError);
    expect(String(lost.reason)).toMatch(/already posted/);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(8);
    expect((await ledger.balance(acct)).balance_micros).toBe(92 * CENT);
    await conserved();
  });

  it('a batch that fails (a deadlock with another) does nothing; each of its calls then goes its own way, once', async () => {
    const { pool, seen } = watched(raw);
    const ledger = ledgerOn(pool);
    const acct = await funded(ledger, 100);
    seen.fail = Object.assign(new Error('deadlock detected'), { code: '40P01' });
    const ids = await started(ledger, acct, 20);
    await Promise.all(ids.map((id) => ledger.capture(id, capture())));
    expect(seen.batches.some((b) => b.name.startsWith('tg_begin_plain_batch'))).toBe(true);
    expect(seen.batches.some((b) => b.name === 'tg_capture_plain_batch')).toBe(true);
    expect(new Set(ids).size).toBe(20);
    expect(await ledger.balance(acct)).toEqual({
      balance_micros: 80 * CENT,
      held_micros: 0,
      available_micros: 80 * CENT,
    });
    await conserved();
  });

  it('[db:unavailable-503] a batch the database did not answer fails every call in it, none retried alone', async () => {
    const { pool, seen } = watched(raw);
    const ledger = ledgerOn(pool);
    const acct = await funded(ledger, 100);
    seen.fail = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const outcomes = await Promise.allSettled(Array.from({ length: 10 }, () => ledger.begin(req(acct))));
    // The first two go out alone (their own statement, which the database answers); the other eight wait, go out
    // as one batch and fail with it. Retried one by one they would have started (only batches fail here).
    expect(outcomes.map((o) => o.status)).toEqual([
      ...Array(2).fill('fulfilled'),
      ...Array(8).fill('rejected'),
    ]);
    for (const f of outcomes.slice(2) as PromiseRejectedResult[])
      expect((f.reason as { code?: string }).code).toBe('ECONNREFUSED');
    expect(seen.batches).toEqual([{ name: 'tg_begin_plain_batch_async', size: 8 }]);
    const pendings = await raw.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM calls WHERE status = 'pending'",
    );
    expect(pendings.rows[0]?.n).toBe(2);
  });
});
