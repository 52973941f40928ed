import { Challenge } from 'mppx';
import type { Action } from '../../../catalog/index.js';
import type { StateDb } from '../../backend.js';
import type { MppConfig, StripeConfig, X402Config } from '../../config/index.js';
import type { Clock } from '../../lib/clock.js';
import { centsToMicros } from '../../lib/money.js';
import type { Outcome, RunDeps } from '../execute.js';
import {
  MPP_CHALLENGE_META,
  MPP_CREDENTIAL_META,
  type PaymentParts,
  type PaymentRail,
  present,
  type RailPayment,
  type RailTerms,
} from '../rails.js';
import { openPaymentStore } from '../x402/payment-store.js';
import type { X402Rail } from '../x402/rail.js';
import { type ChallengeTerms, centsAsUsd, challengeFor, methodsFor } from './challenges.js';
import { checkCredential, type ParsedCredential } from './credential.js';
import { evmPayment } from './evm.js';
import { mppPaid, mppRefused } from './paid.js';
import { openStripe } from './stripe-pay.js';
import { stripeSptProcessor } from './stripe-spt.js';

// The Machine Payments Protocol as a payment rail (src/run/rails.ts): an anonymous paid call's 402 carries one
// `WWW-Authenticate: Payment` challenge per method beside x402's PAYMENT-REQUIRED (MCP: `_meta
// ["org.paymentauth/payment-required"]`), priced as the x402 offer; a retry with `Authorization: Payment
// <credential>` (MCP: `_meta["org.paymentauth/credential"]`) runs the call once and pays only if it succeeded,
// with a `Payment-Receipt` (MCP: `_meta["org.paymentauth/receipt"]`). Methods: `evm` (an EIP-3009 authorization
// that x402's own path settles, ./evm.ts) and `stripe` (a shared payment token, ./stripe-pay.ts). Loaded by the
// composition root only when TOLLGATE_MPP_METHODS is set.

export interface MppRailDeps {
  config: MppConfig;
  x402: X402Config | undefined;
  /** The x402 rail, when x402 is on: the evm method pays through it. */
  x402Rail: X402Rail | undefined;
  stripe: StripeConfig | undefined;
  state: StateDb;
  clock: Clock;
  publicUrl: () => string;
}

export async function createMppRail(d: MppRailDeps): Promise<PaymentRail> {
  const terms: ChallengeTerms = { mpp: d.config, x402: d.x402, publicUrl: d.publicUrl };
  // The x402 payment table: one reservation per payment, shared by replicas, whichever rail presents it.
  const payments = openPaymentStore(d.state, d.clock);
  const processor = d.config.stripe && d.stripe ? await stripeSptProcessor(d.stripe) : undefined;

  const challenge = (action: Action): PaymentParts | undefined => {
    const methods = methodsFor(terms, action);
    if (methods.length === 0) return undefined;
    const now = d.clock.now();
    const challenges = methods.map((m) => challengeFor(terms, action, m, now));
    return {
      // mppx's serializer: the exact wire form its clients parse.
      headers: { 'WWW-Authenticate': challenges.map((c) => Challenge.serialize(c)) },
      meta: { [MPP_CHALLENGE_META]: { challenges } },
    };
  };

  return {
    names: ['mpp'],
    presented: (call) => present(call.credential),
    offer(action) {
      const parts = challenge(action);
      return (
        parts && {
          words:
            'MPP: answer a WWW-Authenticate: Payment challenge and retry with Authorization: Payment <credential>',
          accepts: {
            method: 'mpp',
            header: 'Authorization: Payment <credential>',
            challenge: 'WWW-Authenticate',
          },
          parts,
        }
      );
    },
    async open(run, call) {
      const checked = checkCredential(call.credential, call.action, terms);
      if (!checked.ok) return mppRefused(run, call, checked.refusal);
      const c = checked.credential;
      if (c.method === 'stripe') {
        if (!processor) {
          return mppRefused(run, call, {
            problem: 'method-unsupported',
            message: 'stripe is not configured',
          });
        }
        return openStripe(run, { processor, payments }, c, call);
      }
      const x402 = d.x402Rail;
      if (!x402) return mppRefused(run, call, { problem: 'method-unsupported', message: 'evm needs x402' });
      const converted = evmPayment(c, x402.quote(call.action, call.transport).offer.requirements);
      if (!converted.ok) return mppRefused(run, call, converted.refusal);
      const payer = String(
        (converted.payment.payload as { authorization: { from: string } }).authorization.from,
      );
      const paying = await x402.open(run, { ...call, payment: converted.payment });
      return viaEvm(run, call.action.id, c, payer, paying);
    },
    terms: (action) => {
      const t = declared(terms, action);
      return t ? [t] : [];
    },
    security: {
      name: 'mpp',
      // The Payment HTTP authentication scheme (draft-httpauth-payment): challenge in WWW-Authenticate on the 402.
      scheme: {
        type: 'http',
        scheme: 'Payment',
        description:
          'Machine Payments Protocol, no account needed: call without it to get the 402, whose WWW-Authenticate: ' +
          'Payment challenges name the methods (evm, stripe); pay one and retry with Authorization: Payment <credential>.',
      },
    },
    close: async () => {},
  };
}

/**
 * The evm method pays through x402's own path: its payment, recorded as MPP's too (the receipt's `mpp` claims),
 * and answered with a Payment-Receipt whose reference is the settlement's transaction.
 */
function viaEvm(
  run: RunDeps,
  action: string,
  c: ParsedCredential,
  payer: string,
  paying: RailPayment | Outcome,
): RailPayment | Outcome {
  const receipted = (o: Outcome, sign: boolean) => {
    if (!o.ok) return o;
    const reference = o.parts?.paymentResponse?.transaction ?? '';
    return mppPaid(run, c, o, { action, method: 'evm', reference, payer }, sign);
  };
  if (!('finish' in paying)) return receipted(paying, true);
  return {
    principal: paying.principal,
    authorize: () => paying.authorize(),
    async collect(envelope) {
      const meta = await paying.collect(envelope);
      const tx = (meta.x402 as { transaction?: string } | undefined)?.transaction ?? '';
      return { ...meta, mpp: { method: 'evm', reference: tx, challenge_id: c.challenge.id } };
    },
    finish: async (outcome) => receipted(await paying.finish(outcome), false),
  };
}

/** What descriptors, /openapi.json and the MCP tool list declare for MPP. */
function declared(t: ChallengeTerms, action: Action): RailTerms | undefined {
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
