import { cardFingerprint, invalid, type Json, missing, StripeApiError, stripeId } from './stripe-wire.js';

// Shared payment tokens (SPTs) on the fake Stripe, as the Machine Payments Protocol's `stripe` method uses them
// (docs.stripe.com/api/shared-payment/granted-token, docs.stripe.com/agentic-commerce/testing):
//
// - POST /v1/test_helpers/shared_payment/granted_tokens: a token granted to this seller over a payment method
//   (Stripe's test payment methods `pm_card_visa`, `pm_card_mastercard`, `pm_card_chargeDeclined`,
//   `pm_card_chargeDeclinedInsufficientFunds`), with usage limits (currency, max_amount, expires_at);
// - GET /v1/shared_payment/granted_tokens/:id, and POST …/:id/revoke (test helper);
// - POST /v1/payment_intents with `shared_payment_granted_token` and `confirm=true`: a card payment from the
//   token, within its limits (what its confirmed intents hold or captured counts against max_amount; reaching it
//   deactivates the token as `consumed`), immediately captured or, with `capture_method=manual`, held
//   (`requires_capture`);
// - POST /v1/payment_intents/:id/capture and /cancel for a held intent.
//
// Stripe's wire conventions (form bodies, error objects, idempotency) are the enclosing fake's (./stripe.ts).

export interface SptState {
  objects: Map<string, Json>;
  now(): number;
  emit(type: string, object: Json): Promise<void>;
}

const TEST_METHODS: Record<string, { brand: string; number: string; declines?: string }> = {
  pm_card_visa: { brand: 'visa', number: '4242424242424242' },
  pm_card_mastercard: { brand: 'mastercard', number: '5555555555554444' },
  pm_card_chargeDeclined: { brand: 'visa', number: '4000000000000002', declines: 'generic_decline' },
  pm_card_chargeDeclinedInsufficientFunds: {
    brand: 'visa',
    number: '4000000000009995',
    declines: 'insufficient_funds',
  },
};

export function sptResources(s: SptState) {
  const token = (id: string): Json => {
    const t = s.objects.get(id);
    if (t?.object !== 'shared_payment.granted_token') throw missing('shared payment granted token', id);
    return t;
  };
  const intent = (id: string): Json => {
    const pi = s.objects.get(id);
    if (pi?.object !== 'payment_intent') throw missing('payment_intent', id);
    return pi;
  };
  /** What the token's intents hold or have captured (a cancelled hold is given back). */
  const used = (tokenId: string): number =>
    [...s.objects.values()]
      .filter((o) => o.object === 'payment_intent' && o.shared_payment_granted_token === tokenId)
      .filter((o) => o.status === 'requires_capture' || o.status === 'succeeded')
      .reduce((sum, o) => sum + Number(o.amount), 0);

  function grant(p: Json): Json {
    const pm = typeof p.payment_method === 'string' ? TEST_METHODS[p.payment_method] : undefined;
    if (!pm) throw invalid('payment_method', `No such PaymentMethod: '${String(p.payment_method)}'`);
    const limits = (p.usage_limits ?? {}) as Json;
    if (limits.currency !== 'usd') throw invalid('usage_limits[currency]', 'Only usd here.');
    const max = Number(limits.max_amount);
    if (!/^\d+$/.test(String(limits.max_amount)) || max <= 0)
      throw invalid('usage_limits[max_amount]', 'Invalid integer.');
    const t: Json = {
      id: stripeId('spt'),
      object: 'shared_payment.granted_token',
      agent_details: { network_business_profile: 'profile_test_agent' },
      created: s.now(),
      deactivated_at: null,
      deactivated_reason: null,
      livemode: false,
      payment_method: p.payment_method,
      payment_method_details: {
        type: 'card',
        card: { brand: pm.brand, last4: pm.number.slice(-4), fingerprint: cardFingerprint(pm.number) },
      },
      shared_metadata: (p.shared_metadata as Json | undefined) ?? {},
      usage_details: { amount_captured: { value: 0, currency: 'usd' } },
      usage_limits: {
        currency: 'usd',
        max_amount: max,
        expires_at: limits.expires_at === undefined ? null : Number(limits.expires_at),
      },
    };
    s.objects.set(t.id as string, t);
    return t;
  }

  function deactivate(t: Json, reason: string): void {
    t.deactivated_at = s.now();
    t.deactivated_reason = reason;
  }

  async function pay(p: Json): Promise<Json> {
    const t = token(String(p.shared_payment_granted_token));
    const amount = Number(p.amount);
    if (!/^\d+$/.test(String(p.amount))) throw invalid('amount', 'Invalid integer.');
    if (p.currency !== 'usd') throw invalid('currency', 'Only usd here.');
    if (amount < 50) throw invalid('amount', 'Amount must be at least $0.50 usd', 'amount_too_small');
    if (p.confirm !== 'true')
      throw invalid('confirm', 'A shared payment token is used to confirm at creation.');
    const limits = t.usage_limits as Json;
    const expires = limits.expires_at as number | null;
    if (expires !== null && expires <= s.now() && !t.deactivated_reason) deactivate(t, 'expired');
    if (t.deactivated_reason) {
      throw invalid(
        'shared_payment_granted_token',
        `This shared payment token is ${String(t.deactivated_reason)} and cannot be used.`,
        'shared_payment_token_deactivated',
      );
    }
    if (used(t.id as string) + amount > Number(limits.max_amount)) {
      throw invalid(
        'amount',
        'The amount exceeds the usage limits of the shared payment token.',
        'shared_payment_token_limit_exceeded',
      );
    }
    const manual = p.capture_method === 'manual';
    const pm = TEST_METHODS[String(t.payment_method)] as (typeof TEST_METHODS)[string];
    const pi: Json = {
      id: stripeId('pi'),
      object: 'payment_intent',
      amount,
      amount_capturable: 0,
      amount_received: 0,
      currency: 'usd',
      capture_method: manual ? 'manual' : 'automatic',
      customer: null,
      payment_method: t.payment_method,
      shared_payment_granted_token: t.id,
      metadata: (p.metadata as Json | undefined) ?? {},
      status: 'requires_payment_method',
      created: s.now(),
      latest_charge: null,
    };
    s.objects.set(pi.id as string, pi);
    if (pm.declines) {
      const error = {
        type: 'card_error',
        code: 'card_declined',
        decline_code: pm.declines,
        message:
          pm.declines === 'insufficient_funds'
            ? 'Your card has insufficient funds.'
            : 'Your card was declined.',
      };
      pi.last_payment_error = error;
      await s.emit('payment_intent.payment_failed', pi);
      throw new StripeApiError(402, { ...error, payment_intent: structuredClone(pi) });
    }
    await s.emit('shared_payment.granted_token.used', t);
    if (manual) {
      Object.assign(pi, { status: 'requires_capture', amount_capturable: amount });
      await s.emit('payment_intent.amount_capturable_updated', pi);
      return pi;
    }
    return captured(pi, t, amount);
  }

  async function captured(pi: Json, t: Json, amount: number): Promise<Json> {
    const ch: Json = {
      id: stripeId('ch'),
      object: 'charge',
      amount,
      amount_captured: amount,
      captured: true,
      currency: 'usd',
      paid: true,
      status: 'succeeded',
      payment_intent: pi.id,
      payment_method: pi.payment_method,
      created: s.now(),
    };
    s.objects.set(ch.id as string, ch);
    Object.assign(pi, {
      status: 'succeeded',
      amount_capturable: 0,
      amount_received: amount,
      latest_charge: ch.id,
    });
    const details = t.usage_details as { amount_captured: { value: number } };
    details.amount_captured.value += amount;
    if (details.amount_captured.value >= Number((t.usage_limits as Json).max_amount))
      deactivate(t, 'consumed');
    await s.emit('charge.succeeded', ch);
    await s.emit('payment_intent.succeeded', pi);
    return pi;
  }

  return {
    /** Answers the SPT routes; undefined for any other request (the enclosing fake routes it). */
    async route(method: string, path: string, p: Json): Promise<Json | undefined> {
      const parts = path.split('/').slice(1);
      const m = (re: RegExp) => re.exec(path);
      if (method === 'POST' && path === '/v1/test_helpers/shared_payment/granted_tokens') return grant(p);
      let r = m(/^\/v1\/shared_payment\/granted_tokens\/([^/]+)$/);
      if (method === 'GET' && r) return token(r[1] as string);
      r = m(/^\/v1\/test_helpers\/shared_payment\/granted_tokens\/([^/]+)\/revoke$/);
      if (method === 'POST' && r) {
        const t = token(r[1] as string);
        if (!t.deactivated_reason) deactivate(t, 'revoked');
        return t;
      }
      if (
        method === 'POST' &&
        path === '/v1/payment_intents' &&
        p.shared_payment_granted_token !== undefined
      ) {
        return pay(p);
      }
      if (
        method === 'POST' &&
        parts[1] === 'payment_intents' &&
        (parts[3] === 'capture' || parts[3] === 'cancel')
      ) {
        const pi = intent(parts[2] as string);
        if (pi.status !== 'requires_capture') {
          throw invalid(
            'intent',
            `This PaymentIntent could not be ${parts[3] === 'capture' ? 'captured' : 'canceled'} because it has a status of ${String(pi.status)}.`,
            'payment_intent_unexpected_state',
          );
        }
        if (parts[3] === 'cancel') {
          Object.assign(pi, {
            status: 'canceled',
            amount_capturable: 0,
            canceled_at: s.now(),
            cancellation_reason: p.cancellation_reason ?? null,
          });
          await s.emit('payment_intent.canceled', pi);
          return pi;
        }
        const t = token(String(pi.shared_payment_granted_token));
        return captured(pi, t, Number(pi.amount));
      }
      return undefined;
    },
  };
}
