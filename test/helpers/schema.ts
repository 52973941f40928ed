import type { StoreDb } from '../../src/db/schema.js';

// A database's tables and columns as the store layer's contract tests compare them: by name, with each column's
// type reduced to what both dialects can tell apart (SQLite's type affinity; PostgreSQL's types mapped onto it).

const PG_TYPES: Record<string, string> = {
  int2: 'integer',
  int4: 'integer',
  int8: 'integer',
  text: 'text',
  bool: 'boolean',
  float8: 'real',
  jsonb: 'json',
  timestamptz: 'timestamp',
};

function sqliteType(declared: string): string {
  const t = declared.toLowerCase();
  if (t.includes('int')) return 'integer';
  if (t.includes('char') || t.includes('clob') || t.includes('text')) return 'text';
  if (t.includes('real') || t.includes('floa') || t.includes('doub')) return 'real';
  return t;
}

/** table → "column:type" sorted; `skip`: tables left out (bookkeeping). */
export async function schemaOf(
  db: StoreDb,
  dialect: 'sqlite' | 'postgres',
  skip: readonly string[] = ['schema_migrations'],
): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const t of await db.introspection.getTables()) {
    if (skip.includes(t.name) || (t.schema !== undefined && t.schema !== 'public')) continue;
    out[t.name] = t.columns
      .map(
        (c) =>
          `${c.name}:${dialect === 'postgres' ? (PG_TYPES[c.dataType] ?? c.dataType) : sqliteType(c.dataType)}`,
      )
      .sort();
  }
  return out;
}
