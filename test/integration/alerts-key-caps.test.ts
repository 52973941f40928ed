import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../auth/api-keys.js';
import { ALERT_EVENT_TYPES } from '../../src/alerts/index.js';
import { alertsPage, type Receiver, settle, shownSecret, startReceiver, waitFor } from '../helpers/alerts.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

// Cap alerts for API keys (docs/decisions.md "Teams × limits, alerts…"), through the HTTP door with the keys
// themselves: a key's daily and monthly caps fire 80 % and 100 % once per window each, a call the cap refuses is
// the cap reached when prices are too coarse to spend it exactly, and the next UTC day re-arms the day's.

const DAY = 86_400_000;
let t: TestGateway;
let hook: Receiver;
const offset = { ms: 0 };

beforeAll(async () => {
  hook = await startReceiver(() => Date.now() + offset.ms);
  t = await startGateway({
    clock: { now: () => Date.now() + offset.ms },
    handlers: {
      'scraperC/scrape': { run: async () => ({ raw: 'ok' }) },
      'propstats/value-estimate': async () => ({
        price: 1,
        priceRangeLow: 1,
        priceRangeHigh: 2,
        comparables: [],
      }),
    },
  });
});
afterAll(async () => {
  await t?.close();
  await hook?.close();
});

const capEvents = (keyId: string) =>
  hook.deliveries
    .map((d) => d.event)
    .filter((e) => e.type.startsWith('cap.') && e.data.cap.id === keyId)
    .map(
      (e) =>
        `${e.type} ${e.data.cap.window} ${e.data.cap.spent_usd}/${e.data.cap.limit_usd}${e.data.refused_call ? ' refused' : ''}`,
    );

describe('[alerts:key-caps] an API key at 80 % and 100 % of its daily and monthly caps', () => {
  it('fires each level once per window; a refusal by the cap is the cap reached; the next UTC day fires the day again', async () => {
    const { accountId, key } = await t.account('5');
    const page = await alertsPage(t, key);
    const saved = await page.save({ webhook_url: hook.url, events: [...ALERT_EVENT_TYPES] });
    hook.secret = shownSecret(saved.text) as string;
    // Spent exactly: 1 cent calls against a daily cap of 5 cents.
    const daily = await createApiKey(t.gw.ledger, accountId, 'daily agent', { daily_limit_micros: 50_000 });
    // Too coarse to spend exactly: 35 cent calls against a monthly cap of 80 cents (35, 70, then refused).
    const monthly = await createApiKey(t.gw.ledger, accountId, null, { monthly_limit_micros: 800_000 });
    const scrape = () =>
      t.post('/api/run/scraperC/scrape', { url: 'http://127.0.0.1:9/' }, { key: daily.key });
    const estimate = () =>
      t.post('/api/run/propstats/value-estimate', { address: '1 Main St, Austin, TX' }, { key: monthly.key });

    for (let i = 0; i < 3; i++) expect((await scrape()).status).toBe(200);
    await settle(1_500);
    expect(capEvents(daily.row.id)).toEqual([]);
    expect((await scrape()).status).toBe(200); // 4 of 5 cents: 80 %
    await waitFor('80 %', () => capEvents(daily.row.id).length === 1);
    expect((await scrape()).status).toBe(200); // 5 of 5: 100 %
    await waitFor('100 %', () => capEvents(daily.row.id).length === 2);
    for (let i = 0; i < 3; i++) expect((await scrape()).status).toBe(429);

    expect((await estimate()).status).toBe(200);
    expect((await estimate()).status).toBe(200); // 70 of 80 cents: 87.5 %
    const refused = await estimate();
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('monthly_cap_exceeded');
    await waitFor('the monthly cap', () => capEvents(monthly.row.id).length === 2);
    expect((await estimate()).status).toBe(429);
    await settle();
    expect(capEvents(daily.row.id)).toEqual(['cap.warning day 0.04/0.05', 'cap.reached day 0.05/0.05']);
    // The warning (87.5 %) and the refusal come from back-to-back calls: deliveries are not ordered (each event
    // carries its time, docs/decisions.md "Alerts"), so they are compared as a set; each still fires once.
    expect(capEvents(monthly.row.id).sort()).toEqual([
      'cap.reached month 0.70/0.80 refused',
      'cap.warning month 0.70/0.80',
    ]);
    const now = Date.now() + offset.ms;
    const d = new Date(now);
    const monthWarning = hook.deliveries.find(
      (x) => x.event.data?.cap?.id === monthly.row.id && x.event.type === 'cap.warning',
    );
    expect(monthWarning?.event).toMatchObject({
      account: accountId,
      data: {
        percent: 80,
        cap: {
          kind: 'key',
          id: monthly.row.id,
          name: monthly.row.prefix,
          window: 'month',
          limit_micros: 800_000,
          spent_micros: 700_000,
          resets_at: new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)).toISOString(),
        },
      },
    });
    expect(hook.deliveries.find((x) => x.event.data?.cap?.id === daily.row.id)?.event.data.cap).toMatchObject(
      {
        name: 'daily agent',
        resets_at: new Date(Math.ceil(now / DAY) * DAY).toISOString(),
      },
    );
    expect(hook.deliveries.every((x) => x.verified)).toBe(true);

    // The next UTC day: the day's cap starts again, and so do its alerts; the month's stays reached (unless the
    // next day is in another month).
    const sameMonth = new Date(now + DAY).getUTCMonth() === d.getUTCMonth();
    offset.ms += DAY;
    for (let i = 0; i < 4; i++) expect((await scrape()).status).toBe(200);
    await waitFor('80 % the next day', () => capEvents(daily.row.id).length === 3);
    if (sameMonth) expect((await estimate()).status).toBe(429);
    await settle();
    expect(capEvents(daily.row.id)).toEqual([
      'cap.warning day 0.04/0.05',
      'cap.reached day 0.05/0.05',
      'cap.warning day 0.04/0.05',
    ]);
    if (sameMonth) expect(capEvents(monthly.row.id)).toHaveLength(2);
  });
});
