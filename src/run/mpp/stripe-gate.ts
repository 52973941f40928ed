import type { SettleResponse } from '@x402/core/types';
import { GatewayError } from '../../errors.js';
import { centsToMicros } from '../../lib/money.js';
import type { Envelope, Failed, Outcome, RunDeps } from '../execute.js';
import { type RailCall, type RailPayment, withParts } from '../rails.js';
import { ensureX402Account, x402AccountId } from '../x402/accounts.js';
import { settlementUnknown } from '../x402/gate.js';
import type { PaymentStore } from '../x402/payment-store.js';
import type { MppRefusal, ParsedCredential } from './credential.js';
import { mppPaid, mppRefused } from './paid.js';
import type { SptProcessor } from './stripe-spt.js';

// One MPP `stripe` credential paying for one call: the RailPayment execute drives. authorize() holds the price on
// the card (a confirmed manual-capture PaymentIntent), collect() captures it once the action succeeded, finish()
// cancels a hold that was not collected and adds the Payment-Receipt or the 402's challenges. The payment row (the x402 payment table, key
// `mpp:stripe:<token>`) was reserved before, so one credential pays for at most one call, across replicas.
//
// The row's `receipt` records the PaymentIntent as soon as it exists (`transaction`), so a capture whose outcome
// was unknown can be resumed by the next presentation of the same credential (./stripe-pay.ts).

export interface StripeDeps {
  processor: SptProcessor;
  payments: PaymentStore;
}

export interface StripeCredential {
  key: string;
  spt: string;
  /** `stripe:card:<fingerprint>`: the payer's accountless ledger account. */
  payer: string;
}

type State = 'reserved' | 'refused' | 'unavailable' | 'authorized' | 'settled' | 'settle_failed' | 'unknown';

/** The row's receipt: SettleResponse-shaped, so the x402 payment table holds it as it holds x402 receipts. */
export function stripeReceipt(pi: string, payer: string, success: boolean, reason?: string): SettleResponse {
  return {
    success,
    transaction: pi,
    network: 'stripe' as SettleResponse['network'],
    payer,
    ...(reason ? { errorReason: reason } : {}),
  };
}

export class StripeGate implements RailPayment {
  private state: State = 'reserved';
  private refusal: Failed | undefined;
  private paymentIntent: string | undefined;
  readonly principal: RailPayment['principal'];

  constructor(
    private readonly run: RunDeps,
    private readonly deps: StripeDeps,
    private readonly c: ParsedCredential,
    private readonly rail: RailCall,
    private readonly call: StripeCredential,
  ) {
    this.principal = { kind: 'x402', accountId: x402AccountId(call.payer), payer: call.payer };
  }

  private refuse(refusal: MppRefusal): GatewayError {
    this.refusal = mppRefused(this.run, this.rail, refusal);
    return this.refusal.error;
  }

  async authorize(): Promise<{ micros: number; memo: string }> {
    const { action } = this.rail;
    const challengeId = this.c.challenge.id;
    const { spt, key, payer } = this.call;
    const r = await this.deps.processor.authorize({
      spt,
      amountCents: action.priceCents,
      // The same credential always names the same PaymentIntent: a retry never authorizes twice.
      idempotencyKey: `mpp_${challengeId}_${spt}`,
      metadata: { challenge_id: challengeId, action: action.id, machine_payment: 'true' },
    });
    if (r.kind === 'unknown') {
      this.state = 'unavailable';
      this.run.log.warn({ err: r.cause, key }, 'mpp stripe: the authorization outcome is unknown');
      throw new GatewayError(
        'upstream_unavailable',
        'Stripe could not authorize the payment right now. Nothing was charged; retry with the same credential.',
        { retryAfterSeconds: 2 },
      );
    }
    if (r.kind === 'refused' || r.value.status !== 'requires_capture') {
      this.state = 'refused';
      if (r.kind === 'refused') this.run.log.info({ code: r.code, detail: r.message }, 'mpp stripe: refused');
      throw this.refuse({
        problem: 'verification-failed',
        message: `the card was not authorized (${r.kind === 'refused' ? r.code : r.value.status})`,
      });
    }
    this.paymentIntent = r.value.paymentIntent;
    await this.deps.payments.transition(key, 'reserved', 'reserved', {
      receipt: stripeReceipt(this.paymentIntent, payer, false, 'authorized'),
    });
    await ensureX402Account(this.run.ledger, payer);
    this.state = 'authorized';
    return {
      micros: centsToMicros(action.priceCents),
      memo: `MPP stripe payment ${this.paymentIntent} by ${payer} (authorized; captured on success)`,
    };
  }

  async collect(envelope: Envelope): Promise<Record<string, unknown>> {
    const pi = this.paymentIntent as string;
    const { key, payer } = this.call;
    // The result is stored first, so an unknown capture can deliver it later without running again.
    if (!(await this.deps.payments.transition(key, 'reserved', 'settling', { envelope }))) {
      throw new GatewayError('internal', 'The MPP payment record changed under the call.');
    }
    const r = await this.deps.processor.capture(pi);
    if (r.kind === 'ok' && r.value.status === 'succeeded') {
      await this.deps.payments.transition(key, 'settling', 'settled', {
        receipt: stripeReceipt(pi, payer, true),
      });
      this.state = 'settled';
      return meta(pi, payer, this.c.challenge.id);
    }
    if (r.kind === 'unknown') {
      this.state = 'unknown';
      this.run.log.error({ err: r.cause, key, pi }, 'mpp stripe: capture outcome unknown');
      await this.deps.payments.transition(key, 'settling', 'unknown');
      throw settlementUnknown(pi);
    }
    this.state = 'settle_failed';
    await this.deps.payments.transition(key, 'settling', 'failed', {
      receipt: stripeReceipt(pi, payer, false, r.kind === 'refused' ? r.code : r.value.status),
    });
    throw this.refuse({ problem: 'verification-failed', message: 'the card payment could not be captured' });
  }

  /**
   * After execute: a hold that was not collected is cancelled, and the credential is then spent (its token's
   * authorization is gone); a credential refused or never authorized may be presented again.
   */
  async finish(outcome: Outcome): Promise<Outcome> {
    const { key, payer } = this.call;
    if (this.state === 'authorized') {
      const pi = this.paymentIntent as string;
      const c = await this.deps.processor.cancel(pi);
      if (c.kind !== 'ok') this.run.log.error({ key, pi, c }, 'mpp stripe: the hold could not be cancelled');
      await this.deps.payments.transition(key, 'reserved', 'failed', {
        receipt: stripeReceipt(pi, payer, false, 'cancelled'),
      });
    } else if (this.state === 'reserved' || this.state === 'refused' || this.state === 'unavailable') {
      await this.deps.payments.transition(key, 'reserved', 'released');
    }
    if (!outcome.ok || !this.paymentIntent) return withParts(outcome, this.refusal?.parts);
    const action = this.rail.action.id;
    return mppPaid(
      this.run,
      this.c,
      outcome,
      { action, method: 'stripe', reference: this.paymentIntent, payer },
      false,
    );
  }
}

export function meta(pi: string, payer: string, challengeId: string): Record<string, unknown> {
  return { mpp: { method: 'stripe', reference: pi, payer, challenge_id: challengeId } };
}
