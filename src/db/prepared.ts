import type { Compilable, CompiledQuery, QueryResult, RawBuilder } from 'kysely';
import { directRun, registerPrepared } from './open.js';
import type { StoreDb } from './schema.js';

// A query compiled once, for the stores a paid call goes through (the OAuth token check, x402 payments):
// building and compiling a Kysely query costs several µs per call, and preparing the SQL again more (measured in
// bench/stores.ts). The builder is given placeholders instead of values; each call puts its values in their
// places in the compiled parameters, and the connection reuses its prepared statement (./open.ts).

class Slot {
  constructor(readonly key: string) {}
}

export interface Prepared<P, R> {
  readonly sql: string;
  /** Every row. `on`: a transaction's handle (default: the handle it was compiled on). */
  all(params: P, on?: StoreDb): Promise<R[]>;
  first(params: P, on?: StoreDb): Promise<R | undefined>;
  /** Runs a write; returns the number of rows it changed. */
  run(params: P, on?: StoreDb): Promise<number>;
}

/**
 * Compiles `build`'s query once. `build` receives `P` whose every property is a placeholder: use them where
 * values go (`where('id', '=', p.id)`, `values({ id: p.id })`), never in JavaScript logic.
 */
export function prepare<P extends object, R>(
  db: StoreDb,
  build: (p: P) => Compilable<R> | RawBuilder<R>,
): Prepared<P, R> {
  const placeholders = new Proxy(
    {},
    {
      get: (_, key) => new Slot(String(key)),
      ownKeys: () => {
        throw new Error(
          'prepare(): name each placeholder (p.x); spread or listed, they would compile to nothing',
        );
      },
    },
  ) as P;
  // A builder compiles on its own handle; raw SQL (the `sql` tag) needs one to compile for.
  const compiled = (build(placeholders) as { compile(db: StoreDb): CompiledQuery<R> }).compile(db);
  registerPrepared(compiled.sql);
  const keys = compiled.parameters.map((v) => (v instanceof Slot ? v.key : undefined));
  const own = directRun(db);
  const exec = (params: P, on: StoreDb, one: boolean): QueryResult<R> | Promise<QueryResult<R>> => {
    const parameters = compiled.parameters.slice();
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      if (key !== undefined) parameters[i] = (params as Record<string, unknown>)[key];
    }
    const direct = (on === db ? own : directRun(on))?.(compiled.sql, parameters, one);
    return (direct as QueryResult<R> | undefined) ?? on.executeQuery<R>({ ...compiled, parameters });
  };
  return {
    sql: compiled.sql,
    async all(params, on = db) {
      return (await exec(params, on, false)).rows;
    },
    async first(params, on = db) {
      return (await exec(params, on, true)).rows[0];
    },
    async run(params, on = db) {
      return Number((await exec(params, on, false)).numAffectedRows ?? 0);
    },
  };
}

/** The placeholders of `keys`, as a row: `values(pick(p, COLUMNS))` inserts them all. */
export function pick<T, K extends keyof T>(p: T, keys: readonly K[]): Pick<T, K> {
  return Object.fromEntries(keys.map((k) => [k, p[k]])) as Pick<T, K>;
}
