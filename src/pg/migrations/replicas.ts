import type { PgMigration } from './index.js';

/** The PostgreSQL schema of the replica leases (versions 300–399). */
export const REPLICA_MIGRATIONS: readonly PgMigration[] = [];
