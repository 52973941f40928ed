import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Api, FakeState } from './stripe.js';
import {
  cardFingerprint,
  escapeHtml,
  type Json,
  readBody,
  stripeId,
  TEST_CARDS,
  type TestCard,
} from './stripe-wire.js';

// Stripe Checkout's hosted page, as the fake serves it: a card form the browser fills with a test card number.
// Completing it does what Checkout does: a setup session saves the card (payment method attached to the
// customer, a succeeded setup intent); a payment session charges it. Then the webhooks, then the redirect to
// the session's success URL ({CHECKOUT_SESSION_ID} filled in).

export interface HostedPages {
  handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void>;
  /** Completes a session as if a person had filled the page with `card` (for tests without a browser). */
  complete(sessionId: string, card: TestCard): Promise<string>;
}

function page(res: ServerResponse, status: number, title: string, body: string): void {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>${escapeHtml(title)}</title></head>
<body><main><h1>${escapeHtml(title)}</h1>${body}</main></body></html>`);
}

export function hostedPage(s: FakeState, api: Api): HostedPages {
  function form(session: Json, error?: string): string {
    const pay = session.mode === 'payment';
    const amount = `$${((session.amount_total as number) / 100).toFixed(2)}`;
    return `<p>Test mode. ${pay ? `Pay ${amount} to tollgate.` : 'Save a card for future payments to tollgate.'}</p>
${error ? `<p role="alert">${escapeHtml(error)}</p>` : ''}
<form method="post">
<label for="card">Card number</label> <input id="card" name="card" value="4242424242424242" autocomplete="off">
<label for="exp">Expiry</label> <input id="exp" name="exp" value="12 / 34">
<label for="cvc">CVC</label> <input id="cvc" name="cvc" value="123">
<button type="submit">${pay ? `Pay ${amount}` : 'Save card'}</button>
</form>
<p><a href="${escapeHtml(session.cancel_url as string)}">Cancel</a></p>`;
  }

  async function complete(sessionId: string, number: string): Promise<string> {
    const session = api.get('cs', 'checkout.session', sessionId);
    if (session.status !== 'open') throw new Error('This Checkout Session is no longer active.');
    const card = TEST_CARDS[number as TestCard] as { brand: string; behaviour: string } | undefined;
    if (!card) throw new Error('Your card number is invalid.');
    if (card.behaviour === 'insufficient_funds') throw new Error('Your card has insufficient funds.');
    const pm = api.put({
      id: stripeId('pm'),
      object: 'payment_method',
      type: 'card',
      customer: session.customer,
      card: {
        brand: card.brand,
        last4: number.slice(-4),
        exp_month: 12,
        exp_year: 2034,
        fingerprint: cardFingerprint(number),
        funding: 'credit',
        country: 'US',
        behaviour: card.behaviour,
      },
      created: s.now(),
    });
    if (session.mode === 'setup') {
      const seti = api.put({
        id: stripeId('seti'),
        object: 'setup_intent',
        status: 'succeeded',
        customer: session.customer,
        payment_method: pm.id,
        usage: 'off_session',
        metadata: { ...((session.setup_intent_data as Json | null)?.metadata as Json | undefined) },
        created: s.now(),
      });
      Object.assign(session, { status: 'complete', setup_intent: seti.id });
      await s.emit('setup_intent.succeeded', seti);
    } else {
      const pi = api.put({
        id: stripeId('pi'),
        object: 'payment_intent',
        amount: session.amount_total,
        currency: 'usd',
        customer: session.customer,
        payment_method: pm.id,
        metadata: { ...((session.payment_intent_data as Json | null)?.metadata as Json | undefined) },
        description: (session.payment_intent_data as Json | null)?.description ?? null,
        status: 'requires_confirmation',
        created: s.now(),
      });
      await api.charge(pi, pm);
      Object.assign(session, { status: 'complete', payment_status: 'paid', payment_intent: pi.id });
    }
    await s.emit('checkout.session.completed', session);
    return String(session.success_url).replace('{CHECKOUT_SESSION_ID}', sessionId);
  }

  return {
    complete,
    async handle(req, res, url) {
      const id = url.pathname.slice('/c/pay/'.length);
      const session = s.objects.get(id);
      if (session?.object !== 'checkout.session')
        return page(
          res,
          404,
          'Something went wrong',
          '<p>The page you were looking for could not be found.</p>',
        );
      if (req.method === 'GET') {
        if (session.status !== 'open') return page(res, 410, 'This Checkout Session is no longer active', '');
        return page(res, 200, session.mode === 'payment' ? 'Pay tollgate' : 'Save a card', form(session));
      }
      const number = (new URLSearchParams(await readBody(req)).get('card') ?? '').replace(/\s+/g, '');
      try {
        const next = await complete(id, number);
        res.writeHead(303, { location: next });
        res.end();
      } catch (e) {
        page(
          res,
          402,
          session.mode === 'payment' ? 'Pay tollgate' : 'Save a card',
          form(session, (e as Error).message),
        );
      }
    },
  };
}
