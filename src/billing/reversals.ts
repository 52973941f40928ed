import type Stripe from 'stripe';
import { MICROS_PER_CENT } from '../lib/money.js';
import type { EventDeps } from './events.js';

// Card money going back to the card holder, as Stripe reports it (docs/decisions.md, "Stripe as it reports money").
//
// Refunds: a refund debits the account when Stripe reports it succeeded or pending (a pending refund is
// committed: Stripe only holds it until its balance covers it), and is given back, once, when Stripe reports it
// failed or cancelled (`charge.refund.updated`, `refund.updated`, `refund.failed`). The events come in any order
// and concurrently; the ledger pairs the debit and its reversal under the account lock, so a failure seen first
// stops the debit (src/ledger/card-money.ts). The event's refund is used as it is: its status only moves forward
// (pending → succeeded → failed, or → cancelled) and both outcomes are recorded once, so a stale snapshot cannot
// change the result.
//
// Disputes: the dispute is read back from Stripe and its money is what Stripe moved: the funds withdrawn from and
// reinstated to the Stripe balance (`balance_transactions`, at most one of each). An inquiry (`warning_*`)
// withdraws nothing: it moves no money and leaves the line alone. A chargeback whose withdrawal is not listed yet
// (`needs_response`, `under_review`, `lost`, `won`, appeals) is taken at once for its amount. Reinstated funds
// (won, or "partially won": a partly refunded payment disputed in full is lost except for the refunded part) are
// given back once. An open or lost chargeback freezes the line.

/** Statuses of a formal chargeback: Stripe withdraws the disputed amount (an inquiry is `warning_*`). */
const CHARGEBACK = new Set([
  'needs_response',
  'under_review',
  'won',
  'lost',
  'appeal_needs_response',
  'appeal_under_review',
]);

/** The id of a Stripe field that is an id or, expanded, its object. */
export const idOf = (v: string | { id: string } | null | undefined): string | undefined =>
  typeof v === 'string' ? v : (v?.id ?? undefined);

export interface DisputeMoney {
  /** What Stripe withdrew for the dispute, in cents. */
  withdrawn: number;
  /** What Stripe reinstated, in cents. */
  reinstated: number;
}

/**
 * The money a dispute moved, from its balance transactions (gross amounts; Stripe's fee is its own business with
 * the operator), or from its status while the withdrawal is not listed. Balance transactions in another currency
 * than the dispute's (a Stripe account settling in another currency) cannot be compared to it: then the status
 * decides alone.
 */
export function disputeMoney(dp: Stripe.Dispute): DisputeMoney {
  const txns = dp.balance_transactions ?? [];
  const comparable = txns.every((t) => t.currency === dp.currency);
  const byTxn = { withdrawn: 0, reinstated: 0 };
  if (comparable) {
    for (const t of txns) {
      if (t.amount < 0) byTxn.withdrawn -= t.amount;
      else byTxn.reinstated += t.amount;
    }
  }
  const withdrawn = Math.max(byTxn.withdrawn, CHARGEBACK.has(dp.status) ? dp.amount : 0);
  // A won dispute gives everything back, whether or not its reinstatement is listed yet.
  const reinstated = Math.min(withdrawn, Math.max(byTxn.reinstated, dp.status === 'won' ? withdrawn : 0));
  return { withdrawn, reinstated };
}

export function reversalHandlers(d: EventDeps) {
  /** The account a payment reached: from our own record, else the payment intent's metadata we set. */
  async function accountOfPayment(pi: string | undefined): Promise<string | undefined> {
    if (!pi) return undefined;
    const known = await d.store.paymentAccount(pi);
    if (known) return known;
    const fresh = await d.stripe.paymentIntents.retrieve(pi);
    const account = fresh.metadata?.tollgate_account;
    return account && (await d.ledger.getAccount(account)) ? account : undefined;
  }

  async function onRefund(r: Stripe.Refund): Promise<void> {
    const pi = idOf(r.payment_intent);
    const accountId = await accountOfPayment(pi);
    if (!accountId)
      return void d.log.warn({ refund: r.id }, 'refund of a payment tollgate does not know; ignored');
    if (r.currency !== 'usd')
      return void d.log.error({ refund: r.id, currency: r.currency }, 'refund in an unexpected currency');
    const undone = r.status === 'failed' || r.status === 'canceled';
    const why = r.failure_reason ? ` (${r.failure_reason})` : '';
    await d.money.cardMoney({
      accountId,
      kind: undone ? 'refund_reversal' : 'refund',
      micros: r.amount * MICROS_PER_CENT,
      externalRef: r.id,
      memo: undone ? `card refund ${r.status}${why}: given back` : 'card payment refunded',
      meta: {
        refund: r.id,
        payment_intent: pi,
        status: r.status,
        ...(r.failure_reason ? { failure_reason: r.failure_reason } : {}),
      },
    });
  }

  async function onDispute(snapshot: Stripe.Dispute): Promise<void> {
    const dp = await d.stripe.disputes.retrieve(snapshot.id);
    const pi = idOf(dp.payment_intent);
    const accountId = await accountOfPayment(pi);
    if (!accountId)
      return void d.log.warn({ dispute: dp.id }, 'dispute of a payment tollgate does not know; ignored');
    if (dp.currency !== 'usd')
      return void d.log.error({ dispute: dp.id, currency: dp.currency }, 'dispute in an unexpected currency');
    const { withdrawn, reinstated } = disputeMoney(dp);
    if (withdrawn === 0) {
      // An inquiry (or a dispute prevented before it became a chargeback): Stripe took nothing.
      d.log.info(
        { dispute: dp.id, status: dp.status, account: accountId },
        'dispute inquiry; no money moved',
      );
      return;
    }
    const meta = { dispute: dp.id, payment_intent: pi, reason: dp.reason, status: dp.status };
    // The debit first, then its reversal, from one reading of the dispute: the reversal always finds the debit.
    await d.money.cardMoney({
      accountId,
      kind: 'dispute',
      micros: withdrawn * MICROS_PER_CENT,
      externalRef: dp.id,
      memo: 'card payment disputed',
      meta,
    });
    if (reinstated > 0) {
      await d.money.cardMoney({
        accountId,
        kind: 'dispute_reversal',
        micros: reinstated * MICROS_PER_CENT,
        externalRef: dp.id,
        memo: dp.status === 'won' ? 'card dispute won' : 'card dispute funds reinstated',
        meta,
      });
    }
    if (withdrawn > reinstated) await d.money.freezeLine(accountId, 'a card payment was disputed');
  }

  return { onRefund, onDispute };
}
