import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Config } from '../../config/index.js';
import { MIGRATION_LOCK } from '../../db/migrate.js';
import { IMPORTED_REPLICA } from '../../db/transfer.js';
import { DB_FILE } from '../../ledger/index.js';
import { AFTER_IMPORT_SQL } from '../../ledger/transfer.js';
import { formatUsd } from '../../lib/money.js';
import { describeDatabase, maskedUrl } from '../database.js';
import { CliError, type Out } from '../output.js';
import {
  balancesDigest,
  dataIn,
  ledgerTotals,
  refuseUnbalanced,
  refuseUnresolved,
  tableCounts,
} from './checks.js';
import { SCHEMA_VERSION } from './export.js';
import { type Header, type Manifest, openExport } from './format.js';
import { lockDataDir, openPg, openSqliteFiles, refuseLiveReplicas, WEB_FILE } from './open.js';
import { columnsOf, fromFile, plan, type Section } from './plan.js';
import type { TransferDb } from './sides.js';

// `tollgate import FILE`: an export (./export.ts) into the database this CLI uses, which must hold no data and
// have no gateway serving from it. Everything is written in one transaction and checked before it commits: the
// file whole (its checksum), every table's rows, the ledger holding together (every balance the sum of its
// entries, the entries summing to zero) and its totals and every account's balance equal to the manifest's, to
// the micro-dollar. Anything off and nothing was imported. SQLite keeps its state in two files, so the import
// builds both aside in the data dir and moves them into place only once verified.

const DOING = 'an import writes only into a database no gateway serves';
const REPLICA_TABLES = ['x402_payments', 'x402_channels', 'crawl_jobs', 'web_jobs'];

interface Target {
  db: TransferDb;
  /** Commits (and, SQLite, moves the files into place). */
  finish(): Promise<void>;
  abort(): Promise<void>;
}

async function sqliteTarget(dataDir: string): Promise<Target> {
  const unlock = lockDataDir(dataDir, DOING);
  const aside = join(dataDir, `.import-${process.pid}`);
  try {
    for (const f of [DB_FILE, WEB_FILE]) {
      if (existsSync(join(dataDir, f))) {
        throw new CliError(
          'target_not_empty',
          `${dataDir} already holds a tollgate database (${f}): an import builds a new one; point TOLLGATE_DATA_DIR at an empty directory, or move the old files away`,
          1,
          { data_dir: dataDir },
        );
      }
    }
    rmSync(aside, { recursive: true, force: true });
    mkdirSync(aside, { recursive: true, mode: 0o700 });
    const side = await openSqliteFiles(aside);
    const abort = async () => {
      await side.db.rollback();
      await side.close();
      rmSync(aside, { recursive: true, force: true });
      unlock();
    };
    try {
      await side.db.begin('write');
    } catch (e) {
      await abort();
      throw e;
    }
    return {
      db: side.db,
      abort,
      async finish() {
        await side.db.commit();
        // One file each, with no WAL beside it, to be moved; the gateway turns WAL on again when it opens them.
        for (const f of Object.values(side.files)) f.pragma('journal_mode = DELETE');
        await side.close();
        // The web engine's first: the gateway's database appearing is what makes the directory a database.
        renameSync(join(aside, WEB_FILE), join(dataDir, WEB_FILE));
        renameSync(join(aside, DB_FILE), join(dataDir, DB_FILE));
        rmSync(aside, { recursive: true, force: true });
        unlock();
      },
    };
  } catch (e) {
    rmSync(aside, { recursive: true, force: true });
    unlock();
    throw e;
  }
}

async function pgTarget(config: Config): Promise<Target> {
  const side = await openPg(config);
  const abort = async () => {
    await side.db.rollback();
    await side.close();
  };
  try {
    await side.db.begin('write');
    // Replicas starting meanwhile wait in their migrations until this commits (then they find the data).
    await side.db.all(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
    await refuseLiveReplicas(side.db, DOING);
    const data = await dataIn(side.db);
    if (data.length > 0) {
      throw new CliError(
        'target_not_empty',
        `the PostgreSQL database of TOLLGATE_DATABASE_URL (${maskedUrl(config.database?.url ?? '')}) already holds data: ${data.join(', ')}; import only into a new, empty database (createdb)`,
        1,
        { tables: data },
      );
    }
  } catch (e) {
    await abort();
    throw e;
  }
  return {
    db: side.db,
    abort,
    async finish() {
      await side.db.commit();
      await side.close();
    },
  };
}

/** Reads every section into the target; returns the manifest (the file checked whole) and the rows per table. */
async function load(db: TransferDb, path: string, events: Awaited<ReturnType<typeof openExport>>['events']) {
  const sections = new Map(plan().map((s) => [s.table, s]));
  const rows: Record<string, number> = {};
  const newer = (what: string) =>
    new CliError(
      'export_schema',
      `${path} carries ${what}: import it with the release that exported it, or a newer one; nothing was imported`,
      1,
    );
  let into: { s: Section; columns: string[]; convert: (r: unknown[]) => unknown[] } | undefined;
  let r = await events.next();
  while (!r.done) {
    const e = r.value;
    if (e.kind === 'section') {
      const s = sections.get(e.table);
      if (!s) throw newer(`table ${e.table}, which this release does not know`);
      const known = await columnsOf(s, db);
      const unknown = e.columns.filter((c) => !known.includes(c));
      if (unknown.length > 0) {
        throw newer(`columns of ${e.table} this release does not know (${unknown.join(', ')})`);
      }
      into = { s, columns: e.columns, convert: fromFile(s, e.columns, db.backend) };
    } else if (e.kind === 'rows' && into) {
      const { s, columns, convert } = into;
      await db.insert(s.table, columns, e.rows.map(convert), { file: s.file, upsert: s.ledger?.upsert });
    } else if (e.kind === 'end') {
      rows[e.table] = e.rows;
      into = undefined;
    }
    r = await events.next();
  }
  return { manifest: r.value, rows };
}

/** The target as imported against the manifest; throws naming the first difference. */
async function verify(db: TransferDb, manifest: Manifest, rows: Record<string, number>): Promise<void> {
  const differ = (what: string, want: unknown, got: unknown) =>
    new CliError(
      'import_mismatch',
      `after the import ${what} is ${String(got)}, but the export says ${String(want)}; nothing was imported`,
      1,
    );
  const counts = await tableCounts(db);
  for (const [table, n] of Object.entries(counts)) {
    const want = manifest.tables[table] ?? 0;
    if ((rows[table] ?? 0) !== want) throw differ(`the file's ${table} rows`, want, rows[table] ?? 0);
    if (n !== want) throw differ(`the row count of ${table}`, want, n);
  }
  await refuseUnresolved(db);
  await refuseUnbalanced(db, 'the imported database');
  const totals = await ledgerTotals(db);
  for (const [k, want] of Object.entries(manifest.totals)) {
    if (totals[k] !== want) throw differ(k, want, totals[k]);
  }
  const digest = await balancesDigest(db);
  if (digest !== manifest.balances_sha256) {
    throw differ("the digest of every account's balance", manifest.balances_sha256, digest);
  }
}

export async function importCommand(config: Config, out: Out, file: string): Promise<number> {
  const path = resolve(file);
  if (!existsSync(path)) throw new CliError('not_found', `no such file: ${path}`, 2);
  const { header, events, close } = await openExport(path);
  try {
    return await importFile(config, out, path, header, events);
  } finally {
    await close();
  }
}

async function importFile(
  config: Config,
  out: Out,
  path: string,
  header: Header,
  events: Awaited<ReturnType<typeof openExport>>['events'],
): Promise<number> {
  if (header.schema_version > SCHEMA_VERSION) {
    throw new CliError(
      'export_version',
      `${path} was written by a newer release (schema ${header.schema_version}; this one is at ${SCHEMA_VERSION}): import it with that release or a newer one`,
      1,
    );
  }
  const database = describeDatabase(config);
  const target = config.database ? await pgTarget(config) : await sqliteTarget(config.dataDir);
  const db = target.db;
  let loaded: Awaited<ReturnType<typeof load>>;
  try {
    loaded = await load(db, path, events);
    for (const text of AFTER_IMPORT_SQL[db.backend]) await db.all(text);
    if (db.backend === 'postgres' && REPLICA_TABLES.some((t) => (loaded.rows[t] ?? 0) > 0)) {
      // The owner of the source's unfinished work: a replica whose lease has lapsed, so the first replica to start
      // recovers its payments, adopts its crawls and clears its reservations, as after a crash.
      await db.all(
        `INSERT INTO replicas (id, started_at, lease_expires_at) VALUES ('${IMPORTED_REPLICA}', ${Date.now()}, 0)`,
      );
    }
    await verify(db, loaded.manifest, loaded.rows);
    await target.finish();
  } catch (e) {
    await target.abort();
    throw e;
  }
  const t = loaded.manifest.totals;
  const next = [
    'Stored files are not in the export: with local storage copy the files directory of the old data dir into this one; an S3 bucket keeps them.',
  ];
  if (config.database && existsSync(join(config.dataDir, DB_FILE))) {
    next.unshift(
      `${join(config.dataDir, DB_FILE)} (the SQLite database) is still in the data dir: keep it as a backup elsewhere, or every command will ask which database to use.`,
    );
  }
  out.result(
    {
      file: path,
      target: { backend: db.backend, database },
      source: header.source,
      tables: loaded.rows,
      totals: t,
      verified: true,
    },
    [
      `imported ${path} into ${database}: ${t.accounts} accounts, ${loaded.rows.api_keys ?? 0} API keys, ${t.calls} calls, ${t.movements} movements, ${t.entries} ledger entries`,
      `verified: every balance is the sum of its entries, the entries sum to ${formatUsd(t.entries_sum_micros ?? 0)}, and every table, total and balance matches the export to the micro-dollar`,
      ...next,
    ].join('\n'),
  );
  out.info(`database: ${database}`);
  return 0;
}
