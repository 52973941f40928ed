import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/lib/clock.js';
import { runCli } from '../helpers/cli.js';
import { openLedger } from '../helpers/sqlite-ledger.js';

// The operator CLI as docs/operator.md documents it: every command accepts --json and prints exactly one JSON object,
// failures included.

const work = mkdtempSync(join(tmpdir(), 'tollgate-cli-'));
const dataDir = join(work, 'data');
beforeAll(async () => {
  // The gateway's database exists (as after a first `serve`), whichever test runs first.
  const { ledger, db } = openLedger(dataDir, { clock: systemClock, idempotencyTtlMs: 86_400_000 });
  await ledger.close();
  db.close();
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

function cli(...args: string[]) {
  return runCli(args, { cwd: work, env: { TOLLGATE_DATA_DIR: dataDir } });
}

function json(...args: string[]) {
  const r = cli(...args, '--json');
  expect(r.code, r.stderr).toBe(0);
  const lines = r.stdout.trim().split('\n');
  expect(lines, 'exactly one JSON object on stdout').toHaveLength(1);
  return JSON.parse(lines[0] as string);
}

/** A failure with --json: one object on stdout, a non-zero exit. */
function jsonError(r: { code: number | null; stdout: string }, exit = 1) {
  expect(r.code).toBe(exit);
  const lines = r.stdout.trim().split('\n');
  expect(lines, 'exactly one JSON object on stdout').toHaveLength(1);
  const body = JSON.parse(lines[0] as string);
  expect(body).toMatchObject({ ok: false, error: { code: expect.any(String), message: expect.any(String) } });
  return body.error;
}

describe('tollgate CLI', () => {
  it('accounts, keys, credit, balance, tx and catalog, all with --json', () => {
    const created = json('accounts', 'create', '--name', 'alice', '--credit-usd', '2.50');
    expect(created).toMatchObject({
      account_id: expect.stringMatching(/^acct_/),
      api_key: expect.stringMatching(/^tg_sk_/),
      balance_usd: '$2.50',
    });
    const acct = created.account_id as string;

    const k = json('keys', 'create', acct, '--name', 'ci');
    expect(k.api_key).toMatch(/^tg_sk_[A-Za-z0-9_-]{43}$/);
    const list = json('keys', 'list', acct);
    expect(list.keys).toHaveLength(2);
    expect(JSON.stringify(list)).not.toContain(k.api_key); // secrets are never listed
    expect(json('keys', 'revoke', k.key_id)).toEqual({ key_id: k.key_id, revoked: true });
    expect(
      json('keys', 'list', acct).keys.find((x: { key_id: string }) => x.key_id === k.key_id).revoked_at,
    ).toBeTruthy();

    expect(json('credit', acct, '0.5')).toMatchObject({
      credited_usd: '$0.50',
      balance_usd: '$3.00',
      balance_micros: 3_000_000,
    });
    expect(json('balance', acct)).toMatchObject({ account_id: acct, available_micros: 3_000_000 });
    // The history is complete: the operator's credits are in it (no call was made).
    const tx = json('tx', acct, '--limit', '5');
    expect(
      tx.transactions.map((x: { kind: string; amount_micros: number }) => [x.kind, x.amount_micros]),
    ).toEqual([
      ['credit', 500_000],
      ['credit', 2_500_000],
    ]);
    const accounts = json('accounts', 'list');
    expect(accounts.accounts.find((a: { account_id: string }) => a.account_id === acct)).toEqual({
      account_id: acct,
      name: 'alice',
      created_at: expect.any(String),
      balance_usd: '$3.00',
      available_usd: '$3.00',
      balance_micros: 3_000_000,
      held_micros: 0,
      available_micros: 3_000_000,
      credit_line_usd: '$0.00',
      drawn_usd: '$0.00',
      line_frozen: null,
    });
    expect(cli('accounts', 'list').stdout).toMatch(new RegExp(`${acct}\\s+alice\\s+\\$3\\.00`));
    const cat = json('catalog');
    expect(cat.actions.find((a: { id: string }) => a.id === 'scraperC/markdown')).toMatchObject({
      price_cents: 1,
    });
  }, 180_000); // a dozen fresh Node processes: generous on a loaded machine

  it('bad usage exits non-zero with a message', () => {
    expect(cli('credit', 'acct_nope', '5').code).toBe(2);
    expect(cli('credit').stderr).toMatch(/missing <account>/);
    const r = cli('accounts', 'create', '--credit-usd', 'lots');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/not a USD amount/);
    expect(cli('frobnicate').code).toBe(2);
  }, 120_000);

  it('[cli:json-errors] with --json every failure is one JSON object on stdout, with a non-zero exit', () => {
    expect(jsonError(cli('frobnicate', '--frob', '--json'), 2)).toMatchObject({ code: 'usage' });
    expect(jsonError(cli('credit', '--json'), 2)).toEqual({ code: 'usage', message: 'missing <account>' });
    expect(jsonError(cli('credit', 'acct_nope', '5', '--json'), 2)).toEqual({
      code: 'not_found',
      message: `no account acct_nope in ${join(dataDir, 'tollgate.db')}`,
    });
    const config = jsonError(
      runCli(['balance', 'x', '--json'], {
        cwd: work,
        env: { TOLLGATE_DATA_DIR: dataDir, TOLLGATE_PROT: '1', TOLLGATE_PORT: 'x' },
      }),
    );
    expect(config).toMatchObject({
      code: 'config',
      problems: [
        'TOLLGATE_PORT: an integer from 0 to 65535',
        'TOLLGATE_PROT: unknown variable (did you mean TOLLGATE_PORT?)',
      ],
    });
    // The human form of the same failures: stderr only, no stack trace.
    const human = cli('credit', 'acct_nope', '5');
    expect(human.stdout).toBe('');
    expect(human.stderr.trim()).toBe(`tollgate: no account acct_nope in ${join(dataDir, 'tollgate.db')}`);
  }, 120_000);

  it('[cli:data-dir] only serve and accounts create make a database; other commands name the one they miss', () => {
    const elsewhere = mkdtempSync(join(work, 'elsewhere-'));
    const r = runCli(['balance', 'acct_x'], { cwd: elsewhere });
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      `tollgate: no tollgate database in ${join(elsewhere, 'data')} (the default ./data of the current directory; set TOLLGATE_DATA_DIR): run this where the gateway runs, or point TOLLGATE_DATA_DIR at its data directory`,
    );
    expect(existsSync(join(elsewhere, 'data')), 'nothing created').toBe(false);
    expect(jsonError(runCli(['keys', 'list', '--json'], { cwd: elsewhere }))).toMatchObject({
      code: 'no_database',
      data_dir: join(elsewhere, 'data'),
    });

    const created = runCli(['accounts', 'create'], { cwd: elsewhere });
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toContain(`Creating a new database in ${join(elsewhere, 'data')}.`);
    expect(runCli(['keys', 'list', '--json'], { cwd: elsewhere }).code).toBe(0);
  }, 120_000);

  it('[scale:migrations] tollgate migrate brings a SQLite data dir up to date, and needs one', () => {
    const elsewhere = mkdtempSync(join(work, 'migrate-'));
    expect(jsonError(runCli(['migrate', '--json'], { cwd: elsewhere }))).toMatchObject({
      code: 'no_database',
    });
    expect(existsSync(join(elsewhere, 'data')), 'nothing created').toBe(false);
    // The ledger's database of a first start (as the beforeAll's): the stores' tables come with the first open.
    const first = json('migrate');
    expect(first).toMatchObject({ backend: 'sqlite', current: expect.any(Number) });
    const again = json('migrate');
    expect(again).toEqual({ backend: 'sqlite', applied: [], current: first.current });
  }, 120_000);

  it('[ops:env-file] .env of the current directory is read, and the environment wins over it', () => {
    const project = mkdtempSync(join(work, 'project-'));
    writeFileSync(join(project, '.env'), '# settings\nTOLLGATE_DATA_DIR=./from-dotenv\nTOLLGATE_PORT=\n');
    const a = runCli(['accounts', 'create', '--json'], { cwd: project });
    expect(a.code, a.stderr).toBe(0);
    expect(existsSync(join(project, 'from-dotenv', 'tollgate.db'))).toBe(true);

    const explicit = join(project, 'explicit');
    mkdirSync(explicit);
    const b = runCli(['accounts', 'create', '--json'], {
      cwd: project,
      env: { TOLLGATE_DATA_DIR: explicit },
    });
    expect(b.code, b.stderr).toBe(0);
    expect(existsSync(join(explicit, 'tollgate.db'))).toBe(true);

    writeFileSync(join(project, '.env'), 'TOLLGATE_DATA_DRI=./typo\n');
    const c = runCli(['keys', 'list'], { cwd: project });
    expect(c.code).toBe(1);
    expect(c.stderr).toBe(
      `tollgate: invalid configuration (environment and ${join(project, '.env')}):\n` +
        '  - TOLLGATE_DATA_DRI: unknown variable (did you mean TOLLGATE_DATA_DIR?)\n',
    );
  }, 120_000);
});
