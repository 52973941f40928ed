import type { Logger } from 'pino';
import { type BillingConfig, STRIPE_MIN_CHARGE_MICROS } from '../config/index.js';
import type { Clock } from '../lib/clock.js';
import { formatUsd, MICROS_PER_CENT } from '../lib/money.js';
import type { Lifecycle } from '../run/lifecycle.js';
import type { BillingStore, SettlementChargeRow } from './store.js';
import { classifyStripeError, type StripeClient } from './stripe-client.js';

// The card settles only actual usage (docs/spec.md §5). A settlement reserves what an account drew on its line (whole
// cents, at most the line) in the ledger, then charges exactly that to the card on file, off-session, with the
// reservation's id as the idempotency key. Its parameters are fixed at the first attempt (store), so a retry
// after an unknown outcome sends the very same request and Stripe answers it instead of charging again.
//
//   paid            → the amount comes in from the card: the line is restored (and unfrozen)
//   declined        → the line is frozen with the reason; the account holder fixes the card on the dashboard
//   processing      → the webhook (payment_intent.succeeded / payment_failed) finishes it
//   no answer       → stays pending; the scheduler retries the same request (Stripe keeps keys 24 h)

export type Trigger = 'threshold' | 'schedule' | 'new_card' | 'account_holder' | 'retry';
export type SettleOutcome = 'nothing_due' | 'settled' | 'declined' | 'pending' | 'unknown';

export interface PaymentIntentLike {
  id: string;
  status: string;
  last_payment_error?: { code?: string | null; decline_code?: string | null } | null;
}

export interface SettlementDeps {
  stripe: StripeClient;
  store: BillingStore;
  money: Lifecycle;
  clock: Clock;
  log: Logger;
  config: BillingConfig;
}

/** Retries of an unknown outcome stop before Stripe forgets the idempotency key (24 h). */
const RETRY_WINDOW_MS = 23 * 3_600_000;

export class Settlements {
  constructor(private readonly d: SettlementDeps) {}

  /** Settles what the account drew, if enough is due for this trigger; returns what happened. */
  async settle(accountId: string, trigger: Trigger): Promise<SettleOutcome> {
    const min = trigger === 'threshold' ? this.d.config.settleThresholdMicros : STRIPE_MIN_CHARGE_MICROS;
    const start = await this.d.money.startSettlement({
      accountId,
      minMicros: Math.max(min, STRIPE_MIN_CHARGE_MICROS),
      stepMicros: MICROS_PER_CENT,
      memo: 'card charged for usage beyond the prepaid balance',
    });
    if (start.kind === 'nothing_due') return 'nothing_due';
    const charge = await this.chargeFor(start.movementId, accountId, start.micros);
    if (!charge) return 'declined';
    this.d.log.info(
      { account: accountId, txn: start.movementId, cents: charge.amount_cents, trigger },
      'settling',
    );
    return this.attempt(charge);
  }

  /** A pending settlement whose outcome was never learned: the same request again, within Stripe's window. */
  async retry(
    movementId: string,
    accountId: string,
    micros: number,
    startedAt: number,
  ): Promise<SettleOutcome> {
    const charge = await this.chargeFor(movementId, accountId, micros);
    if (!charge) return 'declined';
    if (this.d.clock.now() - startedAt > RETRY_WINDOW_MS) {
      // Only a webhook can finish it now; the operator sees it in the logs and in Stripe.
      this.d.log.error(
        { txn: movementId, account: accountId },
        'settlement outcome unknown for 23 h; waiting for Stripe',
      );
      return 'unknown';
    }
    return this.attempt(charge);
  }

  /** The card's answer for a settlement, however it arrived (the request's answer or a webhook). */
  async resolve(movementId: string, accountId: string, pi: PaymentIntentLike): Promise<SettleOutcome> {
    const charge = await this.d.store.settlementCharge(movementId);
    const label = charge?.card_label ?? 'card';
    const usd = charge ? formatUsd(charge.amount_cents * MICROS_PER_CENT) : 'the amount due';
    switch (pi.status) {
      case 'succeeded':
        await this.d.money.finishSettlement(movementId, { ok: true, externalRef: pi.id });
        await this.d.store.addPayment(pi.id, accountId, 'settlement', this.d.clock.now());
        return 'settled';
      case 'requires_payment_method':
      case 'canceled': {
        // An empty decline code (Stripe sends '' or none for, e.g., an expired card) falls back to the error code.
        const code = pi.last_payment_error?.decline_code || pi.last_payment_error?.code || 'card_declined';
        const reason = `the ${label} was declined (${code}) when charging ${usd} of usage`;
        await this.d.money.finishSettlement(movementId, { ok: false, reason, externalRef: pi.id });
        return 'declined';
      }
      case 'requires_action':
      case 'requires_confirmation': {
        const reason = `the ${label} asks for authentication, which a charge made while you are away cannot give (${usd} of usage)`;
        await this.d.money.finishSettlement(movementId, { ok: false, reason, externalRef: pi.id });
        return 'declined';
      }
      default:
        return 'pending'; // processing: the webhook finishes it
    }
  }

  /** The settlement's charge, fixed at its first attempt; none without a card on file: then it is declined. */
  private async chargeFor(
    movementId: string,
    accountId: string,
    micros: number,
  ): Promise<SettlementChargeRow | undefined> {
    const fixed = await this.d.store.settlementCharge(movementId);
    if (fixed) return fixed;
    const card = await this.d.store.card(accountId);
    const customer = await this.d.store.customerOf(accountId);
    if (!card || !customer) {
      await this.d.money.finishSettlement(movementId, { ok: false, reason: 'there is no card on file' });
      return undefined;
    }
    return this.d.store.fixSettlementCharge({
      movement_id: movementId,
      account_id: accountId,
      customer_id: customer,
      payment_method: card.payment_method,
      card_label: `${card.brand} card ending ${card.last4}`,
      amount_cents: Math.floor(micros / MICROS_PER_CENT),
      created_at: this.d.clock.now(),
    });
  }

  private async attempt(c: SettlementChargeRow): Promise<SettleOutcome> {
    await this.d.store.countAttempt(c.movement_id);
    try {
      const pi = await this.d.stripe.paymentIntents.create(
        {
          amount: c.amount_cents,
          currency: 'usd',
          customer: c.customer_id,
          payment_method: c.payment_method,
          // The saved card, charged while its holder is away (off_session: no return_url is needed). At the pinned
          // API version payment_method_types is refused (payment_method_types_no_longer_supported, 2026-09-30);
          // allowed_payment_method_types keeps the intent to cards whatever the Dashboard's payment method
          // settings say, as the Checkout session that saved the card does (docs/decisions.md).
          allowed_payment_method_types: ['card'],
          off_session: true,
          confirm: true,
          description: 'tollgate: usage beyond the prepaid balance',
          metadata: { tollgate_account: c.account_id, tollgate_settlement: c.movement_id },
        },
        { idempotencyKey: `tollgate-settlement-${c.movement_id}` },
      );
      return this.resolve(c.movement_id, c.account_id, pi);
    } catch (e) {
      const f = classifyStripeError(e);
      if (f.kind === 'unknown') {
        // An idempotency conflict included: another attempt with this key is in flight (its answer, or the
        // webhook, settles it), or the key went out with other parameters (a settlement started by an earlier
        // version): the charge may have been made, so it is never taken as a decline.
        this.d.log.warn(
          { txn: c.movement_id, error: f.code, err: e },
          'settlement outcome unknown; will retry',
        );
        return 'unknown';
      }
      if (f.kind === 'invalid')
        this.d.log.error({ txn: c.movement_id, code: f.code, err: e }, 'Stripe refused a settlement');
      const usd = formatUsd(c.amount_cents * MICROS_PER_CENT);
      const reason =
        f.kind === 'card'
          ? `the ${c.card_label} was declined (${f.code}) when charging ${usd} of usage`
          : `the ${c.card_label} could not be charged (${f.code}) for ${usd} of usage`;
      await this.d.money.finishSettlement(c.movement_id, {
        ok: false,
        reason,
        externalRef: f.kind === 'card' ? f.paymentIntent : undefined,
      });
      return 'declined';
    }
  }
}
