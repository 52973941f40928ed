import { Challenge } from 'mppx';
import { Methods as EvmMethods } from 'mppx/evm';
import { Methods as StripeMethods } from 'mppx/stripe';
import type { Action } from '../../../catalog/index.js';
import type { MppConfig, X402Config } from '../../config/index.js';
import { CLOCK_SKEW_SECONDS, offerFor, SETTLE_ALLOWANCE_SECONDS } from '../x402/requirements.js';

// What an MPP payer is asked for: one `Payment` challenge per method this gateway offers for the action, priced
// exactly as its x402 offer. Each challenge id is an HMAC over the challenge's contents (realm, method, intent,
// request, expiry, and the action in `opaque`), so a credential can only echo a challenge this gateway issued,
// for this action at this price; nothing about an issued challenge is stored.

/** Stripe's smallest card charge in USD cents (docs.stripe.com/currencies#minimum-and-maximum-charge-amounts). */
export const STRIPE_MIN_CENTS = 50;

/** Everything a challenge depends on besides the action and the time. */
export interface ChallengeTerms {
  mpp: MppConfig;
  x402: X402Config | undefined;
  /** The realm when TOLLGATE_MPP_REALM is unset: the public URL's host (read per call: known once listening). */
  publicUrl: () => string;
}

export type MppChallenge = ReturnType<typeof Challenge.from>;

/** "1.00" for 100 cents: the display-unit amount the methods' request schemas take (2 decimals of USD). */
export function centsAsUsd(cents: number): string {
  return `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
}

export function realmOf(t: ChallengeTerms): string {
  return t.mpp.realm ?? new URL(t.publicUrl()).host;
}

/**
 * How long a challenge (and so the EIP-3009 authorization the evm method signs until then) stays valid: as long
 * as an x402 payment for the same action must, so that it outlives the call plus its settlement.
 */
export function validitySeconds(t: ChallengeTerms, action: Action): number {
  if (t.x402) return offerFor(t.x402, action).requirements.maxTimeoutSeconds;
  return Math.max(300, Math.ceil(action.timeoutMs / 1000) + SETTLE_ALLOWANCE_SECONDS + CLOCK_SKEW_SECONDS);
}

/** The methods offered for an action: evm always (when on), stripe from Stripe's minimum charge up. */
export function methodsFor(t: ChallengeTerms, action: Action): Array<'evm' | 'stripe'> {
  const out: Array<'evm' | 'stripe'> = [];
  if (action.access !== 'paid') return out;
  if (t.mpp.evm && t.x402) out.push('evm');
  if (t.mpp.stripe && action.priceCents >= STRIPE_MIN_CENTS) out.push('stripe');
  return out;
}

/** One fresh challenge of `method` for `action`, expiring `validitySeconds` from `now` (ms). */
export function challengeFor(
  t: ChallengeTerms,
  action: Action,
  method: 'evm' | 'stripe',
  now: number,
): MppChallenge {
  const common = {
    secretKey: t.mpp.secretKey,
    realm: realmOf(t),
    expires: new Date(now + validitySeconds(t, action) * 1000).toISOString(),
    description: `${action.id}: $${centsAsUsd(action.priceCents)} per successful call; nothing is charged on failure`,
    // Bound into the id: a credential answers only a challenge issued for this action.
    meta: { action: action.id },
  };
  if (method === 'evm') {
    const x = t.x402 as X402Config;
    return Challenge.fromMethod(EvmMethods.charge, {
      ...common,
      request: {
        amount: centsAsUsd(action.priceCents),
        chainId: x.chainId,
        currency: x.asset,
        decimals: 6,
        recipient: x.payTo,
        credentialTypes: ['authorization'],
      },
    }) as MppChallenge;
  }
  return Challenge.fromMethod(StripeMethods.charge, {
    ...common,
    request: {
      amount: centsAsUsd(action.priceCents),
      currency: 'usd',
      decimals: 2,
      networkId: (t.mpp.stripe as { networkId: string }).networkId,
      paymentMethodTypes: ['card'],
    },
  }) as MppChallenge;
}
