import { OPERATOR_ACTOR } from '../account/audit.js';
import { isRole, ROLES } from '../account/roles.js';
import { Team } from '../account/team.js';
import type { StateDb } from '../backend.js';
import type { LedgerRecords } from '../ledger/types.js';
import { systemClock } from '../lib/clock.js';
import { createLogger } from '../log.js';
import { accountLabel, findAccount, minute } from './accounts.js';
import { type Out, table, UsageError } from './output.js';
import { usageOf } from './usage.js';

// `tollgate members list|invite <account>`: the operator's view of a team account, and an invitation link made
// on the operator's behalf (the way to give someone access to an account whose owners cannot, or to an account
// made with `accounts create`). The link is printed once; only its hash is kept. The event log records it as the
// operator's.

export async function members(
  state: StateDb,
  ledger: LedgerRecords,
  publicUrl: string,
  out: Out,
  sub: string | undefined,
  rest: string[],
  opts: { role?: string | undefined; name?: string | undefined },
): Promise<void> {
  if (!rest[0]) throw new UsageError('missing <account>', usageOf('members', sub));
  const acct = await findAccount(ledger, rest[0]);
  const team = new Team({ state, ledger, clock: systemClock, log: createLogger('silent') });
  if (sub === 'invite') {
    const role = opts.role ?? 'member';
    if (!isRole(role))
      throw new UsageError(`--role must be one of ${ROLES.join(', ')}`, usageOf('members', sub));
    const { token, invite } = await team.invite(
      acct.id,
      OPERATOR_ACTOR,
      role,
      opts.name?.slice(0, 60) || null,
    );
    const link = `${publicUrl}/account/join?token=${token}`;
    const expires = new Date(invite.expires_at).toISOString();
    out.result(
      { account_id: acct.id, invite_id: invite.id, role, link, expires_at: expires },
      `invitation to ${accountLabel(acct)} as ${role} (shown once, works once, expires ${minute(expires)} UTC):\n${link}`,
    );
    return;
  }
  // The account's first owner exists from the first look on (as on the dashboard).
  await team.founder(acct.id);
  const [list, keys] = await Promise.all([team.store.members(acct.id), team.keysOf(acct.id)]);
  const rows = list.map((m) => ({
    member_id: m.id,
    name: m.name,
    role: m.role,
    status: m.removed_at === null ? 'active' : 'removed',
    joined_at: new Date(m.created_at).toISOString(),
    active_keys: keys.filter((k) => k.member_id === m.id && k.revoked_at === null).length,
  }));
  out.result(
    { account_id: acct.id, members: rows },
    table(
      ['MEMBER', 'NAME', 'ROLE', 'STATUS', 'JOINED (UTC)', { header: 'KEYS', right: true }],
      rows.map((r) => [r.member_id, r.name, r.role, r.status, minute(r.joined_at), r.active_keys]),
    ),
  );
}
