import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALERT_EVENT_TYPES } from '../../src/alerts/index.js';
import { connectClient } from '../e2e/mcp-clients.js';
import { connectedClient } from '../e2e/oauth-helpers.js';
import { alertsPage, type Receiver, settle, shownSecret, startReceiver, waitFor } from '../helpers/alerts.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

// Cap alerts for OAuth apps (an MCP host's daily limit, chosen at consent), through the real doors: the host's
// paid tool calls over MCP with its OAuth token. 80 % and 100 % fire once per UTC day each; a call the cap refuses
// is the cap reached even when prices are too coarse to spend it exactly; the next day re-arms them.

const DAY = 86_400_000;
let t: TestGateway;
let hook: Receiver;
const offset = { ms: 0 };

beforeAll(async () => {
  hook = await startReceiver(() => Date.now() + offset.ms);
  t = await startGateway({
    env: { TOLLGATE_OAUTH_SIGNIN_ATTEMPTS_PER_MINUTE: '1000' },
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

const capEvents = (clientId: string) =>
  hook.deliveries
    .map((d) => d.event)
    .filter((e) => e.type.startsWith('cap.') && e.data.cap.id === clientId)
    .map(
      (e) =>
        `${e.type} ${e.data.cap.spent_usd}/${e.data.cap.limit_usd}${e.data.refused_call ? ' refused' : ''}`,
    );

describe('[alerts:cap-crossing] an OAuth app at 80 % and 100 % of its daily limit', () => {
  it('fires each level once per window, through MCP tool calls; the next UTC day fires again', async () => {
    const { accountId, key } = await t.account('5');
    const page = await alertsPage(t, key);
    const saved = await page.save({ webhook_url: hook.url, events: [...ALERT_EVENT_TYPES] });
    hook.secret = shownSecret(saved.text) as string;

    // Spent exactly: 1 cent calls against a 5 cent limit.
    const exact = await connectedClient(t.url, key, { dailyLimit: 'custom', customUsd: '0.05' });
    // Too coarse to spend exactly: 35 cent calls against 80 cents (35, 70, then the cap refuses).
    const coarse = await connectedClient(t.url, key, { dailyLimit: 'custom', customUsd: '0.80' });
    const a = await connectClient('v2-modern', t.url, exact.accessToken);
    const b = await connectClient('v2-modern', t.url, coarse.accessToken);
    try {
      const scrape = () => a.callTool('scraperC_scrape', { url: 'http://127.0.0.1:9/' });
      const estimate = () => b.callTool('propstats_value-estimate', { address: '1 Main St, Austin, TX' });
      for (let i = 0; i < 3; i++) expect((await scrape()).isError).toBeFalsy();
      await settle(1_500);
      expect(capEvents(exact.clientId)).toEqual([]);
      expect((await scrape()).isError).toBeFalsy(); // 4 of 5 cents: 80 %
      await waitFor('80 %', () => capEvents(exact.clientId).length === 1);
      expect((await scrape()).isError).toBeFalsy(); // 5 of 5: 100 %
      await waitFor('100 %', () => capEvents(exact.clientId).length === 2);
      // Refused from here on: already reached this window, nothing more.
      for (let i = 0; i < 3; i++) expect((await scrape()).isError).toBe(true);
      expect((await estimate()).isError).toBeFalsy();
      expect((await estimate()).isError).toBeFalsy(); // 70 of 80 cents: 87.5 %
      const refused = await estimate();
      expect(refused.structuredContent).toMatchObject({
        error: { code: 'daily_cap_exceeded' },
        charged_cents: 0,
      });
      await waitFor('the coarse cap', () => capEvents(coarse.clientId).length === 2);
      expect((await estimate()).isError).toBe(true);
      await settle();
      expect(capEvents(exact.clientId)).toEqual(['cap.warning 0.04/0.05', 'cap.reached 0.05/0.05']);
      // The warning (87.5 %) and the refusal come from back-to-back calls: deliveries are not ordered (each event
      // carries its time, docs/decisions.md "Alerts"), so they are compared as a set; each still fires once.
      expect(capEvents(coarse.clientId).sort()).toEqual([
        'cap.reached 0.70/0.80 refused',
        'cap.warning 0.70/0.80',
      ]);
      const reached = hook.deliveries.find((d) => d.event.type === 'cap.reached')?.event;
      expect(reached).toMatchObject({
        account: accountId,
        data: {
          percent: 100,
          cap: {
            kind: 'app',
            id: exact.clientId,
            name: 'Test MCP host',
            window: 'day',
            limit_micros: 50_000,
            spent_micros: 50_000,
            resets_at: new Date(Math.ceil((Date.now() + offset.ms) / DAY) * DAY).toISOString(),
          },
        },
      });
      expect(hook.deliveries.every((d) => d.verified)).toBe(true);

      // The next UTC day: the limit starts again, and so do its alerts.
      offset.ms += DAY;
      for (let i = 0; i < 4; i++) expect((await scrape()).isError).toBeFalsy();
      await waitFor('80 % the next day', () => capEvents(exact.clientId).length === 3);
      await settle();
      expect(capEvents(exact.clientId)).toEqual([
        'cap.warning 0.04/0.05',
        'cap.reached 0.05/0.05',
        'cap.warning 0.04/0.05',
      ]);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
