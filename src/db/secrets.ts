import { sql } from 'kysely';
import type { StoreDb } from './schema.js';

// Values generated once and kept, by name: the OAuth keys and cookie secrets, the dashboard's form key, the
// receipt key, the file links' signing secret, the billing scheduler's first period. One rule for all: insert if
// absent, then read back, so that processes (replicas) generating at the same moment all end up with the first
// writer's value.

const TABLES = {
  oauth_secrets: { value: 'value', stamped: true },
  account_secrets: { value: 'value', stamped: false },
  shared_secrets: { value: 'value', stamped: true },
  receipt_keys: { value: 'jwk', stamped: true },
  billing_state: { value: 'value', stamped: false },
} as const;

export type NamedTable = keyof typeof TABLES;

export async function readNamed(db: StoreDb, table: NamedTable, name: string): Promise<string | undefined> {
  const r = await sql<{ v: string }>`SELECT ${sql.ref(TABLES[table].value)} AS v FROM ${sql.table(table)}
    WHERE name = ${name}`.execute(db);
  return r.rows[0]?.v;
}

/** Inserts `value` under `name` unless a value is there; true when this call inserted it. */
export async function insertIfAbsent(
  db: StoreDb,
  table: NamedTable,
  name: string,
  value: string,
  now = Date.now(),
): Promise<boolean> {
  const t = TABLES[table];
  const [column, stamp] = t.stamped ? [sql`, created_at`, sql`, ${now}`] : [sql``, sql``];
  const r = await sql`INSERT INTO ${sql.table(table)} (name, ${sql.ref(t.value)}${column})
    VALUES (${name}, ${value}${stamp}) ON CONFLICT (name) DO NOTHING`.execute(db);
  return Number(r.numAffectedRows ?? 0) === 1;
}

/** The value under `name`, generated (once, by whoever inserts first) when there is none. */
export async function getOrCreate(
  db: StoreDb,
  table: NamedTable,
  name: string,
  generate: () => string,
  now = Date.now(),
): Promise<string> {
  const found = await readNamed(db, table, name);
  if (found !== undefined) return found;
  await insertIfAbsent(db, table, name, generate(), now);
  const won = await readNamed(db, table, name);
  if (won === undefined) throw new Error(`${table}.${name} vanished while it was being created`);
  return won;
}
