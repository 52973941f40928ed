import type { Selectable } from 'kysely';
import type { StateDb } from '../backend.js';
import type { Database, StoreDb } from '../db/schema.js';
import { insertIfAbsent, readNamed } from '../db/secrets.js';

/** A Stripe webhook event's claim (Stripe delivers at least once, and to any replica): see claimEvent. */
export type EventClaim = 'claimed' | 'handled' | 'busy';

/** A claim left unmarked this long was left by a crash: the next delivery takes it over (handlers are idempotent). */
const STALE_CLAIM_MS = 60_000;

// What billing keeps besides the ledger: which Stripe customer and card belong to an account, the Checkout
// sessions it started, the exact charge of each settlement (so a retry repeats it byte for byte under the same
// idempotency key), which payments reached which account (for refunds and disputes), and the webhook events
// already handled. No money is here: the ledger holds it. On PostgreSQL every replica shares it, so a webhook
// event is handled once by all of them. Each method is one autocommit statement, or a read after an idempotent
// one; first-writer-wins rows use ON CONFLICT DO NOTHING, which under concurrent inserts of one key lets exactly
// one through (on PostgreSQL the others wait for its commit, then do nothing; SQLite has one writer).

// The rows are the tables' (src/db/schema.ts).
export type CardRow = Database['billing_cards'];
export type SessionRow = Database['billing_sessions'];
export type SettlementChargeRow = Selectable<Database['billing_settlement_charges']>;

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
  return new SqlBillingStore(state.stores);
}

class SqlBillingStore implements BillingStore {
  constructor(private readonly db: StoreDb) {}

  async customerOf(accountId: string): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('billing_customers')
      .select('customer_id')
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return row?.customer_id;
  }

  async accountOfCustomer(customerId: string): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('billing_customers')
      .select('account_id')
      .where('customer_id', '=', customerId)
      .executeTakeFirst();
    return row?.account_id;
  }

  async linkCustomer(accountId: string, customerId: string, now: number): Promise<string> {
    await this.db
      .insertInto('billing_customers')
      .values({ account_id: accountId, customer_id: customerId, created_at: now })
      .onConflict((oc) => oc.column('account_id').doNothing())
      .execute();
    return (await this.customerOf(accountId)) as string;
  }

  card(accountId: string): Promise<CardRow | undefined> {
    return this.db
      .selectFrom('billing_cards')
      .selectAll()
      .where('account_id', '=', accountId)
      .executeTakeFirst();
  }

  async putCard(card: CardRow): Promise<void> {
    const { account_id: _, ...rest } = card;
    await this.db
      .insertInto('billing_cards')
      .values(card)
      .onConflict((oc) => oc.column('account_id').doUpdateSet(rest))
      .execute();
  }

  async addSession(
    id: string,
    accountId: string,
    purpose: SessionRow['purpose'],
    micros: number | null,
    now: number,
  ): Promise<void> {
    await this.db
      .insertInto('billing_sessions')
      .values({ id, account_id: accountId, purpose, amount_micros: micros, status: 'open', created_at: now })
      .execute();
  }

  session(id: string): Promise<SessionRow | undefined> {
    return this.db.selectFrom('billing_sessions').selectAll().where('id', '=', id).executeTakeFirst();
  }

  sessions(accountId: string, limit: number): Promise<SessionRow[]> {
    return this.db
      .selectFrom('billing_sessions')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('created_at', 'desc')
      .limit(limit)
      .execute();
  }

  async finishSession(id: string, status: 'complete' | 'failed', now: number): Promise<void> {
    await this.db
      .updateTable('billing_sessions')
      .set({ status, finished_at: now })
      .where('id', '=', id)
      .where('status', '=', 'open')
      .execute();
  }

  settlementCharge(movementId: string): Promise<SettlementChargeRow | undefined> {
    return this.db
      .selectFrom('billing_settlement_charges')
      .selectAll()
      .where('movement_id', '=', movementId)
      .executeTakeFirst();
  }

  async fixSettlementCharge(row: Omit<SettlementChargeRow, 'attempts'>): Promise<SettlementChargeRow> {
    await this.db
      .insertInto('billing_settlement_charges')
      .values(row)
      .onConflict((oc) => oc.column('movement_id').doNothing())
      .execute();
    return (await this.settlementCharge(row.movement_id)) as SettlementChargeRow;
  }

  async countAttempt(movementId: string): Promise<void> {
    await this.db
      .updateTable('billing_settlement_charges')
      .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
      .where('movement_id', '=', movementId)
      .execute();
  }

  async addPayment(paymentIntent: string, accountId: string, purpose: string, now: number): Promise<void> {
    await this.db
      .insertInto('billing_payments')
      .values({ payment_intent: paymentIntent, account_id: accountId, purpose, created_at: now })
      .onConflict((oc) => oc.column('payment_intent').doNothing())
      .execute();
  }

  async paymentAccount(paymentIntent: string): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('billing_payments')
      .select('account_id')
      .where('payment_intent', '=', paymentIntent)
      .executeTakeFirst();
    return row?.account_id;
  }

  async claimEvent(id: string, type: string, now: number): Promise<EventClaim> {
    const inserted = await this.db
      .insertInto('stripe_events')
      .values({ id, type, received_at: now, handled_at: null })
      .onConflict((oc) => oc.column('id').doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1) return 'claimed';
    const row = await this.db
      .selectFrom('stripe_events')
      .select(['received_at', 'handled_at'])
      .where('id', '=', id)
      .executeTakeFirst();
    // Released between our insert and this read: try again.
    if (!row) return this.claimEvent(id, type, now);
    if (row.handled_at !== null) return 'handled';
    // A claim nobody finished for a minute was left by a crash: take it over (handlers are idempotent). The
    // update names the claim it read, so of replicas taking over at once only one matches.
    if (now - row.received_at >= STALE_CLAIM_MS) {
      const taken = await this.db
        .updateTable('stripe_events')
        .set({ received_at: now })
        .where('id', '=', id)
        .where('handled_at', 'is', null)
        .where('received_at', '=', row.received_at)
        .executeTakeFirst();
      if (Number(taken.numUpdatedRows) === 1) return 'claimed';
    }
    return 'busy';
  }

  async eventHandled(id: string, now: number): Promise<void> {
    await this.db.updateTable('stripe_events').set({ handled_at: now }).where('id', '=', id).execute();
  }

  async releaseEvent(id: string): Promise<void> {
    await this.db.deleteFrom('stripe_events').where('id', '=', id).where('handled_at', 'is', null).execute();
  }

  state(name: string): Promise<string | undefined> {
    return readNamed(this.db, 'billing_state', name);
  }

  async setState(name: string, value: string): Promise<void> {
    await this.db
      .insertInto('billing_state')
      .values({ name, value })
      .onConflict((oc) => oc.column('name').doUpdateSet({ value }))
      .execute();
  }

  async swapState(name: string, expected: string | undefined, value: string): Promise<boolean> {
    if (expected === undefined) return insertIfAbsent(this.db, 'billing_state', name, value);
    const r = await this.db
      .updateTable('billing_state')
      .set({ value })
      .where('name', '=', name)
      .where('value', '=', expected)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }
}
