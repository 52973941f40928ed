import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { StateDb } from '../backend.js';
import type { Config } from '../config/index.js';
import { readinessRoute } from '../http/readiness.js';
import { DB_FILE } from '../ledger/index.js';
import type { Clock } from '../lib/clock.js';
import { acquireInstanceLock } from '../lib/instance-lock.js';
import { openSqlite } from '../lib/sqlite.js';
import { migrate } from '../pg/migrate.js';
import { openPgPool } from '../pg/pool.js';
import { ReplicaLease } from '../pg/replicas.js';

/** The gateway's state, opened: close it last. */
export interface OpenedState {
  state: StateDb;
  close(): Promise<void>;
}

/**
 * Opens the state the configuration names: PostgreSQL (TOLLGATE_DATABASE_URL), migrated to this version first
 * (safe when replicas start together), or the SQLite file under the data dir.
 */
export async function openState(
  config: Pick<Config, 'dataDir' | 'database'>,
  opts: { migrate?: boolean; replicaId?: string; poolMax?: number } = {},
): Promise<OpenedState> {
  const { database, dataDir } = config;
  if (!database) {
    const db = openSqlite(join(dataDir, DB_FILE));
    return {
      state: { kind: 'sqlite', db, dataDir },
      async close() {
        db.close();
      },
    };
  }
  const pool = openPgPool(database.url, { max: opts.poolMax ?? database.pool });
  try {
    if (opts.migrate !== false) await migrate(pool);
  } catch (err) {
    await pool.end();
    throw err;
  }
  return {
    state: { kind: 'postgres', pool, replicaId: opts.replicaId ?? newReplicaId(), dataDir },
    async close() {
      await pool.end();
    },
  };
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
  health: { readonly down: boolean },
  log: Logger,
) {
  const database = () =>
    health.down ? Promise.reject(new Error('database outage in progress')) : pingState(state);
  return readinessRoute({ database, storage: () => storage.ready(), draining }, log);
}

/** Resolves when the state database answers a query (GET /readyz). */
export async function pingState(state: StateDb): Promise<void> {
  if (state.kind === 'sqlite') state.db.prepare('SELECT 1').get();
  else await state.pool.query('SELECT 1');
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
): Promise<OpenedState> {
  const releaseLock = config.database ? () => {} : acquireInstanceLock(config.dataDir);
  let opened: OpenedState;
  try {
    opened = await openState(config);
  } catch (err) {
    releaseLock();
    throw err;
  }
  const { state } = opened;
  const lease =
    state.kind === 'postgres' && config.database
      ? new ReplicaLease(state.pool, {
          replicaId: state.replicaId,
          leaseMs: config.database.leaseMs,
          clock,
          onError: (err) => log.error({ err }, 'replica lease renewal failed'),
        })
      : undefined;
  try {
    await lease?.start();
  } catch (err) {
    await opened.close();
    throw err;
  }
  return {
    state,
    async close() {
      await lease?.close().catch((err: unknown) => log.error({ err }, 'replica lease release failed'));
      await opened.close();
      releaseLock();
    },
  };
}
