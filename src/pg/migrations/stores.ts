import type { PgMigration } from './index.js';

// Times are BIGINT ms since the epoch and JSON is text, exactly as in the SQLite tables, so rows map 1:1.

/** The PostgreSQL schema of the handles, web jobs, file metadata, x402 payments, receipt keys, rate limits (versions 200–299). */
export const STORE_MIGRATIONS: readonly PgMigration[] = [
  {
    version: 200,
    name: 'stores: handles, files, x402 payments, receipt keys, rate limits, secrets, web engine',
    sql: `
      -- The replica leases (the replicas migration creates the same table): crawl adoption reads them.
      CREATE TABLE IF NOT EXISTS replicas (id text PRIMARY KEY, started_at bigint NOT NULL, lease_expires_at bigint NOT NULL);

      CREATE TABLE handles (
        handle     text PRIMARY KEY,
        owner      text NOT NULL,
        kind       text NOT NULL,
        ref        text NOT NULL,
        data       text NOT NULL DEFAULT '{}',
        created_at bigint NOT NULL
      );
      CREATE INDEX handles_owner ON handles (owner, kind, ref, created_at);

      CREATE TABLE files (
        file_id    text PRIMARY KEY,
        owner      text NOT NULL,
        filename   text NOT NULL,
        size_bytes bigint NOT NULL,
        mime       text,
        tags       jsonb NOT NULL DEFAULT '[]',
        note       text,
        status     text NOT NULL CHECK (status IN ('pending', 'stored')),
        source_url text,
        created_at bigint NOT NULL,
        stored_at  bigint
      );
      CREATE INDEX files_owner ON files (owner, created_at DESC, file_id DESC);

      CREATE TABLE x402_payments (
        key          text PRIMARY KEY,
        payer        text NOT NULL,
        action       text NOT NULL,
        fingerprint  text NOT NULL,
        status       text NOT NULL CHECK (status IN ('reserved', 'settling', 'unknown', 'settled', 'failed', 'released')),
        payload      text NOT NULL,
        requirements text NOT NULL,
        envelope     text,
        receipt      text,
        expires_at   bigint NOT NULL,
        created_at   bigint NOT NULL,
        updated_at   bigint NOT NULL,
        payment_id   text,
        -- The replica whose call holds the payment: recover() touches only its own (another replica's are live).
        replica      text NOT NULL
      );
      CREATE INDEX x402_payments_expiry ON x402_payments (expires_at) WHERE status IN ('settled', 'failed', 'released');
      CREATE UNIQUE INDEX x402_payments_payment_id ON x402_payments (payer, payment_id) WHERE payment_id IS NOT NULL;

      CREATE TABLE receipt_keys (
        name       text PRIMARY KEY,
        jwk        text NOT NULL,
        created_at bigint NOT NULL
      );

      -- Generated secrets every replica must share (the local file links' signing secret).
      CREATE TABLE shared_secrets (
        name       text PRIMARY KEY,
        value      text NOT NULL,
        created_at bigint NOT NULL
      );

      -- Per-account token buckets shared by every replica; refilled in SQL on each take. UNLOGGED: no WAL flush
      -- per call (a crash or fail-over only refills every bucket, which a restart did on SQLite anyway).
      CREATE UNLOGGED TABLE rate_buckets (
        key    text PRIMARY KEY,
        tokens  double precision NOT NULL,
        at      bigint NOT NULL,
        -- Whether the last take got a token: returned by the same UPSERT that took it.
        granted boolean NOT NULL
      );

      CREATE TABLE crawl_jobs (
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
      CREATE INDEX crawl_jobs_scraping ON crawl_jobs (owner) WHERE status = 'scraping';
      CREATE INDEX crawl_jobs_updated ON crawl_jobs (updated_at);
      CREATE TABLE crawl_queue (
        job_id text NOT NULL,
        seq    integer NOT NULL,
        url    text NOT NULL,
        depth  integer NOT NULL,
        done   boolean NOT NULL DEFAULT false,
        PRIMARY KEY (job_id, url)
      );
      CREATE INDEX crawl_queue_next ON crawl_queue (job_id, done, depth, seq);
      CREATE TABLE crawl_pages (
        job_id text NOT NULL,
        seq    integer NOT NULL,
        data   text NOT NULL,
        PRIMARY KEY (job_id, seq)
      );
      CREATE TABLE web_jobs (
        id         text PRIMARY KEY,
        kind       text NOT NULL,
        status     text NOT NULL,
        result     text,
        error      text,
        created_at bigint NOT NULL,
        updated_at bigint NOT NULL,
        owner      text NOT NULL
      );
      CREATE INDEX web_jobs_processing ON web_jobs (owner) WHERE status = 'processing';
    `,
  },
];
