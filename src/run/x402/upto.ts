import type { PaymentRequirements } from '@x402/core/types';
import { deepEqual } from '@x402/core/utils';
// x402's upto proxy and Permit2 (the same address on every EVM chain, CREATE2), the witness' EIP-712 types.
import {
  PERMIT2_ADDRESS as PERMIT2,
  x402UptoPermit2ProxyAddress as UPTO_PROXY,
  uptoPermit2WitnessTypes,
} from '@x402/evm';
import { getAddress, recoverTypedDataAddress } from 'viem';
import { z } from 'zod';
import type { X402Config } from '../../config/index.js';
import { notThe, paymentJson, paymentSchema, uint } from './codec.js';
import { type Refusal, refuse, sameAddress, windowRefusal } from './local-check.js';
import { CLOCK_SKEW_SECONDS, SETTLE_ALLOWANCE_SECONDS } from './requirements.js';

// The x402 `upto` scheme on EVM (specs/schemes/upto/scheme_upto_evm.md, @x402/evm/upto): the payer signs a
// Permit2 witness transfer of at most `amount` to our pay-to address, settleable only by our facilitator; we
// settle what the call actually cost, which may be less (or nothing). Used for the model router, whose price is
// known only after the call: `amount` is the call's worst case, the same figure its ledger hold reserves.
//
// What can be checked here without the chain, cheapest first (the facilitator re-checks all of it, and the
// payer's balance, Permit2 allowance and nonce by simulation).

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/);

// An x402 v2 payment (./codec.ts) with the Permit2 payload.
const uptoSchema = paymentSchema.extend({
  payload: z.object({
    signature: z.string().regex(/^0x(?:[0-9a-fA-F]{2})+$/),
    permit2Authorization: z.object({
      from: address,
      permitted: z.object({ token: address, amount: uint }),
      spender: address,
      nonce: uint,
      deadline: uint,
      witness: z.object({ to: address, facilitator: address, validAfter: uint }),
    }),
  }),
});

export type UptoPayment = z.output<typeof uptoSchema> & { wire: Record<string, unknown> };

/** Decodes an `upto` payment from the PAYMENT-SIGNATURE header value (base64 JSON). */
export function decodeUpto(
  raw: unknown,
): { ok: true; payment: UptoPayment } | { ok: false; message: string } {
  const read = paymentJson(raw);
  if (!read.ok) return read;
  const parsed = uptoSchema.safeParse(read.json);
  if (!parsed.success) return notThe('"upto" Permit2 payment', parsed.error);
  return { ok: true, payment: { ...parsed.data, wire: read.json as Record<string, unknown> } };
}

export interface UptoOffer {
  requirements: PaymentRequirements;
  /** The authorized maximum, micro-USD (= atomic units of a 6-decimal USD stablecoin). */
  maxMicros: number;
  minValiditySeconds: number;
}

/**
 * What we ask for one metered call: a pure function of configuration, the facilitator's address and the call's
 * worst case, so a paid retry of the same request regenerates the same requirements (deep-equal, as `exact`).
 * `extra` is what @x402/evm's upto server scheme produces (the token's EIP-712 domain, Permit2, the facilitator).
 */
export function uptoOffer(
  cfg: X402Config,
  facilitatorAddress: string,
  maxMicros: number,
  timeoutMs: number,
): UptoOffer {
  const minValiditySeconds = Math.ceil(timeoutMs / 1000) + SETTLE_ALLOWANCE_SECONDS;
  return {
    requirements: {
      scheme: 'upto',
      network: cfg.network,
      amount: String(maxMicros),
      asset: cfg.asset,
      payTo: cfg.payTo,
      maxTimeoutSeconds: Math.max(cfg.maxTimeoutSeconds, minValiditySeconds + CLOCK_SKEW_SECONDS),
      extra: {
        name: cfg.assetName,
        version: cfg.assetVersion,
        assetTransferMethod: 'permit2',
        facilitatorAddress: getAddress(facilitatorAddress),
      },
    },
    maxMicros,
    minValiditySeconds,
  };
}

/** Everything that does not need the chain: our requirements exactly, the proxy, our facilitator, the signature. */
export async function checkUpto(
  p: UptoPayment,
  req: PaymentRequirements,
  chainId: number,
): Promise<Refusal | undefined> {
  const a = p.payload.permit2Authorization;
  if (p.x402Version !== 2) return refuse('invalid_x402_version', 'this gateway speaks x402 version 2');
  if (p.accepted.scheme !== 'upto')
    return refuse('unsupported_scheme', 'the model router takes the "upto" scheme');
  if (p.accepted.network !== req.network)
    return refuse('invalid_network', `payments are accepted on ${req.network}`);
  if (!sameAddress(a.permitted.token, req.asset) || !sameAddress(p.accepted.asset, req.asset)) {
    return refuse('permit2_token_mismatch', `the asset must be ${req.asset}`);
  }
  if (!sameAddress(a.witness.to, req.payTo)) {
    return refuse('invalid_permit2_recipient_mismatch', `the payment must go to ${req.payTo}`);
  }
  if (a.permitted.amount !== req.amount || p.accepted.amount !== req.amount) {
    return refuse(
      'permit2_amount_mismatch',
      `the authorized maximum must be exactly ${req.amount} atomic units (this request's worst case)`,
    );
  }
  if (!deepEqual(p.accepted, req)) {
    return refuse(
      'invalid_payment_requirements',
      'the accepted requirements differ from the challenge (prices or the request changed); pay the new challenge',
    );
  }
  if (!sameAddress(a.spender, UPTO_PROXY))
    return refuse('invalid_permit2_spender', `the spender must be ${UPTO_PROXY}`);
  if (!sameAddress(a.witness.facilitator, String(req.extra.facilitatorAddress))) {
    return refuse('upto_facilitator_mismatch', 'the witness must name the facilitator of the challenge');
  }
  if (p.payload.signature.length === 132) {
    let signer: string;
    try {
      signer = await recoverTypedDataAddress({
        domain: { name: 'Permit2', chainId, verifyingContract: PERMIT2 },
        types: uptoPermit2WitnessTypes,
        primaryType: 'PermitWitnessTransferFrom',
        message: {
          permitted: { token: getAddress(a.permitted.token), amount: BigInt(a.permitted.amount) },
          spender: getAddress(a.spender),
          nonce: BigInt(a.nonce),
          deadline: BigInt(a.deadline),
          witness: {
            to: getAddress(a.witness.to),
            facilitator: getAddress(a.witness.facilitator),
            validAfter: BigInt(a.witness.validAfter),
          },
        },
        signature: p.payload.signature as `0x${string}`,
      });
    } catch {
      return refuse('invalid_permit2_signature', 'the signature is malformed');
    }
    if (!sameAddress(signer, a.from))
      return refuse('invalid_permit2_signature', 'the signature was not made by `from`');
  }
  return undefined;
}

/** The window, for a first presentation: valid now, long enough for the call and its settlement, not longer. */
export function checkUptoWindow(p: UptoPayment, offer: UptoOffer, nowMs: number): Refusal | undefined {
  const a = p.payload.permit2Authorization;
  return windowRefusal(a.witness.validAfter, a.deadline, offer, nowMs, [
    'permit2_not_yet_valid',
    'permit2_deadline_expired',
  ]);
}

/** One Permit2 authorization: (network, asset, owner, nonce). Distinct from `exact` keys by the "permit2" tag. */
export function uptoKey(p: UptoPayment, req: PaymentRequirements): string {
  const a = p.payload.permit2Authorization;
  return `${req.network}:${req.asset}:${a.from}:permit2:${a.nonce}`.toLowerCase();
}
