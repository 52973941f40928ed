import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

// A CLI that helps (docs/operator.md "Accounts, keys and credit"): accounts by name or id, tables with a header row
// and aligned columns, key names in `keys list`, a usage error that prints the one line that applies (not the
// whole help), and "did you mean" for mistyped commands, sub-commands and accounts. --json stays one object.

const work = mkdtempSync(join(tmpdir(), 'tollgate-cli-helps-'));
const env = { TOLLGATE_DATA_DIR: join(work, 'data') };
const cli = (...args: string[]) => runCli(args, { cwd: work, env });
let alice: string;

beforeAll(() => {
  mkdirSync(work, { recursive: true });
  const r = cli('accounts', 'create', '--name', 'alice', '--credit-usd', '3', '--json');
  expect(r.code, r.stderr).toBe(0);
  alice = JSON.parse(r.stdout).account_id;
  expect(cli('keys', 'create', 'alice', '--name', 'laptop').code).toBe(0);
  expect(cli('accounts', 'create', '--name', 'bob-the-builder').code).toBe(0);
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The column where `header` starts in the header row, and where `cell` starts in the row that has it. */
function columns(table: string, header: string, cell: string): [number, number] {
  const lines = table.trimEnd().split('\n');
  const row = lines.find((l) => l.includes(cell)) ?? '';
  return [(lines[0] as string).indexOf(header), row.indexOf(cell)];
}

describe('a CLI that helps', () => {
  it('[cli:names] accounts by name or id, in every command', () => {
    const byName = cli('balance', 'alice', '--json');
    const byId = cli('balance', alice, '--json');
    expect(byName.code, byName.stderr).toBe(0);
    expect(JSON.parse(byName.stdout)).toEqual(JSON.parse(byId.stdout));
    expect(JSON.parse(byName.stdout)).toMatchObject({ account_id: alice, balance_usd: '$3.00' });
    const credited = cli('credit', 'alice', '1.5', '--json');
    expect(JSON.parse(credited.stdout)).toMatchObject({ account_id: alice, balance_usd: '$4.50' });
    expect(cli('balance', 'alice').stdout).toBe(
      `${alice} (alice): balance $4.50, held $0.00, available $4.50\n`,
    );
    expect(JSON.parse(cli('tx', 'alice', '--json').stdout).transactions).toHaveLength(2);
    const typo = cli('balance', 'alcie');
    expect(typo.code).toBe(2);
    expect(typo.stderr).toBe(
      `tollgate: no account alcie (did you mean alice?) in ${join(work, 'data', 'tollgate.db')}\n`,
    );
  }, 120_000);

  it('[cli:tables] header rows and aligned columns; keys list shows each key’s name', () => {
    const accounts = cli('accounts', 'list').stdout;
    expect(accounts.split('\n')[0]).toMatch(
      /^ACCOUNT\s+NAME\s+BALANCE\s+AVAILABLE\s+CREDIT LINE\s+DRAWN\s+NOTE$/,
    );
    const [h, c] = columns(accounts, 'NAME', 'bob-the-builder');
    expect(c).toBe(h);
    // Amounts right-aligned: they end where their header ends.
    const header = accounts.split('\n')[0] as string;
    const row = accounts.split('\n').find((l) => l.includes('alice')) as string;
    const end = header.indexOf('BALANCE') + 'BALANCE'.length;
    expect(row.slice(0, end)).toMatch(/\$4\.50$/);

    const keys = cli('keys', 'list', 'alice');
    expect(keys.code, keys.stderr).toBe(0);
    expect(keys.stdout.split('\n')[0]).toMatch(
      /^KEY\s+ACCOUNT\s+NAME\s+PREFIX\s+CREATED \(UTC\)\s+STATUS\s+MAX\/CALL\s+TODAY \(UTC\)\s+THIS MONTH\s+ACTIONS$/,
    );
    const [kh, kc] = columns(keys.stdout, 'NAME', 'laptop');
    expect(kc).toBe(kh);
    expect(keys.stdout).toContain('default');
    const json = JSON.parse(cli('keys', 'list', 'alice', '--json').stdout);
    expect(json.keys.map((k: { name: string }) => k.name).sort()).toEqual(['default', 'laptop']);

    const tx = cli('tx', 'alice').stdout;
    expect(tx.split('\n')[0]).toMatch(/^WHEN \(UTC\)\s+TRANSACTION\s+WHAT\s+STATUS\s+AMOUNT\s+ERROR$/);
  }, 120_000);

  it('[cli:usage-errors] a mistake prints the one usage line that applies, with did-you-mean for commands', () => {
    const typo = cli('balanse', 'alice');
    expect(typo.code).toBe(2);
    expect(typo.stdout).toBe('');
    expect(typo.stderr).toBe(
      'tollgate: unknown command "balanse" — did you mean balance?\n' +
        'usage: node bin/tollgate.js <command> [options] [--json]\n' +
        '(node bin/tollgate.js --help lists every command)\n',
    );
    const sub = cli('keys', 'lst');
    expect(sub.code).toBe(2);
    expect(sub.stderr.split('\n')[0]).toBe('tollgate: unknown: keys lst — did you mean keys list?');
    expect(sub.stderr.split('\n').length).toBeLessThanOrEqual(7);
    const missing = cli('credit', 'alice');
    expect(missing.stderr).toBe(
      'tollgate: missing <usd>\nusage: node bin/tollgate.js credit <account> <usd>\n(node bin/tollgate.js --help lists every command)\n',
    );
    const json = cli('balanse', '--json');
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toEqual({
      ok: false,
      error: { code: 'usage', message: 'unknown command "balanse" — did you mean balance?' },
    });
    expect(cli('--help').stdout).toContain('<account> is an account id (acct_…) or its name');
  }, 120_000);

  it('[ops:bind-warning] server-json on a loopback URL warns, and names the server localhost/tollgate, not 1.0.0.127', () => {
    const r = cli('server-json');
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).name).toBe('localhost/tollgate');
    expect(r.stderr).toMatch(
      /^tollgate: warning: TOLLGATE_PUBLIC_URL is not set: this entry names http:\/\/127\.0\.0\.1:8402\/mcp, which no one else can reach/,
    );
    const published = runCli(['server-json'], {
      cwd: work,
      env: { ...env, TOLLGATE_PUBLIC_URL: 'https://mcp.acme.com' },
    });
    expect(published.stderr).toBe('');
    expect(JSON.parse(published.stdout).name).toBe('com.acme.mcp/tollgate');
  }, 60_000);
});
