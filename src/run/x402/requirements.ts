import type { PaymentRequired, PaymentRequirements, ResourceInfo } from '@x402/core/types';
import type { X402Config } from '../../config/index.js';
import { formatUsd } from '../../lib/money.js';

// What we ask an x402 payer for. Requirements are a pure function of (configuration, action): the payer's
// `accepted` must deep-equal what we regenerate on the paid retry, so nothing here may depend on the request,
// the time or anything random.

/** Seconds we need after the call's own timeout to settle on chain (broadcast + one confirmation). */
export const SETTLE_ALLOWANCE_SECONDS = 30;
/** Clock difference tolerated between a payer and us when capping `validBefore`. */
export const CLOCK_SKEW_SECONDS = 60;

/** The facts about an action that a challenge needs (auth/ does not import the catalog). */
export interface PricedAction {
  id: string;
  priceCents: number;
  /** The action's timeout, ms: a payment must stay valid at least this long plus the settle allowance. */
  timeoutMs: number;
}

export interface Offer {
  requirements: PaymentRequirements;
  /** Settle before running (x402 "upfront" flow) instead of after success. */
  upfront: boolean;
  priceMicros: number;
  /** A payment must have at least this many seconds of validity left when it arrives. */
  minValiditySeconds: number;
}

export function offerFor(cfg: X402Config, action: PricedAction): Offer {
  // Prices are whole cents and the asset has 6 decimals, so atomic units are micro-USD.
  const priceMicros = action.priceCents * 10_000;
  const upfront = cfg.settleFirstCents !== undefined && action.priceCents >= cfg.settleFirstCents;
  const minValiditySeconds = Math.ceil(action.timeoutMs / 1000) + SETTLE_ALLOWANCE_SECONDS;
  const extra: Record<string, unknown> = { name: cfg.assetName, version: cfg.assetVersion };
  if (upfront) extra.paymentFlow = 'upfront';
  return {
    requirements: {
      scheme: 'exact',
      network: cfg.network,
      amount: String(priceMicros),
      asset: cfg.asset,
      payTo: cfg.payTo,
      // A fresh payment must outlive the slowest call plus settlement, whatever the operator configured.
      maxTimeoutSeconds: Math.max(cfg.maxTimeoutSeconds, minValiditySeconds + CLOCK_SKEW_SECONDS),
      extra,
    },
    upfront,
    priceMicros,
    minValiditySeconds,
  };
}

export function priceDescription(action: PricedAction): string {
  return (
    `${action.id}: ${formatUsd(action.priceCents * 10_000)} USDC per successful call; nothing is charged on ` +
    'failure. Accounts may pay with an API key instead (Authorization: Bearer tg_sk_…).'
  );
}

/**
 * The PaymentRequired of one action; `error` is "Payment required" or the reason a payment was refused, and
 * `extensions` its discovery and payment-identifier declarations (./discovery.ts).
 */
export function challengeFor(
  offer: Offer,
  resource: ResourceInfo,
  error: string,
  extensions?: Record<string, unknown>,
  /** More ways to pay with x402 beside `exact` (a session's `batch-settlement` terms). */
  more?: PaymentRequirements[],
): PaymentRequired {
  const pr: PaymentRequired = {
    x402Version: 2,
    error,
    resource,
    accepts: [offer.requirements, ...(more ?? [])],
  };
  if (extensions) pr.extensions = extensions;
  return pr;
}
