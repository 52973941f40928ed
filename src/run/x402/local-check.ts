import type { PaymentRequirements } from '@x402/core/types';
import { deepEqual } from '@x402/core/utils';
import { authorizationTypes } from '@x402/evm';
import { getAddress, recoverTypedDataAddress } from 'viem';
import type { DecodedPayment } from './codec.js';
import { CLOCK_SKEW_SECONDS, type Offer } from './requirements.js';

// Everything about a payment that can be checked without a chain or a facilitator, cheapest first. A payment
// that fails here never reserves a nonce, never reaches the facilitator and never runs an action. The
// facilitator re-checks all of it (and what needs the chain: balance, nonce state, simulation) afterwards.
//
// Reasons are the x402 spec's codes (§9), so x402 clients can act on them.

export type Refusal = { reason: string; message: string };

export function refuse(reason: string, message: string): Refusal {
  return { reason, message };
}

export const sameAddress = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** The checks that do not depend on the time: shape, our requirements, amount, recipient, signature. */
export async function checkPayment(
  payment: DecodedPayment,
  req: PaymentRequirements,
  chainId: number,
): Promise<Refusal | undefined> {
  const { accepted, authorization: auth } = payment;
  if (payment.x402Version !== 2) {
    return refuse('invalid_x402_version', 'this gateway speaks x402 version 2');
  }
  if (accepted.scheme !== req.scheme) {
    return refuse('unsupported_scheme', `only the "${req.scheme}" scheme is accepted`);
  }
  if (accepted.network !== req.network) {
    return refuse('invalid_network', `payments are accepted on ${req.network} only`);
  }
  if (!sameAddress(accepted.asset, req.asset)) {
    return refuse('invalid_payment_requirements', `the asset must be ${req.asset}`);
  }
  if (!sameAddress(auth.to, req.payTo) || !sameAddress(accepted.payTo, req.payTo)) {
    return refuse('invalid_exact_evm_payload_recipient_mismatch', `the payment must go to ${req.payTo}`);
  }
  if (auth.value !== req.amount || accepted.amount !== req.amount) {
    return refuse(
      'invalid_exact_evm_payload_authorization_value_mismatch',
      `the amount must be exactly ${req.amount} atomic units`,
    );
  }
  // What is left (maxTimeoutSeconds, extra) must be the challenge exactly as we issued it.
  if (!deepEqual(accepted, req)) {
    return refuse(
      'invalid_payment_requirements',
      'the accepted requirements differ from the challenge; pay the challenge exactly as returned',
    );
  }
  // An EOA signature (65 bytes) must recover to `from` here. Longer ones are smart-wallet signatures
  // (ERC-1271 / ERC-6492) that only the chain can check; the facilitator does that before anything runs.
  if (payment.signature.length === 132) {
    let signer: string;
    try {
      signer = await recoverTypedDataAddress({
        domain: {
          name: String(req.extra.name),
          version: String(req.extra.version),
          chainId,
          verifyingContract: getAddress(req.asset),
        },
        types: authorizationTypes,
        primaryType: 'TransferWithAuthorization',
        message: {
          from: getAddress(auth.from),
          to: getAddress(auth.to),
          value: BigInt(auth.value),
          validAfter: BigInt(auth.validAfter),
          validBefore: BigInt(auth.validBefore),
          nonce: auth.nonce as `0x${string}`,
        },
        signature: payment.signature,
      });
    } catch {
      return refuse('invalid_exact_evm_payload_signature', 'the signature is malformed');
    }
    if (!sameAddress(signer, auth.from)) {
      return refuse('invalid_exact_evm_payload_signature', 'the signature was not made by `from`');
    }
  }
  return undefined;
}

/**
 * The validity window, checked only before a nonce is first reserved: a payment must already be valid, must
 * stay valid long enough for the call and its settlement, and may not be valid for longer than we ask (which
 * bounds how long its nonce must be remembered).
 */
export function checkWindow(payment: DecodedPayment, offer: Offer, nowMs: number): Refusal | undefined {
  const { validAfter, validBefore } = payment.authorization;
  return windowRefusal(validAfter, validBefore, offer, nowMs, [
    'invalid_exact_evm_payload_authorization_valid_after',
    'invalid_exact_evm_payload_authorization_valid_before',
  ]);
}

/** The window check of either scheme; `reasons`: its codes for "not valid yet" and for a wrong end. */
export function windowRefusal(
  validAfter: string,
  validBefore: string,
  offer: Pick<Offer, 'minValiditySeconds' | 'requirements'>,
  nowMs: number,
  [notYet, badEnd]: [string, string],
): Refusal | undefined {
  const now = BigInt(Math.floor(nowMs / 1000));
  if (BigInt(validAfter) > now) return refuse(notYet, 'the payment is not valid yet');
  if (BigInt(validBefore) < now + BigInt(offer.minValiditySeconds)) {
    return refuse(
      badEnd,
      `the payment expires too soon: it must stay valid for at least ${offer.minValiditySeconds} s`,
    );
  }
  const latest = now + BigInt(offer.requirements.maxTimeoutSeconds + CLOCK_SKEW_SECONDS);
  if (BigInt(validBefore) > latest) {
    return refuse(
      badEnd,
      `the payment is valid for too long: at most ${offer.requirements.maxTimeoutSeconds} s`,
    );
  }
  return undefined;
}

/** The nonce's identity: one on-chain authorization, whatever door or body it is presented with. */
export function paymentKey(payment: DecodedPayment, req: PaymentRequirements): string {
  const a = payment.authorization;
  return `${req.network}:${req.asset}:${a.from}:${a.nonce}`.toLowerCase();
}
