import { encodePaymentRequiredHeader, encodePaymentResponseHeader } from '@x402/core/http';
import type { SettleResponse } from '@x402/core/types';
import { describe, expect, it } from 'vitest';
import { loadConfig, type X402Config } from '../../src/config/index.js';
import { encodeChallenge, encodeReceipt } from '../../src/run/x402/codec.js';
import { challengeFor, offerFor } from '../../src/run/x402/requirements.js';
import { newPayer } from '../helpers/x402.js';

// The header encoders are written out in src/run/x402/codec.ts (so gateways without x402 never load
// @x402/core/http): they must give exactly the library's bytes, non-ASCII text and extension responses included.

const cfg = loadConfig({
  TOLLGATE_X402_PAY_TO: newPayer().address,
  TOLLGATE_X402_FACILITATOR_URL: 'http://127.0.0.1:1',
}).x402 as X402Config;

describe('x402 header encoding', () => {
  it('[x402:unpaid-call-gets-402] PAYMENT-REQUIRED is the official encoding of the challenge', () => {
    const offer = offerFor(cfg, { id: 'scraperC/scrape', priceCents: 1, timeoutMs: 75_000 });
    const challenge = challengeFor(
      offer,
      {
        url: 'https://gw.example/api/run/scraperC/scrape',
        description: 'Scrape — 1¢ “quoted” ✓',
        mimeType: 'application/json',
      },
      'Payment required',
      undefined,
    );
    expect(encodeChallenge(challenge)).toBe(encodePaymentRequiredHeader(challenge));
  });

  it('[x402:official-client-pays] PAYMENT-RESPONSE is the official encoding, extension responses left out', () => {
    const receipt = {
      success: true,
      transaction: '0xabc',
      network: 'eip155:8453',
      payer: '0x0000000000000000000000000000000000000001',
      extensionResponses: { 'payment-identifier': { ok: 'é' } },
    } as SettleResponse;
    const ours = encodeReceipt(receipt);
    expect(ours).toBe(encodePaymentResponseHeader(receipt));
    expect(JSON.parse(Buffer.from(ours, 'base64').toString('utf8'))).not.toHaveProperty('extensionResponses');
  });
});
