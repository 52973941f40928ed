import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { describeAuditEvent } from '../../src/account/audit.js';
import { Team } from '../../src/account/team.js';
import { openState } from '../../src/cli/state.js';
import { openStateLedger } from '../../src/ledger/index.js';
import { systemClock } from '../../src/lib/clock.js';
import { createLogger } from '../../src/log.js';
import { runCli } from '../helpers/cli.js';

// The operator's side of team accounts: `members list` shows an account's team, `members invite` prints a one-time
// link (once; the event log says the operator made it), which then works like an owner's.

const work = mkdtempSync(join(tmpdir(), 'tollgate-members-'));
const dataDir = join(work, 'data');
afterAll(() => rmSync(work, { recursive: true, force: true }));

function json(...args: string[]) {
  const r = runCli([...args, '--json'], {
    cwd: work,
    env: { TOLLGATE_DATA_DIR: dataDir, TOLLGATE_PUBLIC_URL: 'https://gw.example' },
  });
  return { ...r, body: r.stdout.trim() ? JSON.parse(r.stdout.trim().split('\n')[0] as string) : undefined };
}

describe('tollgate members', () => {
  it('[team:roles] [team:invite-once] lists an account’s members and makes an invitation link on the operator’s behalf', async () => {
    const created = json('accounts', 'create', '--name', 'acme');
    expect(created.code, created.stderr).toBe(0);
    const list = json('members', 'list', 'acme');
    expect(list.code, list.stderr).toBe(0);
    expect(list.body.members).toEqual([
      expect.objectContaining({ name: 'acme', role: 'owner', status: 'active', active_keys: 1 }),
    ]);
    const inv = json('members', 'invite', 'acme', '--role', 'billing', '--name', 'Bea');
    expect(inv.code, inv.stderr).toBe(0);
    expect(inv.body).toMatchObject({ account_id: created.body.account_id, role: 'billing' });
    expect(inv.body.link).toMatch(/^https:\/\/gw\.example\/account\/join\?token=[A-Za-z0-9_-]{43}$/);
    const bad = json('members', 'invite', 'acme', '--role', 'admin');
    expect(bad.code).toBe(2);
    expect(bad.body.error.message).toContain('--role must be one of owner, billing, member');

    // The link works once, as an owner's does; the log names the operator.
    const opened = await openState({ dataDir, database: undefined });
    const ledger = await openStateLedger(opened.state, { clock: systemClock, idempotencyTtlMs: 3_600_000 });
    try {
      const team = new Team({ state: opened.state, ledger, clock: systemClock, log: createLogger('silent') });
      const token = new URL(inv.body.link).searchParams.get('token') as string;
      const found = await team.invitation(token);
      expect(found).toMatchObject({ accountName: 'acme', invitedBy: 'the operator' });
      expect((await team.accept(token, 'Bea'))?.member.role).toBe('billing');
      expect(await team.accept(token, 'Bea')).toBeUndefined();
      const log = (await team.audit.list(created.body.account_id, 10)).map(describeAuditEvent);
      expect(log).toContain('the operator invited Bea as billing');
    } finally {
      await ledger.close();
      await opened.close();
    }
    const after = json('members', 'list', 'acme');
    expect(after.body.members.map((m: { name: string; role: string }) => [m.name, m.role])).toEqual([
      ['acme', 'owner'],
      ['Bea', 'billing'],
    ]);
  });
});
