import type { PaymentRequirements } from '@x402/core/types';
import { challengeHash } from 'mppx/evm';
import type { MppRefusal, ParsedCredential } from './credential.js';

// The `evm` method's credential is an EIP-3009 `transferWithAuthorization` signed for the challenge (its nonce
// is the challenge hash): the very payload x402's `exact` scheme settles. It is turned into an x402 payment for
// the action's x402 offer, so x402's own path pays for the call: the same reservation per authorization (one
// table, one key per network:asset:payer:nonce, whichever rail presents it), the same verify, settle-on-success,
// replay and resume, and the same facilitator.

const UINT = /^\d{1,78}$/;
const HEX = (bytes: number) => new RegExp(`^0x[0-9a-fA-F]{${bytes * 2}}$`);

export type EvmConversion =
  | { ok: true; payment: Record<string, unknown> }
  | { ok: false; refusal: MppRefusal };

export function evmPayment(c: ParsedCredential, requirements: PaymentRequirements): EvmConversion {
  const p = c.payload;
  const str = (k: string) => (typeof p[k] === 'string' ? (p[k] as string) : '');
  const refuse = (message: string): EvmConversion => ({
    ok: false,
    refusal: { problem: 'invalid-payload', message },
  });
  if (p.type !== 'authorization') return refuse('the evm payload must be an "authorization"');
  if (!HEX(20).test(str('from')) || !HEX(20).test(str('to'))) return refuse('from and to must be addresses');
  if (!UINT.test(str('value')) || !UINT.test(str('validAfter')) || !UINT.test(str('validBefore'))) {
    return refuse('value, validAfter and validBefore must be decimal integers');
  }
  if (!/^0x(?:[0-9a-fA-F]{2})+$/.test(str('signature'))) return refuse('the signature must be hex');
  // The nonce binds the authorization to this challenge: one challenge, one transfer.
  if (str('nonce').toLowerCase() !== challengeHash(c.challenge).toLowerCase()) {
    return {
      ok: false,
      refusal: { problem: 'verification-failed', message: 'the nonce is not the challenge hash' },
    };
  }
  return {
    ok: true,
    payment: {
      x402Version: 2,
      accepted: requirements,
      payload: {
        signature: str('signature'),
        authorization: {
          from: str('from'),
          to: str('to'),
          value: str('value'),
          validAfter: str('validAfter'),
          validBefore: str('validBefore'),
          nonce: str('nonce'),
        },
      },
    },
  };
}
