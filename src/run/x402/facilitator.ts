import type { FacilitatorClient } from '@x402/core/server';
import type {
  PaymentPayload,
  PaymentRequirements,
  SettleResponse,
  SupportedResponse,
  VerifyResponse,
} from '@x402/core/types';
import type { Logger } from 'pino';
import { GatewayError } from '../../errors.js';

// The two questions we ask a facilitator, with every answer sorted into what the call path must do. The raw
// clients (remote over HTTP, or the built-in one on our own RPC) only speak the x402 wire; this is where an
// outcome becomes definite or not. The rule that matters for money: an answer we cannot read, a transport
// error or a timeout during settlement is *unknown*, never "failed": the transfer may have happened, so the
// payer must retry the same payment (which resumes), never be asked to pay again.

export type VerifyResult =
  | { kind: 'valid' }
  | { kind: 'invalid'; reason: string; message: string | undefined }
  /** The facilitator could not answer; nothing was decided and the payment is still unused. */
  | { kind: 'unavailable'; cause: unknown };

export type SettleResult =
  | { kind: 'settled'; receipt: SettleResponse }
  | { kind: 'failed'; receipt: SettleResponse }
  /** The outcome is not known (yet); `receipt` carries the transaction hash when the facilitator gave one. */
  | { kind: 'unknown'; receipt: SettleResponse | undefined; cause: unknown };

export interface Facilitator {
  verify(payment: PaymentPayload, req: PaymentRequirements): Promise<VerifyResult>;
  settle(payment: PaymentPayload, req: PaymentRequirements): Promise<SettleResult>;
  /**
   * The address that settles `upto` payments on `network` (its `/supported` kind's `extra.facilitatorAddress`),
   * or undefined when the facilitator does not support `upto` there (or cannot be asked right now).
   */
  uptoAddress(network: string): Promise<string | undefined>;
  /** The wire client itself: x402 sessions drive it through the official x402ResourceServer (../sessions). */
  client: FacilitatorClient;
  close(): Promise<void>;
}

/** How long a failed `/supported` lookup is remembered before asking again. */
const SUPPORTED_RETRY_MS = 30_000;

/**
 * What of a facilitator failure may be logged: its name and first line. viem puts the request (the RPC URL,
 * which often embeds a provider key) on later lines, and nothing here may leak the signer key or auth header.
 */
export function causeForLog(cause: unknown): { name: string; message: string } {
  const e = cause instanceof Error ? cause : new Error(String(cause));
  return { name: e.name, message: (e.message.split('\n')[0] ?? '').slice(0, 300) };
}

const FAILED: Promise<SupportedResponse | undefined> = Promise.resolve(undefined);

/** Reasons that mean "in progress" rather than "failed" (the @x402/evm facilitator's receipt-wait timeout). */
const PENDING_REASONS = new Set(['settlement_pending']);

function isVerifyResponse(v: unknown): v is VerifyResponse {
  return typeof v === 'object' && v !== null && typeof (v as VerifyResponse).isValid === 'boolean';
}

function isSettleResponse(v: unknown): v is SettleResponse {
  return typeof v === 'object' && v !== null && typeof (v as SettleResponse).success === 'boolean';
}

/** Wraps a wire-level facilitator client (which throws on transport errors) into definite/unknown outcomes. */
export function classifyingFacilitator(
  client: FacilitatorClient,
  close: () => Promise<void> = async () => {},
): Facilitator {
  // `/supported` changes only when the facilitator is redeployed: asked once, again after a failure.
  let supported: { at: number; value: Promise<SupportedResponse | undefined> } | undefined;
  const getSupported = () => {
    if (!supported || (supported.value === FAILED && Date.now() - supported.at > SUPPORTED_RETRY_MS)) {
      const at = Date.now();
      const value = client.getSupported().then(
        (r) => r,
        () => {
          if (supported) supported.value = FAILED;
          return undefined;
        },
      );
      supported = { at, value };
    }
    return supported.value;
  };
  return {
    async uptoAddress(network) {
      const kinds = (await getSupported())?.kinds ?? [];
      const kind = kinds.find((k) => k.x402Version === 2 && k.scheme === 'upto' && k.network === network);
      const address = kind?.extra?.facilitatorAddress;
      return typeof address === 'string' ? address : undefined;
    },
    async verify(payment, req) {
      let res: unknown;
      try {
        res = await client.verify(payment, req);
      } catch (cause) {
        return { kind: 'unavailable', cause };
      }
      if (!isVerifyResponse(res))
        return { kind: 'unavailable', cause: new Error('malformed verify response') };
      if (res.isValid) return { kind: 'valid' };
      return {
        kind: 'invalid',
        reason: res.invalidReason ?? 'invalid_payment',
        message: res.invalidMessage,
      };
    },
    async settle(payment, req) {
      let res: unknown;
      try {
        res = await client.settle(payment, req);
      } catch (cause) {
        return { kind: 'unknown', receipt: undefined, cause };
      }
      if (!isSettleResponse(res)) {
        return { kind: 'unknown', receipt: undefined, cause: new Error('malformed settle response') };
      }
      if (res.success) return { kind: 'settled', receipt: res };
      if (PENDING_REASONS.has(res.errorReason ?? '')) {
        return { kind: 'unknown', receipt: res, cause: new Error(res.errorReason) };
      }
      return { kind: 'failed', receipt: res };
    },
    client,
    close,
  };
}

/** The facilitator could not answer a verify: logged, and the caller told to retry with the same payment. */
export function verifyUnavailable(log: Pick<Logger, 'warn'>, cause: unknown): GatewayError {
  log.warn({ cause: causeForLog(cause) }, 'x402 facilitator verify failed');
  return new GatewayError(
    'upstream_unavailable',
    'The x402 facilitator could not verify the payment right now. It was not used and nothing was charged; ' +
      'retry with the same payment.',
    { retryAfterSeconds: 2 },
  );
}
