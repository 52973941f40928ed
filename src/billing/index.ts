import type { Router } from 'express';
import type { Logger } from 'pino';
import type Stripe from 'stripe';
import type { StateDb } from '../backend.js';
import type { BillingConfig, StripeConfig } from '../config/index.js';
import { GatewayError } from '../errors.js';
import type { LedgerRecords } from '../ledger/types.js';
import type { Clock } from '../lib/clock.js';
import { formatUsd, MICROS_PER_CENT } from '../lib/money.js';
import type { Lifecycle } from '../run/lifecycle.js';
import { eventHandler } from './events.js';
import { SettlementScheduler } from './scheduler.js';
import { Settlements, type SettleOutcome } from './settle.js';
import { type CardRow, openBillingStore, type SessionRow } from './store.js';
import { classifyStripeError, createStripeClient, type StripeClient } from './stripe-client.js';
import { webhookRoutes } from './webhook.js';

// Card payments through Stripe (docs/decisions.md "Card payments and the credit line"): a card on file through
// Checkout in setup mode (its confirmation grants the welcome credit line), top-ups through Checkout in payment
// mode, settlements of the line charged off-session, and the webhook that confirms all of it. Every movement of
// money goes through the lifecycle (src/run/lifecycle.ts); this module only talks to Stripe and keeps its ids.

export interface BillingDeps {
  config: BillingConfig;
  stripe: StripeConfig;
  /** Where billing's own records live (SQLite, or the PostgreSQL every replica shares). */
  state: StateDb;
  ledger: LedgerRecords;
  money: Lifecycle;
  clock: Clock;
  log: Logger;
  publicUrl: () => string;
  /** Tests hand in a client of their own; by default one is made from `stripe`. */
  client?: StripeClient;
}

export interface Billing {
  /** The webhook endpoint (mounted by the composition root). */
  routes: Router;
  limits: { topUpMinMicros: number; topUpMaxMicros: number; welcomeLineMicros: number };
  card(accountId: string): Promise<CardRow | undefined>;
  sessions(accountId: string, limit: number): Promise<SessionRow[]>;
  session(sessionId: string): Promise<SessionRow | undefined>;
  /** Starts Checkout in setup mode; returns the URL to send the browser to. */
  startCardSetup(accountId: string): Promise<string>;
  /** Starts Checkout in payment mode for `micros` (whole cents within the limits). */
  startTopUp(accountId: string, micros: number): Promise<string>;
  /** Charges what the account drew on its line now (the account holder's "pay now"). */
  settleNow(accountId: string): Promise<SettleOutcome>;
  scheduler: SettlementScheduler;
  close(): Promise<void>;
}

export async function createBilling(d: BillingDeps): Promise<Billing> {
  const stripe = d.client ?? (await createStripeClient(d.stripe));
  const store = openBillingStore(d.state);
  const settlements = new Settlements({
    stripe,
    store,
    money: d.money,
    clock: d.clock,
    log: d.log,
    config: d.config,
  });
  const { ledger, money, clock, log, config } = d;
  const handle = eventHandler({ stripe, store, settlements, ledger, money, clock, log, config });
  const scheduler = new SettlementScheduler({ ledger, settlements, store, clock, log, config });
  await scheduler.init();
  const returnUrl = () => `${d.publicUrl()}/account/checkout/return?session_id={CHECKOUT_SESSION_ID}`;
  const cancelUrl = () => `${d.publicUrl()}/account?checkout=cancelled`;

  /** Stripe could not be asked: the dashboard says so; nothing changed. */
  const unreachable = (err: unknown, what: string) => {
    const f = classifyStripeError(err);
    d.log.error({ err, code: f.code }, `Stripe: could not ${what}`);
    return new GatewayError(
      'upstream_unavailable',
      `The payment processor could not ${what} right now. Try again.`,
      { retryAfterSeconds: 5 },
    );
  };

  async function customerOf(accountId: string): Promise<string> {
    const known = await store.customerOf(accountId);
    if (known) return known;
    const account = await d.ledger.getAccount(accountId);
    // The idempotency key makes two concurrent first payments of one account share one customer.
    const c = await stripe.customers.create(
      { name: account?.name ?? undefined, metadata: { tollgate_account: accountId } },
      { idempotencyKey: `tollgate-customer-${accountId}` },
    );
    return store.linkCustomer(accountId, c.id, d.clock.now());
  }

  /** Opens Checkout (setup mode for a card, payment mode for a top-up) and records its session; returns its URL. */
  async function checkout(
    accountId: string,
    purpose: SessionRow['purpose'],
    micros: number | null,
    what: string,
    params: Stripe.Checkout.SessionCreateParams,
  ): Promise<string> {
    try {
      const customer = await customerOf(accountId);
      const s = await stripe.checkout.sessions.create({
        mode: purpose === 'card' ? 'setup' : 'payment',
        customer,
        allowed_payment_method_types: ['card'],
        client_reference_id: accountId,
        ...params,
        success_url: returnUrl(),
        cancel_url: cancelUrl(),
      });
      await store.addSession(s.id, accountId, purpose, micros, d.clock.now());
      return s.url as string;
    } catch (err) {
      throw unreachable(err, what);
    }
  }

  return {
    routes: webhookRoutes({
      stripe,
      secret: d.stripe.webhookSecret,
      store,
      clock: d.clock,
      log: d.log,
      handle,
    }),
    limits: {
      topUpMinMicros: d.config.topUpMinMicros,
      topUpMaxMicros: d.config.topUpMaxMicros,
      welcomeLineMicros: d.config.welcomeLineMicros,
    },
    card: (accountId) => store.card(accountId),
    sessions: (accountId, limit) => store.sessions(accountId, limit),
    session: (id) => store.session(id),
    scheduler,

    startCardSetup: (accountId) =>
      checkout(accountId, 'card', null, 'start saving a card', {
        metadata: { tollgate_account: accountId, tollgate_purpose: 'card' },
        setup_intent_data: {
          metadata: { tollgate_account: accountId },
          description: 'tollgate: card on file, charged only for usage beyond the prepaid balance',
        },
      }),

    async startTopUp(accountId, micros) {
      const { topUpMinMicros: min, topUpMaxMicros: max } = d.config;
      if (!Number.isSafeInteger(micros) || micros % MICROS_PER_CENT !== 0 || micros < min || micros > max) {
        throw new GatewayError(
          'invalid_input',
          `A top-up is between ${formatUsd(min)} and ${formatUsd(max)}, in whole cents.`,
          { details: { issues: [{ path: 'amount_usd', message: 'out of range' }] } },
        );
      }
      return checkout(accountId, 'topup', micros, 'start a top-up', {
        line_items: [
          {
            quantity: 1,
            price_data: {
              currency: 'usd',
              unit_amount: micros / MICROS_PER_CENT,
              product_data: { name: 'tollgate prepaid credit' },
            },
          },
        ],
        payment_intent_data: {
          metadata: { tollgate_account: accountId, tollgate_purpose: 'topup' },
          description: 'tollgate prepaid credit',
        },
        metadata: { tollgate_account: accountId, tollgate_purpose: 'topup' },
      });
    },

    settleNow: (accountId) => settlements.settle(accountId, 'account_holder'),

    async close() {
      await scheduler.stop();
    },
  };
}

export type { SettleOutcome } from './settle.js';
export type { CardRow, SessionRow } from './store.js';
