import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/index.js';

// Money-in configuration (the webhook event claims: billing-store.test.ts).

const KEY = 'sk_test_abc123';
const WHSEC = 'whsec_abc123';

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
    return [];
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
}

describe('billing configuration', () => {
  it('payments are off without both secrets, on with both; the line defaults to 2 USD (docs/spec.md §8)', () => {
    const off = loadConfig({});
    expect(off.billing).toMatchObject({ stripe: undefined, welcomeLineMicros: 2_000_000, signup: 'closed' });
    const on = loadConfig({ TOLLGATE_STRIPE_SECRET_KEY: KEY, TOLLGATE_STRIPE_WEBHOOK_SECRET: WHSEC });
    expect(on.billing.stripe).toEqual({
      secretKey: KEY,
      webhookSecret: WHSEC,
      host: 'api.stripe.com',
      port: 443,
      protocol: 'https',
    });
    const fake = loadConfig({
      TOLLGATE_STRIPE_SECRET_KEY: KEY,
      TOLLGATE_STRIPE_WEBHOOK_SECRET: WHSEC,
      TOLLGATE_STRIPE_BASE_URL: 'http://127.0.0.1:4010',
    });
    expect(fake.billing.stripe).toMatchObject({ host: '127.0.0.1', port: 4010, protocol: 'http' });
  });

  it('refuses half a setup, plain http off loopback, and amounts below Stripe’s minimum', () => {
    expect(problems({ TOLLGATE_STRIPE_SECRET_KEY: KEY })[0]).toMatch(/set both/);
    expect(problems({ TOLLGATE_STRIPE_WEBHOOK_SECRET: WHSEC })[0]).toMatch(/set both/);
    expect(
      problems({ TOLLGATE_STRIPE_SECRET_KEY: 'pk_test_x', TOLLGATE_STRIPE_WEBHOOK_SECRET: WHSEC })[0],
    ).toMatch(/TOLLGATE_STRIPE_SECRET_KEY/);
    expect(
      problems({
        TOLLGATE_STRIPE_SECRET_KEY: KEY,
        TOLLGATE_STRIPE_WEBHOOK_SECRET: WHSEC,
        TOLLGATE_STRIPE_BASE_URL: 'http://stripe.example',
      })[0],
    ).toMatch(/must be https/);
    expect(problems({ TOLLGATE_TOPUP_MIN_USD: '0.25' })[0]).toMatch(/TOLLGATE_TOPUP_MIN_USD/);
    expect(problems({ TOLLGATE_TOPUP_MIN_USD: '20', TOLLGATE_TOPUP_MAX_USD: '10' })[0]).toMatch(/MAX/);
    expect(problems({ TOLLGATE_SETTLE_THRESHOLD_USD: '0.1' })[0]).toMatch(/THRESHOLD/);
    expect(problems({ TOLLGATE_SIGNUP: 'maybe' })[0]).toMatch(/TOLLGATE_SIGNUP/);
  });
});
