import { migrate, type SqliteDb } from '../lib/sqlite.js';

// What billing keeps besides the ledger (namespace "billing" in the gateway's database): which Stripe customer
// and card belong to an account, the Checkout sessions it started, the exact charge of each settlement (so a
// retry repeats it byte for byte under the same idempotency key), which payments reached which account (for
// refunds and disputes), and the webhook events already handled. No money is here: the ledger holds it.
// Every statement stands alone (better-sqlite3 is synchronous), so no transaction spans an await.

const BILLING_MIGRATIONS = [
  `
  CREATE TABLE billing_customers (
    account_id  TEXT PRIMARY KEY,
    customer_id TEXT NOT NULL UNIQUE,
    created_at  INTEGER NOT NULL
  );
  -- The card on file: the one settlements charge. Only what the dashboard shows, and the card's fingerprint.
  CREATE TABLE billing_cards (
    account_id     TEXT PRIMARY KEY,
    payment_method TEXT NOT NULL,
    fingerprint    TEXT NOT NULL,
    brand          TEXT NOT NULL,
    last4          TEXT NOT NULL,
    exp_month      INTEGER NOT NULL,
    exp_year       INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL
  );
  CREATE TABLE billing_sessions (
    id            TEXT PRIMARY KEY,
    account_id    TEXT NOT NULL,
    purpose       TEXT NOT NULL CHECK (purpose IN ('card', 'topup')),
    amount_micros INTEGER,
    status        TEXT NOT NULL CHECK (status IN ('open', 'complete', 'failed')),
    created_at    INTEGER NOT NULL,
    finished_at   INTEGER
  );
  CREATE INDEX billing_sessions_account ON billing_sessions(account_id, created_at DESC);
  -- The charge of a settlement, fixed at its first attempt: Stripe replays a request under the same idempotency
  -- key only if its parameters are the same, so a retry after an unknown outcome can never charge twice.
  CREATE TABLE billing_settlement_charges (
    movement_id    TEXT PRIMARY KEY,
    account_id     TEXT NOT NULL,
    customer_id    TEXT NOT NULL,
    payment_method TEXT NOT NULL,
    card_label     TEXT NOT NULL,
    amount_cents   INTEGER NOT NULL CHECK (amount_cents > 0),
    attempts       INTEGER NOT NULL DEFAULT 0,
    created_at     INTEGER NOT NULL
  );
  -- Payment intents whose money reached an account (top-ups, settlements): refunds and disputes name them.
  CREATE TABLE billing_payments (
    payment_intent TEXT PRIMARY KEY,
    account_id     TEXT NOT NULL,
    purpose        TEXT NOT NULL,
    created_at     INTEGER NOT NULL
  );
  -- Webhook events (Stripe delivers at least once). A row is claimed before an event is handled and marked when
  -- it was; a claim left unmarked by a crash is taken over after a minute.
  CREATE TABLE stripe_events (
    id          TEXT PRIMARY KEY,
    type        TEXT NOT NULL,
    received_at INTEGER NOT NULL,
    handled_at  INTEGER
  );
  CREATE TABLE billing_state (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
  );
  `,
];

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

const STALE_CLAIM_MS = 60_000;

export class BillingStore {
  private readonly s;

  constructor(db: SqliteDb) {
    migrate(db, 'billing', BILLING_MIGRATIONS);
    this.s = {
      customer: db.prepare<[string], { customer_id: string }>(
        'SELECT customer_id FROM billing_customers WHERE account_id = ?',
      ),
      accountOfCustomer: db.prepare<[string], { account_id: string }>(
        'SELECT account_id FROM billing_customers WHERE customer_id = ?',
      ),
      insCustomer: db.prepare(
        'INSERT INTO billing_customers (account_id, customer_id, created_at) VALUES (?, ?, ?) ON CONFLICT (account_id) DO NOTHING',
      ),
      card: db.prepare<[string], CardRow>('SELECT * FROM billing_cards WHERE account_id = ?'),
      putCard: db.prepare(
        `INSERT INTO billing_cards (account_id, payment_method, fingerprint, brand, last4, exp_month, exp_year, updated_at)
         VALUES (@account_id, @payment_method, @fingerprint, @brand, @last4, @exp_month, @exp_year, @updated_at)
         ON CONFLICT (account_id) DO UPDATE SET payment_method = excluded.payment_method, fingerprint = excluded.fingerprint,
           brand = excluded.brand, last4 = excluded.last4, exp_month = excluded.exp_month, exp_year = excluded.exp_year,
           updated_at = excluded.updated_at`,
      ),
      insSession: db.prepare(
        "INSERT INTO billing_sessions (id, account_id, purpose, amount_micros, status, created_at) VALUES (?, ?, ?, ?, 'open', ?)",
      ),
      session: db.prepare<[string], SessionRow>('SELECT * FROM billing_sessions WHERE id = ?'),
      sessionsOf: db.prepare<[string, number], SessionRow>(
        'SELECT * FROM billing_sessions WHERE account_id = ? ORDER BY created_at DESC LIMIT ?',
      ),
      finishSession: db.prepare(
        "UPDATE billing_sessions SET status = ?, finished_at = ? WHERE id = ? AND status = 'open'",
      ),
      charge: db.prepare<[string], SettlementChargeRow>(
        'SELECT * FROM billing_settlement_charges WHERE movement_id = ?',
      ),
      insCharge: db.prepare(
        `INSERT INTO billing_settlement_charges (movement_id, account_id, customer_id, payment_method, card_label, amount_cents, created_at)
         VALUES (@movement_id, @account_id, @customer_id, @payment_method, @card_label, @amount_cents, @created_at)
         ON CONFLICT (movement_id) DO NOTHING`,
      ),
      attempt: db.prepare(
        'UPDATE billing_settlement_charges SET attempts = attempts + 1 WHERE movement_id = ?',
      ),
      insPayment: db.prepare(
        'INSERT INTO billing_payments (payment_intent, account_id, purpose, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (payment_intent) DO NOTHING',
      ),
      payment: db.prepare<[string], { account_id: string; purpose: string }>(
        'SELECT account_id, purpose FROM billing_payments WHERE payment_intent = ?',
      ),
      event: db.prepare<[string], { received_at: number; handled_at: number | null }>(
        'SELECT received_at, handled_at FROM stripe_events WHERE id = ?',
      ),
      claimEvent: db.prepare(
        'INSERT INTO stripe_events (id, type, received_at) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING',
      ),
      takeOverEvent: db.prepare(
        'UPDATE stripe_events SET received_at = ? WHERE id = ? AND handled_at IS NULL AND received_at = ?',
      ),
      handledEvent: db.prepare('UPDATE stripe_events SET handled_at = ? WHERE id = ?'),
      releaseEvent: db.prepare('DELETE FROM stripe_events WHERE id = ? AND handled_at IS NULL'),
      state: db.prepare<[string], { value: string }>('SELECT value FROM billing_state WHERE name = ?'),
      setState: db.prepare(
        'INSERT INTO billing_state (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value',
      ),
    };
  }

  customerOf(accountId: string): string | undefined {
    return this.s.customer.get(accountId)?.customer_id;
  }

  accountOfCustomer(customerId: string): string | undefined {
    return this.s.accountOfCustomer.get(customerId)?.account_id;
  }

  /** Links a customer to an account; the first link wins (returns the customer that is linked). */
  linkCustomer(accountId: string, customerId: string, now: number): string {
    this.s.insCustomer.run(accountId, customerId, now);
    return this.customerOf(accountId) as string;
  }

  card(accountId: string): CardRow | undefined {
    return this.s.card.get(accountId);
  }

  putCard(card: CardRow): void {
    this.s.putCard.run(card);
  }

  addSession(
    id: string,
    accountId: string,
    purpose: SessionRow['purpose'],
    micros: number | null,
    now: number,
  ) {
    this.s.insSession.run(id, accountId, purpose, micros, now);
  }

  session(id: string): SessionRow | undefined {
    return this.s.session.get(id);
  }

  sessions(accountId: string, limit: number): SessionRow[] {
    return this.s.sessionsOf.all(accountId, limit);
  }

  finishSession(id: string, status: 'complete' | 'failed', now: number): void {
    this.s.finishSession.run(status, now, id);
  }

  settlementCharge(movementId: string): SettlementChargeRow | undefined {
    return this.s.charge.get(movementId);
  }

  /** Fixes a settlement's charge at its first attempt; returns the one that is fixed (maybe an earlier one). */
  fixSettlementCharge(row: Omit<SettlementChargeRow, 'attempts'>): SettlementChargeRow {
    this.s.insCharge.run(row);
    return this.s.charge.get(row.movement_id) as SettlementChargeRow;
  }

  countAttempt(movementId: string): void {
    this.s.attempt.run(movementId);
  }

  addPayment(paymentIntent: string, accountId: string, purpose: string, now: number): void {
    this.s.insPayment.run(paymentIntent, accountId, purpose, now);
  }

  paymentAccount(paymentIntent: string): string | undefined {
    return this.s.payment.get(paymentIntent)?.account_id;
  }

  /**
   * Claims a webhook event for handling: 'claimed' (handle it, then `eventHandled` or `releaseEvent`),
   * 'handled' (a duplicate: nothing to do) or 'busy' (another delivery is handling it right now).
   */
  claimEvent(id: string, type: string, now: number): 'claimed' | 'handled' | 'busy' {
    if (this.s.claimEvent.run(id, type, now).changes === 1) return 'claimed';
    const row = this.s.event.get(id);
    if (!row) return this.claimEvent(id, type, now);
    if (row.handled_at !== null) return 'handled';
    // A claim nobody finished for a minute was left by a crash: take it over (handlers are idempotent).
    if (
      now - row.received_at >= STALE_CLAIM_MS &&
      this.s.takeOverEvent.run(now, id, row.received_at).changes === 1
    ) {
      return 'claimed';
    }
    return 'busy';
  }

  eventHandled(id: string, now: number): void {
    this.s.handledEvent.run(now, id);
  }

  releaseEvent(id: string): void {
    this.s.releaseEvent.run(id);
  }

  state(name: string): string | undefined {
    return this.s.state.get(name)?.value;
  }

  setState(name: string, value: string): void {
    this.s.setState.run(name, value);
  }
}
