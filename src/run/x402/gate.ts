import type {
  PaymentPayload,
  PaymentRequired,
  PaymentRequirements,
  ResourceInfo,
  SettleResponse,
} from '@x402/core/types';
import { getAddress } from 'viem';
import type { Action } from '../../../catalog/index.js';
import type { X402Config } from '../../config/index.js';
import { GatewayError } from '../../errors.js';
import type { Envelope, Failed, Outcome, RunDeps } from '../execute.js';
import { NO_RAILS, type RailPayment, type Transport, withParts } from '../rails.js';
import { withOfferReceipt } from '../standard-receipts.js';
import { ensureX402Account, x402AccountId } from './accounts.js';
import type { DecodedPayment } from './codec.js';
import { causeForLog, type Facilitator, verifyUnavailable } from './facilitator.js';
import type { Refusal } from './local-check.js';
import type { PaymentStore } from './payment-store.js';
import type { Offer } from './requirements.js';

// One reserved x402 payment paying for one call: the RailPayment that execute drives (authorize before the hold,
// collect after the handler succeeded, finish with the outcome: the payment record's fate and the door's parts).
//
// Money rule: settle only after success (unless the action settles first, by configuration), never settle
// twice, and never ask for a second payment when the outcome of a settlement is unknown.

export interface X402Deps {
  config: X402Config;
  facilitator: Facilitator;
  payments: PaymentStore;
}

export interface Quote {
  action: Action;
  transport: Transport;
  offer: Offer;
  /** What the payment pays for (`resource` of the challenge): the action's URL, or `mcp://tool/{name}`. */
  resource: ResourceInfo;
  /** Builds the challenge (with the reason a payment was refused). */
  challenge(error: string): PaymentRequired;
}

type State =
  | 'reserved' // claimed, nothing asked yet
  | 'refused' // the facilitator said invalid
  | 'unavailable' // the facilitator could not answer verify
  | 'verified' // verified and funded provisionally; the action may run
  | 'prepaid' // settled before running (upfront)
  | 'settled'
  | 'settle_failed'
  | 'unknown';

/** The one 402 (../rails.ts) for a refused x402 payment, with its failed settlement's receipt if there is one. */
export function refused(run: RunDeps, quote: Quote, refusal: Refusal, receipt?: SettleResponse): Failed {
  const r = (run.rails ?? NO_RAILS).refusal(quote.action, quote.transport, { rail: 'x402', ...refusal });
  return receipt ? withParts(r, { paymentResponse: receipt }) : r;
}

export function settlementUnknown(transaction: string | undefined): GatewayError {
  return new GatewayError(
    'payment_settlement_unknown',
    'The settlement of your x402 payment is not confirmed yet. Retry the same request with the same payment in ' +
      'a few seconds (do not sign a new one): it resumes the settlement and returns the result; nothing is ' +
      'charged twice.',
    { retryAfterSeconds: 5, details: transaction ? { transaction } : {} },
  );
}

export function receiptMeta(payment: DecodedPayment, offer: Offer, receipt: SettleResponse) {
  return {
    x402: {
      payer: getAddress(payment.authorization.from),
      network: offer.requirements.network,
      asset: offer.requirements.asset,
      amount: offer.requirements.amount,
      transaction: receipt.transaction,
      nonce: payment.authorization.nonce,
      scheme: 'exact',
    },
  };
}

export class X402Gate implements RailPayment {
  private state: State = 'reserved';
  private receipt: SettleResponse | undefined;
  private refusal: Failed | undefined;
  readonly principal: RailPayment['principal'];

  constructor(
    private readonly run: RunDeps,
    private readonly x402: X402Deps,
    private readonly quote: Quote,
    private readonly key: string,
    private readonly payment: DecodedPayment,
    /** A settlement already confirmed before the call (a resumed upfront payment). */
    prepaid?: SettleResponse,
  ) {
    const payer = getAddress(payment.authorization.from);
    this.principal = { kind: 'x402', accountId: x402AccountId(payer), payer };
    if (prepaid) {
      this.state = 'prepaid';
      this.receipt = prepaid;
    }
  }

  /** Checksummed, whatever case the payer wrote it in. */
  get payer(): string {
    return this.principal.payer;
  }

  private refuse(refusal: Refusal): GatewayError {
    this.refusal = refused(this.run, this.quote, refusal);
    return this.refusal.error;
  }

  async authorize(): Promise<{ micros: number; memo: string } | undefined> {
    const { offer } = this.quote;
    if (offer.upfront) return this.settleFirst();
    const v = await this.x402.facilitator.verify(this.payment.wire, offer.requirements);
    if (v.kind === 'invalid') {
      this.state = 'refused';
      throw this.refuse({ reason: v.reason, message: v.message ?? 'the facilitator refused the payment' });
    }
    if (v.kind === 'unavailable') {
      this.state = 'unavailable';
      throw verifyUnavailable(this.run.log, v.cause);
    }
    await ensureX402Account(this.run.ledger, this.payer);
    this.state = 'verified';
    return {
      micros: offer.priceMicros,
      memo: `x402 payment ${this.payment.authorization.nonce} by ${this.payer} (verified; collected on success)`,
    };
  }

  /** The "upfront" flow: the money moves before the action runs, and is on the account before the hold. */
  private async settleFirst(): Promise<undefined> {
    if (this.state !== 'prepaid') {
      this.receipt = await this.settle(undefined, 'the payment could not be settled');
      this.state = 'prepaid';
    }
    const accountId = await ensureX402Account(this.run.ledger, this.payer);
    // Settled money is real: it is credited for good, and stays there as a refund owed if the action fails.
    await this.run.money.credit(
      accountId,
      this.quote.offer.priceMicros,
      'x402_prepaid',
      `x402 payment settled in ${this.receipt?.transaction} by ${this.payer} (before running)`,
    );
    return undefined;
  }

  async collect(envelope: Envelope): Promise<Record<string, unknown>> {
    const { offer } = this.quote;
    if (this.state === 'prepaid') {
      const receipt = this.receipt as SettleResponse;
      await this.x402.payments.transition(this.key, 'settling', 'settled', { envelope, receipt });
      this.state = 'settled';
      return receiptMeta(this.payment, offer, receipt);
    }
    // The result is stored first, so an unknown settlement can deliver it later without running again.
    this.receipt = await this.settle(envelope, 'the payment could not be settled, so the result is withheld');
    this.state = 'settled';
    return receiptMeta(this.payment, offer, this.receipt);
  }

  /** Settles (with the result, when there is one); a settlement that did not go through fails the call. */
  private async settle(envelope: Envelope | undefined, message: string): Promise<SettleResponse> {
    const s = await settlePayment(this.run, this.x402, {
      key: this.key,
      from: 'reserved',
      payload: this.payment.wire,
      requirements: this.quote.offer.requirements,
      // Without a result (upfront), the row is marked settled by collect(), together with the result.
      envelope,
      resourceUrl: this.quote.resource.url,
    });
    switch (s.kind) {
      case 'settled':
        return s.receipt;
      case 'changed':
        throw new GatewayError('internal', 'The x402 payment record changed under the call.');
      case 'failed':
        this.state = 'settle_failed';
        this.receipt = s.receipt;
        throw this.refuse({ reason: s.receipt.errorReason ?? 'settlement_failed', message });
      case 'unknown':
        this.state = 'unknown';
        throw settlementUnknown(s.receipt?.transaction || undefined);
    }
  }

  /** After execute: settle the payment record's fate from how far the call got, and add the door's parts. */
  async finish(outcome: Outcome): Promise<Outcome> {
    const receipt = this.receipt && { paymentResponse: this.receipt };
    switch (this.state) {
      case 'reserved':
      case 'unavailable':
      case 'verified':
      case 'refused':
        // Nothing was collected (refused before running, facilitator down, or the action failed): the payment
        // is unused and may be presented again.
        await this.x402.payments.transition(this.key, 'reserved', 'released');
        return withParts(outcome, this.refusal?.parts);
      case 'settle_failed':
        return withParts(withParts(outcome, this.refusal?.parts), receipt);
      case 'unknown':
        return outcome;
      case 'settled':
        return withParts(outcome, receipt);
      case 'prepaid':
        return outcome.ok ? withParts(outcome, receipt) : this.prepaidButFailed(outcome);
    }
  }

  /** Settled before running, then the action failed: the money stays on the payer's account as a refund owed. */
  private async prepaidButFailed(outcome: Failed): Promise<Outcome> {
    const receipt = this.receipt as SettleResponse;
    await this.x402.payments.transition(this.key, 'settling', 'failed', { receipt });
    const { accountId } = this.principal;
    this.run.log.error(
      { account: accountId, transaction: receipt.transaction, code: outcome.error.code },
      'x402 payment settled before an action that failed: refund owed',
    );
    const e = outcome.error;
    const error = new GatewayError(
      e.code,
      `${e.message} Your x402 payment was settled before the action ran (transaction ${receipt.transaction}); ` +
        `it is recorded as a refund owed on account ${accountId}.`,
      {
        details: { ...e.details, refund_owed_account: accountId, transaction: receipt.transaction },
        ...(e.retryAfterSeconds !== undefined ? { retryAfterSeconds: e.retryAfterSeconds } : {}),
      },
    );
    return { ...outcome, error, parts: { paymentResponse: receipt } };
  }
}

export type SettleStep =
  | { kind: 'settled'; receipt: SettleResponse }
  | { kind: 'failed'; receipt: SettleResponse }
  | { kind: 'unknown'; receipt?: SettleResponse | undefined }
  /** The payment row was not in the expected state: another presentation got to it first. */
  | { kind: 'changed' };

/**
 * Settles a payment and records its fate in the payment store: the one place where a settlement's outcomes
 * (settled, failed, unknown) are told apart. The row moves `from` → settling → settled | failed | unknown;
 * with an `envelope` (the result, stored first) a settled row is marked settled; without, it stays `settling`
 * for the caller to finish (with the result it delivers). An unknown outcome is never retried here: the payer's
 * retry resumes it (./pay.ts).
 */
export async function settlePayment(
  run: RunDeps,
  x402: X402Deps,
  p: {
    key: string;
    from: 'reserved' | 'unknown';
    payload: PaymentPayload;
    requirements: PaymentRequirements;
    envelope?: Envelope | undefined;
    /** The paid resource: the receipt (kept, and replayed as it is) gets the offer-and-receipt extension's. */
    resourceUrl: string;
  },
): Promise<SettleStep> {
  if (
    !(await x402.payments.transition(p.key, p.from, 'settling', p.envelope ? { envelope: p.envelope } : {}))
  ) {
    return { kind: 'changed' };
  }
  const s = await x402.facilitator.settle(p.payload, p.requirements);
  switch (s.kind) {
    case 'settled': {
      const receipt = withOfferReceipt(run, s.receipt, p.resourceUrl);
      if (p.envelope) await x402.payments.transition(p.key, 'settling', 'settled', { receipt });
      return { kind: 'settled', receipt };
    }
    case 'failed':
      await x402.payments.transition(p.key, 'settling', 'failed', { receipt: s.receipt });
      return s;
    case 'unknown':
      run.log.error({ cause: causeForLog(s.cause), key: p.key }, 'x402 settlement outcome unknown');
      await x402.payments.transition(p.key, 'settling', 'unknown', s.receipt ? { receipt: s.receipt } : {});
      return { kind: 'unknown', receipt: s.receipt };
  }
}
