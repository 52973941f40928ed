import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import {
  Kysely,
  PostgresAdapter,
  PostgresDialect,
  type PostgresPool,
  type PostgresPoolClient,
  type QueryResult,
  type RawBuilder,
  SqliteDialect,
  type SqliteStatement,
  sql,
} from 'kysely';
import { openSqlite, type SqliteDb } from '../lib/sqlite.js';
import type { PgClient, PgPool } from '../pg/pool.js';
import type { StoreDb } from './schema.js';

// The store layer's two Kysely handles. Kysely compiles a query for the dialect and hands the SQL to the driver;
// these wrappers keep what the hand-written stores had on the call path: a statement compiled once
// (./prepared.ts) is prepared once per connection — better-sqlite3 keeps its Statement, pg names it, so
// PostgreSQL parses and plans it once per connection (half the server's CPU of an unnamed one, measured).
// Every other query is compiled and prepared per call, as Kysely does.

/** The SQL text of every query compiled once (prepared.ts), and its statement name on PostgreSQL. */
const PREPARED = new Map<string, string>();
/** Statements SQLite keeps per connection but PostgreSQL never names (transaction control cannot be prepared). */
const PREPARED_SQLITE_ONLY = new Set<string>();

export function registerPrepared(text: string): void {
  if (!PREPARED.has(text)) {
    PREPARED.set(text, `tg_${createHash('sha256').update(text).digest('hex').slice(0, 20)}`);
  }
}

/**
 * Runs a query compiled once straight on its connection's kept statement, synchronously: SQLite only, and only
 * when no transaction is open on the connection (a statement run now would join it); undefined otherwise, and
 * the query goes through Kysely, queued behind that transaction. Kysely's own path costs ~2 µs a query more
 * (its connection lock and promise hops), four times per OAuth token check (bench/stores.ts).
 */
type DirectRun = (text: string, parameters: unknown[], one: boolean) => QueryResult<unknown> | undefined;
const DIRECT = new WeakMap<StoreDb, DirectRun>();

export function directRun(db: StoreDb): DirectRun | undefined {
  return DIRECT.get(db);
}

/** Kysely over a better-sqlite3 connection, or one opened on first use (the caller closes it). */
export function sqliteStoreDb(db: SqliteDb | (() => Promise<SqliteDb>)): StoreDb {
  const statements = new Map<string, SqliteStatement>();
  let opened: SqliteDb | undefined = typeof db === 'function' ? undefined : db;
  const prepare = (raw: SqliteDb, text: string): SqliteStatement => {
    if (!PREPARED.has(text) && !PREPARED_SQLITE_ONLY.has(text)) return raw.prepare(text);
    let s = statements.get(text);
    if (!s) {
      s = raw.prepare(text);
      statements.set(text, s);
    }
    return s;
  };
  const wrap = (raw: SqliteDb) => ({ close: () => {}, prepare: (text: string) => prepare(raw, text) });
  const kysely: StoreDb = new Kysely({
    dialect: new SqliteDialect({
      database:
        typeof db === 'function'
          ? async () => {
              opened = await db();
              return wrap(opened);
            }
          : wrap(db),
    }),
  });
  DIRECT.set(kysely, (text, parameters, one) => {
    const raw = opened;
    if (!raw || raw.inTransaction) return undefined;
    const stmt = statements.get(text) ?? (PREPARED.has(text) ? prepare(raw, text) : undefined);
    if (!stmt) return undefined;
    if (!stmt.reader) return { rows: [], numAffectedRows: BigInt(stmt.run(parameters).changes) };
    // A single row: stop at it rather than step on to prove there is no other.
    const row = one ? (stmt as unknown as { get(p: unknown[]): unknown }).get(parameters) : undefined;
    return { rows: one ? (row === undefined ? [] : [row]) : stmt.all(parameters) };
  });
  return kysely;
}

interface SharedFile {
  db: StoreDb;
  refs: number;
  raw?: SqliteDb;
}

const SHARED = new Map<string, SharedFile>();

/**
 * The store layer's connection to a SQLite file: one per file in this process, opened on first use (then
 * `prepareFile` runs: pragmas, migrations) and closed when the last holder releases it. One, because a
 * transaction here lasts across awaits (microseconds, but awaits), and a second connection of this process
 * wanting the write lock meanwhile would wait for it in SQLite's busy handler, blocking the very thread that
 * would finish the transaction. Through one connection Kysely queues them instead. (The ledger writes through
 * its own thread, whose waits block nothing here.)
 */
export function openSqliteStores(
  path: string,
  prepareFile?: (raw: SqliteDb) => Promise<void>,
): { db: StoreDb; release(): void } {
  const key = resolve(path);
  let held = SHARED.get(key);
  if (!held) {
    const f: SharedFile = { refs: 0, db: undefined as unknown as StoreDb };
    f.db = sqliteStoreDb(async () => {
      const raw = openSqlite(key);
      f.raw = raw;
      await prepareFile?.(raw);
      return raw;
    });
    SHARED.set(key, f);
    held = f;
  }
  held.refs++;
  let released = false;
  return {
    db: held.db,
    release() {
      if (released) return;
      released = true;
      if (--held.refs > 0) return;
      SHARED.delete(key);
      held.raw?.close();
    },
  };
}

/** Kysely over a pg pool (the caller ends it). */
export function pgStoreDb(pool: PgPool): StoreDb {
  const wrapped = new WeakMap<PgClient, PostgresPoolClient>();
  const wrap = (c: PgClient): PostgresPoolClient => {
    let w = wrapped.get(c);
    if (!w) {
      w = {
        query: ((text: string, values: readonly unknown[]) => {
          const name = PREPARED.get(text);
          return c.query(name ? { name, text, values: [...values] } : { text, values: [...values] });
        }) as unknown as PostgresPoolClient['query'],
        release: (destroy?: boolean) => c.release(destroy),
      };
      wrapped.set(c, w);
    }
    return w;
  };
  const kyselyPool: PostgresPool = {
    connect: async () => wrap(await pool.connect()),
    end: async () => {},
  };
  return new Kysely({ dialect: new PostgresDialect({ pool: kyselyPool }) });
}

export type Dialect = 'sqlite' | 'postgres';

/** The dialect behind a handle (a transaction's or connection's handle included). */
export function dialectOf(db: StoreDb): Dialect {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

/**
 * Runs `fn` in one transaction on one connection. SQLite: BEGIN IMMEDIATE, so the write lock is taken at the
 * start and a read-then-write never fails on a snapshot another connection (the ledger's writer) moved on.
 * Every statement inside is synchronous underneath (better-sqlite3), so the transaction lasts microseconds;
 * `fn` must await nothing but its own statements.
 */
// A transaction's own statements are kept like the compiled ones (SQLite: no prepare per transaction).
const kept = (text: string) => {
  PREPARED_SQLITE_ONLY.add(text);
  return sql.raw(text);
};
const BEGIN_IMMEDIATE = kept('begin immediate');
const BEGIN = sql`begin`;
const COMMIT = kept('commit');
const ROLLBACK = kept('rollback');
const SYNC_OFF = kept('pragma synchronous = OFF');
const SYNC_FULL = kept('pragma synchronous = FULL');

/**
 * Runs `fn` in one transaction. `flush: false` (SQLite) commits it without its own fsync, for writes whose
 * durability comes from a durable commit that always follows them on the same file (an x402 session channel's,
 * made durable by its call's capture): the connection's synchronous=FULL is switched off around it. PostgreSQL
 * callers say the same with `SET LOCAL synchronous_commit = off` inside.
 */
export function inTransaction<T>(
  db: StoreDb,
  fn: (trx: StoreDb) => Promise<T>,
  opts: { flush?: boolean } = {},
): Promise<T> {
  const sqlite = dialectOf(db) === 'sqlite';
  const begin = sqlite ? BEGIN_IMMEDIATE : BEGIN;
  const unflushed = sqlite && opts.flush === false;
  return db.connection().execute(async (c) => {
    if (unflushed) await SYNC_OFF.execute(c);
    try {
      await begin.execute(c);
      try {
        const out = await fn(c);
        await COMMIT.execute(c);
        return out;
      } catch (err) {
        await ROLLBACK.execute(c).catch(() => {});
        throw err;
      }
    } finally {
      if (unflushed) await SYNC_FULL.execute(c);
    }
  });
}

/**
 * Runs `fn` in one process of the cluster at a time; undefined, without running it, while another runs it.
 * PostgreSQL: a session advisory lock on `lock`, held by one connection for the duration; SQLite: one process
 * owns the database, so there is no other.
 */
export async function exclusively<T>(
  db: StoreDb,
  lock: number,
  fn: () => Promise<T>,
): Promise<T | undefined> {
  if (dialectOf(db) === 'sqlite') return fn();
  return db.connection().execute(async (c) => {
    const got = await sql<{ ok: boolean }>`SELECT pg_try_advisory_lock(${lock}) AS ok`.execute(c);
    if (!got.rows[0]?.ok) return undefined;
    try {
      return await fn();
    } finally {
      await sql`SELECT pg_advisory_unlock(${lock})`.execute(c);
    }
  });
}

/**
 * `column` (a JSON array of strings) contains `value`. The one query where the dialects' types differ: jsonb and
 * its `?` operator on PostgreSQL, JSON text and json_each on SQLite.
 */
export function jsonArrayHas(db: StoreDb, column: string, value: string): RawBuilder<boolean> {
  return dialectOf(db) === 'postgres'
    ? sql<boolean>`${sql.ref(column)} ? ${value}`
    : sql<boolean>`EXISTS (SELECT 1 FROM json_each(${sql.ref(column)}) WHERE json_each.value = ${value})`;
}

/** A unique index refused a row: PostgreSQL's unique_violation, or SQLite's. */
export function isUniqueViolation(e: unknown): boolean {
  const code = (e as { code?: unknown }).code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}

/**
 * Locks the selected rows until the transaction ends: FOR UPDATE on PostgreSQL. SQLite has no row locks and
 * needs none: an immediate transaction (inTransaction) holds the database's write lock from its start.
 */
export function forUpdate<Q extends { forUpdate(): Q }>(db: StoreDb, q: Q): Q {
  return dialectOf(db) === 'postgres' ? q.forUpdate() : q;
}

/**
 * `ON CONFLICT … DO UPDATE SET` these columns of `T` to the values the insert proposed (`excluded.c`): an
 * upsert that replaces them. Column names are checked against `T`.
 */
export function excluded<T>(...columns: Array<keyof T & string>): never {
  return ((eb: { ref(c: string): unknown }) =>
    Object.fromEntries(columns.map((c) => [c, eb.ref(`excluded.${c}`)]))) as never;
}
