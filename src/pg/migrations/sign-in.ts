import type { PgMigration } from './index.js';

/** The PostgreSQL schema of the OAuth store and grants, account sessions, billing events (versions 100–199). */
export const SIGN_IN_MIGRATIONS: readonly PgMigration[] = [];
