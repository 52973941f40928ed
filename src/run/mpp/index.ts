import type { Action } from '../../../catalog/index.js';
import type { StateDb } from '../../backend.js';
import type { MppConfig, StripeConfig, X402Config } from '../../config/index.js';
import { GatewayError } from '../../errors.js';
import type { Clock } from '../../lib/clock.js';
import { centsToMicros } from '../../lib/money.js';
import type { Outcome, RunDeps } from '../execute.js';
import {
  MPP_CHALLENGE_META,
  MPP_CREDENTIAL_META,
  type MppRail,
  type RailParts,
  type RailTransport,
} from '../rails.js';
import { signReceipt } from '../receipts.js';
import { mppReceiptParts } from '../standard-receipts.js';
import { x402AccountId } from '../x402/accounts.js';
import type { CallResult, Quote } from '../x402/gate.js';
import { openPaymentStore } from '../x402/payment-store.js';
import { Challenge, type ChallengeTerms, centsAsUsd, challengeFor, methodsFor } from './challenges.js';
import { checkCredential, type MppRefusal, type ParsedCredential } from './credential.js';
import { evmPayment } from './evm.js';
import { payWithStripe } from './stripe-pay.js';
import { stripeSptProcessor } from './stripe-spt.js';

// The Machine Payments Protocol as a payment rail (src/run/rails.ts): an anonymous paid call's 402 carries one
// `WWW-Authenticate: Payment` challenge per method beside x402's PAYMENT-REQUIRED (MCP: `_meta
// ["org.paymentauth/payment-required"]`), priced as the x402 offer; a retry with `Authorization: Payment
// <credential>` (MCP: `_meta["org.paymentauth/credential"]`) runs the call once and pays only if it succeeded,
// with a `Payment-Receipt` (MCP: `_meta["org.paymentauth/receipt"]`). Methods: `evm` (an EIP-3009 authorization
// that x402's own path settles, ./evm.ts) and `stripe` (a shared payment token, ./stripe-pay.ts). Loaded by main.ts
// only when TOLLGATE_MPP_METHODS is set.

export interface MppRailDeps {
  config: MppConfig;
  x402: X402Config | undefined;
  stripe: StripeConfig | undefined;
  state: StateDb;
  clock: Clock;
  publicUrl: () => string;
}

export async function createMppRail(d: MppRailDeps): Promise<MppRail> {
  const terms: ChallengeTerms = { mpp: d.config, x402: d.x402, publicUrl: d.publicUrl };
  // The x402 payment table: one reservation per payment, shared by replicas, whichever rail presents it.
  const payments = openPaymentStore(d.state, d.clock);
  const processor = d.config.stripe && d.stripe ? await stripeSptProcessor(d.stripe) : undefined;

  const challenge = (action: Action, _transport: RailTransport): RailParts | undefined => {
    const methods = methodsFor(terms, action);
    if (methods.length === 0) return undefined;
    const now = d.clock.now();
    const challenges = methods.map((m) => challengeFor(terms, action, m, now));
    return {
      headers: { 'WWW-Authenticate': challenges.map((c) => serializeChallenge(c)) },
      meta: { [MPP_CHALLENGE_META]: { challenges } },
    };
  };

  /** 402: the refusal in words, fresh challenges, and x402's challenge beside them when x402 is on. */
  const refusedWith = (action: Action, quote: Quote | undefined, transport: RailTransport) => {
    return (r: MppRefusal): CallResult => ({
      outcome: {
        ok: false,
        error: new GatewayError(
          'payment_required',
          `The MPP payment was refused (${r.problem}): ${r.message}. Nothing was charged; answer a new challenge ` +
            '(WWW-Authenticate: Payment).',
          {
            details: {
              price_cents: action.priceCents,
              reason: r.problem,
              problem: `https://paymentauth.org/problems/${r.problem}`,
            },
          },
        ),
      },
      ...(quote ? { paymentRequired: quote.challenge(r.problem) } : {}),
      ...withParts(challenge(action, transport)),
    });
  };

  return {
    challenge,
    async pay({ run, action, credential, call, quote, payX402 }) {
      const refused = refusedWith(action, quote, call.transport);
      const checked = checkCredential(credential, action, terms);
      if (!checked.ok) return refused(checked.refusal);
      const c = checked.credential;
      if (c.method === 'evm') {
        if (!quote || !payX402) return refused({ problem: 'method-unsupported', message: 'evm needs x402' });
        const converted = evmPayment(c, quote.offer.requirements);
        if (!converted.ok) return refused(converted.refusal);
        const r = await payX402(converted.payment);
        if (!r.outcome.ok) return { ...r, ...withParts(challenge(action, call.transport)) };
        const tx = r.paymentResponse?.transaction ?? '';
        const payer = String(
          (converted.payment.payload as { authorization: { from: string } }).authorization.from,
        );
        return paid(run, action, c, r.outcome, { method: 'evm', reference: tx, payer });
      }
      if (!processor) return refused({ problem: 'method-unsupported', message: 'stripe is not configured' });
      const s = await payWithStripe(run, { processor, payments }, action, c, call, refused);
      if (!s.result.outcome.ok || !s.reference) return s.result;
      const payer = (await payments.get(`mpp:stripe:${String(c.payload.spt)}`))?.payer ?? 'stripe';
      return paid(run, action, c, s.result.outcome, { method: 'stripe', reference: s.reference, payer });
    },
    terms: (action) => declared(terms, action),
    close: async () => {},
  };
}

function withParts(parts: RailParts | undefined): Pick<CallResult, 'rail'> {
  return parts ? { rail: parts } : {};
}

/** The paid outcome with its receipts: `Payment-Receipt`, and the tollgate receipt of the same charge (signed). */
function paid(
  run: RunDeps,
  action: Action,
  c: ParsedCredential,
  outcome: Extract<Outcome, { ok: true }>,
  p: { method: 'evm' | 'stripe'; reference: string; payer: string },
): CallResult {
  const mpp = { method: p.method, reference: p.reference, challenge_id: c.challenge.id };
  const jws = outcome.transactionId
    ? signReceipt(run, {
        transactionId: outcome.transactionId,
        action: action.id,
        chargedMicros: outcome.chargedMicros,
        principal: { kind: 'x402', accountId: x402AccountId(p.payer), payer: p.payer },
        paymentMethod: 'mpp',
        mpp,
        replayed: outcome.replayed,
      })
    : undefined;
  const receipt = {
    status: 'success' as const,
    method: p.method,
    reference: p.reference,
    timestamp: new Date(run.clock.now()).toISOString(),
    ...(jws ? { jws } : {}),
  };
  return { outcome: { ...outcome, receipt: jws }, rail: mppReceiptParts(receipt, c.challenge.id) };
}

function serializeChallenge(c: ReturnType<typeof challengeFor>): string {
  // mppx's serializer: the exact wire form its clients parse.
  return Challenge.serialize(c);
}

/** What descriptors, /openapi.json and the MCP tool list declare for MPP. */
function declared(t: ChallengeTerms, action: Action): Record<string, unknown> | undefined {
  const methods = methodsFor(t, action);
  if (methods.length === 0) return undefined;
  return {
    protocol: 'mpp',
    price_mode: 'fixed',
    scheme: 'Payment',
    challenge_header: 'WWW-Authenticate',
    http_header: 'Authorization',
    mcp_meta_key: MPP_CREDENTIAL_META,
    methods: methods.map((m) =>
      m === 'evm'
        ? {
            method: 'evm',
            intent: 'charge',
            network: t.x402?.network,
            currency: t.x402?.asset,
            amount: String(centsToMicros(action.priceCents)),
            recipient: t.x402?.payTo,
          }
        : {
            method: 'stripe',
            intent: 'charge',
            currency: 'usd',
            amount: String(action.priceCents),
            amount_usd: centsAsUsd(action.priceCents),
            network_id: t.mpp.stripe?.networkId,
          },
    ),
  };
}
