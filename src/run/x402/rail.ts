import type { PaymentRequirements } from '@x402/core/types';
import type { Action } from '../../../catalog/index.js';
import { databaseUnavailable } from '../../errors.js';
import type { Outcome, RunDeps } from '../execute.js';
import type { PaymentRail, RailPayment, RailTerms, Transport } from '../rails.js';
import { present } from '../rails.js';
import { discoveryFor } from './discovery.js';
import type { Quote, X402Deps } from './gate.js';
import { challengeFor, offerFor, priceDescription } from './requirements.js';

// x402 as a payment rail (../rails.ts): the `exact` scheme, and sessions (`batch-settlement`, ../sessions) offered
// beside it in the same challenge. One signed payment pays for at most one call, however often and however
// concurrently it is presented: the same payment with the same body gets the stored result again (a lost
// response is recovered without paying twice), with another body it is refused. Settlement happens only after
// the action succeeded, unless the action is configured to settle first.

/** x402 sessions, as the x402 rail drives them (../sessions/index.ts). */
export interface SessionScheme {
  /** The session terms of an action, for the challenge's `accepts` (undefined until the facilitator answered). */
  requirements(action: Action): PaymentRequirements | undefined;
  /** Whether an x402 payment (the header's base64 or the MCP object) is a session payment. */
  accepts(payment: unknown): boolean;
  /** Opens a session payment (a voucher, a deposit, or a refund, which runs no action). */
  open(run: RunDeps, quote: Quote, payment: unknown): Promise<RailPayment | Outcome>;
  terms(action: Action): RailTerms | undefined;
  /** Claims every charged voucher on chain and sweeps the claimed funds to the pay-to address (also on a timer). */
  claimAndSettle(): Promise<{ claimed: number; transactions: string[] }>;
  close(): Promise<void>;
}

export interface X402Rail extends PaymentRail {
  deps: X402Deps;
  sessions: SessionScheme | undefined;
  quote(action: Action, transport: Transport): Quote;
}

let exact: typeof import('./pay.js') | undefined;

/** What descriptors declare for an x402 offer; `own`: its scheme's fields. */
export function x402Terms(r: PaymentRequirements, own: Record<string, unknown>): RailTerms {
  return {
    protocol: 'x402',
    x402_version: 2,
    scheme: r.scheme,
    price_mode: 'fixed',
    network: r.network,
    asset: r.asset,
    amount: r.amount,
    pay_to: r.payTo,
    ...own,
    http_header: 'PAYMENT-SIGNATURE',
    mcp_meta_key: 'x402/payment',
  };
}

export function x402Rail(x402: X402Deps, publicUrl: () => string, sessions?: SessionScheme): X402Rail {
  const quote = (action: Action, transport: Transport): Quote => {
    const offer = offerFor(x402.config, action);
    const resource = {
      url: transport === 'mcp' ? `mcp://tool/${action.toolName}` : `${publicUrl()}/api/run/${action.id}`,
      description: priceDescription(action),
      mimeType: 'application/json',
    };
    const { extensions } = discoveryFor(action, transport);
    const session = sessions?.requirements(action);
    const more = session ? [session] : undefined;
    const challenge = (error: string) => challengeFor(offer, resource, error, extensions, more);
    return { action, transport, offer, resource, challenge };
  };
  return {
    names: sessions ? ['x402', 'x402-session'] : ['x402'],
    deps: x402,
    sessions,
    quote,
    presented: (call) => present(call.payment),
    offer(action, transport, error) {
      const q = quote(action, transport);
      return {
        words:
          'x402: sign the challenge of the PAYMENT-REQUIRED header (USDC) and retry with it in PAYMENT-SIGNATURE',
        accepts: { method: 'x402', header: 'PAYMENT-SIGNATURE', accepts: [q.offer.requirements] },
        parts: { paymentRequired: q.challenge(error) },
      };
    },
    async open(run, call) {
      // While the database does not answer, a payment is not looked at: it could be neither reserved nor recorded.
      // Nothing is reserved or settled, so the same signed payment can be presented again once it answers.
      if (run.health?.down) return { ok: false, error: databaseUnavailable() };
      const q = quote(call.action, call.transport);
      // A session voucher or deposit (x402 batch-settlement) is paid by the session scheme.
      if (sessions?.accepts(call.payment)) return sessions.open(run, q, call.payment);
      // The payment itself: viem and the x402 libraries load with it, on the first x402 payment.
      exact ??= await import('./pay.js');
      return exact.openExact(run, x402, q, call);
    },
    terms(action) {
      const r = offerFor(x402.config, action).requirements;
      const own = x402Terms(r, { max_timeout_seconds: r.maxTimeoutSeconds });
      const session = sessions?.terms(action);
      return session ? [own, session] : [own];
    },
    // The payment requirements of a paid action, advertised in its MCP tool's `_meta`.
    toolMeta: (action) => ({ 'x402/payment-requirements': [offerFor(x402.config, action).requirements] }),
    security: {
      name: 'x402',
      scheme: {
        type: 'apiKey',
        in: 'header',
        name: 'PAYMENT-SIGNATURE',
        description:
          'x402 v2 payment (base64 JSON PaymentPayload), no account needed: call without it to get the 402 ' +
          'challenge (PAYMENT-REQUIRED header, same JSON in the body), sign it, and retry with it.',
      },
    },
    close: async () => {
      await sessions?.close();
    },
  };
}
