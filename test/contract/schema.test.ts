import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openState } from '../../src/cli/state.js';
import { migrate } from '../../src/db/migrate.js';
import { MIGRATIONS } from '../../src/db/migrations/index.js';
import { pgStoreDb } from '../../src/db/open.js';
import { openStateLedger } from '../../src/ledger/index.js';
import { systemClock } from '../../src/lib/clock.js';
import { openPgPool } from '../../src/pg/pool.js';
import { createTestDatabase } from '../helpers/pg.js';
import { schemaOf } from '../helpers/schema.js';

// One schema for both databases: the one migration list (src/db/migrations) run on SQLite and on PostgreSQL
// gives the store layer the same tables with the same columns. Only files.tags differs in type, on purpose
// (jsonb on PostgreSQL, JSON text on SQLite), and the PostgreSQL-only migrations (its ledger, the shared rate
// limits: SQLite's ledger migrates itself and SQLite counts rates in memory) are left out.

describe('[scale:one-schema] the store layer schema', () => {
  it('SQLite and PostgreSQL get the same tables and columns from the one migration list', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tg-schema-'));
    const test = await createTestDatabase('tg_schema');
    const pool = openPgPool(test.url, { max: 2 });
    const sqlite = await openState({ dataDir, database: undefined });
    try {
      // The web engine's tables are in SQLite's second file, opened (and migrated) on first use.
      await sqlite.state.bulk.selectFrom('crawl_jobs').select('id').execute();
      const lite = {
        ...(await schemaOf(sqlite.state.stores, 'sqlite')),
        ...(await schemaOf(sqlite.state.bulk, 'sqlite')),
      };
      const portable = MIGRATIONS.filter((m) => m.only !== 'postgres');
      await migrate(pool, { migrations: portable });
      const pg = await schemaOf(pgStoreDb(pool), 'postgres');

      expect(Object.keys(pg).sort()).toEqual(Object.keys(lite).sort());
      const tagsAsText = (cols: string[] | undefined) =>
        cols?.map((c) => (c === 'tags:json' ? 'tags:text' : c));
      for (const table of Object.keys(lite)) {
        const pgCols = table === 'files' ? tagsAsText(pg[table]) : pg[table];
        // SQLite has no boolean type: its boolean columns take numeric affinity.
        expect(
          pgCols?.map((c) => c.replace(':boolean', ':numeric')),
          table,
        ).toEqual(lite[table]?.map((c) => c.replace(':boolean', ':numeric')));
      }
      expect(pg.files).toContain('tags:json');
      expect(Object.keys(lite)).toEqual(
        expect.arrayContaining(['oauth_store', 'x402_payments', 'crawl_jobs']),
      );
    } finally {
      await sqlite.close();
      await pool.end();
      await test.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('[scale:one-schema] the ledger: the same tables and columns on both, but for what each hot path does on purpose', async () => {
    // The ledger keeps hand-written SQL per backend (SQLite: src/ledger/sqlite/schema.ts, run when it opens;
    // PostgreSQL: src/pg/migrations). What differs is named here, with why, so that nothing else drifts:
    // - PostgreSQL holds live in `pending_holds` (replicas share them, each tagged with its replica), and calls
    //   name the replica that took them; SQLite holds are in memory, its `holds` table is what older versions
    //   left (voided once at start: src/ledger/sqlite/legacy-holds.ts).
    // - PostgreSQL spreads hot system accounts over `account_shards` and keeps revenue on the customer's row
    //   (`revenue_micros`), added up by the view `accounts_v`; SQLite has one writer and needs neither.
    // - `rate_buckets` (not the ledger's): the rate limit replicas share; one SQLite process counts in memory.
    const PG_ONLY = ['account_shards', 'accounts_v', 'pending_holds', 'rate_buckets'];
    const PG_COLUMNS: Record<string, string[]> = {
      accounts: ['revenue_micros:integer'],
      calls: ['replica_id:text'],
    };
    const SQLITE_ONLY = ['holds'];
    const dataDir = mkdtempSync(join(tmpdir(), 'tg-schema-'));
    const test = await createTestDatabase('tg_schema_ledger');
    const pool = openPgPool(test.url, { max: 2 });
    const sqlite = await openState({ dataDir, database: undefined });
    try {
      (await openStateLedger(sqlite.state, { clock: systemClock, idempotencyTtlMs: 1000 })).close();
      await sqlite.state.bulk.selectFrom('crawl_jobs').select('id').execute();
      const lite = {
        ...(await schemaOf(sqlite.state.stores, 'sqlite')),
        ...(await schemaOf(sqlite.state.bulk, 'sqlite')),
      };
      await migrate(pool);
      const pg = await schemaOf(pgStoreDb(pool), 'postgres');
      expect(
        Object.keys(pg)
          .filter((t) => !(t in lite))
          .sort(),
      ).toEqual(PG_ONLY);
      expect(Object.keys(lite).filter((t) => !(t in pg))).toEqual(SQLITE_ONLY);
      // A call's spending-cap counters: a text[] on PostgreSQL (its function takes an array), JSON text on SQLite.
      const alike = (cols: string[] | undefined) =>
        cols?.map((c) =>
          c === 'tags:json'
            ? 'tags:text'
            : c === 'cap_keys:_text'
              ? 'cap_keys:text'
              : c.replace(':boolean', ':numeric'),
        );
      for (const table of Object.keys(lite).filter((t) => t in pg)) {
        const extra = PG_COLUMNS[table] ?? [];
        expect(alike(pg[table]?.filter((c) => !extra.includes(c))), table).toEqual(alike(lite[table]));
      }
      expect(Object.keys(lite)).toEqual(
        expect.arrayContaining(['accounts', 'calls', 'entries', 'movements']),
      );
    } finally {
      await sqlite.close();
      await pool.end();
      await test.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('versions are unique, and every one names what it does', () => {
    const versions = MIGRATIONS.map((m) => m.version);
    expect(new Set(versions).size).toBe(versions.length);
    for (const m of MIGRATIONS) {
      expect(m.version).toBeGreaterThan(0);
      expect(m.name.length).toBeGreaterThan(0);
    }
  });
});
