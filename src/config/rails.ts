import { z } from 'zod';
import { int, list } from './fields.js';
import type { Env } from './index.js';

// The optional payment rails beside x402 `exact` (docs/operator.md "More ways to pay"): the Machine Payments
// Protocol (TOLLGATE_MPP_*) and x402 sessions, the `batch-settlement` scheme (TOLLGATE_X402_SESSION_*). Both are
// off by default; each is checked here as a whole once the schema parsed.

export const MPP_METHODS = ['evm', 'stripe'] as const;

/** The variables of this section, spread into the one schema (./index.ts). */
export const railsEnvShape = {
  /** MPP methods offered (comma-separated: evm, stripe); empty: MPP is off. */
  TOLLGATE_MPP_METHODS: list.default([]),
  /** Binds each MPP challenge to its contents (HMAC-SHA256); every replica must share it. A secret. */
  TOLLGATE_MPP_SECRET_KEY: z.string().min(32, 'at least 32 characters').optional(),
  /** The challenges' protection space; default: the public URL's host. */
  TOLLGATE_MPP_REALM: z
    .string()
    .regex(/^[\x21-\x7e]{1,200}$/, 'printable ASCII without spaces')
    .optional(),
  /** The Stripe method: the seller's Stripe Business Network profile id (challenge `networkId`). */
  TOLLGATE_MPP_STRIPE_NETWORK_ID: z.string().min(1).max(200).optional(),
  /** x402 sessions (`batch-settlement`): on offers them beside `exact` on every paid action. */
  TOLLGATE_X402_SESSIONS: z.enum(['on', 'off']).default('off'),
  /** How long a payer's withdrawal takes: every voucher is claimed well before (15 min to 30 days). */
  TOLLGATE_X402_SESSION_WITHDRAW_DELAY_SECONDS: int(900, 2_592_000).default(86_400),
  /** How often charged vouchers are claimed on chain and swept to the pay-to address. */
  TOLLGATE_X402_SESSION_CLAIM_SECONDS: int(10, 86_400).default(300),
} as const;

export interface MppConfig {
  /** HMAC key of the challenge ids. */
  secretKey: string;
  /** undefined: the public URL's host. */
  realm: string | undefined;
  /** The `evm` method: EIP-3009 on the x402 network and asset, settled by the x402 facilitator. */
  evm: boolean;
  /** The `stripe` method: a shared payment token (card), authorized before the call, captured after it. */
  stripe: { networkId: string } | undefined;
}

export interface X402SessionConfig {
  withdrawDelaySeconds: number;
  claimIntervalMs: number;
}

export function mppConfig(
  env: Env,
  ctx: { x402: boolean; stripe: boolean },
  problems: string[],
): MppConfig | undefined {
  const methods = env.TOLLGATE_MPP_METHODS;
  const unknown = methods.filter((m) => !(MPP_METHODS as readonly string[]).includes(m));
  if (unknown.length > 0) {
    problems.push(
      `TOLLGATE_MPP_METHODS: unknown method ${unknown.join(', ')} (known: ${MPP_METHODS.join(', ')})`,
    );
  }
  if (methods.length === 0) {
    for (const k of ['TOLLGATE_MPP_SECRET_KEY', 'TOLLGATE_MPP_STRIPE_NETWORK_ID'] as const) {
      if (env[k]) problems.push(`${k}: only used with TOLLGATE_MPP_METHODS`);
    }
    return undefined;
  }
  const secretKey = env.TOLLGATE_MPP_SECRET_KEY;
  if (!secretKey) problems.push('TOLLGATE_MPP_SECRET_KEY: needed for MPP (openssl rand -base64 32)');
  const evm = methods.includes('evm');
  const stripe = methods.includes('stripe');
  if (evm && !ctx.x402) {
    problems.push(
      'TOLLGATE_MPP_METHODS: evm settles through x402: set TOLLGATE_X402_PAY_TO and its facilitator',
    );
  }
  if (stripe && !ctx.stripe) {
    problems.push(
      'TOLLGATE_MPP_METHODS: stripe needs card payments (TOLLGATE_STRIPE_SECRET_KEY, TOLLGATE_STRIPE_WEBHOOK_SECRET)',
    );
  }
  const networkId = env.TOLLGATE_MPP_STRIPE_NETWORK_ID;
  if (stripe && !networkId) problems.push('TOLLGATE_MPP_STRIPE_NETWORK_ID: needed for the stripe method');
  if (!stripe && networkId) problems.push('TOLLGATE_MPP_STRIPE_NETWORK_ID: only used with the stripe method');
  if (!secretKey || unknown.length > 0) return undefined;
  return {
    secretKey,
    realm: env.TOLLGATE_MPP_REALM,
    evm,
    stripe: stripe && networkId ? { networkId } : undefined,
  };
}

export function x402SessionConfig(
  env: Env,
  x402: boolean,
  problems: string[],
): X402SessionConfig | undefined {
  if (env.TOLLGATE_X402_SESSIONS !== 'on') return undefined;
  if (!x402) {
    problems.push('TOLLGATE_X402_SESSIONS: sessions are x402: set TOLLGATE_X402_PAY_TO and its facilitator');
    return undefined;
  }
  return {
    withdrawDelaySeconds: env.TOLLGATE_X402_SESSION_WITHDRAW_DELAY_SECONDS,
    claimIntervalMs: env.TOLLGATE_X402_SESSION_CLAIM_SECONDS * 1000,
  };
}
