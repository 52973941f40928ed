import type { PgMigration } from './index.js';

/** The PostgreSQL schema of the replica leases (versions 300–399). */
export const REPLICA_MIGRATIONS: readonly PgMigration[] = [
  {
    version: 300,
    name: 'replicas',
    // Another area's migration creates the same table with IF NOT EXISTS: keep this DDL identical to it.
    sql: 'CREATE TABLE IF NOT EXISTS replicas (id text PRIMARY KEY, started_at bigint NOT NULL, lease_expires_at bigint NOT NULL)',
  },
];
