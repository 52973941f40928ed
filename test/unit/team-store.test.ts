import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { verifyApiKey } from '../../auth/api-keys.js';
import {
  describeAuditEvent,
  OPERATOR_ACTOR,
  openAuditLog,
  recordAuditEvent,
} from '../../src/account/audit.js';
import { openSessionStore } from '../../src/account/session-store.js';
import { INVITE_TTL_MS, Team, type Viewer } from '../../src/account/team.js';
import { founderId, type InviteRow, openTeamStore } from '../../src/account/team-store.js';
import { openStateLedger } from '../../src/ledger/index.js';
import type { Ledger } from '../../src/ledger/types.js';
import { sha256Hex } from '../../src/lib/hash.js';
import { BACKENDS, type OpenedState } from '../helpers/backends.js';
import { ManualClock } from '../helpers/clock.js';

// Team accounts in the store layer, on SQLite and PostgreSQL: an invitation is accepted once (a reused or expired
// link does nothing, and two acceptances racing on two replicas make one member), an account never loses its last
// owner (two owners removing each other at once on two replicas leave one), a removed member's keys and sessions
// stop, and the event log records who did what.

const T0 = Date.UTC(2026, 10, 22, 12);

function invite(accountId: string, id: string, over: Partial<InviteRow> = {}): InviteRow {
  return {
    id,
    account_id: accountId,
    role: 'member',
    name: 'Bob',
    created_by: founderId(accountId),
    created_at: T0,
    expires_at: T0 + INVITE_TTL_MS,
    accepted_at: null,
    member_id: null,
    revoked_at: null,
    ...over,
  };
}

describe.each(BACKENDS)('team accounts in the store ($name)', (backend) => {
  let a: OpenedState;
  let b: OpenedState;
  let ledger: Ledger;
  let clock: ManualClock;
  let team: Team;

  beforeEach(async () => {
    a = await backend.open({ replicaId: 'r_a' });
    b = await backend.share(a, { replicaId: 'r_b' });
    clock = new ManualClock(T0);
    ledger = await openStateLedger(a.db, { clock, idempotencyTtlMs: 3_600_000 });
    team = new Team({ state: a.db, ledger, clock, log: pino({ level: 'silent' }) });
  });
  afterEach(async () => {
    await ledger.close();
    await b.close();
    await a.close();
  });

  async function ownerOf(name = 'Ada'): Promise<Viewer> {
    const acct = await ledger.createAccount({ name });
    const member = await team.founder(acct.id);
    return { accountId: acct.id, member, role: member.role };
  }

  it('[team:roles] the first owner is made once, even by two replicas at once, named after the account', async () => {
    const acct = await ledger.createAccount({ name: 'Ada' });
    const [one, two] = await Promise.all([
      openTeamStore(a.db).ensureFounder(acct.id, 'Ada', T0),
      openTeamStore(b.db).ensureFounder(acct.id, 'Someone else', T0),
    ]);
    expect(one).toEqual(two);
    expect(one).toMatchObject({ id: founderId(acct.id), role: 'owner', removed_at: null });
    expect(await openTeamStore(a.db).members(acct.id)).toHaveLength(1);
    expect((await team.founder(acct.id)).id).toBe(one.id);
  });

  it('[team:invite-once] a link is accepted once: reuse, withdrawal and expiry refuse it, nothing stored in clear', async () => {
    const owner = await ownerOf();
    const { token, invite: inv } = await team.invite(owner.accountId, OPERATOR_ACTOR, 'billing', 'Bea');
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await team.invitation(token))?.invite.id).toBe(inv.id);
    clock.advance(1_000);
    const joined = await team.accept(token, 'Bea');
    expect(joined?.member).toMatchObject({ role: 'billing', name: 'Bea', account_id: owner.accountId });
    // The key shown once works, and belongs to the new member.
    const check = await verifyApiKey(ledger, joined?.key as string);
    expect(check.ok && check.principal.accountId).toBe(owner.accountId);
    expect((await team.memberForKey(owner.accountId, joined?.row.id as string))?.id).toBe(joined?.member.id);
    // Used: neither shown nor accepted again.
    expect(await team.invitation(token)).toBeUndefined();
    expect(await team.accept(token, 'Mallory')).toBeUndefined();
    expect((await team.store.members(owner.accountId)).map((m) => m.name)).toEqual(['Ada', 'Bea']);

    // Expired: one millisecond past its week.
    const late = await team.invite(owner.accountId, OPERATOR_ACTOR, 'member', null);
    clock.advance(INVITE_TTL_MS);
    expect(await team.invitation(late.token)).toBeUndefined();
    expect(await team.accept(late.token, 'Late')).toBeUndefined();

    // Withdrawn.
    const withdrawn = await team.invite(owner.accountId, OPERATOR_ACTOR, 'member', 'Cy');
    expect(await team.revokeInvite(owner, withdrawn.invite.id)).toBe(true);
    expect(await team.accept(withdrawn.token, 'Cy')).toBeUndefined();
    expect(await team.revokeInvite(owner, withdrawn.invite.id)).toBe(false);
    // Malformed or unknown tokens find nothing.
    expect(await team.invitation('not a token')).toBeUndefined();
    expect(await team.invitation('A'.repeat(43))).toBeUndefined();
    // Only the hash is kept.
    const stored = await a.db.stores.selectFrom('account_invites').select('token_hash').execute();
    expect(stored.map((r) => r.token_hash)).toContain(sha256Hex(token));
    expect(JSON.stringify(stored)).not.toContain(token);
  });

  it('[team:invite-once] two acceptances racing on two replicas make one member', async () => {
    const acct = await ledger.createAccount({ name: 'team' });
    await openTeamStore(a.db).addInvite(invite(acct.id, 'inv_race'), sha256Hex('tok'));
    const results = await Promise.all([
      openTeamStore(a.db).accept(sha256Hex('tok'), { id: 'mbr_one', name: 'One' }, T0 + 1),
      openTeamStore(b.db).accept(sha256Hex('tok'), { id: 'mbr_two', name: 'Two' }, T0 + 1),
    ]);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await openTeamStore(a.db).members(acct.id)).toHaveLength(1);
  });

  it('[team:last-owner] the last owner can be neither removed nor demoted, even by two owners racing', async () => {
    const owner = await ownerOf();
    expect((await team.remove(owner, owner.member.id)).kind).toBe('last_owner');
    expect((await team.setRole(owner, owner.member.id, 'member')).kind).toBe('last_owner');
    const { token } = await team.invite(owner.accountId, OPERATOR_ACTOR, 'owner', 'Oz');
    const oz = (await team.accept(token, 'Oz'))?.member;
    if (!oz) throw new Error('not accepted');
    // Two owners remove each other at once, through two replicas: one of them stays.
    const results = await Promise.all([
      openTeamStore(a.db).remove(owner.accountId, oz.id, owner.member.id, T0 + 5),
      openTeamStore(b.db).remove(owner.accountId, owner.member.id, oz.id, T0 + 5),
    ]);
    expect(results.map((r) => r.kind).sort()).toEqual(['last_owner', 'removed']);
    const active = (await team.store.members(owner.accountId)).filter((m) => m.removed_at === null);
    expect(active.map((m) => m.role)).toEqual(['owner']);
  });

  it('[team:remove-stops-keys] removing a member revokes its keys, ends its sessions and withdraws its invitations', async () => {
    const owner = await ownerOf();
    const { token } = await team.invite(owner.accountId, OPERATOR_ACTOR, 'owner', 'Max');
    const max = await team.accept(token, 'Max');
    if (!max) throw new Error('not accepted');
    const maxViewer: Viewer = { accountId: owner.accountId, member: max.member, role: 'owner' };
    const extra = await team.createKey(maxViewer, undefined, 'laptop');
    if (typeof extra === 'string') throw new Error(extra);
    const pending = await team.invite(
      owner.accountId,
      { memberId: max.member.id, name: 'Max' },
      'member',
      'Z',
    );
    // Sessions of Max, opened through either replica; and one of the owner's, which stays.
    const sa = openSessionStore(a.db);
    const sb = openSessionStore(b.db);
    await sa.add(
      's_max_1',
      { accountId: owner.accountId, keyId: null, memberId: max.member.id },
      T0,
      T0 + 1e6,
    );
    await sb.add(
      's_max_2',
      { accountId: owner.accountId, keyId: null, memberId: max.member.id },
      T0,
      T0 + 1e6,
    );
    await sa.add(
      's_ada',
      { accountId: owner.accountId, keyId: null, memberId: owner.member.id },
      T0,
      T0 + 1e6,
    );

    const r = await team.remove(owner, max.member.id);
    expect(r).toMatchObject({ kind: 'removed', keysRevoked: 2 });
    for (const key of [max.key, extra.key]) expect((await verifyApiKey(ledger, key)).ok).toBe(false);
    expect(await sb.get('s_max_1', T0)).toBeUndefined();
    expect(await sa.get('s_max_2', T0)).toBeUndefined();
    expect(await sb.get('s_ada', T0)).toMatchObject({ memberId: owner.member.id });
    expect(await team.invitation(pending.token)).toBeUndefined();
    // A session of the removed member finds no viewer any more; the owner's still does.
    expect(
      await team.viewerOf({ accountId: owner.accountId, keyId: null, memberId: max.member.id }),
    ).toBeUndefined();
    expect(
      (await team.viewerOf({ accountId: owner.accountId, keyId: null, memberId: owner.member.id }))?.role,
    ).toBe('owner');
    // A viewer never crosses accounts.
    const other = await ownerOf('Other');
    expect(
      await team.viewerOf({ accountId: owner.accountId, keyId: null, memberId: other.member.id }),
    ).toBeUndefined();
    expect((await team.remove(owner, other.member.id)).kind).toBe('not_found');
  });

  it('[team:keys-own] keys belong to members; those made without one belong to the first owner', async () => {
    const owner = await ownerOf();
    const { row: operatorKey } = await import('../../auth/api-keys.js').then((m) =>
      m.createApiKey(ledger, owner.accountId, 'operator-made'),
    );
    const { token } = await team.invite(owner.accountId, OPERATOR_ACTOR, 'member', 'Mo');
    clock.advance(1_000);
    const mo = await team.accept(token, 'Mo');
    if (!mo) throw new Error('not accepted');
    const moViewer: Viewer = { accountId: owner.accountId, member: mo.member, role: 'member' };
    expect(await team.createKey(moViewer, owner.member.id, 'for the owner')).toBe('forbidden');
    expect((await team.visibleKeys(moViewer)).map((k) => k.id)).toEqual([mo.row.id]);
    const all = await team.visibleKeys(owner);
    expect(all.map((k) => [k.id, k.member_id])).toEqual([
      [operatorKey.id, owner.member.id],
      [mo.row.id, mo.member.id],
    ]);
    // An owner makes a key for the member: it is the member's.
    const forMo = await team.createKey(owner, mo.member.id, 'from the owner');
    if (typeof forMo === 'string') throw new Error(forMo);
    expect((await team.visibleKeys(moViewer)).map((k) => k.id)).toContain(forMo.row.id);
    // A member cannot revoke the owner's key; the owner can revoke the member's.
    expect(await team.revokeKey(moViewer, operatorKey.id)).toBe(false);
    expect(await team.revokeKey(owner, forMo.row.id)).toBe(true);
    expect(await team.createKey(owner, 'mbr_nobody', null)).toBe('no_member');
  });

  it('[team:audit] the event log records who did what, newest first, readable in words', async () => {
    const owner = await ownerOf();
    const { token } = await team.invite(
      owner.accountId,
      { memberId: owner.member.id, name: 'Ada' },
      'member',
      'Bob',
    );
    clock.advance(1_000);
    const bob = await team.accept(token, 'Bob');
    clock.advance(1_000);
    await team.setRole(owner, bob?.member.id as string, 'billing');
    clock.advance(1_000);
    await team.remove(owner, bob?.member.id as string);
    await recordAuditEvent(
      b.db,
      {
        accountId: owner.accountId,
        actor: { memberId: owner.member.id, name: 'Ada' },
        action: 'key.limit_changed',
        subject: { id: 'key_x', name: 'tg_sk_ab12…' },
        detail: { summary: 'daily $5.00' },
      },
      clock.now() + 1,
    );
    const events = await openAuditLog(a.db).list(owner.accountId, 10);
    expect(events.map((e) => describeAuditEvent(e))).toEqual([
      'Ada changed the limits of key tg_sk_ab12…: daily $5.00',
      'Ada removed Bob (1 key(s) revoked)',
      'Ada changed the role of Bob from member to billing',
      `Bob created key ${bob?.row.prefix}`,
      'Bob joined as member, invited by Ada',
      'Ada invited Bob as member',
    ]);
    expect(await openAuditLog(a.db).list('acct_other', 10)).toEqual([]);
  });
});
