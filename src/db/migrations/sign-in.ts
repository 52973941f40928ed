import type { Migration } from './types.js';

// The OAuth store, dashboard sessions and billing (versions 100–199): auth/oauth/store.ts,
// src/account/session-store.ts, src/billing/store.ts.

export const SIGN_IN_MIGRATIONS: readonly Migration[] = [
  {
    version: 100,
    name: 'oauth store',
    up: `
    CREATE TABLE IF NOT EXISTS oauth_store (
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
    CREATE INDEX IF NOT EXISTS oauth_store_grant ON oauth_store(grant_id) WHERE grant_id IS NOT NULL;
    CREATE INDEX IF NOT EXISTS oauth_store_uid ON oauth_store(model, uid) WHERE uid IS NOT NULL;
    CREATE INDEX IF NOT EXISTS oauth_store_user_code ON oauth_store(model, user_code) WHERE user_code IS NOT NULL;
    CREATE INDEX IF NOT EXISTS oauth_store_expiry ON oauth_store(expires_at) WHERE expires_at IS NOT NULL;
    -- Generated once: the JWKS and the cookie and form secrets (so cookies and ID tokens survive a restart).
    CREATE TABLE IF NOT EXISTS oauth_secrets (
      name       text PRIMARY KEY,
      value      text NOT NULL,
      created_at bigint NOT NULL
    );
    -- The daily spend limit an account chose for a client at consent (NULL: no limit beyond the balance).
    CREATE TABLE IF NOT EXISTS oauth_client_limits (
      account_id         text NOT NULL,
      client_id          text NOT NULL,
      daily_limit_micros bigint CHECK (daily_limit_micros IS NULL OR daily_limit_micros > 0),
      updated_at         bigint NOT NULL,
      PRIMARY KEY (account_id, client_id)
    );
    -- How a browser session signed in: the API key used (NULL: upstream sign-in), and the key behind each
    -- grant, so revoking a key also cuts off the hosts connected by signing in with it.
    CREATE TABLE IF NOT EXISTS oauth_session_keys (
      session_uid text PRIMARY KEY,
      key_id      text,
      created_at  bigint NOT NULL
    );
    CREATE TABLE IF NOT EXISTS oauth_grant_keys (
      grant_id text PRIMARY KEY,
      key_id   text NOT NULL
    );
    -- Accounts created by federated sign-in: one per (upstream issuer, subject).
    CREATE TABLE IF NOT EXISTS oauth_identities (
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
    up: `
    CREATE TABLE IF NOT EXISTS account_sessions (
      id_hash    text PRIMARY KEY,
      account_id text NOT NULL,
      -- The API key the session signed in with (NULL: sign-up or an upstream sign-in).
      key_id     text,
      created_at bigint NOT NULL,
      expires_at bigint NOT NULL
    );
    CREATE INDEX IF NOT EXISTS account_sessions_expiry ON account_sessions(expires_at);
    CREATE TABLE IF NOT EXISTS account_secrets (
      name  text PRIMARY KEY,
      value text NOT NULL
    );
    `,
  },
  {
    version: 102,
    name: 'billing store',
    up: `
    CREATE TABLE IF NOT EXISTS billing_customers (
      account_id  text PRIMARY KEY,
      customer_id text NOT NULL UNIQUE,
      created_at  bigint NOT NULL
    );
    -- The card on file: the one settlements charge. Only what the dashboard shows, and the card's fingerprint.
    CREATE TABLE IF NOT EXISTS billing_cards (
      account_id     text PRIMARY KEY,
      payment_method text NOT NULL,
      fingerprint    text NOT NULL,
      brand          text NOT NULL,
      last4          text NOT NULL,
      exp_month      integer NOT NULL,
      exp_year       integer NOT NULL,
      updated_at     bigint NOT NULL
    );
    CREATE TABLE IF NOT EXISTS billing_sessions (
      id            text PRIMARY KEY,
      account_id    text NOT NULL,
      purpose       text NOT NULL CHECK (purpose IN ('card', 'topup')),
      amount_micros bigint,
      status        text NOT NULL CHECK (status IN ('open', 'complete', 'failed')),
      created_at    bigint NOT NULL,
      finished_at   bigint
    );
    CREATE INDEX IF NOT EXISTS billing_sessions_account ON billing_sessions(account_id, created_at DESC);
    -- The charge of a settlement, fixed at its first attempt: Stripe replays a request under the same
    -- idempotency key only if its parameters are the same, so a retry after an unknown outcome never charges twice.
    CREATE TABLE IF NOT EXISTS billing_settlement_charges (
      movement_id    text PRIMARY KEY,
      account_id     text NOT NULL,
      customer_id    text NOT NULL,
      payment_method text NOT NULL,
      card_label     text NOT NULL,
      amount_cents   bigint NOT NULL CHECK (amount_cents > 0),
      attempts       integer NOT NULL DEFAULT 0,
      created_at     bigint NOT NULL
    );
    -- Payment intents whose money reached an account (top-ups, settlements): refunds and disputes name them.
    CREATE TABLE IF NOT EXISTS billing_payments (
      payment_intent text PRIMARY KEY,
      account_id     text NOT NULL,
      purpose        text NOT NULL,
      created_at     bigint NOT NULL
    );
    -- Webhook events (Stripe delivers at least once). A row is claimed before an event is handled and marked
    -- when it was; a claim left unmarked by a crash is taken over after a minute.
    CREATE TABLE IF NOT EXISTS stripe_events (
      id          text PRIMARY KEY,
      type        text NOT NULL,
      received_at bigint NOT NULL,
      handled_at  bigint
    );
    CREATE TABLE IF NOT EXISTS billing_state (
      name  text PRIMARY KEY,
      value text NOT NULL
    );
    `,
  },
  {
    version: 103,
    name: 'account attempts',
    up: `
    -- Fixed-window attempt counters (sign-ups per client IP per hour), shared by every replica.
    CREATE TABLE IF NOT EXISTS account_attempts (
      key          text PRIMARY KEY,
      window_start bigint NOT NULL,
      count        integer NOT NULL,
      expires_at   bigint NOT NULL
    );
    CREATE INDEX IF NOT EXISTS account_attempts_expiry ON account_attempts(expires_at);
    `,
  },
];
