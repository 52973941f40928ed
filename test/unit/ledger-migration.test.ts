import { afterEach, describe, expect, it } from 'vitest';
import { SQLITE_LEDGER_MIGRATIONS } from '../../src/ledger/sqlite/schema.js';
import { SqliteLedger } from '../../src/ledger/sqlite/sqlite-ledger.js';
import { ManualClock } from '../../src/lib/clock.js';
import { migrate, openSqlite, type SqliteDb } from '../../src/lib/sqlite.js';

// Upgrading a SQLite ledger made by earlier versions: tables are rebuilt (a CHECK cannot change in place; `calls`
// became clustered on its id) with foreign keys off, as SQLite's procedure requires; every row and reference
// must survive it, and holds an earlier version left as rows are voided at start-up.

let db: SqliteDb;
afterEach(() => db.close());

describe('ledger schema upgrade', () => {
  it('[billing:credit-line] keeps accounts, entries, calls and foreign keys when tables are rebuilt; old holds are voided', async () => {
    db = openSqlite(':memory:');
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    // A database at the version before credit lines: the first three ledger migrations only.
    migrate(db, 'ledger', SQLITE_LEDGER_MIGRATIONS.slice(0, 3));
    db.exec(`INSERT INTO accounts (id, name, kind, balance_micros, held_micros, created_at) VALUES ('acct_old', 'old', 'customer', 70000, 10000, 1);
      INSERT INTO calls (id, account_id, action, price_micros, hold_micros, status, payment_method, created_at) VALUES ('txn_old', 'acct_old', 'scraperC/scrape', 10000, 10000, 'pending', 'api_key', 1);
      INSERT INTO calls (id, account_id, action, price_micros, hold_micros, charged_micros, status, payment_method, created_at, finished_at) VALUES ('txn_done', 'acct_old', 'scraperC/scrape', 5000, 5000, 5000, 'succeeded', 'api_key', 1, 2);
      INSERT INTO call_jobs (account_id, handle, call_id) VALUES ('acct_old', 'crawl_1', 'txn_done');
      INSERT INTO holds (call_id, account_id, amount_micros, status, expires_at, created_at) VALUES ('txn_old', 'acct_old', 10000, 'pending', 99, 1);
      INSERT INTO idempotency_keys (account_id, key, fingerprint, call_id, status, created_at) VALUES ('acct_old', 'k1', 'f', 'txn_old', 'in_flight', 1);
      INSERT INTO entries (transfer_id, account_id, amount_micros, kind, created_at) VALUES ('tr', 'acct_old', 70000, 'topup', 1), ('tr', 'sys_funding', -70000, 'topup', 1);`);
    const ledger = new SqliteLedger(db, { clock, idempotencyTtlMs: 86_400_000 });
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
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(db.pragma('foreign_key_check')).toEqual([]);
    expect(() =>
      db
        .prepare(
          "INSERT INTO calls (id, account_id, action, price_micros, hold_micros, status, payment_method, created_at) VALUES ('txn_x', 'acct_none', 'a/b', 0, 0, 'pending', 'api_key', 1)",
        )
        .run(),
    ).toThrow(/FOREIGN KEY/);
    // `calls` is clustered on its id now: a second row for one call is refused by its key.
    expect(() =>
      db
        .prepare(
          "INSERT INTO calls (id, account_id, action, price_micros, hold_micros, status, payment_method, created_at) VALUES ('txn_done', 'acct_old', 'a/b', 0, 0, 'succeeded', 'api_key', 1)",
        )
        .run(),
    ).toThrow(/UNIQUE|PRIMARY KEY/);
    expect((await ledger.getAccount('sys_card'))?.kind).toBe('system');
    await ledger.close();
  });
});
