// The ledger's narrow, async interface. SQLite is the embedded default; a Postgres implementation plugs in
// behind the same interface (async so that callers need not change).
//
// Invariants (each has a test in test/unit/ledger*.test.ts):
// - available = balance − held ≥ 0 for customer accounts, checked and reserved in one serialized write;
// - a hold resolves exactly once (posted, voided or expired) and posts at most its amount;
// - entries are append-only and sum to zero across accounts (double entry);
// - one idempotency key per account runs at most one call; a finished call is replayed, never re-charged;
// - every hold expires; the sweeper voids expired holds, also after a crash.

export type AccountKind = 'customer' | 'system' | 'x402';

export interface AccountRow {
  id: string;
  name: string | null;
  kind: AccountKind;
  balance_micros: number;
  held_micros: number;
  created_at: number;
}

export interface Balance {
  balance_micros: number;
  held_micros: number;
  available_micros: number;
}

export interface ApiKeyRow {
  id: string;
  account_id: string;
  /** First characters of the key, for display (`tg_sk_ab12…`). */
  prefix: string;
  name: string | null;
  created_at: number;
  revoked_at: number | null;
}

export type PaymentMethod = 'api_key' | 'oauth' | 'x402';

export interface CallRow {
  id: string;
  account_id: string;
  action: string;
  price_micros: number;
  hold_micros: number;
  charged_micros: number;
  status: 'pending' | 'succeeded' | 'failed' | 'refunded';
  refunded_micros: number;
  error_code: string | null;
  idempotency_key: string | null;
  payment_method: PaymentMethod;
  principal: string | null;
  provider: string | null;
  duration_ms: number | null;
  created_at: number;
  finished_at: number | null;
  meta: Record<string, unknown> | null;
}

export interface BeginRequest {
  accountId: string;
  action: string;
  /** The price quoted to the caller (for fixed-price actions, equal to the hold). */
  priceMicros: number;
  /** Worst-case amount reserved; capture may post at most this. */
  holdMicros: number;
  paymentMethod: PaymentMethod;
  /** Who presented the credential (key id, OAuth client, payer address); for the record. */
  principal: string | null;
  idempotency?: { key: string; fingerprint: string };
  /** The hold expires (and the sweeper voids it) this many ms after it was taken. */
  holdTtlMs: number;
  /**
   * Optional per-UTC-day spending cap checked together with the hold (model router). `scope` counts against a
   * separate cap inside the account (an OAuth client's daily limit: `oauth:<client id>`); absent, the
   * account-wide one.
   */
  dailyCap?: { limitMicros: number; scope?: string };
  /**
   * Money that comes with the call instead of from the balance (an x402 payment, verified but not yet settled):
   * credited in the same write as the hold (a topup from sys_funding tagged with the call), consumed by the
   * capture, and reversed when the hold is voided or expires, or for the part the capture did not use. A call
   * that collected nothing therefore leaves nothing behind, and entries still sum to zero.
   */
  funding?: { micros: number; memo: string };
  meta?: Record<string, unknown>;
}

export type BeginResult =
  | { kind: 'started'; callId: string }
  | { kind: 'replay'; callId: string; response: unknown }
  | { kind: 'in_flight'; callId: string }
  | { kind: 'mismatch'; callId: string }
  | { kind: 'insufficient'; availableMicros: number; requiredMicros: number }
  | { kind: 'daily_cap'; spentMicros: number; limitMicros: number; resetsAt: number };

export interface CaptureRequest {
  /** Amount to post, ≤ the hold. The remainder of the hold is released. */
  amountMicros: number;
  provider: string | null;
  durationMs: number;
  /** The response stored for idempotent replays (the envelope). */
  response?: unknown;
  meta?: Record<string, unknown>;
  /** The job handle this call started (render, crawl…): a later poll that sees the job fail refunds the call. */
  jobHandle?: string;
}

export interface VoidRequest {
  errorCode: string;
  provider: string | null;
  durationMs: number;
  meta?: Record<string, unknown>;
}

export interface SweepResult {
  expiredHolds: number;
  purgedKeys: number;
}

export class LedgerStateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LedgerStateError';
  }
}

/** What anyone may read: accounts, balances, keys and the transaction record. */
export interface LedgerReads {
  getAccount(id: string): Promise<AccountRow | undefined>;
  listAccounts(kind?: AccountKind): Promise<AccountRow[]>;
  balance(accountId: string): Promise<Balance>;
  findApiKeyByHash(hash: string): Promise<ApiKeyRow | undefined>;
  listApiKeys(accountId?: string): Promise<ApiKeyRow[]>;
  getCall(id: string): Promise<CallRow | undefined>;
  transactions(accountId: string, limit: number): Promise<CallRow[]>;
}

/** Accounts and keys: records that move no money. */
export interface LedgerAdmin {
  createAccount(input: { name?: string | null; kind?: AccountKind; id?: string }): Promise<AccountRow>;
  insertApiKey(input: {
    accountId: string;
    hash: string;
    prefix: string;
    name?: string | null;
  }): Promise<ApiKeyRow>;
  revokeApiKey(id: string): Promise<boolean>;
}

/**
 * The money methods. Only the lifecycle (src/run/lifecycle.ts) calls them; test/contract/money.test.ts fails if
 * any other source file does, so every movement of money has one place to read, log and measure.
 */
export interface LedgerMoney {
  /** Adds credit to an account (a top-up from outside money). Returns the new balance. */
  credit(accountId: string, micros: number, memo: string): Promise<Balance>;
  /** Claims the idempotency key, checks funds (and the daily cap) and takes the hold: one serialized write. */
  begin(req: BeginRequest): Promise<BeginResult>;
  /** Posts ≤ hold and records success; throws LedgerStateError if the hold was already resolved. */
  capture(callId: string, req: CaptureRequest): Promise<{ chargedMicros: number }>;
  /** Releases the hold and records failure; the idempotency key is released so a retry runs again. */
  void(callId: string, req: VoidRequest): Promise<void>;
  /**
   * Refunds the call that started job `handle` for this account, once: a compensating transfer back from
   * revenue, and the call's status becomes `refunded`. Returns what was refunded (0 if nothing was due).
   */
  refundJob(
    accountId: string,
    handle: string,
    reason: string,
  ): Promise<{ refundedMicros: number; callId?: string }>;
  /** Voids holds past their expiry and purges idempotency keys past their TTL. */
  sweep(now: number): Promise<SweepResult>;
  /** Voids every pending hold; used at start-up of a single-instance gateway, where any pending hold is orphaned. */
  voidAllPending(reason: string): Promise<number>;
}

export interface Ledger extends LedgerReads, LedgerAdmin, LedgerMoney {
  close(): Promise<void>;
}

/** Everything but the money methods: what the rest of the gateway is given. */
export type LedgerRecords = LedgerReads & LedgerAdmin;
