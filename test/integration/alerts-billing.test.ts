import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALERT_EVENT_TYPES } from '../../src/alerts/index.js';
import type { Json } from '../fakes/stripe-wire.js';
import { alertsPage, type Receiver, settle, shownSecret, startReceiver, waitFor } from '../helpers/alerts.js';
import { BACKEND_NAMES, type BillingRig, startBillingRig } from './billing-stripe-rig.js';

// Card money's alerts, through the fake Stripe's signed webhooks and the official client: a top-up succeeded (once,
// however often Stripe reports it) or failed, a settlement of the line declined (the line frozen) and then paid with
// a new card (the line restored). On SQLite and PostgreSQL.

describe.each(BACKEND_NAMES)(
  '[alerts:billing-events] top-ups, settlements and the credit line ($name)',
  ({ name }) => {
    let rig: BillingRig;
    let hook: Receiver;

    beforeAll(async () => {
      rig = await startBillingRig(name);
      hook = await startReceiver(() => Date.now() + rig.offset.ms);
    });
    afterAll(async () => {
      await rig?.close();
      await hook?.close();
    });

    const types = () => hook.deliveries.map((d) => d.event.type as string);
    const sessionOf = (url: string) => new URL(url).pathname.split('/').at(-1) as string;

    it('each fires once, with what happened', async () => {
      const { t, fake } = rig;
      const { accountId, key } = await t.account('0');
      const page = await alertsPage(t, key);
      const saved = await page.save({ webhook_url: hook.url, events: [...ALERT_EVENT_TYPES] });
      hook.secret = shownSecret(saved.text) as string;

      // A card that saves fine and declines every charge: the 2 USD line.
      await fake.completeCheckout(
        sessionOf(await rig.billing().startCardSetup(accountId)),
        '4000000000000341',
      );
      // A top-up of 5 USD, reported twice by Stripe.
      const topUp = sessionOf(await rig.billing().startTopUp(accountId, 5_000_000));
      await fake.completeCheckout(topUp, '4242424242424242');
      const completed = fake.events.find(
        (e) => e.type === 'checkout.session.completed' && (e.data as { object: Json }).object.id === topUp,
      );
      expect(await fake.resend(completed?.id as string)).toBe(200);
      await waitFor('topup.succeeded', () => types().includes('topup.succeeded'));
      const topped = hook.deliveries.find((d) => d.event.type === 'topup.succeeded')?.event;
      expect(topped).toMatchObject({
        account: accountId,
        data: { amount_micros: 5_000_000, amount_usd: '5.00', reference: topUp },
      });

      // 5.00 prepaid, then 1.30 drawn on the line: the threshold settles it, the card declines, the line freezes.
      for (let i = 0; i < 18; i++) expect(await rig.paidCall(key)).toBe(200);
      await rig.billing().scheduler.tick();
      expect((await rig.ledgerOf(accountId)).frozen).toMatch(/declined \(generic_decline\)/);
      await waitFor('declined and frozen', () => types().includes('credit_line.frozen'));
      // A new card settles what was drawn at once: paid, the line restored.
      await fake.completeCheckout(
        sessionOf(await rig.billing().startCardSetup(accountId)),
        '5555555555554444',
      );
      expect((await rig.ledgerOf(accountId)).frozen).toBeNull();
      await waitFor('restored', () => types().includes('credit_line.restored'));

      // A top-up whose (delayed) payment fails: nothing credited, an alert.
      const failing = sessionOf(await rig.billing().startTopUp(accountId, 20_000_000));
      const session = fake.objects.get(failing) as Json;
      const failed: Json = {
        id: `evt_test_${failing}`,
        object: 'event',
        api_version: '2026-10-28.endive',
        created: Math.floor((Date.now() + rig.offset.ms) / 1000),
        data: { object: { ...session, status: 'complete', payment_status: 'unpaid' } },
        livemode: false,
        pending_webhooks: 1,
        request: { id: null, idempotency_key: null },
        type: 'checkout.session.async_payment_failed',
      };
      expect((await fake.deliver(failed)).status).toBe(200);
      await waitFor('topup.failed', () => types().includes('topup.failed'));
      await settle();

      expect([...types()].sort()).toEqual(
        [
          'topup.succeeded',
          'settlement.failed',
          'credit_line.frozen',
          'settlement.succeeded',
          'credit_line.restored',
          'topup.failed',
        ].sort(),
      );
      const of = (type: string) => hook.deliveries.find((d) => d.event.type === type)?.event.data;
      expect(of('settlement.failed')).toMatchObject({
        reason: 'the visa card ending 0341 was declined (generic_decline) when charging $1.30 of usage',
        settlement: expect.stringMatching(/^mv_/),
      });
      expect(of('credit_line.frozen')).toMatchObject({
        reason: 'the visa card ending 0341 was declined (generic_decline) when charging $1.30 of usage',
        limit_micros: 2_000_000,
        drawn_micros: 1_300_000,
      });
      expect(of('settlement.succeeded')).toMatchObject({ amount_micros: 1_300_000, amount_usd: '1.30' });
      expect(of('credit_line.restored')).toMatchObject({ limit_micros: 2_000_000, drawn_micros: 0 });
      expect(of('topup.failed')).toMatchObject({ reference: failing, amount_micros: 20_000_000 });
      expect(hook.deliveries.every((d) => d.verified && d.event.account === accountId)).toBe(true);
      expect((await rig.ledgerOf(accountId)).balance).toBe(0);
    });
  },
);
