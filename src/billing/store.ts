import type { StateDb } from '../backend.js';
import type { EventClaim } from './event-claim.js';
import { PgBillingStore } from './store-pg.js';
import { SqliteBillingStore } from './store-sqlite.js';

// What billing keeps besides the ledger: which Stripe customer and card belong to an account, the Checkout
// sessions it started, the exact charge of each settlement (so a retry repeats it byte for byte under the same
// idempotency key), which payments reached which account (for refunds and disputes), and the webhook events
// already handled. No money is here: the ledger holds it. One interface, a SQLite and a PostgreSQL
// implementation; on PostgreSQL every replica shares it, so a webhook event is handled once by all of them.

export interface CardRow {
  account_id: string;
  payment_method: string;
  fingerprint: string;
  brand: string;
  last4: string;
  exp_month: number;
  exp_year: number;
  updated_at: number;
}

export interface SessionRow {
  id: string;
  account_id: string;
  purpose: 'card' | 'topup';
  amount_micros: number | null;
  status: 'open' | 'complete' | 'failed';
  created_at: number;
  finished_at: number | null;
}

export interface SettlementChargeRow {
  movement_id: string;
  account_id: string;
  customer_id: string;
  payment_method: string;
  card_label: string;
  amount_cents: number;
  attempts: number;
  created_at: number;
}

export interface BillingStore {
  customerOf(accountId: string): Promise<string | undefined>;
  accountOfCustomer(customerId: string): Promise<string | undefined>;
  /** Links a customer to an account; the first link wins (returns the customer that is linked). */
  linkCustomer(accountId: string, customerId: string, now: number): Promise<string>;
  card(accountId: string): Promise<CardRow | undefined>;
  putCard(card: CardRow): Promise<void>;
  addSession(
    id: string,
    accountId: string,
    purpose: SessionRow['purpose'],
    micros: number | null,
    now: number,
  ): Promise<void>;
  session(id: string): Promise<SessionRow | undefined>;
  sessions(accountId: string, limit: number): Promise<SessionRow[]>;
  /** Marks an open session finished (a finished one stays as it is). */
  finishSession(id: string, status: 'complete' | 'failed', now: number): Promise<void>;
  settlementCharge(movementId: string): Promise<SettlementChargeRow | undefined>;
  /** Fixes a settlement's charge at its first attempt; returns the one that is fixed (maybe an earlier one). */
  fixSettlementCharge(row: Omit<SettlementChargeRow, 'attempts'>): Promise<SettlementChargeRow>;
  countAttempt(movementId: string): Promise<void>;
  addPayment(paymentIntent: string, accountId: string, purpose: string, now: number): Promise<void>;
  paymentAccount(paymentIntent: string): Promise<string | undefined>;
  /**
   * Claims a webhook event for handling: 'claimed' (handle it, then `eventHandled` or `releaseEvent`),
   * 'handled' (a duplicate: nothing to do) or 'busy' (another delivery is handling it right now). Of concurrent
   * claims of one event (any replica), exactly one gets 'claimed'.
   */
  claimEvent(id: string, type: string, now: number): Promise<EventClaim>;
  eventHandled(id: string, now: number): Promise<void>;
  releaseEvent(id: string): Promise<void>;
  state(name: string): Promise<string | undefined>;
  setState(name: string, value: string): Promise<void>;
  /** Sets `name` to `value` only if it is still `expected` (undefined: unset); true when this call set it. */
  swapState(name: string, expected: string | undefined, value: string): Promise<boolean>;
}

export function openBillingStore(state: StateDb): BillingStore {
  return state.kind === 'sqlite' ? new SqliteBillingStore(state.db) : new PgBillingStore(state.pool);
}
