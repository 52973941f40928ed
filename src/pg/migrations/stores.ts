import type { PgMigration } from './index.js';

/** The PostgreSQL schema of the handles, web jobs, file metadata, x402 payments, receipt keys, rate limits (versions 200–299). */
export const STORE_MIGRATIONS: readonly PgMigration[] = [];
