import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type HostedPages, hostedPage } from './stripe-hosted.js';
import { type Reversals, reversals } from './stripe-reversals.js';
import { sptResources } from './stripe-spt.js';
import {
  invalid,
  type Json,
  missing,
  parseStripeForm,
  readBody,
  StripeApiError,
  send,
  signPayload,
  stripeId,
  type TestCard,
} from './stripe-wire.js';

// A fake Stripe on 127.0.0.1, driven by the official `stripe` client (host/port/protocol options): the API
// resources tollgate uses (customers, Checkout sessions in setup and payment mode, setup intents, payment methods,
// off-session payment intents, charges, refunds and disputes with their life cycles: ./stripe-reversals.ts),
// Stripe's wire format (form-encoded bodies, bearer secret key, `Stripe-Version`, idempotency keys replayed,
// refused with other parameters, or 409 while the first request with the key is still running; error objects with
// HTTP 400/401/402/404/409), the rules of the pinned API version for payment intents, a hosted Checkout page a
// browser completes with Stripe's test card numbers, and signed webhook deliveries (`Stripe-Signature`,
// HMAC-SHA256 over "timestamp.payload").

export const FAKE_SECRET_KEY = 'sk_test_tollgate_fake_0123456789';
export const FAKE_WEBHOOK_SECRET = 'whsec_tollgate_fake_0123456789abcdef';

export { TEST_CARDS, type TestCard } from './stripe-wire.js';

export interface Delivery {
  eventId: string;
  type: string;
  status: number;
}

export interface FakeStripe extends Reversals {
  url: string;
  /** Where events are delivered (the gateway's webhook endpoint); unset: kept, not delivered. */
  webhookUrl: string | undefined;
  /** While true, events are queued instead of delivered (see flush). */
  holdWebhooks: boolean;
  /** Added to the wall clock for signatures and `created` (tests that move the gateway's clock move this too). */
  clockOffsetMs: number;
  /** Every API request, as parsed, with the HTTP status it was answered (once answered). */
  requests: Array<{
    method: string;
    path: string;
    params: Json;
    headers: IncomingMessage['headers'];
    status?: number;
  }>;
  events: Json[];
  deliveries: Delivery[];
  objects: Map<string, Json>;
  /** The next `n` API requests answer 500 api_error before doing anything. */
  failNext(n: number): void;
  /** The next `times` requests to `path` answer this error (HTTP status and Stripe error object) without running. */
  failNextWith(path: string, status: number, error: Json, times?: number): void;
  /** The events held back (holdWebhooks), taken out of the queue: a test delivers them as it likes (`deliver`). */
  takeHeld(): Json[];
  /** Delivers one event now, signed. */
  deliver(event: Json): Promise<Delivery>;
  /** The card behind a saved payment method has expired since: charges fail with code expired_card. */
  expireCard(paymentMethodId: string): void;
  /** The next `times` requests to `path` are carried out, but their answers are lost (the connection is cut). */
  loseNextAnswer(path: string, times?: number): void;
  /**
   * The next request to `path` with an idempotency key stays running (its key in use) until another request with
   * the same key has come and been refused 409, or 5 s have passed: two attempts of one charge then overlap
   * however fast the machine runs the code between them.
   */
  holdUntilRepeated(path: string): void;
  /** Delivers the events held back. */
  flush(): Promise<Delivery[]>;
  /** Sends a stored event again (same payload, newly signed). */
  resend(eventId: string, opts?: { timestampSeconds?: number; secret?: string }): Promise<number>;
  /** Posts an arbitrary body with an arbitrary signature header to the webhook endpoint. */
  post(payload: string, signature: string | undefined): Promise<number>;
  /** Completes a Checkout session as a person on the hosted page would, with a test card; returns the redirect. */
  completeCheckout(sessionId: string, card: TestCard): Promise<string>;
  close(): Promise<void>;
}

export interface FakeState {
  objects: Map<string, Json>;
  baseUrl(): string;
  emit(type: string, object: Json): Promise<void>;
  now(): number;
}

export async function startFakeStripe(): Promise<FakeStripe> {
  const objects = new Map<string, Json>();
  const idempotency = new Map<string, { params: string; status: number; body: unknown }>();
  const held: Json[] = [];
  let failures = 0;
  const lost = new Map<string, number>();
  const scripted = new Map<string, { status: number; error: Json; times: number }>();
  /** Idempotency keys whose first request is still running. */
  const running = new Set<string>();
  /** holdUntilRepeated: the paths whose next keyed request waits, and the held requests' releases by key. */
  const holdNext = new Set<string>();
  const held409 = new Map<string, () => void>();
  let url = '';

  const fake: FakeStripe = {
    url: '',
    webhookUrl: undefined,
    holdWebhooks: false,
    clockOffsetMs: 0,
    requests: [],
    events: [],
    deliveries: [],
    objects,
    failNext: (n) => {
      failures = n;
    },
    failNextWith: (path, status, error, times = 1) => {
      scripted.set(path, { status, error, times });
    },
    takeHeld: () => held.splice(0, held.length),
    deliver: (event) => deliver(event),
    expireCard: (pm) => {
      ((objects.get(pm) as Json).card as Json).behaviour = 'expired';
    },
    loseNextAnswer: (path, times = 1) => {
      lost.set(path, times);
    },
    holdUntilRepeated: (path) => {
      holdNext.add(path);
    },
    async flush() {
      const out: Delivery[] = [];
      while (held.length > 0) out.push(await deliver(held.shift() as Json));
      return out;
    },
    async resend(eventId, opts = {}) {
      const event = fake.events.find((e) => e.id === eventId);
      if (!event) throw new Error(`no event ${eventId}`);
      return (await deliver(event, opts)).status;
    },
    post: (payload, signature) => postRaw(payload, signature),
    completeCheckout: (id, card) => pages.complete(id, card),
    refund: (pi, amount, opts) => api.refund(pi, amount, opts),
    settleRefund: (re) => api.settleRefund(re),
    failRefund: (re, opts) => api.failRefund(re, opts),
    dispute: (pi, opts) => api.dispute(pi, opts),
    escalateDispute: (dp) => api.escalateDispute(dp),
    closeDispute: (dp, status) => api.closeDispute(dp, status),
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };

  const now = () => Math.floor((Date.now() + fake.clockOffsetMs) / 1000);

  async function postRaw(payload: string, signature: string | undefined): Promise<number> {
    if (!fake.webhookUrl) return 0;
    const headers: Record<string, string> = {
      'content-type': 'application/json; charset=utf-8',
      'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
    };
    if (signature !== undefined) headers['stripe-signature'] = signature;
    const res = await fetch(fake.webhookUrl, { method: 'POST', headers, body: payload });
    await res.text();
    return res.status;
  }

  async function deliver(
    event: Json,
    opts: { timestampSeconds?: number; secret?: string } = {},
  ): Promise<Delivery> {
    const payload = JSON.stringify(event, null, 2);
    const sig = signPayload(payload, opts.secret ?? FAKE_WEBHOOK_SECRET, opts.timestampSeconds ?? now());
    const status = await postRaw(payload, sig);
    const d = { eventId: event.id as string, type: event.type as string, status };
    fake.deliveries.push(d);
    return d;
  }

  const state: FakeState = {
    objects,
    now,
    baseUrl: () => url,
    async emit(type, object) {
      const event: Json = {
        id: stripeId('evt'),
        object: 'event',
        api_version: '2026-10-28.endive',
        created: now(),
        data: { object: structuredClone(object) },
        livemode: false,
        pending_webhooks: 1,
        request: { id: stripeId('req'), idempotency_key: null },
        type,
      };
      fake.events.push(event);
      if (fake.holdWebhooks || !fake.webhookUrl) held.push(event);
      else await deliver(event);
    },
  };
  const api = resources(state);
  let pages: HostedPages;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const u = new URL(req.url ?? '/', url);
    if (u.pathname.startsWith('/c/pay/')) return pages.handle(req, res, u);
    const raw = req.method === 'GET' ? u.search.slice(1) : await readBody(req);
    const params = parseStripeForm(raw);
    const entry: FakeStripe['requests'][number] = {
      method: req.method ?? 'GET',
      path: u.pathname,
      params,
      headers: req.headers,
    };
    fake.requests.push(entry);
    if (req.headers.authorization !== `Bearer ${FAKE_SECRET_KEY}`) {
      return send(res, 401, {
        error: { type: 'invalid_request_error', message: 'Invalid API Key provided: sk_test_****' },
      });
    }
    if (!req.headers['stripe-version']) {
      return send(res, 400, {
        error: { type: 'invalid_request_error', message: 'Stripe-Version header missing.' },
      });
    }
    if (failures > 0) {
      failures--;
      entry.status = 500;
      return send(res, 500, { error: { type: 'api_error', message: 'An unknown error occurred.' } });
    }
    const script = scripted.get(u.pathname);
    if (script && script.times > 0) {
      script.times--;
      entry.status = script.status;
      return send(res, script.status, { error: script.error });
    }
    const key = req.headers['idempotency-key'];
    const signature = JSON.stringify([req.method, u.pathname, params]);
    const answer = await respond(
      req.method ?? 'GET',
      u.pathname,
      params,
      typeof key === 'string' ? key : undefined,
      signature,
    );
    entry.status = answer.status;
    // A lost answer: the request was carried out (or replayed), but the connection breaks before the reply.
    const losing = lost.get(u.pathname) ?? 0;
    if (losing > 0) {
      lost.set(u.pathname, losing - 1);
      res.socket?.destroy();
      return;
    }
    send(res, answer.status, answer.body, {
      'stripe-version': String(req.headers['stripe-version']),
      ...answer.headers,
    });
  }

  /** Runs a request, or replays the stored answer of an idempotency key (refusing one reused with other params). */
  async function respond(
    method: string,
    path: string,
    params: Json,
    key: string | undefined,
    signature: string,
  ): Promise<{ status: number; body: unknown; headers: Record<string, string> }> {
    if (key !== undefined && method === 'POST') {
      const seen = idempotency.get(key);
      if (seen && seen.params !== signature) {
        return {
          status: 400,
          headers: {},
          body: {
            error: {
              type: 'idempotency_error',
              message:
                'Keys for idempotent requests can only be used with the same parameters they were first used with.',
            },
          },
        };
      }
      if (seen)
        return {
          status: seen.status,
          body: seen.body,
          headers: { 'idempotent-replayed': 'true', 'idempotency-key': key },
        };
      // The first request with this key is still running: nothing is done, nothing is saved.
      if (running.has(key)) {
        held409.get(key)?.();
        return {
          status: 409,
          headers: {},
          body: {
            error: {
              type: 'idempotency_error',
              code: 'idempotency_key_in_use',
              message: `There is currently another in-progress request using this Idempotent Key (that probably means you submitted twice, and the other request is still going through): ${key}. Please try again later.`,
            },
          },
        };
      }
    }
    const claimed = key !== undefined && method === 'POST' ? key : undefined;
    if (claimed) running.add(claimed);
    if (claimed && holdNext.delete(path)) {
      await new Promise<void>((release) => {
        const timer = setTimeout(release, 5_000);
        held409.set(claimed, () => {
          clearTimeout(timer);
          release();
        });
      });
      held409.delete(claimed);
    }
    let status = 200;
    let body: unknown;
    try {
      body = await api.route(method, path, params);
    } catch (e) {
      if (!(e instanceof StripeApiError)) throw e;
      status = e.status;
      body = { error: e.body };
    } finally {
      if (claimed) running.delete(claimed);
    }
    if (claimed) idempotency.set(claimed, { params: signature, status, body });
    return { status, body, headers: {} };
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      send(res, 500, { error: { type: 'api_error', message: String(err) } });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.url = url;
  pages = hostedPage(state, api);
  return fake;
}

/** The gateway's configuration for this fake. */
export function stripeEnv(fake: FakeStripe): Record<string, string> {
  return {
    TOLLGATE_STRIPE_SECRET_KEY: FAKE_SECRET_KEY,
    TOLLGATE_STRIPE_WEBHOOK_SECRET: FAKE_WEBHOOK_SECRET,
    TOLLGATE_STRIPE_BASE_URL: fake.url,
  };
}

export type Api = ReturnType<typeof resources>;

// ---- the resources ------------------------------------------------------------------------------------------

function resources(s: FakeState) {
  const get = (prefix: string, what: string, id: string): Json => {
    const o = s.objects.get(id);
    if (!o || !id.startsWith(`${prefix}_`)) throw missing(what, id);
    return o;
  };
  const put = (o: Json): Json => {
    s.objects.set(o.id as string, o);
    return o;
  };
  const expand = (o: Json, params: Json): Json => {
    const list = (params.expand as string[] | undefined) ?? [];
    const out = { ...o };
    for (const field of list) {
      const id = out[field];
      if (typeof id === 'string' && s.objects.has(id)) out[field] = s.objects.get(id);
    }
    return out;
  };
  const metadata = (m: unknown): Json => (m && typeof m === 'object' ? { ...(m as Json) } : {});
  const int = (v: unknown, param: string): number => {
    const n = Number(v);
    if (typeof v !== 'string' || !/^\d+$/.test(v)) throw invalid(param, `Invalid integer: ${String(v)}`);
    return n;
  };

  /** Charges a payment method: a succeeded payment intent and charge, or a card error (402). */
  async function charge(pi: Json, pm: Json): Promise<Json> {
    const behaviour = (pm.card as Json).behaviour;
    if (behaviour === 'charges_fail' || behaviour === 'insufficient_funds' || behaviour === 'expired') {
      const chargeId = stripeId('ch');
      // An expired card is refused with its own code and no decline code, as Stripe does.
      const error =
        behaviour === 'expired'
          ? { type: 'card_error', code: 'expired_card', message: 'Your card has expired.', charge: chargeId }
          : {
              type: 'card_error',
              code: 'card_declined',
              decline_code: behaviour === 'charges_fail' ? 'generic_decline' : 'insufficient_funds',
              message:
                behaviour === 'charges_fail'
                  ? 'Your card was declined.'
                  : 'Your card has insufficient funds.',
              charge: chargeId,
            };
      Object.assign(pi, {
        status: 'requires_payment_method',
        last_payment_error: error,
        latest_charge: chargeId,
      });
      put({
        id: chargeId,
        object: 'charge',
        amount: pi.amount,
        status: 'failed',
        paid: false,
        payment_intent: pi.id,
        customer: pi.customer,
        failure_code: error.code,
      });
      await s.emit('payment_intent.payment_failed', pi);
      throw new StripeApiError(402, { ...error, payment_intent: structuredClone(pi), payment_method: pm });
    }
    const ch = put({
      id: stripeId('ch'),
      object: 'charge',
      amount: pi.amount,
      amount_refunded: 0,
      currency: pi.currency,
      customer: pi.customer,
      paid: true,
      status: 'succeeded',
      refunded: false,
      disputed: false,
      payment_intent: pi.id,
      payment_method: pm.id,
      created: s.now(),
    });
    Object.assign(pi, {
      status: 'succeeded',
      latest_charge: ch.id,
      amount_received: pi.amount,
      last_payment_error: null,
    });
    await s.emit('charge.succeeded', ch);
    await s.emit('payment_intent.succeeded', pi);
    return pi;
  }

  /**
   * Which payment method types a new payment intent accepts, by the rules of the pinned API version (endive):
   * `payment_method_types` is no longer writable; `allowed_payment_method_types` lists them and excludes the
   * other ways; otherwise automatic payment methods (the Dashboard's, here cards) are on.
   */
  function paymentMethodTypes(p: Json): {
    types: string[];
    automatic: { enabled: boolean; allow_redirects: string } | null;
  } {
    if (p.payment_method_types !== undefined)
      throw invalid(
        'payment_method_types',
        'payment_method_types is no longer supported on this API version. Use allowed_payment_method_types, excluded_payment_method_types or dynamic payment methods.',
        'payment_method_types_no_longer_supported',
      );
    const allowed = p.allowed_payment_method_types as string[] | undefined;
    if (allowed) {
      for (const other of [
        'automatic_payment_methods',
        'excluded_payment_method_types',
        'payment_method_configuration',
      ])
        if (p[other] !== undefined)
          throw invalid(
            other,
            `You may only specify one of these parameters: allowed_payment_method_types, ${other}.`,
          );
      return { types: allowed.filter((t) => t === 'card'), automatic: null };
    }
    const apm = p.automatic_payment_methods as Json | undefined;
    if (apm && apm.enabled !== 'true')
      throw invalid('automatic_payment_methods[enabled]', 'Only enabled here.');
    const redirects = (apm?.allow_redirects as string | undefined) ?? 'always';
    return { types: ['card'], automatic: { enabled: true, allow_redirects: redirects } };
  }

  const sptRoutes = sptResources(s);
  const api = {
    get,
    put,
    charge,
    ...reversals(s, get, put),
    async route(method: string, path: string, p: Json): Promise<Json> {
      // Shared payment tokens and the payment intents they pay (MPP's stripe method): ./stripe-spt.ts.
      const spt = await sptRoutes.route(method, path, p);
      if (spt) return spt;
      const parts = path.split('/').slice(1);
      if (parts[0] !== 'v1') throw missing('route', path);
      // Namespaced resources (checkout/sessions) take two segments.
      const [resource, id, sub] =
        parts[1] === 'checkout' ? [`checkout/${parts[2]}`, parts[3], parts[4]] : parts.slice(1);
      switch (`${method} ${resource}${id ? '/:id' : ''}${sub ? `/${sub}` : ''}`) {
        case 'POST customers':
          return put({
            id: stripeId('cus'),
            object: 'customer',
            created: s.now(),
            email: p.email ?? null,
            name: p.name ?? null,
            metadata: metadata(p.metadata),
            invoice_settings: { default_payment_method: null },
          });
        case 'GET customers/:id':
          return get('cus', 'customer', id as string);
        case 'POST customers/:id': {
          const c = get('cus', 'customer', id as string);
          const pmId = (p.invoice_settings as Json | undefined)?.default_payment_method;
          if (typeof pmId === 'string') {
            const pm = get('pm', 'payment_method', pmId);
            if (pm.customer !== c.id)
              throw invalid(
                'invoice_settings[default_payment_method]',
                'The payment method is not attached to this customer.',
              );
            (c.invoice_settings as Json).default_payment_method = pmId;
          }
          if (p.metadata) c.metadata = { ...(c.metadata as Json), ...metadata(p.metadata) };
          return c;
        }
        case 'GET payment_methods/:id':
          return get('pm', 'payment_method', id as string);
        case 'POST checkout/sessions':
          return api.createSession(p);
        case 'GET checkout/sessions/:id':
          return expand(get('cs', 'checkout.session', id as string), p);
        case 'GET setup_intents/:id':
          return expand(get('seti', 'setup_intent', id as string), p);
        case 'GET payment_intents/:id':
          return expand(get('pi', 'payment_intent', id as string), p);
        case 'GET charges/:id':
          return get('ch', 'charge', id as string);
        case 'GET disputes/:id':
          return get('dp', 'dispute', id as string);
        case 'POST payment_intents':
          return api.createPaymentIntent(p);
        default:
          throw missing('route', `${method} ${path}`);
      }
    },

    createSession(p: Json): Json {
      const mode = p.mode;
      if (mode !== 'setup' && mode !== 'payment') throw invalid('mode', 'mode must be setup or payment here');
      for (const f of ['success_url', 'cancel_url'] as const) {
        if (typeof p[f] !== 'string' || !/^https?:\/\//.test(p[f] as string))
          throw invalid(f, `Invalid URL: ${f}`);
      }
      if (typeof p.customer === 'string') get('cus', 'customer', p.customer);
      const types = p.allowed_payment_method_types as string[] | undefined;
      if (mode === 'setup' && !types && !p.currency) {
        throw invalid(
          'currency',
          'currency is required in setup mode when allowed_payment_method_types is not set.',
        );
      }
      let amount: number | null = null;
      if (mode === 'payment') {
        const items = p.line_items as Json[] | undefined;
        if (!items?.length) throw invalid('line_items', 'line_items is required in payment mode.');
        amount = 0;
        for (const [i, item] of items.entries()) {
          const pd = item.price_data as Json | undefined;
          if (pd?.currency !== 'usd')
            throw invalid(`line_items[${i}][price_data][currency]`, 'Only usd here.');
          amount +=
            int(pd.unit_amount, `line_items[${i}][price_data][unit_amount]`) *
            int(item.quantity ?? '1', `line_items[${i}][quantity]`);
        }
        if (amount < 50)
          throw invalid(
            'line_items',
            "The Checkout Session's total amount due must add up to at least $0.50 usd",
            'amount_too_small',
          );
      }
      const id = stripeId('cs_test');
      return put({
        id,
        object: 'checkout.session',
        mode,
        status: 'open',
        payment_status: mode === 'setup' ? 'no_payment_required' : 'unpaid',
        customer: p.customer ?? null,
        client_reference_id: p.client_reference_id ?? null,
        metadata: metadata(p.metadata),
        amount_total: amount,
        currency: mode === 'payment' ? 'usd' : (p.currency ?? null),
        success_url: p.success_url,
        cancel_url: p.cancel_url,
        setup_intent: null,
        payment_intent: null,
        setup_intent_data: p.setup_intent_data ?? null,
        payment_intent_data: p.payment_intent_data ?? null,
        url: `${s.baseUrl()}/c/pay/${id}`,
        created: s.now(),
      });
    },

    async createPaymentIntent(p: Json): Promise<Json> {
      const amount = int(p.amount, 'amount');
      if (p.currency !== 'usd') throw invalid('currency', 'Only usd here.');
      if (amount < 50) throw invalid('amount', 'Amount must be at least $0.50 usd', 'amount_too_small');
      const methods = paymentMethodTypes(p);
      const customer = typeof p.customer === 'string' ? get('cus', 'customer', p.customer) : undefined;
      const pi = put({
        id: stripeId('pi'),
        object: 'payment_intent',
        amount,
        currency: 'usd',
        customer: customer?.id ?? null,
        payment_method: p.payment_method ?? null,
        metadata: metadata(p.metadata),
        description: p.description ?? null,
        status: 'requires_payment_method',
        payment_method_types: methods.types,
        automatic_payment_methods: methods.automatic,
        created: s.now(),
        latest_charge: null,
      });
      if (p.confirm !== 'true') return pi;
      if (typeof p.payment_method !== 'string')
        throw invalid('payment_method', 'A payment method is needed to confirm.');
      // Automatic payment methods may redirect: confirming needs a return_url, unless the customer is away or
      // redirects are ruled out (API 2023-08-16 and later).
      if (
        methods.automatic?.enabled &&
        methods.automatic.allow_redirects !== 'never' &&
        p.off_session !== 'true' &&
        typeof p.return_url !== 'string'
      )
        throw invalid(
          'return_url',
          'This PaymentIntent is configured to accept payment methods enabled in your Dashboard, some of which may require a full page redirect to succeed. Provide a return_url, or set automatic_payment_methods[allow_redirects] to never.',
        );
      const pm = get('pm', 'payment_method', p.payment_method);
      if (!methods.types.includes(pm.type as string))
        throw invalid(
          'payment_method',
          `The PaymentMethod provided (${pm.type as string}) is not allowed for this PaymentIntent.`,
          'payment_intent_incompatible_payment_method',
        );
      if (customer && pm.customer !== customer.id) {
        throw invalid(
          'payment_method',
          'The provided PaymentMethod was previously used without being attached to a Customer or was detached from a Customer, and may not be used again.',
        );
      }
      return charge(pi, pm);
    },
  };
  return api;
}
