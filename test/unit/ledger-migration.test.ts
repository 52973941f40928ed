import { afterEach, describe, expect, it } from 'vitest';
import { migrate as migratePg } from '../../src/db/migrate.js';
import { MIGRATIONS } from '../../src/db/migrations/index.js';
import { PgLedger } from '../../src/ledger/pg/pg-ledger.js';
import { SQLITE_LEDGER_MIGRATIONS } from '../../src/ledger/sqlite/schema.js';
import { SqliteLedger } from '../../src/ledger/sqlite/sqlite-ledger.js';
import { migrate, openSqlite, type SqliteDb } from '../../src/lib/sqlite.js';
import { openPgPool } from '../../src/pg/pool.js';
import { ManualClock } from '../helpers/clock.js';
import { createTestDatabase } from '../helpers/pg.js';

// Upgrading a SQLite ledger made by earlier versions: tables are rebuilt (a CHECK cannot change in place; `calls`
// became clustered on its id) with foreign keys off, as SQLite's procedure requires; every row and reference
// must survive it, and holds an earlier version left as rows are voided at start-up.

let db: SqliteDb | undefined;
afterEach(() => {
  db?.close();
  db = undefined;
});

describe('ledger schema upgrade', () => {
  it('[billing:credit-line] keeps accounts, entries, calls and foreign keys when tables are rebuilt; old holds are voided', async () => {
    const sqlite = openSqlite(':memory:');
    db = sqlite;
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    // A database at the version before credit lines: the first three ledger migrations only.
    migrate(sqlite, 'ledger', SQLITE_LEDGER_MIGRATIONS.slice(0, 3));
    sqlite.exec(`INSERT INTO accounts (id, name, kind, balance_micros, held_micros, created_at) VALUES ('acct_old', 'old', 'customer', 70000, 10000, 1);
      INSERT INTO calls (id, account_id, action, price_micros, hold_micros, status, payment_method, created_at) VALUES ('txn_old', 'acct_old', 'scraperC/scrape', 10000, 10000, 'pending', 'api_key', 1);
      INSERT INTO calls (id, account_id, action, price_micros, hold_micros, charged_micros, status, payment_method, created_at, finished_at) VALUES ('txn_done', 'acct_old', 'scraperC/scrape', 5000, 5000, 5000, 'succeeded', 'api_key', 1, 2);
      INSERT INTO call_jobs (account_id, handle, call_id) VALUES ('acct_old', 'crawl_1', 'txn_done');
      INSERT INTO holds (call_id, account_id, amount_micros, status, expires_at, created_at) VALUES ('txn_old', 'acct_old', 10000, 'pending', 99, 1);
      INSERT INTO idempotency_keys (account_id, key, fingerprint, call_id, status, created_at) VALUES ('acct_old', 'k1', 'f', 'txn_old', 'in_flight', 1);
      INSERT INTO entries (transfer_id, account_id, amount_micros, kind, created_at) VALUES ('tr', 'acct_old', 70000, 'topup', 1), ('tr', 'sys_funding', -70000, 'topup', 1);`);
    const ledger = new SqliteLedger(sqlite, { clock, idempotencyTtlMs: 86_400_000 });
    expect(await ledger.getAccount('acct_old')).toMatchObject({
      balance_micros: 70_000,
      held_micros: 10_000,
      credit_line_micros: 0,
    });
    expect(await ledger.getCall('txn_done')).toMatchObject({ status: 'succeeded', charged_micros: 5_000 });
    // The hold the old process left: voided at start-up, its money and its idempotency key released.
    expect(await ledger.voidAllPending('orphaned_by_restart')).toBe(1);
    expect(await ledger.balance('acct_old')).toEqual({
      balance_micros: 70_000,
      held_micros: 0,
      available_micros: 70_000,
    });
    expect(await ledger.getCall('txn_old')).toMatchObject({
      status: 'failed',
      error_code: 'orphaned_by_restart',
    });
    expect(
      await ledger.begin({
        accountId: 'acct_old',
        action: 'scraperC/scrape',
        priceMicros: 1,
        holdMicros: 1,
        paymentMethod: 'api_key',
        principal: null,
        holdTtlMs: 1_000,
        idempotency: { key: 'k1', fingerprint: 'g' },
      }),
    ).toMatchObject({ kind: 'started' });
    expect(sqlite.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(sqlite.pragma('foreign_key_check')).toEqual([]);
    expect(() =>
      sqlite
        .prepare(
          "INSERT INTO calls (id, account_id, action, price_micros, hold_micros, status, payment_method, created_at) VALUES ('txn_x', 'acct_none', 'a/b', 0, 0, 'pending', 'api_key', 1)",
        )
        .run(),
    ).toThrow(/FOREIGN KEY/);
    // `calls` is clustered on its id now: a second row for one call is refused by its key.
    expect(() =>
      sqlite
        .prepare(
          "INSERT INTO calls (id, account_id, action, price_micros, hold_micros, status, payment_method, created_at) VALUES ('txn_done', 'acct_old', 'a/b', 0, 0, 'succeeded', 'api_key', 1)",
        )
        .run(),
    ).toThrow(/UNIQUE|PRIMARY KEY/);
    expect((await ledger.getAccount('sys_card'))?.kind).toBe('system');
    await ledger.close();
  });
});

// The movement kind refund_reversal (a failed refund given back): SQLite rebuilds the movements table, PostgreSQL
// replaces its CHECK constraint. Rows, references and the once-per-reference indexes survive.
describe('ledger schema upgrade: refund reversals', () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const OLD_ROWS = `INSERT INTO accounts (id, name, kind, balance_micros, held_micros, created_at) VALUES ('acct_old', 'old', 'customer', 7000000, 0, 1);
    INSERT INTO movements (id, account_id, kind, amount_micros, status, memo, external_ref, created_at, finished_at, meta)
      VALUES ('mv_a', 'acct_old', 'topup', 10000000, 'succeeded', 'top-up', 'cs_old', 1, 1, NULL),
             ('mv_b', 'acct_old', 'refund', -3000000, 'succeeded', 'refund', 're_old', 2, 2, '{"requested_micros":3000000}'),
             ('mv_c', 'acct_old', 'settlement', 500000, 'pending', 'settlement', NULL, 3, NULL, NULL);`;

  async function check(ledger: SqliteLedger | PgLedger): Promise<void> {
    const moves = await ledger.movements('acct_old', 10);
    expect(moves.map((m) => [m.id, m.kind, m.amount_micros])).toEqual([
      ['mv_c', 'settlement', 500_000],
      ['mv_b', 'refund', -3_000_000],
      ['mv_a', 'topup', 10_000_000],
    ]);
    expect(moves[1]?.meta).toEqual({ requested_micros: 3_000_000 });
    // The refund recorded before the upgrade is given back once by the new kind.
    const back = {
      accountId: 'acct_old',
      kind: 'refund_reversal' as const,
      micros: 3_000_000,
      externalRef: 're_old',
      memo: 'refund failed',
    };
    expect(await ledger.recordExternal(back)).toMatchObject({ kind: 'recorded', movedMicros: 3_000_000 });
    expect(await ledger.recordExternal(back)).toMatchObject({ kind: 'duplicate' });
    // Still once per reference, and one pending settlement per account.
    expect(
      await ledger.recordExternal({
        accountId: 'acct_old',
        kind: 'topup',
        micros: 1,
        externalRef: 'cs_old',
        memo: 'again',
      }),
    ).toMatchObject({ kind: 'duplicate', movementId: 'mv_a' });
    expect(await ledger.creditLine('acct_old')).toMatchObject({ settling: { movement_id: 'mv_c' } });
    await ledger.close();
  }

  it('[billing:refund-failed-given-back] SQLite: the movements table is rebuilt with its rows and indexes', async () => {
    const sqlite = openSqlite(':memory:');
    db = sqlite;
    migrate(sqlite, 'ledger', SQLITE_LEDGER_MIGRATIONS.slice(0, 4));
    sqlite.exec(OLD_ROWS);
    const ledger = new SqliteLedger(sqlite, { clock, idempotencyTtlMs: 86_400_000 });
    const indexes = sqlite
      .prepare(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'movements' AND name NOT LIKE 'sqlite_%' ORDER BY name",
      )
      .all();
    expect(indexes).toEqual([
      { name: 'movements_account_time' },
      { name: 'movements_external_once' },
      { name: 'movements_one_settlement' },
      { name: 'movements_pending' },
    ]);
    await check(ledger);
    expect(sqlite.pragma('foreign_key_check')).toEqual([]);
    expect(() =>
      sqlite
        .prepare(
          "INSERT INTO movements (id, account_id, kind, amount_micros, status, created_at) VALUES ('mv_x', 'acct_none', 'topup', 1, 'succeeded', 1)",
        )
        .run(),
    ).toThrow(/FOREIGN KEY/);
  });

  it('[billing:refund-failed-given-back] PostgreSQL: the kind constraint is replaced, rows kept', async () => {
    const test = await createTestDatabase('tg_upgrade');
    const pool = openPgPool(test.url, { max: 4 });
    try {
      await migratePg(pool, { migrations: MIGRATIONS.filter((m) => m.version !== 4) });
      await pool.query(OLD_ROWS);
      expect((await migratePg(pool)).applied.map((m: { version: number }) => m.version)).toEqual([4]);
      await expect(
        pool.query(
          "INSERT INTO movements (id, account_id, kind, amount_micros, status, created_at) VALUES ('mv_x', 'acct_old', 'nonsense', 1, 'succeeded', 1)",
        ),
      ).rejects.toThrow(/movements_kind_check/);
      await check(new PgLedger(pool, { clock, idempotencyTtlMs: 86_400_000, replicaId: 'r_upgrade' }));
    } finally {
      await pool.end();
      await test.drop();
    }
  });
});
