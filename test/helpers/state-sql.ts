import type { StateDb } from '../../src/backend.js';

// The same SQL on either backend, for the tests' invariant checks (conservation, append-only, CHECK backstops).
// Keep to the common dialect: no parameters, CAST(x AS bigint) rather than `::`, sums cast back to bigint (an
// int8 PostgreSQL returns as a number; a numeric it would return as a string).

export async function sqlOn<T = Record<string, unknown>>(state: StateDb, text: string): Promise<T[]> {
  if (state.kind === 'postgres') return (await state.pool.query(text)).rows as T[];
  const stmt = state.db.prepare(text);
  if (stmt.reader) return stmt.all() as T[];
  stmt.run();
  return [];
}
