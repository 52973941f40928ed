import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Out } from '../../src/cli/output.js';
import { openState } from '../../src/cli/state.js';
import { refuseUnbalanced } from '../../src/cli/transfer/checks.js';
import { exportCommand } from '../../src/cli/transfer/export.js';
import { importCommand } from '../../src/cli/transfer/import.js';
import { openPg, openSqliteFiles } from '../../src/cli/transfer/open.js';
import { plan } from '../../src/cli/transfer/plan.js';
import type { TransferDb } from '../../src/cli/transfer/sides.js';
import { type Config, loadConfig } from '../../src/config/index.js';
import { openStateLedger } from '../../src/ledger/index.js';
import type { KeyUsage, Ledger } from '../../src/ledger/types.js';
import { accountHistory } from '../../src/run/account-view.js';
import { beginRequest as call } from '../helpers/begin-request.js';
import { ManualClock } from '../helpers/clock.js';
import { createTestDatabase, type TestDatabase } from '../helpers/pg.js';
import { sqlOn } from '../helpers/state-sql.js';

// `tollgate export` / `tollgate import` in-process, both ways (SQLite → PostgreSQL, PostgreSQL → SQLite), over a
// ledger with every kind of money in it and a row in every table the transfer carries. The CLI and a gateway
// on the imported database: test/integration/cli-export.test.ts.

const work = mkdtempSync(join(tmpdir(), 'tg-transfer-'));
const databases: TestDatabase[] = [];
afterAll(async () => {
  for (const d of databases) await d.drop();
  rmSync(work, { recursive: true, force: true });
});

type Backend = 'sqlite' | 'postgres';
let dirs = 0;

async function side(backend: Backend): Promise<Config> {
  const dataDir = join(work, `d${++dirs}`);
  const env: Record<string, string> = { TOLLGATE_DATA_DIR: dataDir, TOLLGATE_LOG_LEVEL: 'silent' };
  if (backend === 'postgres') {
    const db = await createTestDatabase('tg_transfer');
    databases.push(db);
    env.TOLLGATE_DATABASE_URL = db.url;
  }
  return loadConfig(env);
}

/** An Out that keeps the results (the CLI's one JSON object) and throws failures. */
function capture(): { out: Out; results: Array<Record<string, unknown>> } {
  const results: Array<Record<string, unknown>> = [];
  return {
    results,
    out: {
      json: true,
      result: (o) => void results.push(o),
      note: () => {},
      info: () => {},
      fail: (e) => {
        throw e;
      },
    },
  };
}

async function withLedger<T>(
  config: Config,
  fn: (l: Ledger, state: Awaited<ReturnType<typeof openState>>) => Promise<T>,
) {
  const opened = await openState(config, { replicaId: 'r_test' });
  const ledger = await openStateLedger(opened.state, {
    clock: new ManualClock(Date.UTC(2026, 4, 2, 12)),
    idempotencyTtlMs: 86_400_000,
  });
  try {
    return await fn(ledger, opened);
  } finally {
    await ledger.close();
    await opened.close();
  }
}

async function withSide<T>(config: Config, fn: (db: TransferDb) => Promise<T>): Promise<T> {
  const s = config.database ? await openPg(config) : await openSqliteFiles(config.dataDir);
  try {
    return await fn(s.db);
  } finally {
    await s.close();
  }
}

const USD = 1_000_000;

async function started(r: Promise<{ kind: string }>): Promise<string> {
  const res = (await r) as { kind: string; callId: string };
  expect(res.kind).toBe('started');
  return res.callId;
}

/** Every kind of money the ledger moves: calls captured, partly captured, voided, refunded (in part by the operator); keys, caps, x402 funding, jobs; credits, adjustments, card money, a credit line settled and one that failed. */
async function fillLedger(l: Ledger): Promise<string[]> {
  const alice = (await l.createAccount({ name: 'alice' })).id;
  const bob = (await l.createAccount({ name: 'bob' })).id;
  const payer = (await l.createAccount({ name: '0xabc', kind: 'x402' })).id;
  await l.credit(alice, 5 * USD, 'start');
  await l.insertApiKey({ accountId: alice, hash: 'hash_a', prefix: 'tg_sk_aaaa…', name: 'laptop' });
  const old = await l.insertApiKey({ accountId: alice, hash: 'hash_b', prefix: 'tg_sk_bbbb…', name: null });
  await l.revokeApiKey(old.id);
  // A key with every limit, and calls counted against its day and month (a refund comes off both).
  const agent = await l.insertApiKey({
    accountId: alice,
    hash: 'hash_c',
    prefix: 'tg_sk_cccc…',
    name: 'agent',
    limits: {
      max_call_micros: 100_000,
      daily_limit_micros: USD,
      monthly_limit_micros: 3 * USD,
      actions: ['scraperC', 'llm'],
    },
  });
  const keyCaps = {
    principal: agent.id,
    caps: [
      { scope: `key:${agent.id}`, window: 'day' as const, limitMicros: USD },
      { scope: `key:${agent.id}`, window: 'month' as const, limitMicros: 3 * USD },
    ],
  };
  const cap = { amountMicros: 10_000, provider: 'scrapingant', durationMs: 12 };
  await l.capture(await started(l.begin(call(alice, 10_000))), cap);
  const job = await started(l.begin(call(alice, 50_000)));
  await l.capture(job, { ...cap, amountMicros: 30_000, jobHandle: 'job_1', meta: { pages: 3 } });
  await l.refundJob(alice, 'job_1', 'job_failed');
  await l.void(await started(l.begin(call(alice, 20_000))), {
    errorCode: 'upstream_error',
    provider: null,
    durationMs: 3,
  });
  const keyed = await started(
    l.begin(call(alice, 10_000, { idempotency: { key: 'k1', fingerprint: 'f1' } })),
  );
  await l.capture(keyed, { ...cap, response: { ok: true, data: { n: 1 } } });
  const day = (scope: string) => ({ caps: [{ scope, window: 'day' as const, limitMicros: USD }] });
  await l.capture(await started(l.begin(call(alice, 10_000, day('')))), cap);
  await l.capture(await started(l.begin(call(alice, 10_000, day('oauth:c1')))), cap);
  await l.capture(await started(l.begin(call(alice, 30_000, keyCaps))), { ...cap, amountMicros: 30_000 });
  const keyRefunded = await started(l.begin(call(alice, 20_000, keyCaps)));
  await l.capture(keyRefunded, { ...cap, amountMicros: 20_000 });
  await l.refundCall(keyRefunded, 'operator refund');
  const refunded = await started(l.begin(call(alice, 40_000)));
  await l.capture(refunded, { ...cap, amountMicros: 40_000 });
  await l.refundCall(refunded, 'operator refund');
  // The operator's refund of part of a call (a movement of its own, linked to the call, which counts what the
  // operator gave back) and adjustments either way, one made once per key.
  const partly = await started(l.begin(call(alice, 40_000)));
  await l.capture(partly, { ...cap, amountMicros: 40_000 });
  const ask = { callId: partly, micros: 15_000, ref: `${partly}:key:t1`, reason: 'slow answer', by: 'cli:t' };
  expect((await l.refundCharge(ask)).kind).toBe('refunded');
  const sla = {
    accountId: alice,
    micros: 250_000,
    reason: 'SLA credit',
    by: 'cli:t',
    ref: `${alice}:key:sla`,
  };
  expect((await l.adjust(sla)).kind).toBe('adjusted');
  expect((await l.adjust({ accountId: alice, micros: -50_000, reason: 'setup fee', by: 'http' })).kind).toBe(
    'adjusted',
  );
  const x402 = { paymentMethod: 'x402' as const, principal: '0xabc' };
  await l.capture(
    await started(l.begin(call(payer, 10_000, { ...x402, funding: { micros: 10_000, memo: 'x402' } }))),
    cap,
  );
  await l.capture(
    await started(l.begin(call(payer, 20_000, { ...x402, funding: { micros: 20_000, memo: 'x402' } }))),
    { ...cap, amountMicros: 5_000 },
  );
  await l.recordExternal({
    accountId: alice,
    kind: 'topup',
    micros: USD,
    externalRef: 'cs_1',
    memo: 'top-up',
  });
  await l.recordExternal({
    accountId: alice,
    kind: 'refund',
    micros: 200_000,
    externalRef: 'pi_1',
    memo: 'refund',
  });
  await l.recordExternal({
    accountId: alice,
    kind: 'dispute',
    micros: 100_000,
    externalRef: 'dp_1',
    memo: 'dispute',
  });
  await l.grantCreditLine({
    accountId: bob,
    micros: 2 * USD,
    cardFingerprint: 'fp_bob',
    memo: 'welcome line',
  });
  await l.capture(await started(l.begin(call(bob, 300_000))), { ...cap, amountMicros: 300_000 });
  const s1 = await l.beginSettlement({
    accountId: bob,
    minMicros: 0,
    stepMicros: 10_000,
    memo: 'settlement',
  });
  if (s1.kind !== 'started') throw new Error('no settlement');
  await l.finishSettlement(s1.movementId, { ok: true, externalRef: 'pi_s1' });
  await l.capture(await started(l.begin(call(bob, 120_000))), { ...cap, amountMicros: 120_000 });
  const s2 = await l.beginSettlement({
    accountId: bob,
    minMicros: 0,
    stepMicros: 10_000,
    memo: 'settlement',
  });
  if (s2.kind !== 'started') throw new Error('no settlement');
  await l.finishSettlement(s2.movementId, { ok: false, reason: 'card_declined' });
  return [alice, bob, payer, refunded, agent.id, partly];
}

/** One row (two, to show the order) in every store table the transfer carries, whatever its columns. */
async function fillStores(db: TransferDb): Promise<void> {
  const special: Record<string, Record<string, unknown>> = {
    files: { status: 'stored' },
    billing_sessions: { purpose: 'card', status: 'open' },
    x402_payments: { status: 'settled' },
    account_members: { role: 'billing' },
    account_invites: { role: 'member' },
    alert_outbox: { channel: 'webhook', status: 'pending' },
  };
  for (const s of plan().filter((p) => p.store)) {
    const types =
      db.backend === 'sqlite'
        ? await db.all<{ c: string; t: string }>(
            `SELECT name AS c, type AS t FROM pragma_table_info('${s.table}')`,
            s.file,
          )
        : await db.all<{ c: string; t: string }>(
            `SELECT column_name AS c, data_type AS t FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = '${s.table}'`,
          );
    const rows = [2, 1].map((i) =>
      types.map(({ c, t }) => {
        const given = special[s.table]?.[c];
        if (given !== undefined) return given;
        if (s.store?.replica === c) return 'r_source';
        if (s.store?.json?.includes(c)) return JSON.stringify(['tag', `t${i}`]);
        if (/bool/i.test(t)) return db.backend === 'sqlite' ? i % 2 : i % 2 === 1;
        if (/int/i.test(t)) return 1000 + i;
        return `${s.table}.${c}.${i}`;
      }),
    );
    await db.insert(
      s.table,
      types.map((x) => x.c),
      rows,
      { file: s.file },
    );
  }
}

/** What an account holder and the operator see: balances, lines, keys, and the history summed, per account. */
async function seen(config: Config) {
  return withLedger(config, async (l) => {
    const accounts = await l.listAccounts();
    const out: Record<string, unknown> = {};
    for (const a of accounts) {
      const history = await accountHistory(l, a.id, 1000);
      out[a.id] = {
        name: a.name,
        balance: await l.balance(a.id),
        line: a.kind === 'customer' ? await l.creditLine(a.id) : null,
        // Sorted: keys made in the same millisecond are listed in insertion order on SQLite, by id on PostgreSQL.
        keys: (await l.listApiKeys(a.id)).map((k) => [k.id, k.name, k.revoked_at !== null]).sort(),
        history: { count: history.length, sum: history.reduce((n, t) => n + t.amount_micros, 0) },
        // Each key's limits and what it spent today and this month; the caps' counters (the same clock).
        keyUsage: (await l.keyUsage(a.id)).sort((x, y) => (x.id < y.id ? -1 : 1)),
        counters: await Promise.all(
          ['', 'oauth:c1', ...(await l.listApiKeys(a.id)).map((k) => `key:${k.id}`).sort()].flatMap((scope) =>
            (['day', 'month'] as const).map(async (w) => [scope, w, await l.capSpend(a.id, scope, w)]),
          ),
        ),
      };
    }
    return out;
  });
}

/** The rows of an export, without its header and with the replica columns (rewritten on import) left out. */
function rowsOf(file: string): string[] {
  const lines = readFileSync(file, 'utf8').trim().split('\n').slice(1);
  // The file's checksum covers the replica columns too.
  return lines.map((l) =>
    l.replace(/"(r_source|local|imported)"/g, '"<replica>"').replace(/,"sha256":"\w+"}$/, '}'),
  );
}

describe.each([
  ['sqlite', 'postgres'],
  ['postgres', 'sqlite'],
] as const)('export from %s, import into %s', (from, to) => {
  it('[ops:export-import] every balance, history, key and carried row arrives; the ledger holds and works on', async () => {
    const source = await side(from);
    const [alice, , , refunded, agentKey, partly] = await withLedger(source, (l) => fillLedger(l));
    await withSide(source, fillStores);
    const before = await seen(source);

    const file = join(work, `${from}-to-${to}.jsonl`);
    const exp = capture();
    await exportCommand(source, exp.out, file);
    expect(exp.results[0]).toMatchObject({ file, source: { backend: from } });
    const target = await side(to);
    const imp = capture();
    await importCommand(target, imp.out, file);
    expect(imp.results[0]).toMatchObject({
      verified: true,
      target: { backend: to },
      tables: { files: 2, calls: 14, spend_counters: 4 },
    });

    expect(await seen(target)).toEqual(before);
    // The key's limits and counters came along: not zero, so the comparison above compared something.
    const agentOf = (v: Record<string, unknown>) =>
      (v[alice as string] as { keyUsage: KeyUsage[] }).keyUsage.find((k) => k.id === agentKey);
    expect(agentOf(before)).toMatchObject({
      max_call_micros: 100_000,
      daily_limit_micros: USD,
      monthly_limit_micros: 3 * USD,
      actions: ['scraperC', 'llm'],
      spent_today_micros: 30_000,
      spent_month_micros: 30_000,
    });
    expect((before[alice as string] as { counters: unknown[] }).counters).toEqual(
      expect.arrayContaining([
        ['', 'day', 10_000],
        ['oauth:c1', 'day', 10_000],
        [`key:${agentKey}`, 'day', 30_000],
        [`key:${agentKey}`, 'month', 30_000],
      ]),
    );
    // Exported again from the target, it is the same file row for row (the replica that owns a row aside).
    const again = join(work, `${from}-to-${to}-again.jsonl`);
    await exportCommand(target, capture().out, again);
    expect(rowsOf(again)).toEqual(rowsOf(file));

    // The imported ledger works on: a new charge, a refund of an imported call, and it still holds together.
    await withLedger(target, async (l) => {
      await l.capture(await started(l.begin(call(alice as string, 10_000))), {
        amountMicros: 10_000,
        provider: null,
        durationMs: 1,
      });
      expect((await l.refundCall(refunded as string, 'again')).refundedMicros).toBe(0);
      // The operator's partial refund came along: the call counts it, its reference still refunds once, and
      // only the rest is left to refund.
      expect(await l.getCall(partly as string)).toMatchObject({
        status: 'succeeded',
        refunded_micros: 15_000,
        operator_refunded_micros: 15_000,
      });
      const history = await accountHistory(l, alice as string, 1000);
      expect(history.filter((t) => t.kind === 'call_refund').map((t) => t.meta?.refund_of)).toEqual([partly]);
      // Both adjustments (made within the same millisecond, so in no defined order between them).
      expect(
        history
          .filter((t) => t.kind === 'adjustment')
          .map((t) => t.amount_micros)
          .sort((a, b) => a - b),
      ).toEqual([-50_000, 250_000]);
      const ask = { callId: partly as string, ref: `${partly}:key:t1`, reason: 'slow answer', by: 'cli:t' };
      expect((await l.refundCharge({ ...ask, micros: 15_000 })).kind).toBe('duplicate');
      expect(await l.refundCharge({ ...ask, ref: `${partly}:key:t2`, micros: 30_000 })).toMatchObject({
        kind: 'exceeds',
        leftMicros: 25_000,
      });
      const first = (await l.transactions(alice as string, 100))
        // One charged 10,000 (calls made in one millisecond list in id order, which is random within it).
        .filter((t) => t.status === 'succeeded' && t.charged_micros === 10_000)
        .at(-1);
      expect((await l.refundCall(first?.id as string, 'after the move')).refundedMicros).toBe(10_000);
      // The key's counters go on from where they were: its day limit holds what it spent before the move.
      const agentCaps = [{ scope: `key:${agentKey}`, window: 'day' as const, limitMicros: 40_000 }];
      expect(
        await l.begin(call(alice as string, 20_000, { principal: agentKey, caps: agentCaps })),
      ).toMatchObject({
        kind: 'cap_reached',
        spentMicros: 30_000,
      });
    });
    await withSide(target, (db) => refuseUnbalanced(db, 'the target'));
    // What the source's processes owned goes to a replica that is gone, which the target's first gateway recovers.
    await withSide(target, async (db) => {
      const owners = await db.all<{ o: string }>('SELECT DISTINCT replica AS o FROM x402_payments');
      const crawls = await db.all<{ o: string }>('SELECT DISTINCT owner AS o FROM crawl_jobs', 'web');
      const owner = to === 'sqlite' ? 'local' : 'imported';
      expect([...owners, ...crawls].map((r) => r.o)).toEqual([owner, owner]);
      if (to === 'postgres') {
        expect(await db.all("SELECT lease_expires_at FROM replicas WHERE id = 'imported'")).toEqual([
          { lease_expires_at: 0 },
        ]);
      }
    });
    if (to === 'postgres') {
      // Revenue sits where PostgreSQL's own captures put it: on the accounts that paid it.
      await withLedger(target, async (_l, s) => {
        const off = await sqlOn(
          s.state,
          `SELECT id FROM accounts a WHERE kind <> 'system' AND revenue_micros <> -(SELECT CAST(coalesce(sum(amount_micros), 0) AS bigint) FROM entries e WHERE e.account_id = a.id AND e.kind IN ('charge', 'refund'))`,
        );
        expect(off).toEqual([]);
      });
    }
  }, 120_000);
});

describe('[ops:export-refusals] what export and import refuse', () => {
  it('a damaged or cut file imports nothing; a target with data is refused; a file is never overwritten', async () => {
    const source = await side('sqlite');
    await withLedger(source, (l) => fillLedger(l));
    const file = join(work, 'refusals.jsonl');
    await exportCommand(source, capture().out, file);
    await expect(exportCommand(source, capture().out, file)).rejects.toMatchObject({ code: 'file_exists' });

    const text = readFileSync(file, 'utf8');
    const edited = join(work, 'edited.jsonl');
    writeFileSync(edited, text.replace(/,5000000,/, ',5000001,'));
    const cut = join(work, 'cut.jsonl');
    writeFileSync(cut, text.slice(0, Math.floor(text.length / 2)));
    for (const [path, backend] of [
      [edited, 'postgres'],
      [cut, 'sqlite'],
    ] as const) {
      const target = await side(backend);
      await expect(importCommand(target, capture().out, path)).rejects.toMatchObject({
        code: 'export_damaged',
      });
      if (backend === 'sqlite')
        expect(existsSync(target.dataDir) ? readdirSync(target.dataDir) : []).toEqual([]);
      else
        await withSide(target, async (db) =>
          expect(await db.all("SELECT id FROM accounts WHERE kind <> 'system'")).toEqual([]),
        );
    }

    const full = await side('postgres');
    await importCommand(full, capture().out, file);
    await expect(importCommand(full, capture().out, file)).rejects.toMatchObject({
      code: 'target_not_empty',
      message: expect.stringContaining('already holds data: accounts'),
    });
    await expect(importCommand(source, capture().out, file)).rejects.toMatchObject({
      code: 'target_not_empty',
    });
  }, 120_000);

  it('a gateway serving, calls in flight or a ledger that does not add up stop the export', async () => {
    const lite = await side('sqlite');
    await withLedger(lite, (l) => fillLedger(l));
    // A live process holds the data dir (the test runner's parent stands in for a gateway).
    writeFileSync(join(lite.dataDir, 'gateway.lock'), String(process.ppid));
    await expect(exportCommand(lite, capture().out, join(work, 'x1.jsonl'))).rejects.toMatchObject({
      code: 'gateway_running',
    });
    rmSync(join(lite.dataDir, 'gateway.lock'));
    await withLedger(lite, async (_l, s) => {
      await sqlOn(s.state, "UPDATE accounts SET balance_micros = balance_micros + 1 WHERE name = 'alice'");
    });
    await expect(exportCommand(lite, capture().out, join(work, 'x2.jsonl'))).rejects.toMatchObject({
      code: 'ledger_unbalanced',
      message: expect.stringMatching(/acct_\w+: balance \$\d+\.\d+, entries/),
    });
    expect(existsSync(join(work, 'x2.jsonl'))).toBe(false);
    expect(existsSync(join(work, 'x2.jsonl.partial'))).toBe(false);

    const pg = await side('postgres');
    await withLedger(pg, async (l, s) => {
      const a = (await l.createAccount({ name: 'carol' })).id;
      await l.credit(a, USD, 'start');
      await l.begin(call(a, 10_000));
      await sqlOn(
        s.state,
        `INSERT INTO replicas (id, started_at, lease_expires_at) VALUES ('r_live', 0, ${Date.now() + 60_000})`,
      );
    });
    await expect(exportCommand(pg, capture().out, join(work, 'x3.jsonl'))).rejects.toMatchObject({
      code: 'gateway_running',
      message: expect.stringContaining('r_live'),
    });
    await withLedger(pg, (_l, s) => sqlOn(s.state, "DELETE FROM replicas WHERE id = 'r_live'"));
    await expect(exportCommand(pg, capture().out, join(work, 'x3.jsonl'))).rejects.toMatchObject({
      code: 'calls_in_flight',
    });
  }, 120_000);
});
