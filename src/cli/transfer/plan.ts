import type { StateFile } from '../../db/migrations/types.js';
import { SQLITE_REPLICA } from '../../db/schema.js';
import {
  type CarriedStore,
  carriedStores,
  EXTRA_SKIPPED,
  IMPORTED_REPLICA,
  STORE_TRANSFER,
  type StoreTransfer,
} from '../../db/transfer.js';
import {
  type Backend,
  LEDGER_BACKEND_ONLY,
  LEDGER_TABLES,
  type LedgerTable,
  orderBy,
  selectSql,
} from '../../ledger/transfer.js';
import type { TransferDb } from './sides.js';

// The tables a transfer carries, in the order an export writes them and an import reads them back: the ledger's
// (src/ledger/transfer.ts), then the store layer's (src/db/transfer.ts); and how a value is carried where the two
// databases store it differently (booleans, JSON, the replica that owns a row in flight).

export interface Section {
  table: string;
  file: StateFile;
  ledger?: LedgerTable;
  store?: CarriedStore;
  order: readonly string[];
}

export function plan(): Section[] {
  return [
    ...LEDGER_TABLES.map((t): Section => ({ table: t.table, file: 'main', ledger: t, order: t.order })),
    ...carriedStores().map(
      ([table, t]): Section => ({ table, file: t.file ?? 'main', store: t, order: t.order }),
    ),
  ];
}

/** The columns a section carries: the ledger's fixed list, or the store table's own (sorted: a stable file). */
export async function columnsOf(s: Section, db: TransferDb): Promise<string[]> {
  if (s.ledger) return [...s.ledger.columns];
  const cols = await db.columns(s.table, s.file);
  if (cols.length === 0) throw new Error(`table ${s.table} is missing from the ${db.backend} database`);
  return cols.sort();
}

export function selectOf(s: Section, columns: readonly string[], backend: Backend): string {
  if (s.ledger) return selectSql(s.ledger, backend);
  return `SELECT ${columns.map((c) => `"${c}"`).join(', ')} FROM "${s.table}" ORDER BY ${orderBy(s.order, backend)}`;
}

type Convert = (row: unknown[]) => unknown[];
const same: Convert = (row) => row;

function indexes(columns: readonly string[], names: readonly string[] | undefined): number[] {
  return (names ?? []).map((n) => columns.indexOf(n)).filter((i) => i >= 0);
}

/**
 * Rows as the database gave them → the file's form: booleans as booleans, JSON as compact JSON text, lists of
 * text as JSON text (PostgreSQL hands a text[] back as an array; SQLite keeps the JSON text).
 */
export function toFile(s: Section, columns: readonly string[]): Convert {
  const bools = indexes(columns, s.store?.booleans);
  const json = [...indexes(columns, s.store?.json), ...indexes(columns, s.ledger?.textLists)];
  if (bools.length === 0 && json.length === 0) return same;
  return (row) => {
    for (const i of bools) if (row[i] !== null) row[i] = Boolean(row[i]);
    // PostgreSQL hands jsonb back parsed; SQLite as the text it keeps.
    for (const i of json) {
      const v = row[i];
      if (v !== null) row[i] = JSON.stringify(typeof v === 'string' ? JSON.parse(v) : v);
    }
    return row;
  };
}

/**
 * The file's rows → the target's: booleans as 0/1 on SQLite, and a row owned by a replica given to the target's
 * replica that is gone (SQLite: its only one; PostgreSQL: `imported`, whose lease has lapsed).
 */
export function fromFile(s: Section, columns: readonly string[], target: Backend): Convert {
  const bools = target === 'sqlite' ? indexes(columns, s.store?.booleans) : [];
  // PostgreSQL: a list of text goes in as an array (node-postgres writes it as a text[] literal).
  const lists = target === 'postgres' ? indexes(columns, s.ledger?.textLists) : [];
  const replica = indexes(columns, s.store?.replica ? [s.store.replica] : [])[0];
  if (bools.length === 0 && lists.length === 0 && replica === undefined) return same;
  const owner = target === 'sqlite' ? SQLITE_REPLICA : IMPORTED_REPLICA;
  return (row) => {
    for (const i of bools) if (row[i] !== null) row[i] = row[i] ? 1 : 0;
    for (const i of lists) if (typeof row[i] === 'string') row[i] = JSON.parse(row[i] as string);
    if (replica !== undefined) row[replica] = owner;
    return row;
  };
}

/**
 * How a table of `backend`'s database travels: carried, or left behind with the reason; undefined when it is
 * classified nowhere (test/contract/transfer-tables.test.ts fails then).
 */
export function classify(
  table: string,
  backend: Backend,
): { carried: true } | { carried: false; why: string } | undefined {
  if (LEDGER_TABLES.some((t) => t.table === table)) return { carried: true };
  const only = LEDGER_BACKEND_ONLY[backend].tables[table];
  if (only) return { carried: false, why: only };
  const store = (STORE_TRANSFER as Record<string, StoreTransfer | undefined>)[table];
  if (store) return store.carry ? { carried: true } : { carried: false, why: store.why };
  const extra = EXTRA_SKIPPED[table];
  return extra ? { carried: false, why: extra } : undefined;
}
