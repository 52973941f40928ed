import express, { type Request, type Response, Router } from 'express';
import type { Logger } from 'pino';
import type Stripe from 'stripe';
import type { Clock } from '../lib/clock.js';
import type { BillingStore } from './store.js';
import type { StripeClient } from './stripe-client.js';

// POST /billing/stripe/webhook: Stripe's events, verified with the official library against the endpoint's
// signing secret over the raw body (a forged or altered event fails), with Stripe's 5-minute tolerance on the
// signed timestamp (a stale or replayed old delivery fails), then claimed by event id (a duplicate is answered
// and does nothing). A handler that fails releases its claim and answers 500: Stripe delivers again later.

export const WEBHOOK_PATH = '/billing/stripe/webhook';
const TOLERANCE_SECONDS = 300;

export interface WebhookDeps {
  stripe: StripeClient;
  secret: string;
  store: BillingStore;
  clock: Clock;
  log: Logger;
  handle: (event: Stripe.Event) => Promise<void>;
}

export function webhookRoutes(d: WebhookDeps): Router {
  const r = Router();
  r.post(
    WEBHOOK_PATH,
    express.raw({ type: () => true, limit: '512kb' }),
    async (req: Request, res: Response) => {
      res.setHeader('Cache-Control', 'no-store');
      const signature = req.headers['stripe-signature'];
      let event: Stripe.Event;
      try {
        if (typeof signature !== 'string' || !Buffer.isBuffer(req.body)) throw new Error('no signature');
        event = d.stripe.webhooks.constructEvent(
          req.body,
          signature,
          d.secret,
          TOLERANCE_SECONDS,
          undefined,
          d.clock.now(),
        );
      } catch (err) {
        d.log.warn({ reason: (err as Error).message }, 'stripe webhook refused: signature');
        res.status(400).json({ error: 'invalid_signature' });
        return;
      }
      const claim = await d.store.claimEvent(event.id, event.type, d.clock.now());
      if (claim === 'handled') {
        res.json({ received: true, duplicate: true });
        return;
      }
      if (claim === 'busy') {
        // Not 2xx: if the delivery handling it fails, Stripe must still deliver it again.
        res.status(409).json({ error: 'in_progress' });
        return;
      }
      try {
        await d.handle(event);
        await d.store.eventHandled(event.id, d.clock.now());
        res.json({ received: true });
      } catch (err) {
        await d.store.releaseEvent(event.id).catch(() => {}); // unreleased: taken over after a minute
        d.log.error(
          { err, event: event.id, type: event.type },
          'stripe webhook not handled; Stripe will retry',
        );
        res.status(500).json({ error: 'not_handled' });
      }
    },
  );
  return r;
}
