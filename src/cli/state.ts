import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { StateDb } from '../backend.js';
import type { Config } from '../config/index.js';
import { type MigrateResult, migrate } from '../db/migrate.js';
import { openSqliteStores, pgStoreDb, sqliteStoreDb } from '../db/open.js';
import { SQLITE_REPLICA } from '../db/schema.js';
import { AlreadyLogged, readinessRoute } from '../http/readiness.js';
import { DB_FILE } from '../ledger/index.js';
import type { Clock } from '../lib/clock.js';
import { acquireInstanceLock } from '../lib/instance-lock.js';
import { openSqlite } from '../lib/sqlite.js';
import type { DatabaseHealth } from '../run/db-health.js';

/** The gateway's state, opened: close it last. */
export interface OpenedState {
  state: StateDb;
  /** What opening it migrated (nothing when asked not to). */
  migrated: MigrateResult;
  close(): Promise<void>;
}

export interface OpenStateOptions {
  /** Run the migrations (default); PostgreSQL callers that know the schema is current may skip them. */
  migrate?: boolean;
  /** PostgreSQL: this process's replica id (default: a new one). */
  replicaId?: string;
  poolMax?: number;
  /**
   * PostgreSQL: register this replica's lease before anything runs, renew it, and give it back on close. A failed
   * renewal goes to `onRenewError`, once a streak.
   */
  lease?: { leaseMs: number; clock: Clock; log: Logger; onRenewError: (err: unknown) => void };
}

const NOTHING: MigrateResult = { applied: [], current: 0 };

/**
 * Opens the state the configuration names, migrated to this version first: the SQLite file under the data dir
 * (the ledger's connection, and the store layer's, one per file in a process), or PostgreSQL (safe when replicas
 * start together).
 */
export async function openState(
  config: Pick<Config, 'dataDir' | 'database'>,
  opts: OpenStateOptions = {},
): Promise<OpenedState> {
  const { database, dataDir } = config;
  if (!database) {
    const db = openSqlite(join(dataDir, DB_FILE));
    const main = openSqliteStores(join(dataDir, DB_FILE));
    const web = openSqliteStores(join(dataDir, 'web.sqlite'), async (raw) => {
      // Crawl pages only: losing the last ones on power loss means fetching them again (FULL is for money).
      raw.pragma('synchronous = NORMAL');
      await migrate(sqliteStoreDb(raw), { file: 'web' });
    });
    const close = async () => {
      web.release();
      main.release();
      db.close();
    };
    try {
      const migrated = opts.migrate === false ? NOTHING : await migrate(main.db);
      const state: StateDb = {
        kind: 'sqlite',
        db,
        stores: main.db,
        bulk: web.db,
        replicaId: SQLITE_REPLICA,
        dataDir,
      };
      return { state, migrated, close };
    } catch (err) {
      await close();
      throw err;
    }
  }
  // node-postgres loads only here: a gateway on SQLite never carries it (issue 19: idle memory).
  const [{ openPgPool }, { ReplicaLease }] = await Promise.all([
    import('../pg/pool.js'),
    import('../pg/replicas.js'),
  ]);
  const pool = openPgPool(database.url, { max: opts.poolMax ?? database.pool });
  const stores = pgStoreDb(pool);
  const replicaId = opts.replicaId ?? newReplicaId();
  const lease =
    opts.lease &&
    new ReplicaLease(pool, {
      replicaId,
      leaseMs: opts.lease.leaseMs,
      clock: opts.lease.clock,
      onError: opts.lease.onRenewError,
    });
  try {
    const migrated = opts.migrate === false ? NOTHING : await migrate(stores);
    await lease?.start();
    const state: StateDb = { kind: 'postgres', pool, stores, bulk: stores, replicaId, dataDir };
    return {
      state,
      migrated,
      async close() {
        await lease
          ?.close()
          .catch((err: unknown) => opts.lease?.log.error({ err }, 'replica lease release failed'));
        await pool.end();
      },
    };
  } catch (err) {
    await pool.end();
    throw err;
  }
}

/**
 * GET /readyz of a gateway: its state database answers a query and no outage is in progress (a SQLite disk that
 * is full answers reads but refuses writes: the outage's probe decides), its file storage answers, it is not
 * draining.
 */
export function gatewayReadiness(
  state: StateDb,
  storage: { ready(): Promise<void> },
  draining: () => boolean,
  health: Pick<DatabaseHealth, 'down' | 'watch'>,
  log: Logger,
) {
  // During an outage the health logged it once; a failing ping (a query through the store layer) starts one (and
  // is logged there).
  const database = async () => {
    if (health.down) throw new AlreadyLogged('database outage in progress');
    try {
      await health.watch(sql`select 1`.execute(state.stores));
    } catch (e) {
      throw health.down ? new AlreadyLogged('database outage in progress', { cause: e }) : e;
    }
  };
  return readinessRoute({ database, storage: () => storage.ready(), draining }, log);
}

/** Unique per process start: a restarted process is a new replica (its predecessor's holds are orphans). */
export function newReplicaId(): string {
  return `r_${hostname()
    .replace(/[^A-Za-z0-9-]/g, '')
    .slice(0, 24)}_${process.pid}_${randomBytes(4).toString('hex')}`;
}

/**
 * The gateway's state for `serve`: on SQLite with the data dir's lock (one process owns it); on PostgreSQL with
 * this replica's lease, registered before anything runs (other replicas would otherwise take its crawls and
 * holds for a dead replica's) and given back on close.
 */
export async function openGatewayState(
  config: Pick<Config, 'dataDir' | 'database'>,
  clock: Clock,
  log: Logger,
  /** PostgreSQL: where a failed lease renewal goes (the gateway's outage watch, once it is open). */
  onLeaseRenewError: (err: unknown) => void,
): Promise<OpenedState> {
  const releaseLock = config.database ? () => {} : acquireInstanceLock(config.dataDir);
  let opened: OpenedState;
  try {
    opened = await openState(config, {
      lease: config.database && {
        leaseMs: config.database.leaseMs,
        clock,
        log,
        onRenewError: onLeaseRenewError,
      },
    });
  } catch (err) {
    releaseLock();
    throw err;
  }
  return {
    ...opened,
    async close() {
      await opened.close();
      releaseLock();
    },
  };
}
