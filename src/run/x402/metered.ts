import type { PaymentRequired, SettleResponse } from '@x402/core/types';
import { getAddress } from 'viem';
import type { Logger } from 'pino';
import type { AccountPrincipal } from '../../../auth/principal.js';
import { GatewayError } from '../../errors.js';
import type { LedgerRecords } from '../../ledger/types.js';
import type { Clock } from '../../lib/clock.js';
import { formatUsd } from '../../lib/money.js';
import type { Lifecycle } from '../lifecycle.js';
import { ensureX402Account, x402AccountId } from './accounts.js';
import type { X402Deps } from './call.js';
import { causeForLog } from './facilitator.js';
import { settlementUnknown } from './gate.js';
import type { Refusal } from './local-check.js';
import type { PaymentRow } from './payment-store.js';
import { checkUpto, checkUptoWindow, decodeUpto, type UptoOffer, type UptoPayment, uptoKey, uptoOffer } from './upto.js';

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

export const METERED_ACTION = 'llm/chat.completions';

export interface MeteredX402 {
  x402: X402Deps;
  /** Accounts of payers (no money methods). */
  ledger: LedgerRecords;
  publicUrl: () => string;
}

export interface MeteredRequest {
  /** The PAYMENT-SIGNATURE header value, if any. */
  payment: unknown;
  /** The call's worst case, micro-USD: what is authorized and held. */
  maxMicros: number;
  /** The whole call's bound (all attempts): a payment must stay valid that long plus the settlement. */
  timeoutMs: number;
  /** Identifies the request body, so a payment pays only the call it was made for. */
  fingerprint: string;
}

/** What the door sends when the call does not run (or ran before): the error and the x402 headers. */
export interface MeteredAnswer {
  error: GatewayError;
  paymentRequired?: PaymentRequired;
  paymentResponse?: SettleResponse;
  /** A stored non-streamed answer delivered once its settlement resumed and succeeded. */
  delivered?: { body: Record<string, unknown>; headers: Record<string, string> };
}

export type MeteredStart =
  | { kind: 'pay'; payment: MeteredPayment; principal: Extract<AccountPrincipal, { kind: 'x402' }> }
  | { kind: 'answer'; answer: MeteredAnswer };

function challengeOf(m: MeteredX402, offer: UptoOffer, error: string): PaymentRequired {
  return {
    x402Version: 2,
    error,
    resource: {
      url: `${m.publicUrl()}/api/llm/v1/chat/completions`,
      description:
        `Model router call: at most ${formatUsd(offer.maxMicros)} USDC authorized (prompt size and max_tokens at ` +
        "the model's prices); only the actual cost is settled, nothing if the call fails.",
      mimeType: 'application/json',
    },
    accepts: [offer.requirements],
  };
}

function refused(m: MeteredX402, offer: UptoOffer, r: Refusal, receipt?: SettleResponse): MeteredAnswer {
  const error = new GatewayError(
    'payment_required',
    `The x402 payment was refused (${r.reason}): ${r.message}. Nothing was charged. Sign the challenge of the ` +
      'PAYMENT-REQUIRED header and retry, or send an API key as "Authorization: Bearer tg_sk_…".',
    { details: { reason: r.reason } },
  );
  return { error, paymentRequired: challengeOf(m, offer, r.reason), ...(receipt ? { paymentResponse: receipt } : {}) };
}

/** No `upto` on this facilitator: a plain 402 that names what works (spec: metered x402 needs `upto`). */
function uptoUnavailable(m: MeteredX402): MeteredAnswer {
  return {
    error: new GatewayError(
      'payment_required',
      "The model router's price is per token, known only after the call, so x402 needs the \"upto\" scheme, " +
        `which this gateway's x402 facilitator does not offer on ${m.x402.config.network}. Send an API key as ` +
        '"Authorization: Bearer tg_sk_…" (the catalog actions under /api/run do take x402 "exact" payments).',
      { details: { accepts: [{ method: 'api_key', header: 'Authorization: Bearer tg_sk_…' }] } },
    ),
  };
}

/** For an anonymous caller of the model router: the challenge, a refusal, or a payment ready to authorize. */
export async function startMetered(
  deps: { clock: Clock; log: Logger; money: Lifecycle },
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
    return { kind: 'answer', answer: refused(m, offer, { reason: 'invalid_payload', message: decoded.message }) };
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
      const r = refused(this.m, this.offer, { reason: v.reason, message: v.message ?? 'the facilitator refused it' });
      throw new MeteredRefusal(r);
    }
    if (v.kind === 'unavailable') {
      this.log.warn({ cause: causeForLog(v.cause) }, 'x402 facilitator verify failed (upto)');
      throw new GatewayError(
        'upstream_unavailable',
        'The x402 facilitator could not verify the payment right now. It was not used and nothing was charged; ' +
          'retry with the same payment.',
        { retryAfterSeconds: 2 },
      );
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
    if (micros <= 0 || micros > this.offer.maxMicros) throw new Error(`upto settlement of ${micros} out of range`);
    const { payments, facilitator } = this.m.x402;
    this.state = 'settling';
    await payments.transition(this.key, 'reserved', 'settling', { envelope: { micros, answer } });
    const s = await facilitator.settle(this.p.wire as never, { ...this.offer.requirements, amount: String(micros) });
    this.state = 'done';
    if (s.kind === 'settled') {
      await payments.transition(this.key, 'settling', 'settled', { receipt: s.receipt });
      return { kind: 'settled', receipt: s.receipt, meta: settledMeta(this.p, this.offer, s.receipt, micros) };
    }
    if (s.kind === 'failed') {
      await payments.transition(this.key, 'settling', 'failed', { receipt: s.receipt });
      const reason = s.receipt.errorReason ?? 'settlement_failed';
      this.log.error({ key: this.key, reason }, 'x402 upto settlement failed after the model answered');
      return {
        kind: 'not_settled',
        answer: refused(this.m, this.offer, { reason, message: 'the payment could not be settled' }, s.receipt),
      };
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

function settledMeta(p: UptoPayment, offer: UptoOffer, receipt: SettleResponse, micros: number) {
  return {
    x402: {
      scheme: 'upto',
      payer: getAddress(p.payload.permit2Authorization.from),
      network: offer.requirements.network,
      asset: offer.requirements.asset,
      amount: String(micros),
      authorized: offer.requirements.amount,
      transaction: receipt.transaction,
      nonce: p.payload.permit2Authorization.nonce,
    },
  };
}

const USED: Refusal = {
  reason: 'payment_already_used',
  message: 'this signed payment already paid for a model call; sign a new one',
};

/** A payment seen before: a metered answer is not replayed; an unknown settlement resumes. */
async function presentedAgain(
  deps: { log: Logger; money: Lifecycle },
  m: MeteredX402,
  offer: UptoOffer,
  row: PaymentRow,
  fingerprint: string,
): Promise<MeteredAnswer> {
  if (row.fingerprint !== fingerprint || row.status === 'settled') return refused(m, offer, USED, row.receipt);
  if (row.status === 'failed') {
    const reason = row.receipt?.errorReason ?? 'settlement_failed';
    return refused(m, offer, { reason, message: 'this payment could not be settled; sign a new one' }, row.receipt);
  }
  if (row.status !== 'unknown') {
    return {
      error: new GatewayError(
        'idempotency_in_flight',
        'This payment is paying for a model call that is still running; nothing more can be done with it now.',
        { retryAfterSeconds: 1 },
      ),
    };
  }
  const stored = row.envelope as { micros: number; answer?: MeteredAnswer['delivered'] };
  const requirements = { ...row.requirements, amount: String(stored.micros) };
  if (!(await m.x402.payments.transition(row.key, 'unknown', 'settling'))) {
    return { error: new GatewayError('idempotency_in_flight', 'This payment is being settled; retry shortly.', { retryAfterSeconds: 1 }) };
  }
  const s = await m.x402.facilitator.settle(row.payload, requirements);
  if (s.kind === 'unknown') {
    await m.x402.payments.transition(row.key, 'settling', 'unknown');
    return { error: settlementUnknown(s.receipt?.transaction || undefined) };
  }
  await m.x402.payments.transition(row.key, 'settling', s.kind === 'settled' ? 'settled' : 'failed', {
    receipt: s.receipt,
  });
  if (s.kind === 'failed') {
    return refused(m, offer, { reason: s.receipt.errorReason ?? 'settlement_failed', message: 'not settled' }, s.receipt);
  }
  // The money moved after the call's hold was voided: it is recorded now as a call of its own.
  const decoded = decodeUpto(Buffer.from(JSON.stringify(row.payload)).toString('base64'));
  const txn = await deps.money.recordSettledCall({
    principal: { kind: 'x402', accountId: x402AccountId(row.payer), payer: row.payer },
    action: METERED_ACTION,
    micros: stored.micros,
    memo: `x402 upto payment by ${row.payer} (settlement confirmed late)`,
    meta: decoded.ok ? settledMeta(decoded.payment, { ...offer, requirements }, s.receipt, stored.micros) : {},
  });
  if (stored.answer) {
    return {
      error: USED_ERROR,
      paymentResponse: s.receipt,
      delivered: { body: stored.answer.body, headers: { ...stored.answer.headers, 'x-tollgate-transaction-id': txn } },
    };
  }
  return refused(m, offer, { ...USED, message: 'its streamed answer was delivered; its settlement is now confirmed' }, s.receipt);
}

const USED_ERROR = new GatewayError('payment_required', 'This payment already paid for a model call.');
