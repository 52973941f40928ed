import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, type X402Config } from '../../src/config/index.js';
import { type DecodedPayment, decodePayment, MAX_PAYMENT_BYTES } from '../../src/run/x402/codec.js';
import { checkPayment, checkWindow, paymentKey } from '../../src/run/x402/local-check.js';
import { offerFor } from '../../src/run/x402/requirements.js';
import { encodePayment, newPayer, signPayment } from '../helpers/x402.js';

// The local half of x402: decoding, the checks that need no chain, the deterministic challenge, and the
// configuration. Payments are signed by hand with real keys (viem), so the signature checks are real.

const payTo = newPayer().address;
const cfg: X402Config = loadConfig({
  TOLLGATE_X402_PAY_TO: payTo,
  TOLLGATE_X402_FACILITATOR_URL: 'http://127.0.0.1:1',
}).x402 as X402Config;
const action = { id: 'scraperC/scrape', priceCents: 1, timeoutMs: 75_000 };
const offer = offerFor(cfg, action);
const req = offer.requirements;
const payer = newPayer();

function decoded(p: unknown): DecodedPayment {
  const d = decodePayment(p);
  if (!d.ok) throw new Error(d.message);
  return d.payment;
}

async function reasonOf(p: PaymentPayload, r: PaymentRequirements = req) {
  return (await checkPayment(decoded(p), r, cfg.chainId))?.reason;
}

describe('x402 challenge', () => {
  it('[x402:unpaid-call-gets-402] requirements are deterministic, in atomic units, with the token domain', () => {
    expect(offerFor(cfg, action)).toEqual(offer);
    expect(req).toEqual({
      scheme: 'exact',
      network: 'eip155:8453',
      amount: '10000',
      asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      payTo,
      maxTimeoutSeconds: 300,
      extra: { name: 'USD Coin', version: '2' },
    });
    // A payment must outlive the slowest call plus settlement, whatever the operator configured.
    const slow = offerFor({ ...cfg, maxTimeoutSeconds: 30 }, { ...action, timeoutMs: 120_000 });
    expect(slow.minValiditySeconds).toBe(150);
    expect(slow.requirements.maxTimeoutSeconds).toBe(210);
  });

  it('[x402:settle-first] actions at or above the configured price are offered as "upfront"', () => {
    const c = { ...cfg, settleFirstCents: 4 };
    expect(offerFor(c, action).upfront).toBe(false);
    const big = offerFor(c, { ...action, priceCents: 5 });
    expect(big.upfront).toBe(true);
    expect(big.requirements.extra).toEqual({ name: 'USD Coin', version: '2', paymentFlow: 'upfront' });
  });
});

describe('x402 local checks', () => {
  it('[x402:invalid-payment-402] decodes base64 or an object; refuses everything else', async () => {
    const p = await signPayment(payer, req);
    expect(decoded(encodePayment(p)).authorization.nonce).toBe(decoded(p).authorization.nonce);
    for (const bad of [
      '',
      'not base64!',
      encodePayment([1, 2]),
      encodePayment({ x402Version: 2 }),
      42,
      null,
    ]) {
      expect(decodePayment(bad).ok, String(bad)).toBe(false);
    }
    const huge = { ...p, extensions: { pad: 'x'.repeat(MAX_PAYMENT_BYTES) } };
    expect(decodePayment(huge)).toEqual({ ok: false, message: 'the payment is too large' });
    const badNonce = structuredClone(p) as PaymentPayload & { payload: { authorization: { nonce: string } } };
    badNonce.payload.authorization.nonce = '0x1234';
    expect(decodePayment(badNonce).ok).toBe(false);
  });

  it('[x402:invalid-payment-402] each mismatch with the requirements has its own reason', async () => {
    expect(await reasonOf(await signPayment(payer, req))).toBeUndefined();
    const wrong = (patch: Partial<PaymentRequirements>) => signPayment(payer, { ...req, ...patch });
    expect(await reasonOf({ ...(await signPayment(payer, req)), x402Version: 1 })).toBe(
      'invalid_x402_version',
    );
    expect(await reasonOf(await wrong({ scheme: 'upto' }))).toBe('unsupported_scheme');
    expect(await reasonOf(await wrong({ network: 'eip155:84532' }))).toBe('invalid_network');
    expect(await reasonOf(await wrong({ asset: newPayer().address }))).toBe('invalid_payment_requirements');
    expect(await reasonOf(await wrong({ payTo: newPayer().address }))).toBe(
      'invalid_exact_evm_payload_recipient_mismatch',
    );
    // `to` differs while `accepted` is right.
    expect(await reasonOf(await signPayment(payer, req, { to: newPayer().address }))).toBe(
      'invalid_exact_evm_payload_recipient_mismatch',
    );
    expect(await reasonOf(await signPayment(payer, req, { value: '9999' }))).toBe(
      'invalid_exact_evm_payload_authorization_value_mismatch',
    );
    expect(await reasonOf(await wrong({ maxTimeoutSeconds: 3600 }))).toBe('invalid_payment_requirements');
    expect(await reasonOf(await wrong({ extra: { name: 'USDC', version: '2' } }))).toBe(
      'invalid_payment_requirements',
    );
  });

  it('[x402:invalid-payment-402] the EIP-712 signature must recover to `from` (domain included)', async () => {
    expect(await reasonOf(await signPayment(payer, req, { signer: newPayer() }))).toBe(
      'invalid_exact_evm_payload_signature',
    );
    // Signed for another chain: a well-formed signature that recovers to someone else.
    expect(await reasonOf(await signPayment(payer, req, { chainId: 84532 }))).toBe(
      'invalid_exact_evm_payload_signature',
    );
    const p = await signPayment(payer, req);
    (p.payload as { signature: string }).signature = `0x${'00'.repeat(65)}`;
    expect(await reasonOf(p)).toBe('invalid_exact_evm_payload_signature');
  });

  it('[x402:invalid-payment-402] the validity window: valid now, long enough for the call, not too long', async () => {
    const nowMs = Date.UTC(2026, 10, 22, 12);
    const now = BigInt(nowMs / 1000);
    const at = async (o: { validAfter?: bigint; validBefore: bigint }) =>
      checkWindow(decoded(await signPayment(payer, req, o)), offer, nowMs)?.reason;
    expect(await at({ validBefore: now + 300n })).toBeUndefined();
    expect(await at({ validAfter: now + 5n, validBefore: now + 300n })).toBe(
      'invalid_exact_evm_payload_authorization_valid_after',
    );
    expect(await at({ validBefore: now - 1n })).toBe('invalid_exact_evm_payload_authorization_valid_before');
    // 75 s action + 30 s settlement allowance: 104 s left is too little.
    expect(await at({ validBefore: now + 104n })).toBe(
      'invalid_exact_evm_payload_authorization_valid_before',
    );
    expect(await at({ validBefore: now + 105n })).toBeUndefined();
    // Capped at maxTimeoutSeconds plus 60 s of clock skew, so nonces need not be remembered for ever.
    expect(await at({ validBefore: now + 361n })).toBe(
      'invalid_exact_evm_payload_authorization_valid_before',
    );
  });

  it('[x402:replay-runs-once] the nonce key identifies the authorization, whatever its encoding', async () => {
    const p = await signPayment(payer, req);
    expect(paymentKey(decoded(p), req)).toBe(paymentKey(decoded(encodePayment(p)), req));
    expect(paymentKey(decoded(p), req)).toMatch(/^eip155:8453:0x833589fcd6edb6e08f4c7c32d4f71b54bda02913:0x/);
  });
});

describe('x402 configuration', () => {
  const problems = (env: Record<string, string>) => {
    try {
      loadConfig(env);
      return '';
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      return (e as ConfigError).problems.join('\n');
    }
  };

  it('[x402:config] off without a pay-to address; defaults per network; one facilitator, fully specified', () => {
    expect(loadConfig({}).x402).toBeUndefined();
    const sepolia = loadConfig({
      TOLLGATE_X402_PAY_TO: payTo,
      TOLLGATE_X402_NETWORK: 'eip155:84532',
      TOLLGATE_X402_RPC_URL: 'http://127.0.0.1:8545',
      TOLLGATE_X402_SIGNER_KEY: `0x${'11'.repeat(32)}`,
    }).x402;
    expect(sepolia).toMatchObject({
      chainId: 84532,
      asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
      assetName: 'USDC',
      assetVersion: '2',
      facilitator: { kind: 'builtin', rpcUrl: 'http://127.0.0.1:8545' },
    });
    expect(cfg.facilitator).toEqual({ kind: 'remote', url: 'http://127.0.0.1:1', authHeader: undefined });
    expect(
      loadConfig({
        TOLLGATE_X402_PAY_TO: payTo,
        TOLLGATE_X402_FACILITATOR_URL: 'https://f.example/x402/',
        TOLLGATE_X402_FACILITATOR_AUTH_HEADER: 'X-Api-Key:  abc: def',
      }).x402?.facilitator,
    ).toEqual({
      kind: 'remote',
      url: 'https://f.example/x402',
      authHeader: { name: 'X-Api-Key', value: 'abc: def' },
    });

    expect(problems({ TOLLGATE_X402_PAY_TO: payTo })).toMatch(/needs a facilitator/);
    expect(problems({ TOLLGATE_X402_PAY_TO: payTo, TOLLGATE_X402_RPC_URL: 'http://127.0.0.1:8545' })).toMatch(
      /needs a facilitator/,
    );
    expect(
      problems({
        TOLLGATE_X402_PAY_TO: payTo,
        TOLLGATE_X402_FACILITATOR_URL: 'https://f.example',
        TOLLGATE_X402_RPC_URL: 'http://127.0.0.1:8545',
        TOLLGATE_X402_SIGNER_KEY: `0x${'11'.repeat(32)}`,
      }),
    ).toMatch(/not both/);
    expect(
      problems({
        TOLLGATE_X402_PAY_TO: payTo,
        TOLLGATE_X402_NETWORK: 'eip155:10',
        TOLLGATE_X402_FACILITATOR_URL: 'https://f.example',
      }),
    ).toMatch(/TOLLGATE_X402_ASSET_NAME/);
    expect(problems({ TOLLGATE_X402_PAY_TO: '0x123' })).toMatch(/TOLLGATE_X402_PAY_TO/);
  });

  it('[x402:config] a malformed signer key is reported without being echoed', () => {
    const secret = `0x${'ab'.repeat(31)}zz`;
    const p = problems({ TOLLGATE_X402_PAY_TO: payTo, TOLLGATE_X402_SIGNER_KEY: secret });
    expect(p).toMatch(/TOLLGATE_X402_SIGNER_KEY/);
    expect(p).not.toContain(secret);
  });
});
