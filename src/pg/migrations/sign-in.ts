import type { PgMigration } from './index.js';

// The PostgreSQL twins of the SQLite tables in auth/oauth/store-sqlite.ts, src/account/session-store-sqlite.ts
// and src/billing/store-sqlite.ts: same names and columns, times as BIGINT ms since the epoch (the OAuth
// store's consumed_at in seconds, as the library uses), money as BIGINT micros, JSON payloads as text.

/** The PostgreSQL schema of the OAuth store and grants, account sessions, billing events (versions 100–199). */
export const SIGN_IN_MIGRATIONS: readonly PgMigration[] = [
  {
    version: 100,
    name: 'oauth store',
    sql: `
    CREATE TABLE oauth_store (
      model       text NOT NULL,
      -- SHA-256 of the model's id: bearer values (tokens, codes, session cookies) are never stored as given.
      id_hash     text NOT NULL,
      payload     text NOT NULL,
      grant_id    text,
      uid         text,
      user_code   text,
      expires_at  bigint,
      consumed_at bigint,
      PRIMARY KEY (model, id_hash)
    );
    CREATE INDEX oauth_store_grant ON oauth_store(grant_id) WHERE grant_id IS NOT NULL;
    CREATE INDEX oauth_store_uid ON oauth_store(model, uid) WHERE uid IS NOT NULL;
    CREATE INDEX oauth_store_user_code ON oauth_store(model, user_code) WHERE user_code IS NOT NULL;
    CREATE INDEX oauth_store_expiry ON oauth_store(expires_at) WHERE expires_at IS NOT NULL;
    CREATE INDEX oauth_store_grant_account ON oauth_store((payload::jsonb ->> 'accountId')) WHERE model = 'Grant';
    CREATE TABLE oauth_secrets (
      name       text PRIMARY KEY,
      value      text NOT NULL,
      created_at bigint NOT NULL
    );
    CREATE TABLE oauth_client_limits (
      account_id         text NOT NULL,
      client_id          text NOT NULL,
      daily_limit_micros bigint CHECK (daily_limit_micros IS NULL OR daily_limit_micros > 0),
      updated_at         bigint NOT NULL,
      PRIMARY KEY (account_id, client_id)
    );
    CREATE TABLE oauth_session_keys (
      session_uid text PRIMARY KEY,
      key_id      text,
      created_at  bigint NOT NULL
    );
    CREATE TABLE oauth_grant_keys (
      grant_id text PRIMARY KEY,
      key_id   text NOT NULL
    );
    CREATE TABLE oauth_identities (
      issuer     text NOT NULL,
      subject    text NOT NULL,
      account_id text NOT NULL,
      created_at bigint NOT NULL,
      PRIMARY KEY (issuer, subject)
    );
    `,
  },
  {
    version: 101,
    name: 'account sessions',
    sql: `
    CREATE TABLE account_sessions (
      id_hash    text PRIMARY KEY,
      account_id text NOT NULL,
      key_id     text,
      created_at bigint NOT NULL,
      expires_at bigint NOT NULL
    );
    CREATE INDEX account_sessions_expiry ON account_sessions(expires_at);
    CREATE TABLE account_secrets (
      name  text PRIMARY KEY,
      value text NOT NULL
    );
    `,
  },
  {
    version: 102,
    name: 'billing store',
    sql: `
    CREATE TABLE billing_customers (
      account_id  text PRIMARY KEY,
      customer_id text NOT NULL UNIQUE,
      created_at  bigint NOT NULL
    );
    CREATE TABLE billing_cards (
      account_id     text PRIMARY KEY,
      payment_method text NOT NULL,
      fingerprint    text NOT NULL,
      brand          text NOT NULL,
      last4          text NOT NULL,
      exp_month      integer NOT NULL,
      exp_year       integer NOT NULL,
      updated_at     bigint NOT NULL
    );
    CREATE TABLE billing_sessions (
      id            text PRIMARY KEY,
      account_id    text NOT NULL,
      purpose       text NOT NULL CHECK (purpose IN ('card', 'topup')),
      amount_micros bigint,
      status        text NOT NULL CHECK (status IN ('open', 'complete', 'failed')),
      created_at    bigint NOT NULL,
      finished_at   bigint
    );
    CREATE INDEX billing_sessions_account ON billing_sessions(account_id, created_at DESC);
    CREATE TABLE billing_settlement_charges (
      movement_id    text PRIMARY KEY,
      account_id     text NOT NULL,
      customer_id    text NOT NULL,
      payment_method text NOT NULL,
      card_label     text NOT NULL,
      amount_cents   bigint NOT NULL CHECK (amount_cents > 0),
      attempts       integer NOT NULL DEFAULT 0,
      created_at     bigint NOT NULL
    );
    CREATE TABLE billing_payments (
      payment_intent text PRIMARY KEY,
      account_id     text NOT NULL,
      purpose        text NOT NULL,
      created_at     bigint NOT NULL
    );
    CREATE TABLE stripe_events (
      id          text PRIMARY KEY,
      type        text NOT NULL,
      received_at bigint NOT NULL,
      handled_at  bigint
    );
    CREATE TABLE billing_state (
      name  text PRIMARY KEY,
      value text NOT NULL
    );
    `,
  },
  {
    version: 103,
    name: 'account attempts',
    sql: `
    CREATE TABLE account_attempts (
      key          text PRIMARY KEY,
      window_start bigint NOT NULL,
      count        integer NOT NULL,
      expires_at   bigint NOT NULL
    );
    CREATE INDEX account_attempts_expiry ON account_attempts(expires_at);
    `,
  },
];
