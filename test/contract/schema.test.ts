import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openState } from '../../src/cli/state.js';
import { migrate } from '../../src/db/migrate.js';
import { MIGRATIONS } from '../../src/db/migrations/index.js';
import { pgStoreDb } from '../../src/db/open.js';
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

  it('versions are unique, and every one names what it does', () => {
    const versions = MIGRATIONS.map((m) => m.version);
    expect(new Set(versions).size).toBe(versions.length);
    for (const m of MIGRATIONS) {
      expect(m.version).toBeGreaterThan(0);
      expect(m.name.length).toBeGreaterThan(0);
    }
  });
});
