import { describe, expect, it } from 'vitest';
import { migrate as migratePg } from '../../src/db/migrate.js';
import { MIGRATIONS } from '../../src/db/migrations/index.js';
import { PgLedger } from '../../src/ledger/pg/pg-ledger.js';
import { SQLITE_LEDGER_MIGRATIONS } from '../../src/ledger/sqlite/schema.js';
import { SqliteLedger } from '../../src/ledger/sqlite/sqlite-ledger.js';
import type { BeginRequest, Ledger, SpendCap } from '../../src/ledger/types.js';
import { migrate, openSqlite } from '../../src/lib/sqlite.js';
import { openPgPool } from '../../src/pg/pool.js';
import { ManualClock } from '../helpers/clock.js';
import { createTestDatabase } from '../helpers/pg.js';

// Upgrading to caps per key (SQLite: the ledger's last migration; PostgreSQL: ledger migration 5): the daily
// cap's counters of today keep counting under their new table's name, a hold taken before the upgrade with the
// old one-cap form is released from its counter, and old keys have no limits.

const NOW = Date.UTC(2026, 10, 28, 12);
const APP: SpendCap = { scope: 'oauth:c1', window: 'day', limitMicros: 25_000 };

function req(micros: number): BeginRequest {
  return {
    accountId: 'acct_old',
    action: 'scraperC/scrape',
    priceMicros: micros,
    holdMicros: micros,
    paymentMethod: 'oauth',
    principal: 'oauth:c1',
    holdTtlMs: 60_000,
    caps: [APP],
  };
}

async function check(ledger: Ledger): Promise<void> {
  // 20,000 counted before the upgrade: 10,000 more would pass 25,000.
  expect(await ledger.begin(req(10_000))).toMatchObject({ kind: 'cap_reached', spentMicros: 20_000 });
  expect((await ledger.begin(req(5_000))).kind).toBe('started');
  expect((await ledger.listApiKeys('acct_old'))[0]).toMatchObject({
    id: 'key_old',
    max_call_micros: null,
    daily_limit_micros: null,
    monthly_limit_micros: null,
    actions: null,
  });
}

describe('[keys:limits-stored] upgrading to caps per key', () => {
  it('SQLite: the counters of today keep counting', async () => {
    const db = openSqlite(':memory:');
    try {
      // The list as it was before the caps (later migrations come after it).
      const caps = SQLITE_LEDGER_MIGRATIONS.findIndex((m) =>
        (typeof m === 'string' ? m : m.sql).includes('RENAME TO spend_counters'),
      );
      migrate(db, 'ledger', SQLITE_LEDGER_MIGRATIONS.slice(0, caps));
      db.exec(`INSERT INTO accounts (id, name, kind, balance_micros, created_at) VALUES ('acct_old', 'old', 'customer', 100000, 1);
        INSERT INTO entries (transfer_id, account_id, amount_micros, kind, created_at) VALUES ('tr', 'acct_old', 100000, 'topup', 1), ('tr', 'sys_funding', -100000, 'topup', 1);
        INSERT INTO api_keys (id, account_id, hash, prefix, created_at) VALUES ('key_old', 'acct_old', 'h', 'tg_sk_o', 1);
        INSERT INTO daily_spend (account_id, day, spent_micros) VALUES ('acct_old', '2026-11-28 oauth:c1', 20000);`);
      const ledger = new SqliteLedger(db, { clock: new ManualClock(NOW), idempotencyTtlMs: 86_400_000 });
      await check(ledger);
      await ledger.close();
    } finally {
      db.close();
    }
  });

  it('PostgreSQL: the counters of today keep counting, and a hold pending across the upgrade releases its own', async () => {
    const test = await createTestDatabase('tg_caps_upgrade');
    const pool = openPgPool(test.url, { max: 4 });
    try {
      await migratePg(pool, { migrations: MIGRATIONS.filter((m) => m.version !== 5) });
      await pool.query(`INSERT INTO accounts (id, name, kind, created_at) VALUES ('acct_old', 'old', 'customer', 1);
        INSERT INTO api_keys (id, account_id, hash, prefix, created_at) VALUES ('key_old', 'acct_old', 'h', 'tg_sk_o', 1);`);
      await pool.query("SELECT tg_transfer('acct_old', 'sys_funding', 100000, 'topup', NULL, 'seed', 1)");
      // A hold of 20,000 against the app's day, taken by the old function (one cap).
      await pool.query(
        `SELECT * FROM tg_begin('acct_old', 'scraperC/scrape', 20000, 20000, 'oauth', 'oauth:c1', NULL, NULL, 60000,
                                25000, '2026-11-28 oauth:c1', 0, NULL, NULL, $1, 86400000, 'r_old', 'txn_old', false)`,
        [NOW],
      );
      expect((await migratePg(pool)).applied.map((m: { version: number }) => m.version)).toEqual([5]);
      const ledger = new PgLedger(pool, {
        clock: new ManualClock(NOW),
        idempotencyTtlMs: 86_400_000,
        replicaId: 'r_new',
      });
      await check(ledger);
      // The old hold still counts 20,000 (+5,000 held by check): capturing 5,000 of it gives 15,000 back.
      await ledger.capture('txn_old', { amountMicros: 5_000, provider: null, durationMs: 1 });
      expect(await ledger.begin(req(15_001))).toMatchObject({ kind: 'cap_reached', spentMicros: 10_000 });
      expect((await ledger.begin(req(15_000))).kind).toBe('started');
    } finally {
      await pool.end();
      await test.drop();
    }
  });
});
