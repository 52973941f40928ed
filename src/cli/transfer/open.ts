import { join } from 'node:path';
import type { Config } from '../../config/index.js';
import { migrate } from '../../db/migrate.js';
import { sqliteStoreDb } from '../../db/open.js';
import { DB_FILE } from '../../ledger/index.js';
import { migrateLedger } from '../../ledger/sqlite/schema.js';
import { acquireInstanceLock, DataDirInUseError } from '../../lib/instance-lock.js';
import { openSqlite, type SqliteDb } from '../../lib/sqlite.js';
import { openPgPool, type PgPool } from '../../pg/pool.js';
import { databaseError } from '../database.js';
import { CliError } from '../output.js';
import { pgSide, sqliteSide, type TransferDb } from './sides.js';

// Opening either side of a transfer: the database the CLI uses (src/cli/database.ts chose it), brought up to this
// release's schema first, with no gateway serving from it — an export taken while one serves would miss what it
// does next, and an import must not write under one's feet. SQLite: the data dir's gateway.lock, held for the
// whole transfer (a gateway starting meanwhile refuses). PostgreSQL: no replica's lease may be current.

export const WEB_FILE = 'web.sqlite';

export interface OpenedSide {
  db: TransferDb;
  close(): Promise<void>;
}

/** The data dir's lock, or a refusal naming the gateway that holds it. */
export function lockDataDir(dataDir: string, doing: string): () => void {
  try {
    return acquireInstanceLock(dataDir);
  } catch (e) {
    if (!(e instanceof DataDirInUseError)) throw e;
    throw new CliError(
      'gateway_running',
      `a gateway (pid ${e.pid}) is running on ${dataDir}: stop it first (${doing})`,
      1,
      { data_dir: dataDir, pid: e.pid },
    );
  }
}

/** Both SQLite files of a data dir (or of the directory an import builds in), migrated to this release. */
export async function openSqliteFiles(
  dir: string,
): Promise<OpenedSide & { files: { main: SqliteDb; web: SqliteDb } }> {
  const main = openSqlite(join(dir, DB_FILE));
  let web: SqliteDb | undefined;
  try {
    web = openSqlite(join(dir, WEB_FILE));
    migrateLedger(main);
    await migrate(sqliteStoreDb(main));
    await migrate(sqliteStoreDb(web), { file: 'web' });
  } catch (e) {
    web?.close();
    main.close();
    throw e;
  }
  const files = { main, web };
  return {
    db: sqliteSide(files),
    files,
    async close() {
      web.close();
      main.close();
    },
  };
}

/** PostgreSQL, migrated (under the lock replicas take), on one connection of its own. */
export async function openPg(config: Pick<Config, 'database'>): Promise<OpenedSide & { pool: PgPool }> {
  const database = config.database;
  if (!database) throw new Error('openPg without TOLLGATE_DATABASE_URL');
  const pool = openPgPool(database.url, { max: 2, applicationName: 'tollgate transfer' });
  try {
    await migrate(pool);
    const client = await pool.connect();
    return {
      pool,
      db: pgSide(client),
      async close() {
        client.release();
        await pool.end();
      },
    };
  } catch (e) {
    await pool.end();
    throw databaseError(e, config);
  }
}

/** Refuses while a replica's lease is current (a replica that died is taken for gone once its lease lapses). */
export async function refuseLiveReplicas(db: TransferDb, doing: string): Promise<void> {
  const live = await db.all<{ id: string }>(
    `SELECT id FROM replicas WHERE lease_expires_at > ${Date.now()} ORDER BY id`,
  );
  if (live.length === 0) return;
  const ids = live.map((r) => r.id);
  throw new CliError(
    'gateway_running',
    `${ids.length} gateway replica(s) are running on this database (${ids.slice(0, 3).join(', ')}${ids.length > 3 ? ', …' : ''}): stop every replica first (${doing}); one that died counts as gone once its lease lapses (TOLLGATE_REPLICA_LEASE_SECONDS)`,
    1,
    { replicas: ids },
  );
}
