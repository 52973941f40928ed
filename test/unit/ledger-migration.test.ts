import { afterEach, describe, expect, it } from 'vitest';
import { SqliteLedger } from '../../src/ledger/sqlite/sqlite-ledger.js';
import { migrate, openSqlite, type SqliteDb } from '../../src/lib/sqlite.js';
import { ManualClock } from '../helpers/clock.js';

// Upgrading a SQLite ledger made before credit lines: the accounts table is rebuilt (a CHECK cannot change in
// place) with foreign keys off, as SQLite's procedure requires; every row and reference must survive it.

let db: SqliteDb;
afterEach(() => db.close());

describe('ledger schema upgrade', () => {
  it('[billing:credit-line] keeps accounts, entries, calls and foreign keys when the accounts table is rebuilt', async () => {
    db = openSqlite(':memory:');
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    // A database at the previous version: run the ledger migrations up to the third only.
    const { LEDGER_MIGRATIONS_FOR_TESTS } = await import('../../src/ledger/sqlite/schema.js');
    migrate(db, 'ledger', LEDGER_MIGRATIONS_FOR_TESTS.slice(0, 3));
    db.exec(`INSERT INTO accounts (id, name, kind, balance_micros, held_micros, created_at) VALUES ('acct_old', 'old', 'customer', 70000, 10000, 1);
      INSERT INTO calls (id, account_id, action, price_micros, hold_micros, status, payment_method, created_at) VALUES ('txn_old', 'acct_old', 'scraperC/scrape', 10000, 10000, 'pending', 'api_key', 1);
      INSERT INTO holds (call_id, account_id, amount_micros, status, expires_at, created_at) VALUES ('txn_old', 'acct_old', 10000, 'pending', 99, 1);
      INSERT INTO entries (transfer_id, account_id, amount_micros, kind, created_at) VALUES ('tr', 'acct_old', 70000, 'topup', 1), ('tr', 'sys_funding', -70000, 'topup', 1);`);
    const ledger = new SqliteLedger(db, { clock, idempotencyTtlMs: 86_400_000 });
    expect(await ledger.getAccount('acct_old')).toMatchObject({
      balance_micros: 70_000,
      held_micros: 10_000,
      credit_line_micros: 0,
    });
    expect(await ledger.capture('txn_old', { amountMicros: 10_000, provider: null, durationMs: 1 })).toEqual({
      chargedMicros: 10_000,
    });
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(db.pragma('foreign_key_check')).toEqual([]);
    expect(() =>
      db
        .prepare(
          "INSERT INTO holds (call_id, account_id, amount_micros, status, expires_at, created_at) VALUES ('txn_old', 'acct_none', 1, 'pending', 1, 1)",
        )
        .run(),
    ).toThrow(/FOREIGN KEY|UNIQUE/);
    expect(() =>
      db
        .prepare(
          "INSERT INTO calls (id, account_id, action, price_micros, hold_micros, status, payment_method, created_at) VALUES ('txn_x', 'acct_none', 'a/b', 0, 0, 'pending', 'api_key', 1)",
        )
        .run(),
    ).toThrow(/FOREIGN KEY/);
    expect((await ledger.getAccount('sys_card'))?.kind).toBe('system');
    await ledger.close();
  });
});
