import type Stripe from 'stripe';
import type { StripeConfig } from '../config/index.js';

// The official client, pointed at TOLLGATE_STRIPE_BASE_URL when set (tests: a fake on 127.0.0.1). The API
// version is the client's own pinned one (the types match it). Network retries are the client's: it sends the
// same idempotency key with each retry, so a retried POST never acts twice.

export type StripeClient = Stripe;

/** Loaded on first use: a gateway (or a CLI command) without card payments never loads the library. */
export async function createStripeClient(c: StripeConfig): Promise<Stripe> {
  const { default: StripeClass } = await import('stripe');
  return new StripeClass(c.secretKey, {
    host: c.host,
    port: c.port,
    protocol: c.protocol,
    maxNetworkRetries: 2,
    timeout: 20_000,
    telemetry: false,
    appInfo: { name: 'tollgate' },
  });
}

/** What a Stripe error says about the outcome of the request that raised it. */
export type StripeFailure =
  /** The card was refused (a decline, authentication needed): the request is settled, it failed. */
  | { kind: 'card'; code: string; paymentIntent: string | undefined }
  /** Stripe refused the request itself (a parameter, a detached card): settled, it failed. */
  | { kind: 'invalid'; code: string }
  /** No answer, a 5xx, a rate limit, our key refused, an idempotency conflict: the outcome is not known. */
  | { kind: 'unknown'; code: string };

export function classifyStripeError(e: unknown): StripeFailure {
  const err = e as {
    type?: string;
    rawType?: string;
    statusCode?: number;
    code?: string;
    decline_code?: string;
    payment_intent?: { id?: string };
  };
  // An idempotency conflict says nothing about the payment, whatever type it comes as: 409 idempotency_key_in_use
  // (another request with the key is in flight; stripe-node makes a 409 a StripeAPIError, and the code has also
  // been reported on card errors), or idempotency_error (the key was first used with other parameters).
  if (
    err?.code === 'idempotency_key_in_use' ||
    err?.statusCode === 409 ||
    err?.type === 'StripeIdempotencyError' ||
    err?.rawType === 'idempotency_error'
  ) {
    return { kind: 'unknown', code: err.code || 'idempotency_error' };
  }
  switch (err?.type) {
    case 'StripeCardError':
      return {
        kind: 'card',
        // stripe-node sets decline_code to '' when Stripe sends none (an expired card, an incorrect CVC…).
        code: err.decline_code || err.code || 'card_declined',
        paymentIntent: err.payment_intent?.id,
      };
    case 'StripeInvalidRequestError':
      return { kind: 'invalid', code: err.code || 'invalid_request' };
    default:
      return { kind: 'unknown', code: err?.code || err?.type || 'error' };
  }
}
