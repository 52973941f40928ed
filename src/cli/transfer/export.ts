import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Config } from '../../config/index.js';
import { MIGRATIONS } from '../../db/migrations/index.js';
import { EXTRA_SKIPPED, STORE_TRANSFER } from '../../db/transfer.js';
import { DB_FILE } from '../../ledger/index.js';
import { LEDGER_BACKEND_ONLY } from '../../ledger/transfer.js';
import { formatUsd } from '../../lib/money.js';
import { describeDatabase, noDatabase } from '../database.js';
import { CliError, type Out } from '../output.js';
import { balancesDigest, ledgerTotals, refuseUnbalanced, refuseUnresolved } from './checks.js';
import { ExportWriter, FORMAT, FORMAT_VERSION, type Manifest } from './format.js';
import { lockDataDir, type OpenedSide, openPg, openSqliteFiles, refuseLiveReplicas } from './open.js';
import { columnsOf, plan, selectOf, toFile } from './plan.js';

// `tollgate export [--out FILE]`: the whole state of the database this CLI uses — accounts, keys, the ledger and
// its history, OAuth grants, card records, files' metadata, x402 payments, secrets, the web engine's jobs — as one
// self-checking file (./format.ts), read in one consistent snapshot and streamed, so a long history never sits
// in memory. Refused while a gateway serves from the database or calls are in flight, and when the ledger does
// not hold together (docs/operator.md "Move to PostgreSQL").

export const SCHEMA_VERSION = Math.max(...MIGRATIONS.map((m) => m.version));

const DOING = 'an export taken while it serves would miss what it does next';

function defaultName(now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `tollgate-export-${stamp}.jsonl`;
}

/** The database the CLI uses, migrated, with nothing serving from it (SQLite: locked for the export). */
async function openSource(config: Config): Promise<OpenedSide> {
  if (config.database) {
    const side = await openPg(config);
    try {
      await refuseLiveReplicas(side.db, DOING);
    } catch (e) {
      await side.close();
      throw e;
    }
    return side;
  }
  if (!existsSync(join(config.dataDir, DB_FILE))) throw noDatabase(config.dataDir);
  const unlock = lockDataDir(config.dataDir, DOING);
  try {
    const side = await openSqliteFiles(config.dataDir);
    return {
      db: side.db,
      async close() {
        await side.close();
        unlock();
      },
    };
  } catch (e) {
    unlock();
    throw e;
  }
}

export async function exportCommand(config: Config, out: Out, outFlag: string | undefined): Promise<number> {
  const path = resolve(outFlag ?? defaultName(new Date()));
  if (existsSync(path)) {
    throw new CliError('file_exists', `${path} exists already: choose another name with --out`, 1, {
      file: path,
    });
  }
  const database = describeDatabase(config);
  const source = await openSource(config);
  const db = source.db;
  let writer: ExportWriter | undefined;
  let done: { manifest: Manifest; bytes: number };
  try {
    await db.begin('snapshot');
    await refuseUnresolved(db);
    await refuseUnbalanced(db, database);
    const totals = await ledgerTotals(db);
    writer = await ExportWriter.create(path);
    await writer.line({
      format: FORMAT,
      format_version: FORMAT_VERSION,
      schema_version: SCHEMA_VERSION,
      created_at: new Date().toISOString(),
      source: { backend: db.backend, database },
    });
    const tables: Record<string, number> = {};
    for (const s of plan()) {
      const columns = await columnsOf(s, db);
      const convert = toFile(s, columns);
      await writer.line({ table: s.table, columns });
      let n = 0;
      for await (const batch of db.stream(selectOf(s, columns, db.backend), s.file)) {
        for (const row of batch) await writer.line(convert(row));
        n += batch.length;
      }
      await writer.line({ end: s.table, rows: n });
      tables[s.table] = n;
    }
    const manifest = { tables, totals, balances_sha256: await balancesDigest(db) };
    await writer.finish(manifest);
    done = { manifest, bytes: writer.bytes };
  } catch (e) {
    await writer?.abort();
    throw e;
  } finally {
    await db.rollback();
    await source.close();
  }
  const { manifest, bytes } = done;
  const t = manifest.totals;
  out.result(
    {
      file: path,
      bytes,
      source: { backend: db.backend, database },
      tables: manifest.tables,
      totals: t,
      skipped: skippedTables(db.backend),
    },
    [
      `exported ${path} (${bytes} bytes) from ${database}:`,
      `  ${t.accounts} accounts (customers ${formatUsd(t.customer_balance_micros ?? 0)}), ${manifest.tables.api_keys} API keys, ${t.calls} calls, ${t.movements} movements, ${t.entries} ledger entries (summing to ${formatUsd(t.entries_sum_micros ?? 0)})`,
      `  ${Object.keys(manifest.tables).length} tables carried; left behind: ${Object.keys(skippedTables(db.backend)).join(', ')} (docs/operator.md "Move to PostgreSQL")`,
      'The file holds secrets (key hashes, OAuth and signing secrets): keep it like the database, and delete it once imported.',
    ].join('\n'),
  );
  out.info(`database: ${database}`);
  return 0;
}

/** The tables an export leaves behind on this backend, with why. */
export function skippedTables(backend: 'sqlite' | 'postgres'): Record<string, string> {
  const stores = Object.entries(STORE_TRANSFER).flatMap(([t, s]) => (s.carry ? [] : [[t, s.why] as const]));
  const extra = Object.entries(EXTRA_SKIPPED).filter(([t]) => backend === 'postgres' || t !== 'rate_buckets');
  return Object.fromEntries([...Object.entries(LEDGER_BACKEND_ONLY[backend].tables), ...stores, ...extra]);
}
