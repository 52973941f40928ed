import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { classifyStripeError } from '../../src/billing/stripe-client.js';

// What a Stripe error says about the charge that raised it, with stripe-node's own error classes built the way
// its request sender builds them (by HTTP status: a 409 is a StripeAPIError, a 402 a StripeCardError whose
// decline_code defaults to '').

const raw = (statusCode: number, body: Record<string, unknown>) =>
  ({ statusCode, ...body }) as ConstructorParameters<typeof Stripe.errors.StripeError>[0];

describe('classifyStripeError', () => {
  it('[billing:settlement-off-session] an idempotency conflict is unknown, whatever class it comes in', () => {
    const conflict = { type: 'idempotency_error', code: 'idempotency_key_in_use', message: 'in progress' };
    expect(classifyStripeError(new Stripe.errors.StripeAPIError(raw(409, conflict)))).toEqual({
      kind: 'unknown',
      code: 'idempotency_key_in_use',
    });
    expect(
      classifyStripeError(
        new Stripe.errors.StripeCardError(raw(402, { ...conflict, type: 'card_error', decline_code: '' })),
      ),
    ).toEqual({ kind: 'unknown', code: 'idempotency_key_in_use' });
    expect(
      classifyStripeError(
        new Stripe.errors.StripeIdempotencyError(
          raw(400, { type: 'idempotency_error', message: 'other params' }),
        ),
      ),
    ).toEqual({ kind: 'unknown', code: 'idempotency_error' });
    // Even one Stripe might send as an invalid request: the status says it is a conflict.
    expect(
      classifyStripeError(
        new Stripe.errors.StripeInvalidRequestError(
          raw(409, { type: 'invalid_request_error', message: 'x' }),
        ),
      ).kind,
    ).toBe('unknown');
  });

  it('[billing:declined-freezes-line] a decline names its decline code, else its error code', () => {
    const expired = new Stripe.errors.StripeCardError(raw(402, { type: 'card_error', code: 'expired_card' }));
    expect(expired.decline_code).toBe('');
    expect(classifyStripeError(expired)).toMatchObject({ kind: 'card', code: 'expired_card' });
    const declined = new Stripe.errors.StripeCardError(
      raw(402, { type: 'card_error', code: 'card_declined', decline_code: 'insufficient_funds' }),
    );
    expect(classifyStripeError(declined)).toMatchObject({ kind: 'card', code: 'insufficient_funds' });
    expect(
      classifyStripeError(
        new Stripe.errors.StripeCardError(raw(402, { type: 'card_error', decline_code: '' })),
      ),
    ).toMatchObject({ kind: 'card', code: 'card_declined' });
  });

  it('refused requests are settled failures; no answer, a 5xx or a rate limit are unknown', () => {
    expect(
      classifyStripeError(
        new Stripe.errors.StripeInvalidRequestError(
          raw(400, { type: 'invalid_request_error', code: 'resource_missing', message: 'x' }),
        ),
      ),
    ).toEqual({ kind: 'invalid', code: 'resource_missing' });
    expect(
      classifyStripeError(new Stripe.errors.StripeAPIError(raw(500, { type: 'api_error', message: 'x' })))
        .kind,
    ).toBe('unknown');
    expect(
      classifyStripeError(
        new Stripe.errors.StripeRateLimitError(raw(429, { type: 'rate_limit_error', code: 'lock_timeout' })),
      ),
    ).toEqual({ kind: 'unknown', code: 'lock_timeout' });
    expect(classifyStripeError(new Stripe.errors.StripeConnectionError({ message: 'reset' })).kind).toBe(
      'unknown',
    );
  });
});
