import type { PgPool } from '../pg/pool.js';
import { type EventClaim, STALE_CLAIM_MS } from './event-claim.js';
import type { BillingStore, CardRow, SessionRow, SettlementChargeRow } from './store.js';

// The billing store in PostgreSQL, shared by every replica (schema: src/pg/migrations/sign-in.ts). Each method
// is one autocommit statement, or a read after an idempotent one; first-writer-wins rows use ON CONFLICT DO
// NOTHING, which under concurrent inserts of one key lets exactly one through (the others wait for its commit,
// then do nothing). That is what makes a webhook event's claim hold across replicas.

export class PgBillingStore implements BillingStore {
  constructor(private readonly pool: PgPool) {}

  private async rows<R extends object>(name: string, text: string, values: unknown[]): Promise<R[]> {
    return (await this.pool.query<R>({ name, text, values })).rows;
  }

  private async one<R extends object>(name: string, text: string, values: unknown[]): Promise<R | undefined> {
    return (await this.rows<R>(name, text, values))[0];
  }

  private async run(name: string, text: string, values: unknown[]): Promise<number> {
    return (await this.pool.query({ name, text, values })).rowCount ?? 0;
  }

  async customerOf(accountId: string): Promise<string | undefined> {
    return (
      await this.one<{ customer_id: string }>(
        'billing-customer',
        'SELECT customer_id FROM billing_customers WHERE account_id = $1',
        [accountId],
      )
    )?.customer_id;
  }

  async accountOfCustomer(customerId: string): Promise<string | undefined> {
    return (
      await this.one<{ account_id: string }>(
        'billing-account-of-customer',
        'SELECT account_id FROM billing_customers WHERE customer_id = $1',
        [customerId],
      )
    )?.account_id;
  }

  async linkCustomer(accountId: string, customerId: string, now: number): Promise<string> {
    await this.run(
      'billing-link-customer',
      'INSERT INTO billing_customers (account_id, customer_id, created_at) VALUES ($1, $2, $3) ON CONFLICT (account_id) DO NOTHING',
      [accountId, customerId, now],
    );
    return (await this.customerOf(accountId)) as string;
  }

  async card(accountId: string): Promise<CardRow | undefined> {
    return this.one<CardRow>('billing-card', 'SELECT * FROM billing_cards WHERE account_id = $1', [
      accountId,
    ]);
  }

  async putCard(c: CardRow): Promise<void> {
    await this.run(
      'billing-put-card',
      `INSERT INTO billing_cards (account_id, payment_method, fingerprint, brand, last4, exp_month, exp_year, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (account_id) DO UPDATE SET payment_method = excluded.payment_method, fingerprint = excluded.fingerprint,
         brand = excluded.brand, last4 = excluded.last4, exp_month = excluded.exp_month, exp_year = excluded.exp_year,
         updated_at = excluded.updated_at`,
      [
        c.account_id,
        c.payment_method,
        c.fingerprint,
        c.brand,
        c.last4,
        c.exp_month,
        c.exp_year,
        c.updated_at,
      ],
    );
  }

  async addSession(
    id: string,
    accountId: string,
    purpose: SessionRow['purpose'],
    micros: number | null,
    now: number,
  ): Promise<void> {
    await this.run(
      'billing-add-session',
      "INSERT INTO billing_sessions (id, account_id, purpose, amount_micros, status, created_at) VALUES ($1, $2, $3, $4, 'open', $5)",
      [id, accountId, purpose, micros, now],
    );
  }

  async session(id: string): Promise<SessionRow | undefined> {
    return this.one<SessionRow>('billing-session', 'SELECT * FROM billing_sessions WHERE id = $1', [id]);
  }

  async sessions(accountId: string, limit: number): Promise<SessionRow[]> {
    return this.rows<SessionRow>(
      'billing-sessions-of',
      'SELECT * FROM billing_sessions WHERE account_id = $1 ORDER BY created_at DESC LIMIT $2',
      [accountId, limit],
    );
  }

  async finishSession(id: string, status: 'complete' | 'failed', now: number): Promise<void> {
    await this.run(
      'billing-finish-session',
      "UPDATE billing_sessions SET status = $1, finished_at = $2 WHERE id = $3 AND status = 'open'",
      [status, now, id],
    );
  }

  async settlementCharge(movementId: string): Promise<SettlementChargeRow | undefined> {
    return this.one<SettlementChargeRow>(
      'billing-charge',
      'SELECT * FROM billing_settlement_charges WHERE movement_id = $1',
      [movementId],
    );
  }

  async fixSettlementCharge(row: Omit<SettlementChargeRow, 'attempts'>): Promise<SettlementChargeRow> {
    await this.run(
      'billing-fix-charge',
      `INSERT INTO billing_settlement_charges (movement_id, account_id, customer_id, payment_method, card_label, amount_cents, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (movement_id) DO NOTHING`,
      [
        row.movement_id,
        row.account_id,
        row.customer_id,
        row.payment_method,
        row.card_label,
        row.amount_cents,
        row.created_at,
      ],
    );
    return (await this.settlementCharge(row.movement_id)) as SettlementChargeRow;
  }

  async countAttempt(movementId: string): Promise<void> {
    await this.run(
      'billing-count-attempt',
      'UPDATE billing_settlement_charges SET attempts = attempts + 1 WHERE movement_id = $1',
      [movementId],
    );
  }

  async addPayment(paymentIntent: string, accountId: string, purpose: string, now: number): Promise<void> {
    await this.run(
      'billing-add-payment',
      'INSERT INTO billing_payments (payment_intent, account_id, purpose, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT (payment_intent) DO NOTHING',
      [paymentIntent, accountId, purpose, now],
    );
  }

  async paymentAccount(paymentIntent: string): Promise<string | undefined> {
    return (
      await this.one<{ account_id: string }>(
        'billing-payment',
        'SELECT account_id FROM billing_payments WHERE payment_intent = $1',
        [paymentIntent],
      )
    )?.account_id;
  }

  async claimEvent(id: string, type: string, now: number): Promise<EventClaim> {
    const inserted = await this.run(
      'billing-claim-event',
      'INSERT INTO stripe_events (id, type, received_at) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING',
      [id, type, now],
    );
    if (inserted === 1) return 'claimed';
    const row = await this.one<{ received_at: number; handled_at: number | null }>(
      'billing-event',
      'SELECT received_at, handled_at FROM stripe_events WHERE id = $1',
      [id],
    );
    // Released between our insert and this read: try again.
    if (!row) return this.claimEvent(id, type, now);
    if (row.handled_at !== null) return 'handled';
    // A claim nobody finished for a minute was left by a crash: take it over (handlers are idempotent). The
    // update names the claim it read, so of replicas taking over at once only one matches.
    if (now - row.received_at >= STALE_CLAIM_MS) {
      const taken = await this.run(
        'billing-take-over-event',
        'UPDATE stripe_events SET received_at = $1 WHERE id = $2 AND handled_at IS NULL AND received_at = $3',
        [now, id, row.received_at],
      );
      if (taken === 1) return 'claimed';
    }
    return 'busy';
  }

  async eventHandled(id: string, now: number): Promise<void> {
    await this.run('billing-event-handled', 'UPDATE stripe_events SET handled_at = $1 WHERE id = $2', [
      now,
      id,
    ]);
  }

  async releaseEvent(id: string): Promise<void> {
    await this.run(
      'billing-release-event',
      'DELETE FROM stripe_events WHERE id = $1 AND handled_at IS NULL',
      [id],
    );
  }

  async state(name: string): Promise<string | undefined> {
    return (
      await this.one<{ value: string }>('billing-state', 'SELECT value FROM billing_state WHERE name = $1', [
        name,
      ])
    )?.value;
  }

  async setState(name: string, value: string): Promise<void> {
    await this.run(
      'billing-set-state',
      'INSERT INTO billing_state (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = excluded.value',
      [name, value],
    );
  }

  async swapState(name: string, expected: string | undefined, value: string): Promise<boolean> {
    if (expected === undefined) {
      return (
        (await this.run(
          'billing-init-state',
          'INSERT INTO billing_state (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING',
          [name, value],
        )) === 1
      );
    }
    return (
      (await this.run(
        'billing-swap-state',
        'UPDATE billing_state SET value = $1 WHERE name = $2 AND value = $3',
        [value, name, expected],
      )) === 1
    );
  }
}
