import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALERT_EVENT_TYPES } from '../../src/alerts/index.js';
import { alertsPage, type Receiver, settle, shownSecret, startReceiver, waitFor } from '../helpers/alerts.js';
import { type StartOptions, startGateway, type TestGateway } from '../helpers/gateway.js';
import { createTestDatabase, type TestDatabase } from '../helpers/pg.js';

// Once per crossing where it is hardest: two replicas on one PostgreSQL database taking the calls that cross the
// threshold together (one alert, one delivery), and a gateway restarted with an alert still to be delivered (it
// is, with the same event, and nothing fires twice).

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

describe('[alerts:replicas] two replicas on PostgreSQL', () => {
  let db: TestDatabase;
  let a: TestGateway;
  let b: TestGateway;
  let hook: Receiver;

  beforeAll(async () => {
    hook = await startReceiver();
    db = await createTestDatabase('tg_alerts_rep');
    a = await startGateway({ env: { TOLLGATE_DATABASE_URL: db.url }, handlers });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await db?.drop();
    await hook?.close();
  });

  it('calls crossing the threshold on both at once fire one alert, delivered once', async () => {
    const { accountId, key } = await a.account('5');
    const page = await alertsPage(a, key);
    const saved = await page.save({
      webhook_url: hook.url,
      balance_threshold_usd: '2.50',
      events: [...ALERT_EVENT_TYPES],
    });
    hook.secret = shownSecret(saved.text) as string;
    // The second replica starts now and finds the account's alerts in the shared database.
    b = await startGateway({ env: { TOLLGATE_DATABASE_URL: db.url }, handlers });
    expect(b.gw.state.replicaId).not.toBe(a.gw.state.replicaId);
    const replies = await Promise.all(Array.from({ length: 14 }, (_, i) => paid(i % 2 ? a : b, key)));
    expect(replies.map((r) => r.status)).toEqual(Array(14).fill(200));
    await waitFor('the alert', () => hook.deliveries.length > 0);
    await settle(3_000);
    expect(hook.deliveries.map((d) => d.event.type)).toEqual(['balance.below_threshold']);
    expect(hook.deliveries[0]?.verified).toBe(true);
    const rows = await b.gw.alerts.deliveries(accountId, 10);
    expect(rows).toMatchObject([{ channel: 'webhook', status: 'delivered', attempts: 1 }]);
  });
});

describe('[alerts:outbox] a restart keeps what is still to be delivered, and fires nothing twice', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-alerts-restart-'));
  const offset = { ms: 0 };
  const options: StartOptions = {
    dataDir,
    keepData: true,
    clock: { now: () => Date.now() + offset.ms },
    handlers,
  };
  let t: TestGateway;
  let hook: Receiver;

  beforeAll(async () => {
    hook = await startReceiver(() => Date.now() + offset.ms);
    t = await startGateway(options);
  });
  afterAll(async () => {
    await t?.close();
    await hook?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('a delivery that failed before the restart is made after it, with the same event', async () => {
    const { accountId, key } = await t.account('1');
    const page = await alertsPage(t, key);
    const saved = await page.save({
      webhook_url: hook.url,
      balance_threshold_usd: '0.50',
      events: [...ALERT_EVENT_TYPES],
    });
    hook.secret = shownSecret(saved.text) as string;
    hook.answers.push(503);
    expect((await paid(t, key)).status).toBe(200);
    expect((await paid(t, key)).status).toBe(200); // 0.30 left: below 0.50
    await waitFor('the first attempt', () => hook.deliveries.length === 1);
    const first = await waitFor('its failure recorded', async () => {
      const [r] = await t.gw.alerts.deliveries(accountId, 1);
      return r?.last_status === 503 && r;
    });
    await t.close();

    t = await startGateway(options);
    // The restart looks at every account with alerts: the balance is still below, which is no new crossing.
    offset.ms = first.next_attempt_at - Date.now();
    await t.gw.alerts.tick();
    await waitFor('the retry after the restart', () => hook.deliveries.length === 2);
    await settle();
    expect(hook.deliveries).toHaveLength(2);
    expect(hook.deliveries[1]?.body).toBe(hook.deliveries[0]?.body);
    expect(hook.deliveries[1]?.verified).toBe(true);
    const [done] = await t.gw.alerts.deliveries(accountId, 10);
    expect(done).toMatchObject({ event_id: first.event_id, status: 'delivered', attempts: 2 });
  });
});
