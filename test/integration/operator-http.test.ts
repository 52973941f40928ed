import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CookieJar, hop } from '../e2e/oauth-helpers.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { createTestDatabase, type TestDatabase } from '../helpers/pg.js';

// The operator's endpoints (docs/operator.md "Refunds and adjustments") over real HTTP against a running gateway,
// on SQLite and on PostgreSQL: who may use them, requests refused by field, refunds in part and in full linked
// to their call in the account's own history, once per request, and a debit that leaves pending holds alone.

const TOKEN = 'operator-token-0123456789-abcdefghijklmnopqrstuvwxyz';
const PRICE = 350_000; // propstats/value-estimate: 35 cents
const ADDRESS = { address: '1 Main St, Austin, TX' };

describe.each([{ name: 'sqlite' as const }, { name: 'postgres' as const }])(
  'operator endpoints ($name)',
  ({ name }) => {
    let t: TestGateway;
    let db: TestDatabase | undefined;
    /** Resolves the gated call (the next one to enter the handler waits for it). */
    let release: (() => void) | undefined;
    let entered: (() => void) | undefined;

    beforeAll(async () => {
      db = name === 'postgres' ? await createTestDatabase('tg_op') : undefined;
      t = await startGateway({
        env: { TOLLGATE_ADMIN_TOKEN: TOKEN, ...(db ? { TOLLGATE_DATABASE_URL: db.url } : {}) },
        handlers: {
          'propstats/value-estimate': async () => {
            if (release === undefined && entered !== undefined) {
              await new Promise<void>((r) => {
                release = r;
                entered?.();
              });
            }
            return { price: 1, priceRangeLow: 1, priceRangeHigh: 2, comparables: [] };
          },
        },
      });
    });
    afterAll(async () => {
      await t.close();
      await db?.drop();
    });

    const op = (path: 'refund' | 'adjust', body: unknown, headers: Record<string, string> = {}) =>
      t.post(`/api/operator/${path}`, body, { headers: { authorization: `Bearer ${TOKEN}`, ...headers } });

    async function paidCall(key: string): Promise<string> {
      const r = await t.post('/api/run/propstats/value-estimate', ADDRESS, { key });
      expect(r.status, r.text).toBe(200);
      expect(r.body.charged_cents).toBe(35);
      return r.body.transaction_id as string;
    }

    /** The /account page, signed in with the key. */
    async function dashboard(key: string): Promise<string> {
      const jar = new CookieJar();
      const signin = await hop(jar, `${t.url}/account/signin`);
      const csrf = /name="csrf" value="([^"]+)"/.exec(signin.text)?.[1] ?? '';
      await hop(jar, `${t.url}/account/signin`, { form: { csrf, api_key: key } });
      return (await hop(jar, `${t.url}/account`)).text;
    }

    const history = async (key: string) =>
      (await t.post('/api/run/platform/transactions', { limit: 20 }, { key })).body.data
        .transactions as Array<Record<string, unknown> & { meta: Record<string, unknown> | null }>;

    it('[ops:operator-endpoints] only the operator token: 401 without or with a wrong one, 403 for an API key, 405; fields named', async () => {
      const { key } = await t.account('1');
      const body = { transaction_id: 'txn_x', reason: 'x' };
      const none = await t.post('/api/operator/refund', body);
      expect(none.status).toBe(401);
      expect(none.headers['www-authenticate']).toMatch(/^Bearer realm="tollgate-operator"/);
      expect(none.body).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
      expect((await t.post('/api/operator/refund', body, { key: `${TOKEN}x` })).status).toBe(401);
      // Even the operator account's own API key is an account's key.
      const asKey = await t.post('/api/operator/adjust', { account: 'x', usd: '1', reason: 'x' }, { key });
      expect(asKey.status).toBe(403);
      expect(asKey.body.error.message).toMatch(/API key cannot use the operator endpoints/);
      expect((await t.get('/api/operator/refund', { key: TOKEN })).status).toBe(405);

      const unknown = await op('refund', { ...body, amount: 1 });
      expect(unknown.status).toBe(400);
      expect(unknown.body.error.details.issues).toEqual([
        { path: 'amount', message: expect.stringMatching(/unknown field/) },
      ]);
      const noReason = await op('refund', { transaction_id: 'txn_x', reason: '  ' });
      expect(noReason.status).toBe(400);
      expect(noReason.body.error.details.issues[0].path).toBe('reason');
      expect((await op('refund', { transaction_id: 'txn_x' })).body.error.details.issues[0]).toEqual({
        path: 'reason',
        message: 'required',
      });
      const badUsd = await op('adjust', { account: 'x', usd: '1.2345678', reason: 'x' });
      expect(badUsd.status).toBe(400);
      expect(badUsd.body.error.details.issues[0]).toMatchObject({ path: 'usd' });
      expect((await op('refund', { ...body, usd: '-1' })).body.error.details.issues[0].path).toBe('usd');
      const badKey = await op('refund', body, { 'idempotency-key': 'has space' });
      expect(badKey.body.error.details.issues[0].path).toBe('Idempotency-Key');
      const missing = await op('refund', body);
      expect(missing.status).toBe(404);
      expect(missing.body.error).toMatchObject({
        code: 'not_found',
        message: 'No transaction txn_x; nothing was refunded.',
      });
      expect((await op('adjust', { account: 'nobody', usd: '1', reason: 'x' })).status).toBe(404);
    });

    it('[billing:refund-within-charge] [billing:refund-linked] part, then the rest, never more; each refund a row naming its call', async () => {
      const { accountId, key } = await t.account('1');
      const txn = await paidCall(key);
      const part = await op('refund', {
        transaction_id: txn,
        usd: '0.1',
        reason: 'slow answer',
        operator: 'ops@example',
      });
      expect(part.status, part.text).toBe(200);
      expect(part.body).toMatchObject({
        ok: true,
        transaction_id: txn,
        account_id: accountId,
        refunded_usd: '$0.10',
        refunded_micros: 100_000,
        charged_micros: PRICE,
        total_refunded_micros: 100_000,
        left_micros: PRICE - 100_000,
        status: 'succeeded',
        reason: 'slow answer',
        by: 'ops@example',
        duplicate: false,
        balance_micros: 1_000_000 - PRICE + 100_000,
      });
      const over = await op('refund', { transaction_id: txn, usd: '0.26', reason: 'more' });
      expect(over.status).toBe(400);
      expect(over.body.error.message).toBe(
        `Only $0.25 of the $0.35 ${txn} was charged is left to refund, less than the $0.26 asked; nothing was refunded.`,
      );
      expect(over.body.error.details).toMatchObject({ left_micros: 250_000, issues: [{ path: 'usd' }] });
      const rest = await op('refund', { transaction_id: txn, reason: 'wrong data' });
      expect(rest.body).toMatchObject({
        refunded_micros: 250_000,
        status: 'refunded',
        left_micros: 0,
        by: 'http',
      });
      const again = await op('refund', { transaction_id: txn, reason: 'another' });
      expect(again.status).toBe(400);
      expect(again.body.error.message).toBe(
        `${txn} is refunded in full already ($0.35); nothing was refunded.`,
      );

      // The account's own history (platform/transactions): the call at what it was charged, each refund a row
      // naming it; the rows add up to what moved.
      const rows = await history(key);
      const call = rows.find((r) => r.id === txn);
      expect(call).toMatchObject({
        kind: 'call',
        status: 'refunded',
        amount_micros: -PRICE,
        refunded_cents: 35,
      });
      const refunds = rows.filter((r) => r.kind === 'call_refund');
      expect(refunds.map((r) => [r.amount_micros, r.meta?.refund_of, r.meta?.memo])).toEqual([
        [250_000, txn, 'wrong data'],
        [100_000, txn, 'slow answer'],
      ]);
      expect(rows.reduce((s, r) => s + (r.amount_micros as number), 0)).toBe(1_000_000);
      expect((await t.gw.ledger.balance(accountId)).balance_micros).toBe(1_000_000);
      expect((await t.gw.ledger.getCall(txn))?.operator_refunded_micros).toBe(PRICE);
      // The dashboard's history shows each refund naming its call.
      const page = await dashboard(key);
      expect(page).toContain(`refund of ${txn}: wrong data`);
      expect(page).toContain(`refund of ${txn}: slow answer`);
    });

    it('[billing:refund-idempotent] a retried request refunds once; two different partial refunds both go through', async () => {
      const { accountId, key } = await t.account('1');
      const txn = await paidCall(key);
      const ask = { transaction_id: txn, usd: '0.05', reason: 'goodwill' };
      const [a, b] = await Promise.all([op('refund', ask), op('refund', ask)]);
      expect([a.body.duplicate, b.body.duplicate].sort()).toEqual([false, true]);
      expect(a.body.refund_id).toBe(b.body.refund_id);
      // With a key: once per key, and the key cannot be reused for another refund.
      const keyed = { 'idempotency-key': 'ticket-4711' };
      const k1 = await op('refund', { ...ask, reason: 'ticket 4711' }, keyed);
      const k2 = await op('refund', { ...ask, reason: 'ticket 4711' }, keyed);
      expect(k1.body.duplicate).toBe(false);
      expect(k2.body).toMatchObject({ duplicate: true, refund_id: k1.body.refund_id });
      const reused = await op('refund', { ...ask, usd: '0.06', reason: 'ticket 4711' }, keyed);
      expect(reused.status).toBe(422);
      expect(reused.body.error.code).toBe('idempotency_mismatch');
      // The same amount and reason again under another key is a second refund.
      expect((await op('refund', ask, { 'idempotency-key': 'second' })).body.duplicate).toBe(false);
      expect((await t.gw.ledger.getCall(txn))?.refunded_micros).toBe(150_000);
      expect((await t.gw.ledger.balance(accountId)).balance_micros).toBe(1_000_000 - PRICE + 150_000);
    });

    it('[billing:adjust-within-holds] [billing:adjust-audited] a debit leaves what a call in flight holds; the adjustment is in the history', async () => {
      const { accountId, key } = await t.account('0.5');
      const inHandler = new Promise<void>((r) => {
        entered = r;
      });
      const call = t.post('/api/run/propstats/value-estimate', ADDRESS, { key });
      await inHandler;
      // 0.50 − 0.35 held = 0.15 free.
      const refused = await op('adjust', { account: accountId, usd: '-0.16', reason: 'fee' });
      expect(refused.status).toBe(402);
      expect(refused.body.error).toMatchObject({
        code: 'insufficient_credit',
        details: { available_micros: 150_000, held_micros: PRICE },
      });
      expect(refused.body.error.message).toMatch(/At most \$0\.15 can be taken now; nothing was adjusted\.$/);
      const taken = await op('adjust', {
        account: accountId,
        usd: '-0.15',
        reason: 'setup fee',
        operator: 'ops',
      });
      expect(taken.body).toMatchObject({
        adjusted_micros: -150_000,
        reason: 'setup fee',
        by: 'ops',
        available_micros: 0,
      });
      release?.();
      expect((await call).body.charged_cents).toBe(35);
      const up = await op('adjust', { account: 'test', usd: 2, reason: 'goodwill' });
      // `test` names every account of this suite: refused as ambiguous, naming the field.
      expect(up.status).toBe(400);
      expect(up.body.error.details.issues[0].path).toBe('account');
      const credit = await op('adjust', { account: accountId, usd: '+2', reason: 'goodwill' });
      expect(credit.body).toMatchObject({ adjusted_usd: '$2.00', balance_micros: 2_000_000 });
      const rows = (await history(key)).filter((r) => r.kind === 'adjustment');
      expect(rows.map((r) => [r.amount_micros, r.meta?.memo, r.meta?.by, r.payment_method])).toEqual([
        [2_000_000, 'goodwill', 'http', 'operator'],
        [-150_000, 'setup fee', 'ops', 'operator'],
      ]);
    });

    it('[billing:refund-accountless-refused] a call paid without an account is refused, saying where its money went', async () => {
      // An x402 payer's call, recorded as the x402 door records one (funding with the hold, then the capture).
      const payer = '0x00000000000000000000000000000000000000aa';
      const id = `x402_${payer}`;
      await t.gw.ledger.createAccount({ id, kind: 'x402', name: `x402 payer ${payer}` });
      const held = await t.gw.money.hold({
        principal: { kind: 'x402', accountId: id, payer },
        action: 'propstats/value-estimate',
        priceMicros: PRICE,
        timeoutMs: 1_000,
        funding: { micros: PRICE, memo: 'x402 payment' },
      });
      if (held.kind !== 'held') throw new Error(held.kind);
      await held.hold.capture(PRICE, { provider: null });
      const r = await op('refund', { transaction_id: held.hold.callId, reason: 'bad data' });
      expect(r.status).toBe(400);
      expect(r.body.error.message).toMatch(
        /was paid without an account \(x402:0x0+aa\): that money settled outside this ledger.*nothing was refunded\.$/,
      );
      expect((await t.gw.ledger.getCall(held.hold.callId))?.refunded_micros).toBe(0);
    });
  },
);
