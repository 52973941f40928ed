import { parseUsdToMicros } from '../lib/money.js';
import type { Env } from './index.js';

// Money in (README "Payments and sign-up"): Stripe for cards and top-ups, the welcome credit line and its
// settlement, and self-serve sign-up. Without the Stripe key and webhook secret the payment features are off
// (the dashboard says so); everything else works.

/** Stripe's smallest card charge in USD (stripe.com/docs/currencies#minimum-and-maximum-charge-amounts). */
export const STRIPE_MIN_CHARGE_MICROS = 500_000;

export interface StripeConfig {
  secretKey: string;
  webhookSecret: string;
  /** The API's origin (https://api.stripe.com, or a fake in tests). */
  host: string;
  port: number;
  protocol: 'http' | 'https';
}

export interface BillingConfig {
  /** undefined: card payments are off. */
  stripe: StripeConfig | undefined;
  /** The credit line granted once a card is on file (TOLLGATE_WELCOME_CREDIT_USD); 0: none. */
  welcomeLineMicros: number;
  topUpMinMicros: number;
  topUpMaxMicros: number;
  /** Drawn usage is charged to the card once it reaches this… */
  settleThresholdMicros: number;
  /** …and, whatever the amount (from Stripe's minimum up), at every multiple of this period (UTC). */
  settleEveryMs: number;
  /** How often the scheduler looks. */
  settleCheckMs: number;
  signup: 'open' | 'closed';
  signupsPerHour: number;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

export function billingConfig(env: Env, problems: string[]): BillingConfig {
  const key = env.TOLLGATE_STRIPE_SECRET_KEY;
  const whsec = env.TOLLGATE_STRIPE_WEBHOOK_SECRET;
  let stripe: StripeConfig | undefined;
  if (key && whsec) {
    const base = new URL(env.TOLLGATE_STRIPE_BASE_URL ?? 'https://api.stripe.com');
    if (base.protocol !== 'https:' && !LOOPBACK.has(base.hostname)) {
      problems.push('TOLLGATE_STRIPE_BASE_URL: must be https (plain http only for a loopback address)');
    }
    const protocol = base.protocol === 'http:' ? 'http' : 'https';
    stripe = {
      secretKey: key,
      webhookSecret: whsec,
      host: base.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: Number(base.port || (protocol === 'http' ? 80 : 443)),
      protocol,
    };
  } else if (key || whsec) {
    problems.push(
      'TOLLGATE_STRIPE_SECRET_KEY and TOLLGATE_STRIPE_WEBHOOK_SECRET: set both to turn card payments on',
    );
  }
  const min = parseUsdToMicros(env.TOLLGATE_TOPUP_MIN_USD);
  const max = parseUsdToMicros(env.TOLLGATE_TOPUP_MAX_USD);
  if (min < STRIPE_MIN_CHARGE_MICROS)
    problems.push('TOLLGATE_TOPUP_MIN_USD: at least 0.50 (Stripe’s minimum)');
  if (max < min) problems.push('TOLLGATE_TOPUP_MAX_USD: must not be below TOLLGATE_TOPUP_MIN_USD');
  const threshold = parseUsdToMicros(env.TOLLGATE_SETTLE_THRESHOLD_USD);
  if (threshold < STRIPE_MIN_CHARGE_MICROS) {
    problems.push('TOLLGATE_SETTLE_THRESHOLD_USD: at least 0.50 (Stripe’s minimum charge)');
  }
  return {
    stripe,
    welcomeLineMicros: parseUsdToMicros(env.TOLLGATE_WELCOME_CREDIT_USD),
    topUpMinMicros: min,
    topUpMaxMicros: max,
    settleThresholdMicros: threshold,
    settleEveryMs: env.TOLLGATE_SETTLE_EVERY_HOURS * 3_600_000,
    settleCheckMs: env.TOLLGATE_SETTLE_CHECK_SECONDS * 1000,
    signup: env.TOLLGATE_SIGNUP,
    signupsPerHour: env.TOLLGATE_SIGNUPS_PER_HOUR,
  };
}
