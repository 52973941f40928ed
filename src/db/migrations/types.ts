import type { Dialect } from '../open.js';
import type { StoreDb } from '../schema.js';

/** SQLite keeps the state in two files: the gateway's database and the web engine's own (crawl pages are bulky). */
export type StateFile = 'main' | 'web';

/** One schema change, applied once in one transaction. Versions are global; each area keeps to its range. */
export interface Migration {
  version: number;
  name: string;
  /** SQLite: the file it belongs in (default the gateway's). PostgreSQL keeps everything in one database. */
  file?: StateFile;
  /** PostgreSQL only: the ledger's tables and functions (SQLite's ledger migrates itself), the shared rate limits. */
  only?: 'postgres';
  /**
   * SQL for both dialects (statements ending a line with `;`), or a function that returns it (to name a type one
   * dialect spells differently) or does its work through the handle itself.
   */
  up: string | ((db: StoreDb, dialect: Dialect) => Promise<string | undefined> | string);
}
