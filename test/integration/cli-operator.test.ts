import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openAuditLog } from '../../src/account/audit.js';
import { ENDPOINT_FILE } from '../../src/cli/local-gateway.js';
import { type OpenedState, openState } from '../../src/cli/state.js';
import { openStateLedger } from '../../src/ledger/index.js';
import type { Ledger } from '../../src/ledger/types.js';
import { systemClock } from '../../src/lib/clock.js';
import { runCli, runCliAsync } from '../helpers/cli.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { createTestDatabase, type TestDatabase } from '../helpers/pg.js';

// `tollgate refund` and `tollgate adjust` as an operator runs them (docs/operator.md "Refunds and adjustments"):
// their own process, --json one object, on SQLite and PostgreSQL; and beside a running SQLite gateway, whose
// holds are in its memory, through that gateway.

const DAY = 86_400_000;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function one(r: Run, exit = 0) {
  expect(r.code, r.stderr).toBe(exit);
  const lines = r.stdout.trim().split('\n');
  expect(lines, 'exactly one JSON object on stdout').toHaveLength(1);
  return JSON.parse(lines[0] as string);
}

/** A call of `micros`, charged: as the gateway records one. */
async function chargedCall(ledger: Ledger, accountId: string, micros: number): Promise<string> {
  const begun = await ledger.begin({
    accountId,
    action: 'propstats/value-estimate',
    priceMicros: micros,
    holdMicros: micros,
    paymentMethod: 'api_key',
    principal: 'key_x',
    holdTtlMs: 60_000,
  });
  if (begun.kind !== 'started') throw new Error(begun.kind);
  await ledger.capture(begun.callId, { amountMicros: micros, provider: 'rentcast', durationMs: 5 });
  return begun.callId;
}

describe.each([{ name: 'sqlite' as const }, { name: 'postgres' as const }])(
  'tollgate refund and adjust ($name)',
  ({ name }) => {
    const work = mkdtempSync(join(tmpdir(), 'tollgate-cli-op-'));
    const dataDir = join(work, 'data');
    let db: TestDatabase | undefined;
    let state: OpenedState;
    let ledger: Ledger;
    let env: NodeJS.ProcessEnv;
    let acct: string;
    let txn: string;
    let other: string;

    beforeAll(async () => {
      db = name === 'postgres' ? await createTestDatabase('tg_cliop') : undefined;
      const database = db && { url: db.url, pool: 2, leaseMs: 30_000 };
      state = await openState({ dataDir, database });
      ledger = await openStateLedger(state.state, { clock: systemClock, idempotencyTtlMs: DAY });
      env = { TOLLGATE_DATA_DIR: dataDir, ...(db ? { TOLLGATE_DATABASE_URL: db.url } : {}) };
      acct = (await ledger.createAccount({ name: 'carol' })).id;
      await ledger.credit(acct, 1_000_000, 'test');
      txn = await chargedCall(ledger, acct, 350_000);
      other = await chargedCall(ledger, acct, 350_000);
    });
    afterAll(async () => {
      await ledger.close();
      await state.close();
      await db?.drop();
      rmSync(work, { recursive: true, force: true });
    });

    const cli = (...args: string[]) => runCli(args, { cwd: work, env });

    it('[billing:refund-within-charge] [billing:refund-idempotent] refund in part, the same again, the rest, no further', async () => {
      const part = one(cli('refund', txn, '--usd', '0.1', '--reason', 'slow answer', '--json'));
      expect(part).toMatchObject({
        transaction_id: txn,
        account_id: acct,
        refunded_usd: '$0.10',
        left_micros: 250_000,
        status: 'succeeded',
        reason: 'slow answer',
        by: expect.stringMatching(/^cli:/),
        duplicate: false,
        balance_micros: 1_000_000 - 700_000 + 100_000,
      });
      // The same command again (a retry): the first refund, nothing moved.
      const again = one(cli('refund', txn, '--usd', '0.1', '--reason', 'slow answer', '--json'));
      expect(again).toMatchObject({
        refund_id: part.refund_id,
        duplicate: true,
        balance_micros: part.balance_micros,
      });
      const human = cli('refund', txn, '--reason', 'wrong data');
      // Moved by the CLI itself: on the account's event log as the operator's, once (the retry recorded nothing).
      const logged = await openAuditLog(state.state).list(acct, 10);
      expect(logged.map((e) => [e.action, e.subject?.id, e.detail?.micros, e.actor.memberId])).toEqual([
        ['call.refunded', txn, 250_000, null],
        ['call.refunded', txn, 100_000, null],
      ]);
      expect(human.code, human.stderr).toBe(0);
      expect(human.stdout).toMatch(
        new RegExp(
          `^refunded \\$0\\.25 of ${txn} to ${acct} \\(carol\\) \\(mv_\\w+\\); \\$0\\.00 of its \\$0\\.35 left to refund`,
        ),
      );
      const none = one(cli('refund', txn, '--usd', '0.01', '--reason', 'more', '--json'), 1);
      expect(none.error).toMatchObject({
        code: 'invalid_input',
        message: `${txn} is refunded in full already ($0.35); nothing was refunded.`,
      });
      const over = one(cli('refund', other, '--usd', '0.36', '--reason', 'x', '--json'), 1);
      expect(over.error).toMatchObject({ code: 'invalid_input', left_micros: 350_000 });
      expect(one(cli('refund', other, '--usd', '0.004', '--reason', 'rounding', '--json')).left_micros).toBe(
        346_000,
      );
      expect(one(cli('refund', 'txn_nope', '--reason', 'x', '--json'), 2).error).toMatchObject({
        code: 'not_found',
        message: expect.stringMatching(
          /^no transaction txn_nope in (.*tollgate\.db|the PostgreSQL database)/,
        ),
      });
    }, 180_000);

    it('[billing:adjust-audited] [billing:adjust-within-holds] adjust either way with a reason; a debit past what is free is refused', () => {
      const down = one(cli('adjust', 'carol', '-0.5', '--reason', 'setup fee', '--json'));
      expect(down).toMatchObject({
        account_id: acct,
        adjusted_usd: '-$0.50',
        reason: 'setup fee',
        by: expect.stringMatching(/^cli:/),
      });
      const free = down.available_micros as number;
      const refused = one(cli('adjust', acct, `-${(free + 1) / 1e6}`, '--reason', 'too much', '--json'), 1);
      expect(refused.error).toMatchObject({ code: 'insufficient_credit', available_micros: free });
      const up = cli('adjust', 'carol', '+1', '--reason', 'goodwill');
      expect(up.stdout).toMatch(
        new RegExp(`^adjusted ${acct} \\(carol\\) by \\$1\\.00 \\(goodwill\\); balance`),
      );
      const noReason = cli('adjust', 'carol', '1');
      expect(noReason.code).toBe(2);
      expect(noReason.stderr).toContain('missing --reason');
      expect(noReason.stderr).toContain('usage: node bin/tollgate.js adjust <account> <±usd> --reason R');
      expect(one(cli('adjust', 'carol', '0', '--reason', 'x', '--json'), 2).error.message).toBe(
        '<±usd>: must not be zero',
      );
      expect(one(cli('refund', txn, '--usd', '-1', '--reason', 'x', '--json'), 2).error.code).toBe('usage');
    }, 180_000);

    it('[billing:refund-linked] tx shows each refund naming its call, and the adjustments', () => {
      const tx = one(cli('tx', 'carol', '--json'));
      const rows = tx.transactions as Array<{
        kind: string;
        id: string;
        amount_micros: number;
        meta: Record<string, unknown> | null;
      }>;
      expect(
        rows.filter((r) => r.kind === 'call_refund').map((r) => [r.meta?.refund_of, r.amount_micros]),
      ).toEqual([
        [other, 4_000],
        [txn, 250_000],
        [txn, 100_000],
      ]);
      expect(rows.find((r) => r.id === txn)).toMatchObject({ status: 'refunded', amount_micros: -350_000 });
      expect(rows.filter((r) => r.kind === 'adjustment').map((r) => r.amount_micros)).toEqual([
        1_000_000, -500_000,
      ]);
      // The rows add up to the balance (it started at 0).
      expect(rows.reduce((s, r) => s + r.amount_micros, 0)).toBe(
        one(cli('balance', 'carol', '--json')).balance_micros,
      );
      const text = cli('tx', 'carol').stdout;
      expect(text).toContain(`refund of ${txn}: slow answer`);
      expect(text).toContain('adjustment: setup fee');
      expect(text).toMatch(new RegExp(`${other}\\s+propstats/value-estimate\\s+partly refunded`));
      const refundId = rows.find((r) => r.kind === 'call_refund')?.id as string;
      expect(one(cli('refund', refundId, '--reason', 'x', '--json'), 1).error.message).toMatch(
        /is a call_refund, not a call/,
      );
    }, 120_000);
  },
);

describe('the CLI beside a running SQLite gateway', () => {
  let t: TestGateway;
  let release: (() => void) | undefined;
  let entered: (() => void) | undefined;
  const work = mkdtempSync(join(tmpdir(), 'tollgate-cli-gw-'));

  beforeAll(async () => {
    t = await startGateway({
      sqliteOnly: true,
      handlers: {
        'propstats/value-estimate': async () => {
          await new Promise<void>((r) => {
            release = r;
            entered?.();
          });
          return { price: 1, priceRangeLow: 1, priceRangeHigh: 2, comparables: [] };
        },
      },
    });
  });
  afterAll(async () => {
    await t.close();
    rmSync(work, { recursive: true, force: true });
  });

  // Not spawnSync: the gateway the CLI talks to runs in this process.
  const cli = (dataDir: string, ...args: string[]) =>
    runCliAsync(args, { cwd: work, env: { TOLLGATE_DATA_DIR: dataDir } });

  it('[billing:adjust-within-holds] a debit goes through the gateway, which sees the holds of its calls in flight', async () => {
    expect(t.gw.state.kind).toBe('sqlite');
    expect(existsSync(join(t.dataDir, ENDPOINT_FILE))).toBe(true);
    const { accountId, key } = await t.account('0.5');
    const inHandler = new Promise<void>((r) => {
      entered = r;
    });
    const call = t.post('/api/run/propstats/value-estimate', { address: '1 Main St, Austin, TX' }, { key });
    await inHandler;
    // 0.35 is held in the gateway's memory: the database alone would say 0.50 is free.
    const refused = one(await cli(t.dataDir, 'adjust', accountId, '-0.16', '--reason', 'fee', '--json'), 1);
    expect(refused.error).toMatchObject({
      code: 'insufficient_credit',
      available_micros: 150_000,
      held_micros: 350_000,
    });
    const taken = one(await cli(t.dataDir, 'adjust', accountId, '-0.15', '--reason', 'fee', '--json'));
    expect(taken).toMatchObject({
      adjusted_micros: -150_000,
      by: expect.stringMatching(/^cli:/),
      available_micros: 0,
    });
    release?.();
    const done = await call;
    // The call still captured its price in full.
    expect(done.body.charged_cents).toBe(35);
    expect((await t.gw.ledger.balance(accountId)).balance_micros).toBe(0);
    // A refund goes through the gateway too.
    const refund = one(
      await cli(t.dataDir, 'refund', done.body.transaction_id, '--usd', '0.05', '--reason', 'late', '--json'),
    );
    expect(refund).toMatchObject({ refunded_micros: 50_000, balance_micros: 50_000 });
    // Without the operator token, the gateway's endpoints take only the CLI's per-start token.
    const r = await t.post(
      '/api/operator/refund',
      { transaction_id: 'x', reason: 'x' },
      { key: 'x'.repeat(40) },
    );
    expect(r.status).toBe(401);
  }, 120_000);

  it('[billing:adjust-within-holds] a gateway that holds the data dir but cannot be reached: no debit from the CLI', async () => {
    const dataDir = join(work, 'locked');
    // A data dir with a database, locked by a live process (this one) that never said where it listens.
    const opened = await openState({ dataDir, database: undefined });
    const ledger = await openStateLedger(opened.state, { clock: systemClock, idempotencyTtlMs: DAY });
    const acct = (await ledger.createAccount({ name: 'dan' })).id;
    await ledger.credit(acct, 1_000_000, 'test');
    await ledger.close();
    await opened.close();
    writeFileSync(join(dataDir, 'gateway.lock'), String(process.pid));
    const refused = one(await cli(dataDir, 'adjust', 'dan', '-0.1', '--reason', 'fee', '--json'), 1);
    expect(refused.error.code).toBe('gateway_unreachable');
    expect(refused.error.message).toContain(`a gateway (pid ${process.pid}) runs on ${dataDir}`);
    // Money in needs no hold's leave: a credit adjustment is made.
    expect(
      one(await cli(dataDir, 'adjust', 'dan', '0.1', '--reason', 'goodwill', '--json')).balance_micros,
    ).toBe(1_100_000);
  }, 120_000);

  it('[ops:operator-endpoints] a PostgreSQL gateway without TOLLGATE_ADMIN_TOKEN answers 503; the file goes with the gateway', async () => {
    const db = await createTestDatabase('tg_opoff');
    const pg = await startGateway({ env: { TOLLGATE_DATABASE_URL: db.url } });
    try {
      expect(existsSync(join(pg.dataDir, ENDPOINT_FILE))).toBe(false);
      const r = await pg.post('/api/operator/adjust', { account: 'x', usd: '1', reason: 'x' });
      expect(r.status).toBe(503);
      expect(r.body.error).toMatchObject({
        code: 'not_configured',
        details: { env: ['TOLLGATE_ADMIN_TOKEN'] },
      });
    } finally {
      await pg.close();
      await db.drop();
    }
    const sqlite = await startGateway({ keepData: true, sqliteOnly: true });
    expect(existsSync(join(sqlite.dataDir, ENDPOINT_FILE))).toBe(true);
    await sqlite.close();
    expect(existsSync(join(sqlite.dataDir, ENDPOINT_FILE))).toBe(false);
    rmSync(sqlite.dataDir, { recursive: true, force: true });
  }, 120_000);
});
