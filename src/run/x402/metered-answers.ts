import type { PaymentRequired, SettleResponse } from '@x402/core/types';
import { getAddress } from 'viem';
import { GatewayError } from '../../errors.js';
import type { LedgerRecords } from '../../ledger/types.js';
import { formatUsd } from '../../lib/money.js';
import type { X402Deps } from './gate.js';
import type { Refusal } from './local-check.js';
import type { UptoOffer, UptoPayment } from './upto.js';

// The shapes and answers shared by the model router's x402 path (./metered.ts) and its presented-again path
// (./metered-again.ts): the challenge, a refusal, and the settlement facts a charged call records.

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

export function challengeOf(m: MeteredX402, offer: UptoOffer, error: string): PaymentRequired {
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

export function refused(
  m: MeteredX402,
  offer: UptoOffer,
  r: Refusal,
  receipt?: SettleResponse,
): MeteredAnswer {
  const error = new GatewayError(
    'payment_required',
    `The x402 payment was refused (${r.reason}): ${r.message}. Nothing was charged. Sign the challenge of the ` +
      'PAYMENT-REQUIRED header and retry, or send an API key as "Authorization: Bearer tg_sk_…".',
    { details: { reason: r.reason } },
  );
  return {
    error,
    paymentRequired: challengeOf(m, offer, r.reason),
    ...(receipt ? { paymentResponse: receipt } : {}),
  };
}

/** Refused for a settlement that failed: its reason, with its receipt. */
export function settleFailed(
  m: MeteredX402,
  offer: UptoOffer,
  receipt: SettleResponse | undefined,
  message: string,
): MeteredAnswer {
  return refused(m, offer, { reason: receipt?.errorReason ?? 'settlement_failed', message }, receipt);
}

export function settledMeta(p: UptoPayment, offer: UptoOffer, receipt: SettleResponse, micros: number) {
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
