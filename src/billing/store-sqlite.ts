import { migrate, type SqliteDb } from '../lib/sqlite.js';
import { type EventClaim, STALE_CLAIM_MS } from './event-claim.js';
import type { BillingStore, CardRow, SessionRow, SettlementChargeRow } from './store.js';

// The billing store in the gateway's SQLite database (namespace "billing"). Every statement stands alone
// (better-sqlite3 is synchronous), so no transaction spans an await.

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

export class SqliteBillingStore implements BillingStore {
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
      insState: db.prepare(
        'INSERT INTO billing_state (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING',
      ),
      swapState: db.prepare('UPDATE billing_state SET value = ? WHERE name = ? AND value = ?'),
    };
  }

  async customerOf(accountId: string): Promise<string | undefined> {
    return this.s.customer.get(accountId)?.customer_id;
  }

  async accountOfCustomer(customerId: string): Promise<string | undefined> {
    return this.s.accountOfCustomer.get(customerId)?.account_id;
  }

  async linkCustomer(accountId: string, customerId: string, now: number): Promise<string> {
    this.s.insCustomer.run(accountId, customerId, now);
    return (await this.customerOf(accountId)) as string;
  }

  async card(accountId: string): Promise<CardRow | undefined> {
    return this.s.card.get(accountId);
  }

  async putCard(card: CardRow): Promise<void> {
    this.s.putCard.run(card);
  }

  async addSession(
    id: string,
    accountId: string,
    purpose: SessionRow['purpose'],
    micros: number | null,
    now: number,
  ): Promise<void> {
    this.s.insSession.run(id, accountId, purpose, micros, now);
  }

  async session(id: string): Promise<SessionRow | undefined> {
    return this.s.session.get(id);
  }

  async sessions(accountId: string, limit: number): Promise<SessionRow[]> {
    return this.s.sessionsOf.all(accountId, limit);
  }

  async finishSession(id: string, status: 'complete' | 'failed', now: number): Promise<void> {
    this.s.finishSession.run(status, now, id);
  }

  async settlementCharge(movementId: string): Promise<SettlementChargeRow | undefined> {
    return this.s.charge.get(movementId);
  }

  async fixSettlementCharge(row: Omit<SettlementChargeRow, 'attempts'>): Promise<SettlementChargeRow> {
    this.s.insCharge.run(row);
    return this.s.charge.get(row.movement_id) as SettlementChargeRow;
  }

  async countAttempt(movementId: string): Promise<void> {
    this.s.attempt.run(movementId);
  }

  async addPayment(paymentIntent: string, accountId: string, purpose: string, now: number): Promise<void> {
    this.s.insPayment.run(paymentIntent, accountId, purpose, now);
  }

  async paymentAccount(paymentIntent: string): Promise<string | undefined> {
    return this.s.payment.get(paymentIntent)?.account_id;
  }

  async claimEvent(id: string, type: string, now: number): Promise<EventClaim> {
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

  async eventHandled(id: string, now: number): Promise<void> {
    this.s.handledEvent.run(now, id);
  }

  async releaseEvent(id: string): Promise<void> {
    this.s.releaseEvent.run(id);
  }

  async state(name: string): Promise<string | undefined> {
    return this.s.state.get(name)?.value;
  }

  async setState(name: string, value: string): Promise<void> {
    this.s.setState.run(name, value);
  }

  async swapState(name: string, expected: string | undefined, value: string): Promise<boolean> {
    if (expected === undefined) return this.s.insState.run(name, value).changes === 1;
    return this.s.swapState.run(value, name, expected).changes === 1;
  }
}
