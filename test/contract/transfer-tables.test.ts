import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openPg, openSqliteFiles } from '../../src/cli/transfer/open.js';
import { classify, plan } from '../../src/cli/transfer/plan.js';
import type { TransferDb } from '../../src/cli/transfer/sides.js';
import { EXTRA_SKIPPED, STORE_TRANSFER } from '../../src/db/transfer.js';
import { type Backend, LEDGER_BACKEND_ONLY, LEDGER_TABLES } from '../../src/ledger/transfer.js';
import { createTestDatabase } from '../helpers/pg.js';

// [ops:transfer-classified] `tollgate export` carries every table of both databases or leaves it behind on purpose
// (src/ledger/transfer.ts, src/db/transfer.ts). A table added to either schema, or a column added to one of the
// ledger's hand-written tables, fails here until it is classified: carried, or skipped with the reason.

async function onBoth<T>(fn: (db: TransferDb, backend: Backend) => Promise<T>): Promise<Record<Backend, T>> {
  const dir = mkdtempSync(join(tmpdir(), 'tg-transfer-contract-'));
  const test = await createTestDatabase('tg_transfer_contract');
  const lite = await openSqliteFiles(dir);
  const pg = await openPg({ database: { url: test.url, pool: 2, leaseMs: 30_000 } });
  try {
    return { sqlite: await fn(lite.db, 'sqlite'), postgres: await fn(pg.db, 'postgres') };
  } finally {
    await lite.close();
    await pg.close();
    await test.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('[ops:transfer-classified] every table is carried or skipped with a reason', () => {
  it('the check can fail: a table named nowhere is unclassified', () => {
    expect(classify('team_members', 'sqlite')).toBeUndefined();
    expect(classify('accounts', 'postgres')).toEqual({ carried: true });
    expect(classify('pending_holds', 'postgres')).toMatchObject({ carried: false });
    expect(classify('pending_holds', 'sqlite')).toBeUndefined();
  });

  it('both databases: every table classified, every classification a real table, the ledger column by column', async () => {
    const seen = new Set<string>();
    const found = await onBoth(async (db, backend) => {
      const tables = await db.tables();
      for (const t of tables) seen.add(t.table);
      const unclassified = tables.filter((t) => classify(t.table, backend) === undefined).map((t) => t.table);
      // The ledger's hand-written tables: each column carried, or named as the backend's own with a reason.
      const columns: Record<string, string[]> = {};
      for (const t of LEDGER_TABLES) {
        const own = Object.keys(LEDGER_BACKEND_ONLY[backend].columns)
          .filter((c) => c.startsWith(`${t.table}.`))
          .map((c) => c.slice(t.table.length + 1));
        columns[t.table] = (await db.columns(t.table)).filter((c) => !own.includes(c)).sort();
      }
      // SQLite: each carried table in the file the plan reads it from.
      const misplaced = plan()
        .filter(
          (s) => !tables.some((t) => t.table === s.table && (backend === 'postgres' || t.file === s.file)),
        )
        .map((s) => s.table);
      return { unclassified, columns, misplaced };
    });
    for (const backend of ['sqlite', 'postgres'] as const) {
      expect(found[backend].unclassified, `${backend}: unclassified tables`).toEqual([]);
      expect(found[backend].misplaced, `${backend}: carried tables missing`).toEqual([]);
      for (const t of LEDGER_TABLES) {
        expect(found[backend].columns[t.table], `${backend}: columns of ${t.table}`).toEqual(
          [...t.columns].sort(),
        );
      }
    }
    const named = [
      ...LEDGER_TABLES.map((t) => t.table),
      ...Object.keys(LEDGER_BACKEND_ONLY.sqlite.tables),
      ...Object.keys(LEDGER_BACKEND_ONLY.postgres.tables),
      ...Object.keys(STORE_TRANSFER),
      ...Object.keys(EXTRA_SKIPPED),
    ];
    expect(
      named.filter((t) => !seen.has(t)),
      'classified but in neither database',
    ).toEqual([]);
    for (const [table, t] of Object.entries(STORE_TRANSFER)) {
      if (!t.carry) expect(t.why.length, table).toBeGreaterThan(20);
    }
  }, 60_000);

  it('a carried table is read in primary-key order, and its booleans and JSON columns are declared', async () => {
    const found = await onBoth(async (db, backend) => {
      const out: Record<string, { pk?: string[]; typed?: string[] }> = {};
      for (const s of plan()) {
        if (backend === 'sqlite') {
          const info = (await db.all<{ name: string; pk: number }>(
            `SELECT name, pk FROM pragma_table_info('${s.table}') WHERE pk > 0 ORDER BY pk`,
            s.file,
          )) as Array<{ name: string }>;
          out[s.table] = { pk: info.map((c) => c.name) };
        } else {
          const typed = await db.all<{ c: string }>(
            `SELECT column_name AS c FROM information_schema.columns WHERE table_schema = current_schema()
              AND table_name = '${s.table}' AND data_type IN ('boolean', 'jsonb', 'json') ORDER BY 1`,
          );
          out[s.table] = { typed: typed.map((r) => r.c) };
        }
      }
      return out;
    });
    for (const s of plan()) {
      // entries' integer primary key is its rowid on SQLite: table_info lists it like any other.
      expect(found.sqlite[s.table]?.pk, `${s.table}: order by its primary key`).toEqual(
        s.order.map((c) => c.replace(/^#/, '')),
      );
      expect(found.postgres[s.table]?.typed, `${s.table}: booleans and JSON declared`).toEqual(
        [...(s.store?.booleans ?? []), ...(s.store?.json ?? [])].sort(),
      );
    }
  }, 60_000);
});
