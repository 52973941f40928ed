import { sql } from 'kysely';
import { SQLITE_REPLICA, type StoreDb } from '../schema.js';
import type { Migration } from './types.js';

// Handles, file metadata, x402 payments, receipt keys, shared secrets, the web engine, rate limits (200–299),
// replica leases and later changes (300+): src/storage, src/run/x402/payment-store.ts, src/run/receipt-keys.ts,
// src/engine/store.ts, src/pg/replicas.ts.

/** Adds a column a table made before it lacks (SQLite databases made before the one store layer). */
async function addMissing(db: StoreDb, table: string, column: string, definition: string): Promise<void> {
  const t = (await db.introspection.getTables()).find((x) => x.name === table);
  if (t && !t.columns.some((c) => c.name === column)) {
    await sql.raw(`ALTER TABLE ${table} ADD COLUMN ${column} ${definition}`).execute(db);
  }
}

export const STORE_MIGRATIONS: readonly Migration[] = [
  {
    version: 200,
    name: 'stores: handles, files, x402 payments, receipt keys, shared secrets',
    // Tags: jsonb on PostgreSQL (filtered with `?`), JSON text on SQLite (json_each).
    up: (_db, dialect) => `
      -- Server-minted handles (SEP-2567): a crawl or render id given to a caller resolves only for its owner.
      CREATE TABLE IF NOT EXISTS handles (
        handle     text PRIMARY KEY,
        owner      text NOT NULL,
        kind       text NOT NULL,
        ref        text NOT NULL,
        data       text NOT NULL DEFAULT '{}',
        created_at bigint NOT NULL
      );
      CREATE INDEX IF NOT EXISTS handles_owner ON handles (owner, kind, ref, created_at);

      CREATE TABLE IF NOT EXISTS files (
        file_id    text PRIMARY KEY,
        owner      text NOT NULL,
        filename   text NOT NULL,
        size_bytes bigint NOT NULL,
        mime       text,
        tags       ${dialect === 'postgres' ? 'jsonb' : 'text'} NOT NULL DEFAULT '[]',
        note       text,
        status     text NOT NULL CHECK (status IN ('pending', 'stored')),
        source_url text,
        created_at bigint NOT NULL,
        stored_at  bigint
      );
      CREATE INDEX IF NOT EXISTS files_owner ON files (owner, created_at DESC, file_id DESC);

      CREATE TABLE IF NOT EXISTS x402_payments (
        key          text PRIMARY KEY,     -- network:asset:from:nonce, lower case
        payer        text NOT NULL,
        action       text NOT NULL,
        fingerprint  text NOT NULL,        -- action + body: a payment replays only the call it paid for
        status       text NOT NULL CHECK (status IN ('reserved', 'settling', 'unknown', 'settled', 'failed', 'released')),
        payload      text NOT NULL,        -- kept to resume a settlement whose outcome was unknown
        requirements text NOT NULL,
        envelope     text,
        receipt      text,
        expires_at   bigint NOT NULL,
        created_at   bigint NOT NULL,
        updated_at   bigint NOT NULL,
        payment_id   text,
        -- The replica whose call holds the payment: recovery touches only its own and dead replicas'.
        replica      text NOT NULL
      );
      CREATE INDEX IF NOT EXISTS x402_payments_expiry ON x402_payments (expires_at) WHERE status IN ('settled', 'failed', 'released');
      CREATE UNIQUE INDEX IF NOT EXISTS x402_payments_payment_id ON x402_payments (payer, payment_id) WHERE payment_id IS NOT NULL;

      CREATE TABLE IF NOT EXISTS receipt_keys (
        name       text PRIMARY KEY,
        jwk        text NOT NULL,      -- the private Ed25519 JWK
        created_at bigint NOT NULL
      );

      -- Generated secrets every replica must share (the local file links' signing secret).
      CREATE TABLE IF NOT EXISTS shared_secrets (
        name       text PRIMARY KEY,
        value      text NOT NULL,
        created_at bigint NOT NULL
      );
    `,
  },
  {
    version: 201,
    name: 'web engine: crawls and background jobs',
    // SQLite: the engine's own file (data/web.sqlite): page bodies are bulky, and losing the last ones on power
    // loss only means fetching them again.
    file: 'web',
    up: `
      CREATE TABLE IF NOT EXISTS crawl_jobs (
        id         text PRIMARY KEY,
        status     text NOT NULL,
        params     text NOT NULL,
        total      integer NOT NULL DEFAULT 0,
        completed  integer NOT NULL DEFAULT 0,
        error      text,
        resumes    integer NOT NULL DEFAULT 0,
        created_at bigint NOT NULL,
        updated_at bigint NOT NULL,
        -- The replica running the crawl; a survivor adopts it when that replica's lease expires.
        owner      text NOT NULL
      );
      CREATE INDEX IF NOT EXISTS crawl_jobs_updated ON crawl_jobs (updated_at);
      CREATE TABLE IF NOT EXISTS crawl_queue (
        job_id text NOT NULL,
        seq    integer NOT NULL,
        url    text NOT NULL,
        depth  integer NOT NULL,
        done   boolean NOT NULL DEFAULT false,
        PRIMARY KEY (job_id, url)
      );
      CREATE INDEX IF NOT EXISTS crawl_queue_next ON crawl_queue (job_id, done, depth, seq);
      CREATE TABLE IF NOT EXISTS crawl_pages (
        job_id text NOT NULL,
        seq    integer NOT NULL,
        data   text NOT NULL,
        PRIMARY KEY (job_id, seq)
      );
      CREATE TABLE IF NOT EXISTS web_jobs (
        id         text PRIMARY KEY,
        kind       text NOT NULL,
        status     text NOT NULL,
        result     text,
        error      text,
        created_at bigint NOT NULL,
        updated_at bigint NOT NULL,
        owner      text NOT NULL
      );
    `,
  },
  {
    version: 202,
    name: 'rate limits',
    // SQLite counts in memory: one process owns its state (src/run/rate-limit.ts). UNLOGGED: no WAL flush per
    // call; a crash or fail-over only refills every bucket, which a restart did on SQLite anyway.
    only: 'postgres',
    up: `
      CREATE UNLOGGED TABLE IF NOT EXISTS rate_buckets (
        key     text PRIMARY KEY,
        tokens  double precision NOT NULL,
        at      bigint NOT NULL,
        -- Whether the last take got a token: returned by the same UPSERT that took it.
        granted boolean NOT NULL
      );
    `,
  },
  {
    version: 260,
    name: 'x402 session channels',
    up: `
      CREATE TABLE IF NOT EXISTS x402_channels (
        channel_id text PRIMARY KEY,  -- lower-case bytes32 hex
        data       text NOT NULL,     -- the batch-settlement scheme's channel record (JSON)
        replica    text NOT NULL,     -- the replica that wrote it last (its pending request, if any, is that replica's)
        updated_at bigint NOT NULL
      );
    `,
  },
  {
    version: 300,
    name: 'replicas',
    up: 'CREATE TABLE IF NOT EXISTS replicas (id text PRIMARY KEY, started_at bigint NOT NULL, lease_expires_at bigint NOT NULL)',
  },
  {
    version: 301,
    name: 'x402 payments name their replica (SQLite: the one fixed id)',
    async up(db) {
      await addMissing(db, 'x402_payments', 'replica', `text NOT NULL DEFAULT '${SQLITE_REPLICA}'`);
      return undefined;
    },
  },
  {
    version: 302,
    name: 'crawls and jobs name their replica (SQLite: the one fixed id)',
    file: 'web',
    async up(db) {
      await addMissing(db, 'crawl_jobs', 'owner', `text NOT NULL DEFAULT '${SQLITE_REPLICA}'`);
      await addMissing(db, 'web_jobs', 'owner', `text NOT NULL DEFAULT '${SQLITE_REPLICA}'`);
      return `
        CREATE INDEX IF NOT EXISTS crawl_jobs_scraping ON crawl_jobs (owner) WHERE status = 'scraping';
        CREATE INDEX IF NOT EXISTS web_jobs_processing ON web_jobs (owner) WHERE status = 'processing';
      `;
    },
  },
  {
    version: 303,
    name: "oauth grants by account: a column, not the payload's JSON",
    async up(db) {
      await sql`ALTER TABLE oauth_store ADD COLUMN account_id text`.execute(db);
      const grants = await db
        .selectFrom('oauth_store')
        .select(['id_hash', 'payload'])
        .where('model', '=', 'Grant')
        .execute();
      for (const g of grants) {
        const accountId = (JSON.parse(g.payload) as { accountId?: unknown }).accountId;
        if (typeof accountId !== 'string') continue;
        await db
          .updateTable('oauth_store')
          .set({ account_id: accountId })
          .where('model', '=', 'Grant')
          .where('id_hash', '=', g.id_hash)
          .execute();
      }
      return `
        DROP INDEX IF EXISTS oauth_store_grant_account;
        CREATE INDEX IF NOT EXISTS oauth_store_account ON oauth_store(account_id) WHERE model = 'Grant';
      `;
    },
  },
];
