import type { PgMigration } from './index.js';

/**
 * The PostgreSQL schema of x402 session channels (src/run/sessions/channel-store.ts; the SQLite table is the same),
 * version 260 in the payments range (200–299).
 */
export const SESSION_MIGRATIONS: readonly PgMigration[] = [
  {
    version: 260,
    name: 'x402 session channels',
    sql: `
      CREATE TABLE x402_channels (
        channel_id text PRIMARY KEY,  -- lower-case bytes32 hex
        data       text NOT NULL,     -- the batch-settlement scheme's channel record (JSON)
        replica    text NOT NULL,     -- the replica that wrote it last (its pending request, if any, is that replica's)
        updated_at bigint NOT NULL
      );
    `,
  },
];
