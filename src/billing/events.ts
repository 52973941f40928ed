import type { Logger } from 'pino';
import type Stripe from 'stripe';
import type { BillingConfig } from '../config/index.js';
import type { LedgerRecords } from '../ledger/types.js';
import type { Clock } from '../lib/clock.js';
import { MICROS_PER_CENT } from '../lib/money.js';
import type { Lifecycle } from '../run/lifecycle.js';
import { idOf, reversalHandlers } from './reversals.js';
import type { Settlements } from './settle.js';
import type { BillingStore } from './store.js';
import type { StripeClient } from './stripe-client.js';

// What each verified webhook event does. Every handler is idempotent on its own (the ledger moves money once per
// outside reference, a line is granted once, a settlement resolves once), so a duplicate, a replay or an event
// that arrives out of order changes nothing; the event-id table in front of it only saves the work. Objects whose
// state matters (a payment intent) are read back from Stripe rather than taken from the event's snapshot.

export interface EventDeps {
  stripe: StripeClient;
  store: BillingStore;
  ledger: LedgerRecords;
  money: Lifecycle;
  settlements: Settlements;
  clock: Clock;
  log: Logger;
  config: BillingConfig;
}

/** Every event `handle` acts on (the operator registers these: .env.example, docs/operator.md; a test checks). */
export const HANDLED_EVENTS: readonly Stripe.Event.Type[] = [
  'checkout.session.completed',
  'checkout.session.async_payment_succeeded',
  'checkout.session.async_payment_failed',
  'checkout.session.expired',
  'payment_intent.succeeded',
  'payment_intent.payment_failed',
  'payment_intent.canceled',
  'refund.created',
  'refund.updated',
  'refund.failed',
  'charge.refund.updated',
  'charge.dispute.created',
  'charge.dispute.updated',
  'charge.dispute.funds_withdrawn',
  'charge.dispute.funds_reinstated',
  'charge.dispute.closed',
];

export function eventHandler(d: EventDeps) {
  const { onRefund, onDispute } = reversalHandlers(d);

  async function onSession(s: Stripe.Checkout.Session): Promise<void> {
    const row = await d.store.session(s.id);
    if (!row) {
      d.log.warn({ session: s.id }, 'webhook for a Checkout session tollgate did not start; ignored');
      return;
    }
    if (s.status !== 'complete') return;
    if (row.purpose === 'card') return onCardSaved(row.account_id, s);
    if (s.payment_status !== 'paid') return; // an asynchronous method: checkout.session.async_payment_succeeded
    if (s.currency !== 'usd' || s.amount_total === null) {
      d.log.error({ session: s.id, currency: s.currency }, 'top-up in an unexpected currency; not credited');
      return;
    }
    const pi = idOf(s.payment_intent);
    // Credited once per session, whatever arrives how often (the ledger's outside reference is the session).
    await d.money.cardMoney({
      accountId: row.account_id,
      kind: 'topup',
      micros: s.amount_total * MICROS_PER_CENT,
      externalRef: s.id,
      memo: 'top-up by card',
      meta: { checkout_session: s.id, ...(pi ? { payment_intent: pi } : {}) },
    });
    if (pi) await d.store.addPayment(pi, row.account_id, 'topup', d.clock.now());
    await d.store.finishSession(s.id, 'complete', d.clock.now());
  }

  async function onCardSaved(accountId: string, s: Stripe.Checkout.Session): Promise<void> {
    const setupIntent = idOf(s.setup_intent);
    if (!setupIntent) return;
    const seti = await d.stripe.setupIntents.retrieve(setupIntent, { expand: ['payment_method'] });
    const pm = seti.payment_method as Stripe.PaymentMethod | string | null;
    if (seti.status !== 'succeeded' || !pm || typeof pm === 'string' || !pm.card?.fingerprint) {
      d.log.warn({ session: s.id, status: seti.status }, 'saved payment method is not a usable card');
      await d.store.finishSession(s.id, 'failed', d.clock.now());
      return;
    }
    const card = pm.card;
    const previous = await d.store.card(accountId);
    await d.store.putCard({
      account_id: accountId,
      payment_method: pm.id,
      fingerprint: card.fingerprint as string,
      brand: card.brand,
      last4: card.last4,
      exp_month: card.exp_month,
      exp_year: card.exp_year,
      updated_at: d.clock.now(),
    });
    const customer = idOf(s.customer);
    if (customer) {
      // For the operator's view in Stripe; settlements name the payment method themselves.
      await d.stripe.customers
        .update(customer, { invoice_settings: { default_payment_method: pm.id } })
        .catch((err: unknown) => d.log.warn({ err, customer }, 'could not set the default payment method'));
    }
    if (d.config.welcomeLineMicros > 0) {
      const grant = await d.money.grantLine(
        accountId,
        d.config.welcomeLineMicros,
        card.fingerprint as string,
      );
      if (grant.kind === 'card_has_line') {
        d.log.info({ account: accountId }, 'card already gave another account its line; no second line');
      }
    }
    await d.store.finishSession(s.id, 'complete', d.clock.now());
    // A new card is how a frozen line is fixed: settle what is drawn with it, or unfreeze if nothing is.
    const line = await d.ledger.creditLine(accountId);
    if (line.frozen && previous?.payment_method !== pm.id) {
      const outcome = await d.settlements.settle(accountId, 'new_card');
      if (outcome === 'nothing_due' && line.settling === null) await d.money.unfreezeLine(accountId);
    }
  }

  /** A top-up paid by a delayed method that failed: nothing is credited; the account holder is told (alerts). */
  async function onPaymentFailed(s: Stripe.Checkout.Session): Promise<void> {
    await d.store.finishSession(s.id, 'failed', d.clock.now());
    const row = await d.store.session(s.id);
    if (row?.purpose !== 'topup') return;
    await d.money.topUpFailed(row.account_id, s.id, row.amount_micros, 'the payment failed');
  }

  async function onPaymentIntent(snapshot: Stripe.PaymentIntent): Promise<void> {
    const movementId = snapshot.metadata?.tollgate_settlement;
    const accountId = snapshot.metadata?.tollgate_account;
    if (!movementId || !accountId) return; // a top-up's payment: its Checkout session carries it
    const m = await d.ledger.getMovement(movementId);
    if (m?.kind !== 'settlement' || m.account_id !== accountId) {
      d.log.warn({ txn: movementId, pi: snapshot.id }, 'payment intent names no settlement of ours; ignored');
      return;
    }
    const fresh = await d.stripe.paymentIntents.retrieve(snapshot.id);
    await d.settlements.resolve(movementId, accountId, fresh);
  }

  return async function handle(event: Stripe.Event): Promise<void> {
    switch (event.type) {
      case 'checkout.session.completed':
      case 'checkout.session.async_payment_succeeded':
        return onSession(event.data.object);
      case 'checkout.session.async_payment_failed':
        return onPaymentFailed(event.data.object);
      case 'checkout.session.expired':
        return d.store.finishSession(event.data.object.id, 'failed', d.clock.now());
      case 'payment_intent.succeeded':
      case 'payment_intent.payment_failed':
      case 'payment_intent.canceled':
        return onPaymentIntent(event.data.object);
      // A refund's life (src/billing/reversals.ts): created (succeeded or pending), then possibly failed or
      // cancelled, reported by each of these; charge.refunded carries the charge, not the refund, and is not needed.
      case 'refund.created':
      case 'refund.updated':
      case 'refund.failed':
      case 'charge.refund.updated':
        return onRefund(event.data.object);
      // Any change of a dispute: it is read back from Stripe and its money reconciled.
      case 'charge.dispute.created':
      case 'charge.dispute.updated':
      case 'charge.dispute.funds_withdrawn':
      case 'charge.dispute.funds_reinstated':
      case 'charge.dispute.closed':
        return onDispute(event.data.object);
      default:
        return; // not one tollgate acts on (charge.succeeded, setup_intent.succeeded, …)
    }
  };
}
