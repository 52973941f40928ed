import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../auth/api-keys.js';
import { describeAuditEvent, openAuditLog } from '../../src/account/audit.js';
import { filteredHistory } from '../../src/account/dashboard.js';
import { alertsPage, type Receiver, settle, shownSecret, startReceiver, waitFor } from '../helpers/alerts.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { createTestDatabase, type TestDatabase } from '../helpers/pg.js';

// The operator's refunds and adjustments where they meet limits per API key, alerts and team accounts
// (docs/decisions.md "Refunds and adjustments by the operator", the merge's part), through the operator's HTTP
// endpoints of a running gateway, on SQLite and on PostgreSQL: a refund comes off the key's daily counter, an
// adjustment crosses a balance alert and re-arms it, a member's history shows only the refunds of its own calls,
// and each move is on the account's event log as the operator's.

const TOKEN = 'operator-token-0123456789-abcdefghijklmnopqrstuvwxyz';
const PRICE = 350_000; // propstats/value-estimate: 35 cents
const ADDRESS = { address: '1 Main St, Austin, TX' };

describe.each([{ name: 'sqlite' as const }, { name: 'postgres' as const }])(
  'operator money × limits, alerts, teams ($name)',
  ({ name }) => {
    let t: TestGateway;
    let db: TestDatabase | undefined;
    let hook: Receiver;

    beforeAll(async () => {
      hook = await startReceiver();
      db = name === 'postgres' ? await createTestDatabase('tg_op_merge') : undefined;
      t = await startGateway({
        env: { TOLLGATE_ADMIN_TOKEN: TOKEN, ...(db ? { TOLLGATE_DATABASE_URL: db.url } : {}) },
        handlers: {
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
      await db?.drop();
      await hook?.close();
    });

    const op = (path: 'refund' | 'adjust', body: unknown) =>
      t.post(`/api/operator/${path}`, body, { headers: { authorization: `Bearer ${TOKEN}` } });
    const paid = (key: string) => t.post('/api/run/propstats/value-estimate', ADDRESS, { key });

    it('[keys:refund-uncounts] [billing:operator-moves-elsewhere] a key at its daily cap refunded part of a charge may spend that much again today', async () => {
      const { accountId, key } = await t.account('5');
      const [row] = await t.gw.ledger.listApiKeys(accountId);
      const keyId = row?.id as string;
      await t.gw.ledger.setApiKeyLimits(keyId, { daily_limit_micros: 800_000 });
      const counted = () => t.gw.ledger.capSpend(accountId, `key:${keyId}`, 'day');

      const first = await paid(key);
      const second = await paid(key);
      expect([first.status, second.status]).toEqual([200, 200]);
      // 0.70 counted: a third call (0.35) would pass 0.80.
      expect((await paid(key)).body.error.code).toBe('daily_cap_exceeded');
      expect(await counted()).toBe(700_000);

      const txn = second.body.transaction_id as string;
      const part = await op('refund', { transaction_id: txn, usd: '0.20', reason: 'slow answer' });
      expect(part.status, part.text).toBe(200);
      expect(await counted()).toBe(500_000);
      // 0.50 + 0.35 is still past 0.80: the refund freed exactly what it gave back, no more.
      expect((await paid(key)).body.error.code).toBe('daily_cap_exceeded');
      expect((await op('refund', { transaction_id: txn, usd: '0.05', reason: 'more' })).status).toBe(200);
      expect(await counted()).toBe(450_000);
      expect((await paid(key)).status).toBe(200);
      expect(await counted()).toBe(800_000);
      // What the key spent today, net of the refunds (the dashboard's and `keys list`'s figure), agrees.
      const usage = (await t.gw.ledger.keyUsage(accountId)).find((u) => u.id === keyId);
      expect(usage?.spent_today_micros).toBe(3 * PRICE - 250_000);
      // The call records what was given back in all.
      expect((await t.gw.ledger.getCall(txn))?.refunded_micros).toBe(250_000);
    });

    it('[alerts:balance-once] [billing:operator-moves-elsewhere] an adjustment crosses a balance threshold once, a credit re-arms it', async () => {
      const { accountId, key } = await t.account('5');
      const page = await alertsPage(t, key);
      const saved = await page.save({
        webhook_url: hook.url,
        balance_threshold_usd: '2.50',
        events: ['balance.below_threshold'],
      });
      expect(saved.status).toBe(201);
      hook.secret = shownSecret(saved.text) as string;
      const mine = () => hook.deliveries.filter((d) => d.event.account === accountId);

      expect((await op('adjust', { account: accountId, usd: '-3', reason: 'setup fee' })).status).toBe(200);
      const [d] = await waitFor('the webhook', () => mine().length > 0 && mine());
      expect(d?.verified).toBe(true);
      expect(d?.event).toMatchObject({
        type: 'balance.below_threshold',
        data: { available_micros: 2_000_000, threshold_micros: 2_500_000 },
      });
      // Back above (a credit, as a top-up would): re-armed, nothing sent; below again: a second crossing.
      expect((await op('adjust', { account: accountId, usd: '+3', reason: 'fee waived' })).status).toBe(200);
      await settle();
      expect(mine()).toHaveLength(1);
      expect((await op('adjust', { account: accountId, usd: '-3', reason: 'setup fee' })).status).toBe(200);
      await waitFor('the second crossing', () => mine().length === 2);
      await settle();
      expect(mine()).toHaveLength(2);
    });

    it("[billing:operator-moves-elsewhere] [team:member-own-usage] a team member's history shows the refunds of its own keys' calls only; each move is on the event log", async () => {
      const { accountId, key } = await t.account('5');
      const [own] = await t.gw.ledger.listApiKeys(accountId);
      const other = await createApiKey(t.gw.ledger, accountId, 'another member');
      const mineTxn = (await paid(key)).body.transaction_id as string;
      const theirsTxn = (await paid(other.key)).body.transaction_id as string;
      for (const txn of [mineTxn, theirsTxn]) {
        const r = await op('refund', { transaction_id: txn, usd: '0.10', reason: `refund of ${txn}` });
        expect(r.status, r.text).toBe(200);
      }
      const adjusted = await op('adjust', {
        account: accountId,
        usd: '1',
        reason: 'goodwill',
        operator: 'ops',
      });
      expect(adjusted.status).toBe(200);

      const all = { from: '', to: '', kind: 'all', status: '' } as const;
      const refundsOf = (rows: Array<{ kind: string; meta?: Record<string, unknown> | null }>) =>
        rows.filter((r) => r.kind === 'call_refund').map((r) => r.meta?.refund_of);
      // The member (its keys' principals): its call and the refund of it; not the other's, nor the adjustment.
      const member = await filteredHistory(t.gw.ledger, accountId, all, 100, [own?.id as string]);
      expect(member.filter((r) => r.kind === 'call').map((r) => r.id)).toEqual([mineTxn]);
      expect(refundsOf(member)).toEqual([mineTxn]);
      expect(member.some((r) => r.kind === 'adjustment')).toBe(false);
      const memberPayments = await filteredHistory(
        t.gw.ledger,
        accountId,
        { ...all, kind: 'payments' },
        100,
        [own?.id as string],
      );
      expect(refundsOf(memberPayments)).toEqual([mineTxn]);
      // An owner (the whole account): both refunds and the adjustment.
      const owner = await filteredHistory(t.gw.ledger, accountId, all, 100);
      expect(refundsOf(owner).sort()).toEqual([mineTxn, theirsTxn].sort());
      expect(owner.filter((r) => r.kind === 'adjustment')).toHaveLength(1);

      // The event log: the operator's moves, with who asked and why.
      const events = await openAuditLog(t.gw.state).list(accountId, 10);
      expect(events.map((e) => [e.action, e.actor.memberId, e.detail?.by])).toEqual([
        ['balance.adjusted', null, 'ops'],
        ['call.refunded', null, 'http'],
        ['call.refunded', null, 'http'],
      ]);
      expect(describeAuditEvent(events[0] as (typeof events)[0])).toBe(
        'the operator adjusted the balance by +$1.00: goodwill',
      );
      expect(describeAuditEvent(events[2] as (typeof events)[0])).toBe(
        `the operator refunded $0.10 of ${mineTxn}: refund of ${mineTxn}`,
      );
    });
  },
);
