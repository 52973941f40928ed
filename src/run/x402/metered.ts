import type { SettleResponse } from '@x402/core/types';
import type { Logger } from 'pino';
import { getAddress } from 'viem';
import type { AccountPrincipal } from '../../../auth/principal.js';
import { GatewayError } from '../../errors.js';
import type { Clock } from '../../lib/clock.js';
import { formatUsd } from '../../lib/money.js';
import type { Lifecycle } from '../lifecycle.js';
import type { ReceiptSigner } from '../receipts.js';
import { ensureX402Account, x402AccountId } from './accounts.js';
import { causeForLog, verifyUnavailable } from './facilitator.js';
import { settlementUnknown } from './gate.js';
import { presentedAgain } from './metered-again.js';
import {
  challengeOf,
  METERED_ACTION,
  type MeteredAnswer,
  type MeteredRequest,
  type MeteredX402,
  refused,
  settledMeta,
  settleFailed,
} from './metered-answers.js';
import {
  checkUpto,
  checkUptoWindow,
  decodeUpto,
  type UptoOffer,
  type UptoPayment,
  uptoKey,
  uptoOffer,
} from './upto.js';

export {
  METERED_ACTION,
  type MeteredAnswer,
  type MeteredRequest,
  type MeteredX402,
} from './metered-answers.js';

// x402 for the model router (src/llm/chat.ts): a per-token call paid with the `upto` scheme. The payer
// authorizes the call's worst case (the amount its ledger hold reserves); the actual cost is settled after the
// call, stream included, never more than authorized; a call that failed or produced nothing settles nothing.
//
//   decode → local checks → reserve the nonce → verify (the worst case) → hold funded by the authorization
//   → the model call → capture amount c ≤ hold → settle exactly c → capture c      (failure: void, release)
//
// The money moves only in the lifecycle (src/run/lifecycle.ts), driven by the metered path; this module only
// speaks to the facilitator and keeps the payment's record. One signed payment pays for one call: presented
// again it is refused (a metered answer is not replayed), or, when its settlement's outcome was unknown, the
// settlement resumes (and a stored non-streamed answer is delivered).

export type MeteredStart =
  | { kind: 'pay'; payment: MeteredPayment; principal: Extract<AccountPrincipal, { kind: 'x402' }> }
  | { kind: 'answer'; answer: MeteredAnswer };

/** No `upto` on this facilitator: a plain 402 that names what works (spec: metered x402 needs `upto`). */
function uptoUnavailable(m: MeteredX402): MeteredAnswer {
  return {
    error: new GatewayError(
      'payment_required',
      'The model router\'s price is per token, known only after the call, so x402 needs the "upto" scheme, ' +
        `which this gateway's x402 facilitator does not offer on ${m.x402.config.network}. Send an API key as ` +
        '"Authorization: Bearer tg_sk_…" (the catalog actions under /api/run do take x402 "exact" payments).',
      { details: { accepts: [{ method: 'api_key', header: 'Authorization: Bearer tg_sk_…' }] } },
    ),
  };
}

/** For an anonymous caller of the model router: the challenge, a refusal, or a payment ready to authorize. */
export async function startMetered(
  deps: { clock: Clock; log: Logger; money: Lifecycle; receipts?: ReceiptSigner | undefined },
  m: MeteredX402,
  req: MeteredRequest,
): Promise<MeteredStart> {
  const { config, facilitator, payments } = m.x402;
  const facilitatorAddress = await facilitator.uptoAddress(config.network);
  if (!facilitatorAddress) return { kind: 'answer', answer: uptoUnavailable(m) };
  const offer = uptoOffer(config, facilitatorAddress, req.maxMicros, req.timeoutMs);
  if (req.payment === undefined || req.payment === '') {
    const error = new GatewayError(
      'payment_required',
      `Payment required: this call authorizes at most ${formatUsd(req.maxMicros)}; pay with x402 ("upto": sign ` +
        'the challenge of the PAYMENT-REQUIRED header, retry with it in PAYMENT-SIGNATURE) or send an API key ' +
        'as "Authorization: Bearer tg_sk_…".',
      { details: { max_micros: req.maxMicros } },
    );
    return { kind: 'answer', answer: { error, paymentRequired: challengeOf(m, offer, 'Payment required') } };
  }
  const decoded = decodeUpto(req.payment);
  if (!decoded.ok) {
    return {
      kind: 'answer',
      answer: refused(m, offer, { reason: 'invalid_payload', message: decoded.message }),
    };
  }
  const p = decoded.payment;
  const bad = await checkUpto(p, offer.requirements, config.chainId);
  if (bad) return { kind: 'answer', answer: refused(m, offer, bad) };
  const key = uptoKey(p, offer.requirements);
  const payer = getAddress(p.payload.permit2Authorization.from);
  const known = await payments.get(key);
  if (known && known.status !== 'released') {
    return { kind: 'answer', answer: await presentedAgain(deps, m, offer, known, req.fingerprint) };
  }
  const late = checkUptoWindow(p, offer, deps.clock.now());
  if (late) return { kind: 'answer', answer: refused(m, offer, late) };
  const claim = await payments.reserve({
    key,
    payer,
    action: METERED_ACTION,
    fingerprint: req.fingerprint,
    payload: p.wire as never,
    requirements: offer.requirements,
    expiresAt: Number(p.payload.permit2Authorization.deadline) * 1000,
  });
  if (claim.kind === 'taken') {
    return { kind: 'answer', answer: await presentedAgain(deps, m, offer, claim.row, req.fingerprint) };
  }
  return {
    kind: 'pay',
    payment: new MeteredPayment(deps.log, m, offer, key, p, payer),
    principal: { kind: 'x402', accountId: x402AccountId(payer), payer },
  };
}

export type Collected =
  | { kind: 'settled'; receipt: SettleResponse; meta: Record<string, unknown> }
  | { kind: 'not_settled'; answer: MeteredAnswer };

/** One reserved `upto` payment paying for one model call. */
export class MeteredPayment {
  private state: 'reserved' | 'verified' | 'settling' | 'done' = 'reserved';

  constructor(
    private readonly log: Logger,
    private readonly m: MeteredX402,
    private readonly offer: UptoOffer,
    private readonly key: string,
    private readonly p: UptoPayment,
    readonly payer: string,
  ) {}

  get maxMicros(): number {
    return this.offer.maxMicros;
  }

  /** Before the hold: the facilitator verifies the worst case; its amount funds the hold (reversed if unused). */
  async authorize(): Promise<{ micros: number; memo: string }> {
    const v = await this.m.x402.facilitator.verify(this.p.wire as never, this.offer.requirements);
    if (v.kind === 'invalid') {
      const r = refused(this.m, this.offer, {
        reason: v.reason,
        message: v.message ?? 'the facilitator refused it',
      });
      throw new MeteredRefusal(r);
    }
    if (v.kind === 'unavailable') {
      throw verifyUnavailable(this.log, v.cause);
    }
    await ensureX402Account(this.m.ledger, this.payer);
    this.state = 'verified';
    return {
      micros: this.offer.maxMicros,
      memo: `x402 upto authorization ${this.p.payload.permit2Authorization.nonce} by ${this.payer} (at most; the actual cost is collected)`,
    };
  }

  /**
   * Settles exactly `micros` (≤ the authorized maximum, > 0). The outcome is recorded before it is returned; a
   * non-streamed answer is kept with it, so an unknown outcome resumed later can still deliver it.
   */
  async collect(micros: number, answer?: MeteredAnswer['delivered']): Promise<Collected> {
    if (micros <= 0 || micros > this.offer.maxMicros)
      throw new Error(`upto settlement of ${micros} out of range`);
    const { payments, facilitator } = this.m.x402;
    this.state = 'settling';
    await payments.transition(this.key, 'reserved', 'settling', { envelope: { micros, answer } });
    const s = await facilitator.settle(this.p.wire as never, {
      ...this.offer.requirements,
      amount: String(micros),
    });
    this.state = 'done';
    if (s.kind === 'settled') {
      await payments.transition(this.key, 'settling', 'settled', { receipt: s.receipt });
      return {
        kind: 'settled',
        receipt: s.receipt,
        meta: settledMeta(this.p, this.offer, s.receipt, micros),
      };
    }
    if (s.kind === 'failed') {
      await payments.transition(this.key, 'settling', 'failed', { receipt: s.receipt });
      const reason = s.receipt.errorReason ?? 'settlement_failed';
      this.log.error({ key: this.key, reason }, 'x402 upto settlement failed after the model answered');
      const answer = settleFailed(this.m, this.offer, s.receipt, 'the payment could not be settled');
      return { kind: 'not_settled', answer };
    }
    this.log.error({ cause: causeForLog(s.cause), key: this.key }, 'x402 upto settlement outcome unknown');
    await payments.transition(this.key, 'settling', 'unknown', s.receipt ? { receipt: s.receipt } : {});
    return { kind: 'not_settled', answer: { error: settlementUnknown(s.receipt?.transaction || undefined) } };
  }

  /** Nothing was collected (the call failed, or produced nothing): the payment may be presented again. */
  async release(): Promise<void> {
    if (this.state !== 'reserved' && this.state !== 'verified') return;
    this.state = 'done';
    await this.m.x402.payments.transition(this.key, 'reserved', 'released');
  }
}

/** Thrown by authorize() for a payment the facilitator refused: the door answers the challenge again. */
export class MeteredRefusal extends GatewayError {
  constructor(readonly answer: MeteredAnswer) {
    super(answer.error.code, answer.error.message, { details: answer.error.details });
  }
}
