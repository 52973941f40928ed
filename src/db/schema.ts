import type { Generated, Kysely } from 'kysely';

// The typed schema of the store layer: every table the stores read and write, on SQLite and PostgreSQL alike
// (the migrations in ./migrations create them). Times are ms since the epoch (the OAuth store's consumed_at in
// seconds, as oidc-provider uses), money integer micros, JSON text — except `files.tags`, jsonb on PostgreSQL
// (its `?` operator filters by tag), read back as an array there and as text on SQLite. The ledger's tables are
// not here: the ledger keeps its own hand-written SQL per backend (src/ledger).

export interface OAuthStoreTable {
  model: string;
  /** SHA-256 of the model's id: bearer values (tokens, codes, session cookies) are never stored as given. */
  id_hash: string;
  payload: string;
  grant_id: string | null;
  uid: string | null;
  user_code: string | null;
  /** A Grant's account, so an account's grants are found without reading JSON. */
  account_id: string | null;
  expires_at: number | null;
  consumed_at: number | null;
}

interface NamedValue {
  name: string;
  value: string;
}

interface Stamped {
  created_at: number;
}

export interface Database {
  oauth_store: OAuthStoreTable;
  oauth_secrets: NamedValue & Stamped;
  oauth_client_limits: {
    account_id: string;
    client_id: string;
    daily_limit_micros: number | null;
    updated_at: number;
  };
  oauth_session_keys: { session_uid: string; key_id: string | null } & Stamped;
  oauth_grant_keys: { grant_id: string; key_id: string };
  oauth_identities: { issuer: string; subject: string; account_id: string } & Stamped;

  account_sessions: {
    id_hash: string;
    account_id: string;
    key_id: string | null;
    created_at: number;
    expires_at: number;
    /** The team member the session acts as (null: a session from before teams, resolved by its key). */
    member_id: Generated<string | null>;
  };
  account_secrets: NamedValue;
  account_attempts: { key: string; window_start: number; count: number; expires_at: number };
  account_members: {
    id: string;
    account_id: string;
    name: string;
    role: 'owner' | 'billing' | 'member';
    invited_by: string | null;
    created_at: number;
    removed_at: number | null;
    removed_by: string | null;
  };
  account_invites: {
    id: string;
    /** SHA-256 of the one-time token: the link itself is never stored. */
    token_hash: string;
    account_id: string;
    role: 'owner' | 'billing' | 'member';
    name: string | null;
    created_by: string | null;
    created_at: number;
    expires_at: number;
    accepted_at: number | null;
    member_id: string | null;
    revoked_at: number | null;
  };
  account_member_keys: { key_id: string; account_id: string; member_id: string } & Stamped;
  account_events: {
    id: string;
    account_id: string;
    created_at: number;
    actor_id: string | null;
    actor_name: string;
    action: string;
    subject_id: string | null;
    subject_name: string | null;
    /** JSON text. */
    detail: string | null;
  };

  billing_customers: { account_id: string; customer_id: string } & Stamped;
  billing_cards: {
    account_id: string;
    payment_method: string;
    fingerprint: string;
    brand: string;
    last4: string;
    exp_month: number;
    exp_year: number;
    updated_at: number;
  };
  billing_sessions: {
    id: string;
    account_id: string;
    purpose: 'card' | 'topup';
    amount_micros: number | null;
    status: 'open' | 'complete' | 'failed';
    created_at: number;
    finished_at: number | null;
  };
  billing_settlement_charges: {
    movement_id: string;
    account_id: string;
    customer_id: string;
    payment_method: string;
    card_label: string;
    amount_cents: number;
    attempts: Generated<number>;
    created_at: number;
  };
  billing_payments: { payment_intent: string; account_id: string; purpose: string } & Stamped;
  stripe_events: { id: string; type: string; received_at: number; handled_at: number | null };
  billing_state: NamedValue;

  handles: {
    handle: string;
    owner: string;
    kind: string;
    ref: string;
    data: string;
    created_at: number;
  };
  files: {
    file_id: string;
    owner: string;
    filename: string;
    size_bytes: number;
    mime: string | null;
    /** JSON text on SQLite, jsonb on PostgreSQL (an array when read there). */
    tags: string | string[];
    note: string | null;
    status: 'pending' | 'stored';
    source_url: string | null;
    created_at: number;
    stored_at: number | null;
  };
  x402_payments: {
    key: string;
    payer: string;
    action: string;
    fingerprint: string;
    status: 'reserved' | 'settling' | 'unknown' | 'settled' | 'failed' | 'released';
    payload: string;
    requirements: string;
    envelope: string | null;
    receipt: string | null;
    expires_at: number;
    created_at: number;
    updated_at: number;
    payment_id: string | null;
    /** The replica whose call holds the payment (SQLite: the one fixed id). */
    replica: string;
  };
  /** x402 session channels (src/run/sessions/channel-store.ts): the batch-settlement scheme's record as JSON. */
  x402_channels: { channel_id: string; data: string; replica: string; updated_at: number };
  receipt_keys: { name: string; jwk: string } & Stamped;
  shared_secrets: NamedValue & Stamped;

  replicas: { id: string; started_at: number; lease_expires_at: number };

  alert_settings: {
    account_id: string;
    webhook_url: string | null;
    webhook_secret: string | null;
    /** Comma-separated addresses ('' for none). */
    emails: string;
    balance_threshold_micros: number | null;
    /** Comma-separated event types. */
    events: string;
    created_at: number;
    updated_at: number;
  };
  alert_marks: { account_id: string; mark: string; value: string; updated_at: number };
  alert_outbox: {
    event_id: string;
    channel: 'webhook' | 'email';
    account_id: string;
    type: string;
    payload: string;
    target: string | null;
    status: 'pending' | 'delivered' | 'failed';
    attempts: Generated<number>;
    next_attempt_at: number;
    lease_owner: string | null;
    lease_until: number | null;
    last_status: number | null;
    last_error: string | null;
    created_at: number;
    updated_at: number;
  };

  crawl_jobs: {
    id: string;
    status: string;
    params: string;
    total: Generated<number>;
    completed: Generated<number>;
    error: string | null;
    resumes: Generated<number>;
    created_at: number;
    updated_at: number;
    /** The replica running the crawl; a survivor adopts it when that replica's lease expires. */
    owner: string;
  };
  crawl_queue: { job_id: string; seq: number; url: string; depth: number; done: Generated<boolean> };
  crawl_pages: { job_id: string; seq: number; data: string };
  web_jobs: {
    id: string;
    kind: string;
    status: string;
    result: string | null;
    error: string | null;
    created_at: number;
    updated_at: number;
    owner: string;
  };
}

/** The store layer's handle: one Kysely over better-sqlite3 or pg (src/db/open.ts). */
export type StoreDb = Kysely<Database>;

/**
 * SQLite's replica id. SQLite is a cluster of one: one process owns the state, and the replica logic (crawl
 * adoption, x402 recovery) runs on it as on PostgreSQL, with nobody else ever in the cluster.
 */
export const SQLITE_REPLICA = 'local';
