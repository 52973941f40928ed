import type Stripe from 'stripe';
import type { StripeConfig } from '../../config/index.js';

// The Stripe calls of MPP's `stripe` method: a shared payment token (SPT) granted to this seller pays for one call.
// The charge is split in two, as a card payment can be: the PaymentIntent is confirmed with the token and
// `capture_method=manual` before the call runs (the funds are held on the card; nothing is charged), captured
// when the call succeeded, and cancelled when it did not (the hold is released). Every POST carries an
// idempotency key derived from the credential, so a retried request (ours or the client's) never charges twice.
//
// SPTs are a preview API: the requests pin its preview version, as the mppx reference server does.

export const SPT_API_VERSION = '2026-07-29.preview';

/** What a Stripe answer means for the payment: definite (ok / refused), or not known. */
export type SptOutcome<T> =
  | { kind: 'ok'; value: T }
  /** Refused for good: a decline, a consumed/expired/revoked token, a parameter Stripe rejects. */
  | { kind: 'refused'; code: string; message: string }
  /** No answer, a 5xx, an idempotency conflict: the request may or may not have happened. */
  | { kind: 'unknown'; cause: unknown };

export interface SptToken {
  id: string;
  /** Who pays, stable across their tokens: the card fingerprint (else the payment method type). */
  payer: string;
  currency: string;
  maxAmount: number;
  /** Unix seconds; undefined: no expiry set. */
  expiresAt: number | undefined;
  deactivated: string | undefined;
}

export interface SptProcessor {
  token(spt: string): Promise<SptOutcome<SptToken>>;
  /** Confirms a manual-capture PaymentIntent for `amountCents` with the token. */
  authorize(p: {
    spt: string;
    amountCents: number;
    idempotencyKey: string;
    metadata: Record<string, string>;
  }): Promise<SptOutcome<{ paymentIntent: string; status: string }>>;
  capture(paymentIntent: string): Promise<SptOutcome<{ status: string }>>;
  cancel(paymentIntent: string): Promise<SptOutcome<{ status: string }>>;
}

function classify(e: unknown): SptOutcome<never> {
  const err = e as { type?: string; rawType?: string; statusCode?: number; code?: string; message?: string };
  if (
    err?.statusCode === 409 ||
    err?.code === 'idempotency_key_in_use' ||
    err?.rawType === 'idempotency_error'
  ) {
    return { kind: 'unknown', cause: e };
  }
  if (err?.type === 'StripeCardError' || err?.type === 'StripeInvalidRequestError') {
    // Stripe's text is untrusted vendor text: the caller gets the code, the log gets the message.
    return { kind: 'refused', code: err.code || 'refused', message: String(err.message ?? '') };
  }
  return { kind: 'unknown', cause: e };
}

async function attempt<T>(run: () => Promise<T>): Promise<SptOutcome<T>> {
  try {
    return { kind: 'ok', value: await run() };
  } catch (e) {
    return classify(e);
  }
}

/** The processor on the official client, pointed at TOLLGATE_STRIPE_BASE_URL (tests: the fake on loopback). */
export async function stripeSptProcessor(c: StripeConfig): Promise<SptProcessor> {
  const { default: StripeClass } = await import('stripe');
  const client: Stripe = new StripeClass(c.secretKey, {
    host: c.host,
    port: c.port,
    protocol: c.protocol,
    maxNetworkRetries: 2,
    timeout: 20_000,
    telemetry: false,
    appInfo: { name: 'tollgate' },
  });
  const opts = (idempotencyKey?: string) => ({
    apiVersion: SPT_API_VERSION,
    ...(idempotencyKey ? { idempotencyKey } : {}),
  });
  /** Captures or cancels a PaymentIntent; the key is per PaymentIntent and verb. */
  const finish = (pi: string, verb: 'capture' | 'cancel', body: Record<string, unknown>) =>
    attempt(async () => {
      const r = await client.rawRequest(
        'POST',
        `/v1/payment_intents/${encodeURIComponent(pi)}/${verb}`,
        body,
        opts(`mpp_${verb}_${pi}`),
      );
      return { status: String(r.status) };
    });
  return {
    token: (spt) =>
      attempt(async () => {
        const t = await client.rawRequest(
          'GET',
          `/v1/shared_payment/granted_tokens/${encodeURIComponent(spt)}`,
          undefined,
          opts(),
        );
        const details = t.payment_method_details as { type?: string; card?: { fingerprint?: string } } | null;
        const limits = (t.usage_limits ?? {}) as {
          currency?: string;
          max_amount?: number;
          expires_at?: number;
        };
        return {
          id: String(t.id),
          payer: details?.card?.fingerprint
            ? `card:${details.card.fingerprint}`
            : `pm:${details?.type ?? 'unknown'}`,
          currency: String(limits.currency ?? ''),
          maxAmount: Number(limits.max_amount ?? 0),
          expiresAt: typeof limits.expires_at === 'number' ? limits.expires_at : undefined,
          deactivated: typeof t.deactivated_reason === 'string' ? t.deactivated_reason : undefined,
        };
      }),
    authorize: (p) =>
      attempt(async () => {
        const pi = await client.rawRequest(
          'POST',
          '/v1/payment_intents',
          {
            amount: p.amountCents,
            currency: 'usd',
            confirm: true,
            capture_method: 'manual',
            automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
            shared_payment_granted_token: p.spt,
            metadata: p.metadata,
          },
          opts(p.idempotencyKey),
        );
        return { paymentIntent: String(pi.id), status: String(pi.status) };
      }),
    capture: (pi) => finish(pi, 'capture', {}),
    cancel: (pi) => finish(pi, 'cancel', { cancellation_reason: 'abandoned' }),
  };
}
