import type { StateFile } from './migrations/types.js';
import type { Database } from './schema.js';

// The store layer's part of `tollgate export` / `tollgate import` (src/cli/transfer): every table of the one
// schema, carried to the other database or deliberately left behind, with the reason. The record is typed over
// the schema, so a table added to src/db/schema.ts does not compile until it is classified here; tables created
// outside the typed schema (PostgreSQL-only ones) are in EXTRA, and test/contract/transfer-tables.test.ts fails
// on any table of either database that is named nowhere.
//
// The rule: what a customer paid for, is owed, or signed in with travels (OAuth grants and tokens, dashboard
// sessions, card records and Stripe's event ids, handles and file metadata, x402 payments and channels, the
// generated secrets and receipt keys, the web engine's jobs and pages); counters that refill by themselves and
// the leases of running processes do not.

export interface CarriedStore {
  carry: true;
  /** The primary key, for a stable order ('#': an integer column). */
  order: readonly string[];
  /** SQLite: the file the table lives in (default the gateway's database). */
  file?: StateFile;
  /**
   * The column naming the replica that owns a row in flight (a crawl, a reserved payment). An import gives the
   * rows to a replica that is gone (SQLite: its one replica, at the next start), so the target's first gateway
   * takes over what the source left unfinished, as it would after a crash.
   */
  replica?: string;
  /** Boolean columns (SQLite stores 0/1). */
  booleans?: readonly string[];
  /** JSON columns (jsonb on PostgreSQL, text on SQLite): carried as JSON text. */
  json?: readonly string[];
}

export interface SkippedStore {
  carry: false;
  why: string;
}

export type StoreTransfer = CarriedStore | SkippedStore;

const carry = (order: string[], more: Omit<CarriedStore, 'carry' | 'order'> = {}): CarriedStore => ({
  carry: true,
  order,
  ...more,
});

export const STORE_TRANSFER: Record<keyof Database, StoreTransfer> = {
  oauth_store: carry(['model', 'id_hash']),
  oauth_secrets: carry(['name']),
  oauth_client_limits: carry(['account_id', 'client_id']),
  oauth_session_keys: carry(['session_uid']),
  oauth_grant_keys: carry(['grant_id']),
  oauth_identities: carry(['issuer', 'subject']),
  // Signed-in dashboard sessions travel too: a move is a short planned stop, and signing everyone out is avoidable.
  account_sessions: carry(['id_hash']),
  account_secrets: carry(['name']),
  account_attempts: {
    carry: false,
    why: 'sign-up attempts per client address and hour: the counters refill within the hour',
  },
  // Team accounts: members, their keys, invitations (a pending link keeps working after the move) and the event log.
  account_members: carry(['id']),
  account_invites: carry(['id']),
  account_member_keys: carry(['key_id']),
  account_events: carry(['id']),
  billing_customers: carry(['account_id']),
  billing_cards: carry(['account_id']),
  billing_sessions: carry(['id']),
  billing_settlement_charges: carry(['movement_id']),
  billing_payments: carry(['payment_intent']),
  // Stripe delivers events at least once: their ids keep a replay after the move from being handled twice.
  stripe_events: carry(['id']),
  billing_state: carry(['name']),
  handles: carry(['handle']),
  files: carry(['file_id'], { json: ['tags'] }),
  // Spent payments stay spent: a payment presented again after the move must not pay twice.
  x402_payments: carry(['key'], { replica: 'replica' }),
  x402_channels: carry(['channel_id'], { replica: 'replica' }),
  receipt_keys: carry(['name']),
  shared_secrets: carry(['name']),
  replicas: {
    carry: false,
    why: "leases of running processes: an import leaves one lapsed lease owning the source's unfinished work",
  },
  // Alerts: the settings, each threshold's last state (so a crossing already alerted is not alerted again) and the
  // outbox (deliveries still due go out from the target; a lease of the source lapses and is taken over).
  alert_settings: carry(['account_id']),
  alert_marks: carry(['account_id', 'mark']),
  alert_outbox: carry(['event_id', 'channel']),
  crawl_jobs: carry(['id'], { file: 'web', replica: 'owner' }),
  crawl_queue: carry(['job_id', 'url'], { file: 'web', booleans: ['done'] }),
  crawl_pages: carry(['job_id', '#seq'], { file: 'web' }),
  web_jobs: carry(['id'], { file: 'web', replica: 'owner' }),
};

/** Tables outside the typed schema (each database's own bookkeeping, PostgreSQL-only tables). */
export const EXTRA_SKIPPED: Record<string, string> = {
  schema_migrations: 'each database records its own schema versions; an import migrates its target first',
  rate_buckets: "PostgreSQL's per-account rate-limit buckets: they refill within a second",
};

/** The replica id an import gives the rows in flight on PostgreSQL: a lease that has already lapsed. */
export const IMPORTED_REPLICA = 'imported';

/** The carried store tables, in the order an export writes them (the gateway's file, then the web engine's). */
export function carriedStores(): Array<[keyof Database, CarriedStore]> {
  const all = Object.entries(STORE_TRANSFER).filter((e): e is [keyof Database, CarriedStore] => e[1].carry);
  return [...all.filter(([, t]) => t.file !== 'web'), ...all.filter(([, t]) => t.file === 'web')];
}
