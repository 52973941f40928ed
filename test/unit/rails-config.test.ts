import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/index.js';

// TOLLGATE_MPP_* and TOLLGATE_X402_SESSION*: off by default, and a half-configured rail stops start-up with
// every problem named, as the other sections do.

const X402 = {
  TOLLGATE_X402_PAY_TO: '0x1111111111111111111111111111111111111111',
  TOLLGATE_X402_RPC_URL: 'http://127.0.0.1:8545',
  TOLLGATE_X402_SIGNER_KEY: `0x${'11'.repeat(32)}`,
};
const STRIPE = {
  TOLLGATE_STRIPE_SECRET_KEY: 'sk_test_123',
  TOLLGATE_STRIPE_WEBHOOK_SECRET: 'whsec_123',
};
const SECRET = { TOLLGATE_MPP_SECRET_KEY: 'a-secret-of-at-least-thirty-two-characters' };

function problems(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (e) {
    if (e instanceof ConfigError) return e.problems.join('\n');
    throw e;
  }
  return '';
}

describe('rails configuration', () => {
  it('[mpp:config] MPP and sessions are off by default', () => {
    const c = loadConfig({ ...X402 });
    expect(c.mpp).toBeUndefined();
    expect(c.x402Sessions).toBeUndefined();
  });

  it('[mpp:config] MPP with both methods, the realm defaulted, the secret required', () => {
    const c = loadConfig({
      ...X402,
      ...STRIPE,
      ...SECRET,
      TOLLGATE_MPP_METHODS: 'evm, stripe',
      TOLLGATE_MPP_STRIPE_NETWORK_ID: 'profile_123',
    });
    expect(c.mpp).toEqual({
      secretKey: SECRET.TOLLGATE_MPP_SECRET_KEY,
      realm: undefined,
      evm: true,
      stripe: { networkId: 'profile_123' },
    });
    expect(problems({ ...X402, TOLLGATE_MPP_METHODS: 'evm' })).toMatch(/TOLLGATE_MPP_SECRET_KEY: needed/);
    expect(
      problems({ ...X402, ...SECRET, TOLLGATE_MPP_SECRET_KEY: 'short', TOLLGATE_MPP_METHODS: 'evm' }),
    ).toMatch(/TOLLGATE_MPP_SECRET_KEY: at least 32/);
  });

  it('[mpp:config] each method needs what it settles with; an unknown method is named', () => {
    expect(problems({ ...SECRET, TOLLGATE_MPP_METHODS: 'evm' })).toMatch(/evm settles through x402/);
    const noStripe = problems({ ...X402, ...SECRET, TOLLGATE_MPP_METHODS: 'stripe' });
    expect(noStripe).toMatch(/stripe needs card payments/);
    expect(noStripe).toMatch(/TOLLGATE_MPP_STRIPE_NETWORK_ID: needed/);
    expect(problems({ ...X402, ...SECRET, TOLLGATE_MPP_METHODS: 'evm,paypal' })).toMatch(
      /unknown method paypal/,
    );
    expect(problems({ ...X402, ...SECRET })).toMatch(
      /TOLLGATE_MPP_SECRET_KEY: only used with TOLLGATE_MPP_METHODS/,
    );
  });

  it("[x402:session-config] sessions need x402; the withdrawal delay stays within the contract's range", () => {
    const c = loadConfig({
      ...X402,
      TOLLGATE_X402_SESSIONS: 'on',
      TOLLGATE_X402_SESSION_CLAIM_SECONDS: '60',
    });
    expect(c.x402Sessions).toEqual({ withdrawDelaySeconds: 86_400, claimIntervalMs: 60_000 });
    expect(problems({ TOLLGATE_X402_SESSIONS: 'on' })).toMatch(/TOLLGATE_X402_SESSIONS: sessions are x402/);
    expect(
      problems({ ...X402, TOLLGATE_X402_SESSIONS: 'on', TOLLGATE_X402_SESSION_WITHDRAW_DELAY_SECONDS: '60' }),
    ).toMatch(/TOLLGATE_X402_SESSION_WITHDRAW_DELAY_SECONDS: an integer from 900/);
  });
});
