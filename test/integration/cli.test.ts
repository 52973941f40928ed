import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

// The operator CLI as DESIGN.md fixes it: every command accepts --json and prints exactly one JSON object.

const ROOT = join(import.meta.dirname, '..', '..');
const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-cli-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

function cli(...args: string[]) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/entry.ts', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, TOLLGATE_DATA_DIR: dataDir, TOLLGATE_LOG_LEVEL: 'silent' },
    encoding: 'utf8',
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function json(...args: string[]) {
  const r = cli(...args, '--json');
  expect(r.code, r.stderr).toBe(0);
  const lines = r.stdout.trim().split('\n');
  expect(lines, 'exactly one JSON object on stdout').toHaveLength(1);
  return JSON.parse(lines[0] as string);
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
  }, 60_000);
});
