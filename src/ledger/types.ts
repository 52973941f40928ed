import type {
  AdjustRequest,
  AdjustResult,
  ChargeRefundRequest,
  ChargeRefundResult,
} from './operator-types.js';

export type { AdjustRequest, AdjustResult, ChargeRefundRequest, ChargeRefundResult };

// The ledger's narrow, async interface. SQLite is the embedded default; a Postgres implementation plugs in
// behind the same interface (async so that callers need not change).
//
// Invariants (each has a test in test/unit/ledger*.test.ts):
// - available = balance − held + usable credit line ≥ 0 for customer accounts, checked and reserved in one
//   serialized write (the line is usable unless frozen); the balance never goes below minus the line;
// - a hold resolves exactly once (posted, voided or expired) and posts at most its amount;
// - entries are append-only and sum to zero across accounts (double entry);
// - one idempotency key per account runs at most one call; a finished call is replayed, never re-charged;
// - every hold expires; the sweeper voids expired holds, also after a crash;
// - money from outside moves once per outside reference, and a reversal undoes its debit at most once, in
//   whichever order the two arrive; a line is granted once per account and once per card;
// - one settlement of a line is in flight per account, and it resolves once.

export type AccountKind = 'customer' | 'system' | 'x402';

export interface AccountRow {
  id: string;
  name: string | null;
  kind: AccountKind;
  /** Posted balance; below zero by what a customer has drawn on its credit line. */
  balance_micros: number;
  held_micros: number;
  created_at: number;
  /** The credit line granted (0: none). */
  credit_line_micros: number;
  line_frozen_at: number | null;
  line_frozen_reason: string | null;
}

export interface Balance {
  balance_micros: number;
  held_micros: number;
  /** What a new hold may take: balance − held + the credit line unless it is frozen. */
  available_micros: number;
}

/** An account's credit line (docs/spec.md §5): usage beyond the prepaid balance, settled by the card on file. */
export interface CreditLine {
  /** The line granted; 0 when the account has none. */
  limit_micros: number;
  /** Usage not yet settled: max(0, −balance). */
  drawn_micros: number;
  /** Why the line is frozen (no new hold may draw on it), or null. */
  frozen: { at: number; reason: string } | null;
  granted_at: number | null;
  /** The settlement in flight, if any. */
  settling: { movement_id: string; micros: number } | null;
}

/**
 * Money that moved without a call (operator credits, card top-ups, settlements, refunds, disputes, grants), and
 * the operator's own: `call_refund` (all or part of a call's charge given back, linked to the call) and
 * `adjustment` (a signed correction of a balance, with its reason).
 */
export type MovementKind =
  | 'credit'
  | 'topup'
  | 'settlement'
  | 'refund'
  | 'refund_reversal'
  | 'dispute'
  | 'dispute_reversal'
  | 'line'
  | 'call_refund'
  | 'adjustment';

export interface MovementRow {
  id: string;
  account_id: string;
  kind: MovementKind;
  /** Signed: + into the account, − out of it. A pending or failed settlement has moved nothing yet. */
  amount_micros: number;
  status: 'pending' | 'succeeded' | 'failed';
  memo: string | null;
  /** The outside reference it moved once for (a Checkout session, a PaymentIntent, a refund, a dispute). */
  external_ref: string | null;
  created_at: number;
  finished_at: number | null;
  meta: Record<string, unknown> | null;
}

/** What an account spent per UTC day and service (the part of an action id before the slash). */
export interface UsageRow {
  /** YYYY-MM-DD (UTC). */
  day: string;
  service: string;
  /** Charged minus refunded. */
  micros: number;
  calls: number;
}

/**
 * What an account spent per principal in a time range: who presented the credential (the API key's id for an
 * API-key call, `oauth:<client>` for an app, `x402:<payer>`), so spend per key and per team member is read here.
 */
export interface PrincipalSpendRow {
  principal: string | null;
  /** Charged minus refunded. */
  micros: number;
  calls: number;
}

/** A window of time, ms since the epoch: from inclusive, to exclusive. */
export interface TimeRange {
  fromMs?: number | undefined;
  toMs?: number | undefined;
}

/**
 * What an API key may spend and call (docs/operator.md "Limits per API key"). Every field is optional: null is no
 * limit. The daily and monthly limits are caps in UTC windows, checked with the hold (SpendCap, scope
 * `key:<key id>`); the maximum per call and the allowed actions are checked before it (src/run/spend-limits.ts).
 */
export interface KeyLimits {
  /** The most one call may hold (a flat price; a metered call's worst case), micro-USD. */
  max_call_micros: number | null;
  /** What the key may spend (charged plus held) per UTC day, micro-USD. */
  daily_limit_micros: number | null;
  /** … per UTC calendar month. */
  monthly_limit_micros: number | null;
  /** The services (`scraperA`, `llm` for the model router) and actions (`scraperA/scrape`) it may call. */
  actions: string[] | null;
}

export const NO_KEY_LIMITS: KeyLimits = Object.freeze({
  max_call_micros: null,
  daily_limit_micros: null,
  monthly_limit_micros: null,
  actions: null,
}) as KeyLimits;

export interface ApiKeyRow extends KeyLimits {
  id: string;
  account_id: string;
  /** First characters of the key, for display (`tg_sk_ab12…`). */
  prefix: string;
  name: string | null;
  created_at: number;
  revoked_at: number | null;
}

/** A key with what it spent: net of refunds, calls that succeeded, by the UTC day and month they started in. */
export interface KeyUsage extends ApiKeyRow {
  /** The UTC day (YYYY-MM-DD) and month (YYYY-MM) the figures are for: the ledger clock's current ones. */
  day: string;
  month: string;
  spent_today_micros: number;
  spent_month_micros: number;
}

/** A spending cap's window: a UTC calendar day or a UTC calendar month. */
export type CapWindow = 'day' | 'month';

/**
 * A cap on what (part of) an account may spend in a UTC window, counting what is charged and what is held: checked
 * and reserved in the same serialized write as the hold, so parallel calls never pass it. A hold counts against
 * the window it was admitted in; what its capture does not use, and what a refund gives back, comes off that
 * window's counter.
 */
export interface SpendCap {
  /**
   * Whose spend it counts, with a counter of its own: '' the whole account (the model router's inference cap),
   * `key:<key id>` one API key, `oauth:<client id>` one OAuth app.
   */
  scope: string;
  window: CapWindow;
  limitMicros: number;
}

export type PaymentMethod = 'api_key' | 'oauth' | 'x402';

export interface CallRow {
  id: string;
  account_id: string;
  action: string;
  price_micros: number;
  hold_micros: number;
  charged_micros: number;
  /** `refunded` once all it was charged is given back; a partly refunded call stays `succeeded`. */
  status: 'pending' | 'succeeded' | 'failed' | 'refunded';
  /** Everything given back so far, ≤ charged_micros: refunds of failed work and the operator's refunds. */
  refunded_micros: number;
  /** The part of refunded_micros the operator gave back: each such refund is its own `call_refund` movement. */
  operator_refunded_micros: number;
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
   * Caps checked together with the hold, in its one serialized write: the model router's daily inference cap, an
   * API key's daily and monthly limits, an OAuth app's daily limit. Each (scope, window) appears at most once.
   */
  caps?: readonly SpendCap[] | undefined;
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
  | {
      kind: 'insufficient';
      availableMicros: number;
      requiredMicros: number;
      /** Set when the account has a credit line that is frozen: why (so the refusal can say where to fix it). */
      lineFrozen?: { reason: string };
    }
  /** A cap would be passed: the first one (in the request's order), what it has counted, and when it resets. */
  | { kind: 'cap_reached'; cap: SpendCap; spentMicros: number; resetsAt: number };

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
  /**
   * PostgreSQL: pending holds of other replicas whose lease expired (crashed or hung), voided with
   * `orphaned_by_replica`. Absent on SQLite (one process: its start-up voids them all, voidAllPending).
   */
  orphanedHolds?: number;
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
  /** Calls, newest first, optionally within a time range (by start). */
  transactions(accountId: string, limit: number, range?: TimeRange): Promise<CallRow[]>;
  /** Money that moved without a call, newest first, optionally within a time range. */
  movements(accountId: string, limit: number, range?: TimeRange): Promise<MovementRow[]>;
  getMovement(id: string): Promise<MovementRow | undefined>;
  /** The movement recorded for an outside reference, if any. */
  movementByRef(kind: MovementKind, externalRef: string): Promise<MovementRow | undefined>;
  creditLine(accountId: string): Promise<CreditLine>;
  /** Customers with a usable (unfrozen) line that have drawn at least `minDrawnMicros`, most drawn first. */
  drawnAccounts(
    minDrawnMicros: number,
    limit: number,
  ): Promise<Array<{ account_id: string; drawn_micros: number }>>;
  /** Settlements still pending that started before `startedBefore` (an outcome never learned). */
  pendingSettlements(startedBefore: number, limit: number): Promise<MovementRow[]>;
  /** Spend per UTC day and service in a time range (calls that succeeded, net of refunds). */
  usageByDay(accountId: string, range: TimeRange): Promise<UsageRow[]>;
  /**
   * What counts against a spending cap in its current window (by the ledger's clock), as the cap is checked:
   * spend captured plus holds in flight; the scope's counter (SpendCap: '' the account, `key:<key id>`,
   * `oauth:<client id>`). The alerts' cap crossings read it.
   */
  capSpend(accountId: string, scope: string, window: CapWindow): Promise<number>;
  /** Spend per principal in a time range (calls that succeeded, net of refunds): per key, per app. */
  spendByPrincipal(accountId: string, range: TimeRange): Promise<PrincipalSpendRow[]>;
  /** The calls these principals made (a team member's keys), newest first, optionally within a time range. */
  transactionsOf(
    accountId: string,
    principals: readonly string[],
    limit: number,
    range?: TimeRange,
  ): Promise<CallRow[]>;
  /** `usageByDay` of these principals' calls only (a team member's own usage). */
  usageByDayOf(accountId: string, principals: readonly string[], range: TimeRange): Promise<UsageRow[]>;
  /**
   * Every key of the account (revoked ones too, oldest first) with its limits and what it spent today and this
   * month (UTC, by the ledger's clock): calls that succeeded, net of refunds. Holds in flight are not in it (the
   * caps count them too). For the dashboard, `keys list` and spend alerts.
   */
  keyUsage(accountId: string): Promise<KeyUsage[]>;
}

/** A key to record: its hash and display prefix (never the key itself), name and limits. */
export interface NewApiKey {
  accountId: string;
  hash: string;
  prefix: string;
  name?: string | null;
  limits?: Partial<KeyLimits>;
}

/** Accounts and keys: records that move no money. */
export interface LedgerAdmin {
  createAccount(input: { name?: string | null; kind?: AccountKind; id?: string }): Promise<AccountRow>;
  insertApiKey(input: NewApiKey): Promise<ApiKeyRow>;
  revokeApiKey(id: string): Promise<boolean>;
  /**
   * Changes an active key's limits (a field absent: unchanged; null: removed). A daily or monthly limit that is set
   * starts from what the key already spent in the current window (its recorded charges), not from zero. Applies at
   * once in this process (its key cache forgets the key), within the cache's bound elsewhere. Returns the key as
   * it now is, or undefined when there is no such active key.
   */
  setApiKeyLimits(id: string, changes: Partial<KeyLimits>): Promise<ApiKeyRow | undefined>;
}

/** Money from or back to outside, recorded once per outside reference. */
export interface ExternalRequest {
  accountId: string;
  /**
   * `topup` brings money in. `refund` and `dispute` take it back out, but never more than the prepaid balance
   * still free of holds: the rest is recorded as unrecovered (the operator's loss), so a balance never goes below
   * what the line covers and a line never pays for a refund. `refund_reversal` (a refund that failed or was
   * cancelled) and `dispute_reversal` (funds reinstated) undo the debit of the same reference: they give back
   * what the outside returned less what the debit could not take, never more than it took. A reversal that
   * arrives before its debit records nothing moved and stops that debit for good (`reversed`), so the order in
   * which the outside reports them does not matter.
   */
  kind: 'topup' | 'refund' | 'refund_reversal' | 'dispute' | 'dispute_reversal';
  /** The amount the outside moved, > 0 (for a reversal: what the outside returned). */
  micros: number;
  externalRef: string;
  memo: string;
  meta?: Record<string, unknown>;
}

export type ExternalResult =
  | { kind: 'recorded'; movementId: string; movedMicros: number; unrecoveredMicros: number; balance: Balance }
  | { kind: 'duplicate'; movementId: string }
  /** A debit whose reversal was recorded first (`movementId`): the outside undid it already; nothing moves. */
  | { kind: 'reversed'; movementId: string };

export interface GrantLineRequest {
  accountId: string;
  micros: number;
  /** The card's fingerprint (the same card on two accounts has the same one). */
  cardFingerprint: string;
  memo: string;
}

export type GrantLineResult =
  | { kind: 'granted'; movementId: string }
  | { kind: 'account_has_line' }
  | { kind: 'card_has_line' };

export interface SettlementRequest {
  accountId: string;
  /** Nothing is started below this amount (a threshold; the card network's smallest charge). */
  minMicros: number;
  /** The amount is rounded down to a multiple of this (a cent: cards are charged in cents). */
  stepMicros: number;
  memo: string;
}

export type SettlementStart =
  | { kind: 'started'; movementId: string; micros: number }
  /** One is already in flight (for the amount it reserved). */
  | { kind: 'pending'; movementId: string; micros: number }
  | { kind: 'nothing_due'; drawnMicros: number };

export type SettlementOutcome =
  | { ok: true; externalRef: string }
  | { ok: false; reason: string; externalRef?: string | undefined };

export type SettlementResult =
  | { kind: 'settled'; micros: number }
  | { kind: 'failed' }
  | { kind: 'already'; status: 'succeeded' | 'failed' };

/**
 * The money methods. Only the lifecycle (src/run/lifecycle.ts) calls them; test/contract/money.test.ts fails if
 * any other source file does, so every movement of money has one place to read, log and measure.
 */
export interface LedgerMoney {
  /** Adds credit to an account (a top-up from outside money). Returns the new balance. */
  credit(accountId: string, micros: number, memo: string): Promise<Balance>;
  /** Claims the idempotency key, checks funds (and the caps) and takes the hold: one serialized write. */
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
  /**
   * Gives a call back what it was charged and not yet refunded, once: a compensating transfer back from revenue,
   * and the call's status becomes `refunded`. Returns what was refunded (0 if nothing was due).
   */
  refundCall(callId: string, reason: string): Promise<{ refundedMicros: number }>;
  /**
   * The operator's refund of all or part of a call's charge: a transfer back from revenue recorded as a
   * `call_refund` movement linked to the call, in one serialized write that checks what is left, so refunds of
   * one call never give back more than it was charged in total, whatever runs at once (replicas included).
   */
  refundCharge(req: ChargeRefundRequest): Promise<ChargeRefundResult>;
  /**
   * The operator's correction of a customer's balance, either way, as an `adjustment` movement (against
   * sys_funding). A debit never takes what pending holds need: balance − held + usable line stays ≥ 0.
   */
  adjust(req: AdjustRequest): Promise<AdjustResult>;
  /** Voids holds past their expiry and purges idempotency keys past their TTL. */
  sweep(now: number): Promise<SweepResult>;
  /**
   * Voids the pending holds no live process will resolve; used at start-up. SQLite (one process): every pending
   * hold. PostgreSQL (replicas share the ledger): only this replica's holds (a previous run with the same id)
   * and those of replicas whose lease has expired, never a live replica's.
   */
  voidAllPending(reason: string): Promise<number>;
  /** Money from or back to outside (card top-ups, refunds, disputes, their reversals), once per (kind, externalRef). */
  recordExternal(req: ExternalRequest): Promise<ExternalResult>;
  /** Grants a credit line: once per account and once per card fingerprint. Moves no money. */
  grantCreditLine(req: GrantLineRequest): Promise<GrantLineResult>;
  /** Freezes the line (no new hold draws on it) with a reason, or unfreezes it (null). */
  freezeCreditLine(accountId: string, reason: string | null): Promise<void>;
  /**
   * Reserves what the account has drawn on its line (at most the line, rounded down to `stepMicros`) for one
   * charge of its card: a pending settlement, one per account. Moves no money until it is finished.
   */
  beginSettlement(req: SettlementRequest): Promise<SettlementStart>;
  /**
   * Resolves a settlement: on success the charged amount comes in from the card (restoring the line, and
   * unfreezing it); on failure the line is frozen with the reason. A success reported after a failure still
   * records the money (it moved); anything reported after a success changes nothing.
   */
  finishSettlement(movementId: string, outcome: SettlementOutcome): Promise<SettlementResult>;
}

export interface Ledger extends LedgerReads, LedgerAdmin, LedgerMoney {
  /**
   * Resolves when the ledger can take a durable write again (SQLite: a no-op write made durable; PostgreSQL: the
   * server answers). The database-outage probe (src/run/db-health.ts).
   */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Everything but the money methods: what the rest of the gateway is given. */
export type LedgerRecords = LedgerReads & LedgerAdmin;
