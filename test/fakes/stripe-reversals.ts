import type { FakeState } from './stripe.js';
import { invalid, type Json, StripeApiError, stripeId } from './stripe-wire.js';

// Money going back to the card holder, as Stripe moves and reports it (for the fake):
//
// Refunds: created `succeeded` or `pending` (refund.created, charge.refunded); a pending one later succeeds
// (refund.updated, charge.refund.updated); either may fail (`failed`, with a failure_reason such as
// expired_or_canceled_card: charge.refund.updated, refund.updated, refund.failed) or be cancelled
// (charge.refund.updated, refund.updated). A charge under a chargeback cannot be refunded; a full refund during an
// inquiry closes the inquiry (warning_closed, charge.dispute.closed).
//
// Disputes: an inquiry (warning_needs_response → warning_under_review → warning_closed) withdraws nothing
// (`balance_transactions: []`); a chargeback (needs_response → under_review → won | lost) withdraws the disputed
// amount at once (charge.dispute.created, charge.dispute.funds_withdrawn); an inquiry can turn into one
// (charge.dispute.updated, charge.dispute.funds_withdrawn). Won: the funds are reinstated (charge.dispute.closed,
// charge.dispute.funds_reinstated). Lost on a payment partly refunded before: the refunded part is reinstated
// (Stripe shows it "partially won"). The fee Stripe charges the operator is on the withdrawal's balance transaction.

export interface Reversals {
  refund(
    paymentIntentId: string,
    amountCents?: number,
    opts?: { status?: 'succeeded' | 'pending' },
  ): Promise<Json>;
  /** A pending refund went through. */
  settleRefund(refundId: string): Promise<Json>;
  /** The card issuer sent the refund back (or it was cancelled before it went out). */
  failRefund(refundId: string, opts?: { reason?: string; status?: 'failed' | 'canceled' }): Promise<Json>;
  /** The payer disputes a payment: a chargeback, or an inquiry first. */
  dispute(paymentIntentId: string, opts?: { inquiry?: boolean }): Promise<Json>;
  /** The issuer turns an inquiry into a chargeback. */
  escalateDispute(disputeId: string): Promise<Json>;
  closeDispute(disputeId: string, status: 'won' | 'lost' | 'warning_closed'): Promise<Json>;
}

const INQUIRY = new Set(['warning_needs_response', 'warning_under_review']);
const OPEN_CHARGEBACK = new Set(['needs_response', 'under_review']);
const DISPUTE_FEE = 1500;

export function reversals(
  s: FakeState,
  get: (prefix: string, what: string, id: string) => Json,
  put: (o: Json) => Json,
): Reversals {
  const chargeOf = (pi: Json) => get('ch', 'charge', pi.latest_charge as string);
  const disputeOf = (ch: Json): Json | undefined =>
    typeof ch.dispute === 'string' ? s.objects.get(ch.dispute) : undefined;

  function txn(dp: Json, amount: number, reinstated: boolean): Json {
    const fee = reinstated ? 0 : DISPUTE_FEE;
    return {
      id: stripeId('txn'),
      object: 'balance_transaction',
      amount,
      currency: 'usd',
      fee,
      net: amount - fee,
      type: 'adjustment',
      reporting_category: reinstated ? 'dispute_reversal' : 'dispute',
      description: `${reinstated ? 'Chargeback reversal' : 'Chargeback withdrawal'} for ${dp.charge as string}`,
      source: dp.id,
      status: 'pending',
      created: s.now(),
    };
  }

  async function withdraw(dp: Json): Promise<void> {
    (dp.balance_transactions as Json[]).push(txn(dp, -(dp.amount as number), false));
    dp.is_charge_refundable = false;
    await s.emit('charge.dispute.funds_withdrawn', dp);
  }

  async function reinstate(dp: Json, amount: number): Promise<void> {
    if (amount <= 0) return;
    (dp.balance_transactions as Json[]).push(txn(dp, amount, true));
    await s.emit('charge.dispute.funds_reinstated', dp);
  }

  return {
    async refund(paymentIntentId, amountCents, opts = {}) {
      const pi = get('pi', 'payment_intent', paymentIntentId);
      const ch = chargeOf(pi);
      const open = disputeOf(ch);
      if (open && (OPEN_CHARGEBACK.has(open.status as string) || open.status === 'lost'))
        throw new StripeApiError(400, {
          type: 'invalid_request_error',
          code: 'charge_disputed',
          message: `Charge ${ch.id as string} has been charged back; cannot issue a refund.`,
        });
      const amount = amountCents ?? (ch.amount as number) - (ch.amount_refunded as number);
      if (amount <= 0 || (ch.amount_refunded as number) + amount > (ch.amount as number))
        throw invalid('amount', 'Refund exceeds the charge.');
      const re = put({
        id: stripeId('re'),
        object: 'refund',
        amount,
        charge: ch.id,
        payment_intent: pi.id,
        currency: 'usd',
        status: opts.status ?? 'succeeded',
        ...(opts.status === 'pending' ? { pending_reason: 'insufficient_funds' } : {}),
        failure_reason: null,
        balance_transaction: stripeId('txn'),
        created: s.now(),
      });
      ch.amount_refunded = (ch.amount_refunded as number) + amount;
      ch.refunded = ch.amount_refunded === ch.amount;
      await s.emit('refund.created', re);
      await s.emit('charge.refunded', ch);
      // Refunding in full resolves an inquiry: the card issuer closes it.
      if (open && INQUIRY.has(open.status as string) && ch.refunded) {
        Object.assign(open, { status: 'warning_closed', is_charge_refundable: false });
        await s.emit('charge.dispute.closed', open);
      }
      return re;
    },

    async settleRefund(refundId) {
      const re = get('re', 'refund', refundId);
      if (re.status !== 'pending') throw invalid('refund', 'Only a pending refund can succeed.');
      Object.assign(re, { status: 'succeeded', pending_reason: null });
      await s.emit('charge.refund.updated', re);
      await s.emit('refund.updated', re);
      return re;
    },

    async failRefund(refundId, opts = {}) {
      const re = get('re', 'refund', refundId);
      const status = opts.status ?? 'failed';
      if (re.status === 'failed' || re.status === 'canceled')
        throw invalid('refund', `The refund is already ${re.status as string}.`);
      const ch = get('ch', 'charge', re.charge as string);
      ch.amount_refunded = (ch.amount_refunded as number) - (re.amount as number);
      ch.refunded = false;
      Object.assign(re, {
        status,
        pending_reason: null,
        failure_reason: status === 'failed' ? (opts.reason ?? 'expired_or_canceled_card') : null,
        failure_balance_transaction: stripeId('txn'),
      });
      await s.emit('charge.refund.updated', re);
      await s.emit('refund.updated', re);
      if (status === 'failed') await s.emit('refund.failed', re);
      return re;
    },

    async dispute(paymentIntentId, opts = {}) {
      const pi = get('pi', 'payment_intent', paymentIntentId);
      const ch = chargeOf(pi);
      if (ch.refunded)
        throw invalid('charge', 'Disputes and chargebacks are not possible on a fully refunded charge.');
      const dp = put({
        id: stripeId('dp'),
        object: 'dispute',
        amount: ch.amount,
        charge: ch.id,
        payment_intent: pi.id,
        currency: 'usd',
        reason: opts.inquiry ? 'general' : 'fraudulent',
        status: opts.inquiry ? 'warning_needs_response' : 'needs_response',
        balance_transactions: [],
        is_charge_refundable: Boolean(opts.inquiry),
        livemode: false,
        metadata: {},
        created: s.now(),
      });
      Object.assign(ch, { disputed: true, dispute: dp.id });
      await s.emit('charge.dispute.created', dp);
      if (!opts.inquiry) await withdraw(dp);
      return dp;
    },

    async escalateDispute(disputeId) {
      const dp = get('dp', 'dispute', disputeId);
      if (!INQUIRY.has(dp.status as string)) throw invalid('dispute', 'Only an open inquiry escalates.');
      dp.status = 'needs_response';
      await s.emit('charge.dispute.updated', dp);
      await withdraw(dp);
      return dp;
    },

    async closeDispute(disputeId, status) {
      const dp = get('dp', 'dispute', disputeId);
      const inquiry = INQUIRY.has(dp.status as string);
      if (inquiry !== (status === 'warning_closed'))
        throw invalid('status', `A dispute in ${dp.status as string} does not close as ${status}.`);
      dp.status = status;
      dp.is_charge_refundable = false;
      await s.emit('charge.dispute.closed', dp);
      if (status === 'won') await reinstate(dp, dp.amount as number);
      if (status === 'lost') {
        // Disputed in full after a partial refund: only the refunded part comes back ("partially won").
        const ch = get('ch', 'charge', dp.charge as string);
        await reinstate(dp, Math.min(ch.amount_refunded as number, dp.amount as number));
      }
      return dp;
    },
  };
}
