import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALERT_EVENT_TYPES } from '../../src/alerts/index.js';
import {
  alertsPage,
  type MailBox,
  type Receiver,
  settle,
  shownSecret,
  startReceiver,
  startSmtp,
  waitFor,
} from '../helpers/alerts.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { createTestDatabase, type TestDatabase } from '../helpers/pg.js';

// Alerts through the real doors: settings saved on the dashboard's alerts page, paid calls on POST /api/run that
// drain the balance below the threshold, the webhook received (and its signature checked) by a server on
// 127.0.0.1 and the e-mail by a real SMTP server; on SQLite and on PostgreSQL. A paid call is
// propstats/value-estimate at 35 cents, its upstream replaced.

const ALL = [...ALERT_EVENT_TYPES];
const handlers = {
  'propstats/value-estimate': async () => ({
    price: 1,
    priceRangeLow: 1,
    priceRangeHigh: 2,
    comparables: [],
  }),
};
const paid = (t: TestGateway, key: string) =>
  t.post('/api/run/propstats/value-estimate', { address: '1 Main St, Austin, TX' }, { key });

describe.each([{ name: 'sqlite' as const }, { name: 'postgres' as const }])(
  '[alerts:balance-once] balance below a threshold ($name)',
  ({ name }) => {
    let t: TestGateway;
    let hook: Receiver;
    let mail: MailBox;
    let db: TestDatabase | undefined;
    const offset = { ms: 0 };

    beforeAll(async () => {
      hook = await startReceiver(() => Date.now() + offset.ms);
      mail = await startSmtp();
      db = name === 'postgres' ? await createTestDatabase('tg_alerts') : undefined;
      t = await startGateway({
        env: {
          TOLLGATE_SMTP_URL: mail.url,
          TOLLGATE_SMTP_FROM: 'tollgate alerts <alerts@gateway.example>',
          ...(db ? { TOLLGATE_DATABASE_URL: db.url } : {}),
        },
        clock: { now: () => Date.now() + offset.ms },
        handlers,
      });
    });
    afterAll(async () => {
      await t?.close();
      await db?.drop();
      await hook?.close();
      await mail?.close();
    });

    it('[alerts:signed] [alerts:email] many paid calls crossing at once fire one webhook (signed, verified by the receiver) and one e-mail; a top-up re-arms it', async () => {
      const { accountId, key } = await t.account('5');
      const page = await alertsPage(t, key);
      const saved = await page.save({
        webhook_url: hook.url,
        emails: 'ops@example.com',
        balance_threshold_usd: '2.50',
        events: ALL,
      });
      expect(saved.status).toBe(201);
      hook.secret = shownSecret(saved.text) as string;
      expect(hook.secret).toMatch(/^tgwhsec_/);
      // Shown once: the page does not show it again.
      expect(shownSecret((await page.get()).text)).toBeUndefined();

      // 14 calls at once: 5.00 − 4.90 = 0.10 left, below 2.50, crossed once.
      const statuses = await Promise.all(Array.from({ length: 14 }, () => paid(t, key)));
      expect(statuses.map((r) => r.status)).toEqual(Array(14).fill(200));
      const [d] = await waitFor('the webhook', () => hook.deliveries.length > 0 && hook.deliveries);
      await waitFor('the e-mail', () => mail.messages.length > 0);
      await settle();
      expect(hook.deliveries).toHaveLength(1);
      expect(mail.messages).toHaveLength(1);

      expect(d?.verified).toBe(true);
      expect(d?.headers['content-type']).toBe('application/json');
      expect(d?.headers['tollgate-event-id']).toBe(d?.event.id);
      expect(d?.event).toEqual({
        id: expect.stringMatching(/^evt_/),
        type: 'balance.below_threshold',
        created: expect.any(Number),
        account: accountId,
        data: {
          available_micros: expect.any(Number),
          available_usd: expect.any(String),
          threshold_micros: 2_500_000,
          threshold_usd: '2.50',
        },
      });
      // What was available when the crossing was seen (calls may still have been finishing): below the threshold.
      expect(d?.event.data.available_micros).toBeLessThan(2_500_000);
      expect(d?.event.data.available_micros % 350_000).toBe(100_000);
      const [m] = mail.messages;
      expect(m).toMatchObject({
        from: 'alerts@gateway.example',
        to: ['ops@example.com'],
        subject: 'tollgate: balance below $2.50',
      });
      expect(m?.text).toContain(
        `Your available balance is $${d?.event.data.available_usd}, below the $2.50 you set.`,
      );
      expect(m?.text).toContain(`Event: balance.below_threshold (${d?.event.id})`);

      // Back above (a credit, through the lifecycle), then below again: a second crossing, a new event.
      await t.gw.money.credit(accountId, 3_000_000, 'operator', 'test top-up');
      await settle();
      expect(hook.deliveries).toHaveLength(1);
      for (let i = 0; i < 3; i++) expect((await paid(t, key)).status).toBe(200);
      await waitFor('the second webhook', () => hook.deliveries.length === 2);
      await waitFor('the second e-mail', () => mail.messages.length === 2);
      expect(hook.deliveries[1]?.event.id).not.toBe(d?.event.id);
      expect(hook.deliveries[1]?.event.data.available_micros).toBe(2_050_000);

      // The delivery log on the dashboard: both events, both channels, delivered at the first attempt (the
      // receivers have them before the gateway records their answers: the page is read until it shows all four).
      const delivered = (log: string) =>
        hook.deliveries.every((r) =>
          ['webhook', 'email'].every((channel) =>
            new RegExp(
              `data-event="${r.event.id}" data-channel="${channel}" data-status="delivered" data-attempts="1"`,
            ).test(log),
          ),
        );
      const log = await waitFor('every delivery recorded', async () => {
        const text = (await page.get()).text;
        return delivered(text) && text;
      });
      expect(delivered(log)).toBe(true);
    });

    it('[alerts:retry-backoff] [alerts:outbox] a failing receiver is retried with backoff, on the gateway clock, with the same event', async () => {
      const { accountId, key } = await t.account('1');
      const page = await alertsPage(t, key);
      const saved = await page.save({ webhook_url: hook.url, events: ALL });
      hook.secret = shownSecret(saved.text) as string;
      const before = hook.deliveries.length;
      hook.answers.push(500, 503);
      expect((await page.post('/account/alerts/test')).status).toBe(303);
      await waitFor('attempt 1', () => hook.deliveries.length === before + 1);
      // The receiver has the request before the gateway has its answer: wait for the row to record it.
      const row = await waitFor('attempt 1 recorded', async () => {
        const [r] = await t.gw.alerts.deliveries(accountId, 1);
        return r?.last_status != null && r;
      });
      expect(row).toMatchObject({ status: 'pending', attempts: 1, last_status: 500 });
      expect(row?.next_attempt_at).toBe((row?.updated_at ?? 0) + 30_000);
      const shown = (await page.get()).text;
      expect(shown).toContain('answered 500');
      expect(shown).toMatch(/data-status="pending" data-attempts="1"/);

      // Not before its time (the gateway's clock a few seconds short of it: nothing), then at it: the next attempt.
      const setClock = (ms: number) => {
        offset.ms = ms - Date.now();
      };
      const nextAttempt = async () => (await t.gw.alerts.deliveries(accountId, 1))[0]?.next_attempt_at ?? 0;
      setClock((await nextAttempt()) - 5_000);
      await t.gw.alerts.tick();
      await settle(1_200);
      expect(hook.deliveries).toHaveLength(before + 1);
      setClock(await nextAttempt());
      await t.gw.alerts.tick();
      await waitFor('attempt 2', () => hook.deliveries.length === before + 2);
      // The second failure: 60 s to the third attempt.
      const second = await waitFor('attempt 2 recorded', async () => {
        const [r] = await t.gw.alerts.deliveries(accountId, 1);
        return r?.attempts === 2 && r.status === 'pending' && r.last_status === 503 && r;
      });
      expect(second.next_attempt_at - second.updated_at).toBe(60_000);
      setClock(second.next_attempt_at - 5_000);
      await t.gw.alerts.tick();
      await settle(1_200);
      expect(hook.deliveries).toHaveLength(before + 2);
      setClock(second.next_attempt_at);
      await t.gw.alerts.tick();
      await waitFor('attempt 3', () => hook.deliveries.length === before + 3);
      const attempts = hook.deliveries.slice(before);
      expect(new Set(attempts.map((a) => a.body)).size).toBe(1);
      expect(attempts.every((a) => a.verified && a.event.type === 'alert.test')).toBe(true);
      expect(new Set(attempts.map((a) => a.headers['tollgate-signature'])).size).toBe(3);
      const done = await waitFor('the outcome recorded', async () => {
        const [r] = await t.gw.alerts.deliveries(accountId, 1);
        return r?.status === 'delivered' && r;
      });
      expect(done).toMatchObject({ status: 'delivered', attempts: 3, last_status: 200, last_error: null });
    });
  },
);

describe('[alerts:webhook-ssrf] the dashboard refuses internal webhook URLs with a 400 naming the field', () => {
  let t: TestGateway;
  beforeAll(async () => {
    // Nothing let through: loopback is as internal as the rest.
    t = await startGateway({ env: { TOLLGATE_FETCH_ALLOW: '' } });
  });
  afterAll(() => t?.close());

  it('loopback, private, link-local (metadata) and mapped addresses, localhost names, other schemes, plain http', async () => {
    const { accountId, key } = await t.account('1');
    const page = await alertsPage(t, key);
    const urls = [
      'http://127.0.0.1:8402/hook',
      'https://[::1]/hook',
      'https://10.0.0.1/hook',
      'https://192.168.1.1/hook',
      'https://169.254.169.254/latest/meta-data/',
      'https://[::ffff:169.254.169.254]/',
      'https://0x7f000001/',
      'https://localhost/hook',
      'ftp://example.com/hook',
      'https://user:pw@example.com/hook',
      'http://93.184.216.34/hook',
    ];
    for (const url of urls) {
      const r = await page.save({ webhook_url: url, balance_threshold_usd: '1', events: ALL });
      expect(r.status, url).toBe(400);
      expect(r.text, url).toMatch(/<strong>Error:<\/strong> webhook_url: refused: /);
      expect(r.text, url).toContain('aria-invalid="true"');
      // What was typed is kept in the form.
      expect(r.text, url).toContain(`value="${url.replaceAll('&', '&#38;')}"`);
    }
    expect(await t.gw.alerts.settings(accountId)).toBeUndefined();
  });

  it('other fields: addresses without SMTP, a bad threshold, an unknown event', async () => {
    const { accountId, key } = await t.account('1');
    const page = await alertsPage(t, key);
    const emails = await page.save({ webhook_url: '', emails: 'ops@example.com', events: ALL });
    expect(emails.status).toBe(400);
    expect(emails.text).toContain('emails: e-mail alerts are not enabled on this gateway');
    const threshold = await page.save({ webhook_url: '', balance_threshold_usd: 'lots', events: ALL });
    expect(threshold.status).toBe(400);
    expect(threshold.text).toContain('balance_threshold_usd: an amount in USD');
    const event = await page.save({ webhook_url: '', events: ['balance.below_threshold', 'nope'] });
    expect(event.status).toBe(400);
    expect(event.text).toContain('events: unknown event nope');
    expect(await t.gw.alerts.settings(accountId)).toBeUndefined();
    // Without a session or its CSRF token nothing is saved.
    const anonymous = await fetch(`${t.url}/account/alerts`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'webhook_url=https%3A%2F%2Fexample.com%2F',
      redirect: 'manual',
    });
    expect(anonymous.status).toBe(403);
  });
});
