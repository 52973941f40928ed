import type { PgMigration } from './index.js';

/** The PostgreSQL schema of the ledger: accounts, keys, calls (holds), entries, movements, idempotency, daily caps (versions 1–99). */
export const LEDGER_MIGRATIONS: readonly PgMigration[] = [];
