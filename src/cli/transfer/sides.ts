import type { StateFile } from '../../db/migrations/types.js';
import type { Backend } from '../../ledger/transfer.js';
import type { SqliteDb } from '../../lib/sqlite.js';
import type { PgClient } from '../../pg/pool.js';

// One side of a transfer, SQLite or PostgreSQL, behind the few operations an export and an import need: plain
// queries (without parameters), rows streamed in batches as arrays, rows inserted in batches, and a table's
// columns. One connection per SQLite file, one PostgreSQL connection: the transaction that holds the export's
// snapshot or the import's writes is the connection's own.

export interface TransferDb {
  readonly backend: Backend;
  all<T>(text: string, file?: StateFile): Promise<T[]>;
  /** The rows of a query, in batches of arrays (columns in the query's order). */
  stream(text: string, file?: StateFile): AsyncGenerator<unknown[][]>;
  insert(
    table: string,
    columns: readonly string[],
    rows: unknown[][],
    opts?: { file?: StateFile | undefined; upsert?: string | undefined },
  ): Promise<void>;
  /** The table's columns, or none when it does not exist. */
  columns(table: string, file?: StateFile): Promise<string[]>;
  /** Every table, with the SQLite file it is in (PostgreSQL: all 'main'). */
  tables(): Promise<Array<{ table: string; file: StateFile }>>;
  /** `snapshot`: one consistent read of everything; `write`: one transaction for everything written. */
  begin(mode: 'snapshot' | 'write'): Promise<void>;
  commit(): Promise<void>;
  rollback(): Promise<void>;
}

const BATCH = 1000;
const quote = (c: string) => `"${c}"`;

function insertSql(table: string, columns: readonly string[], values: string, upsert?: string): string {
  const cols = columns.map(quote).join(', ');
  const update = upsert
    ? ` ON CONFLICT (${quote(upsert)}) DO UPDATE SET ${columns
        .filter((c) => c !== upsert)
        .map((c) => `${quote(c)} = excluded.${quote(c)}`)
        .join(', ')}`
    : '';
  return `INSERT INTO ${quote(table)} (${cols}) VALUES ${values}${update}`;
}

/** SQLite: the gateway's database and the web engine's file, each on its own connection. */
export function sqliteSide(files: Record<StateFile, SqliteDb>): TransferDb {
  const statements = new Map<string, ReturnType<SqliteDb['prepare']>>();
  return {
    backend: 'sqlite',
    async all<T>(text: string, file: StateFile = 'main') {
      const stmt = files[file].prepare(text);
      if (stmt.reader) return stmt.all() as T[];
      stmt.run();
      return [];
    },
    async *stream(text, file = 'main') {
      // The statement stays open between batches; nothing else runs on this connection meanwhile.
      let batch: unknown[][] = [];
      for (const row of files[file].prepare(text).raw(true).iterate() as Iterable<unknown[]>) {
        batch.push(row);
        if (batch.length >= BATCH) {
          yield batch;
          batch = [];
        }
      }
      if (batch.length > 0) yield batch;
    },
    async insert(table, columns, rows, opts = {}) {
      const file = opts.file ?? 'main';
      const key = `${file}\0${table}\0${columns.join(',')}`;
      let stmt = statements.get(key);
      if (!stmt) {
        const values = `(${columns.map(() => '?').join(', ')})`;
        stmt = files[file].prepare(insertSql(table, columns, values, opts.upsert));
        statements.set(key, stmt);
      }
      for (const row of rows) stmt.run(row);
    },
    async columns(table, file = 'main') {
      return (files[file].pragma(`table_info(${quote(table)})`) as Array<{ name: string }>).map(
        (c) => c.name,
      );
    },
    async tables() {
      return (['main', 'web'] as const).flatMap((file) =>
        (
          files[file]
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
            .all() as Array<{ name: string }>
        ).map((r) => ({ table: r.name, file })),
      );
    },
    async begin(mode) {
      for (const db of Object.values(files)) {
        db.exec(mode === 'write' ? 'BEGIN IMMEDIATE' : 'BEGIN');
        // A deferred transaction reads its snapshot at its first read: take it now, on both files.
        if (mode === 'snapshot') db.prepare('SELECT count(*) FROM sqlite_master').get();
      }
    },
    async commit() {
      for (const db of Object.values(files)) if (db.inTransaction) db.exec('COMMIT');
    },
    async rollback() {
      for (const db of Object.values(files)) if (db.inTransaction) db.exec('ROLLBACK');
    },
  };
}

/** PostgreSQL: one connection, a cursor per streamed query. */
export function pgSide(client: PgClient): TransferDb {
  let cursors = 0;
  return {
    backend: 'postgres',
    async all<T>(text: string) {
      return (await client.query(text)).rows as T[];
    },
    async *stream(text) {
      const name = `tg_export_${++cursors}`;
      await client.query(`DECLARE ${name} NO SCROLL CURSOR FOR ${text}`);
      try {
        for (;;) {
          const r = await client.query({ text: `FETCH FORWARD ${BATCH} FROM ${name}`, rowMode: 'array' });
          if (r.rows.length === 0) return;
          yield r.rows as unknown[][];
        }
      } finally {
        await client.query(`CLOSE ${name}`).catch(() => {});
      }
    },
    async insert(table, columns, rows, opts = {}) {
      // PostgreSQL takes at most 65535 parameters a statement.
      const per = Math.max(1, Math.min(BATCH, Math.floor(60_000 / columns.length)));
      for (let i = 0; i < rows.length; i += per) {
        const chunk = rows.slice(i, i + per);
        const values = chunk
          .map((_, r) => `(${columns.map((_c, c) => `$${r * columns.length + c + 1}`).join(', ')})`)
          .join(', ');
        await client.query(insertSql(table, columns, values, opts.upsert), chunk.flat());
      }
    },
    async columns(table) {
      const r = await client.query<{ column_name: string }>(
        `SELECT column_name FROM information_schema.columns
          WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`,
        [table],
      );
      return r.rows.map((c) => c.column_name);
    },
    async tables() {
      const r = await client.query<{ table_name: string }>(
        `SELECT table_name FROM information_schema.tables
          WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`,
      );
      return r.rows.map((t) => ({ table: t.table_name, file: 'main' as const }));
    },
    async begin(mode) {
      await client.query(
        mode === 'snapshot'
          ? 'BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY'
          : 'BEGIN ISOLATION LEVEL READ COMMITTED',
      );
    },
    async commit() {
      await client.query('COMMIT');
    },
    async rollback() {
      await client.query('ROLLBACK').catch(() => {});
    },
  };
}
