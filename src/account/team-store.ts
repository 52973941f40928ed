import type { StateDb } from '../backend.js';
import { forUpdate, inTransaction } from '../db/open.js';
import type { Database, StoreDb } from '../db/schema.js';
import type { Role } from './roles.js';

// Where team accounts are kept (the store layer, so SQLite and PostgreSQL alike): members and their roles,
// invitations (only the SHA-256 of a link's token), and which member each API key belongs to. The rules that need
// more than one row are kept here, in one transaction each, so that replicas racing each other cannot break them:
// an invitation is accepted once; an account never loses its last owner (the account's active members are locked
// first, FOR UPDATE on PostgreSQL; SQLite's immediate transaction holds the write lock).

export type MemberRow = Database['account_members'];
export type InviteRow = Omit<Database['account_invites'], 'token_hash'>;

/**
 * The account's first owner: the member that credentials without a member of their own act as (the sign-up
 * session, the account's upstream identity, keys made by the operator or before teams). Its id is derived from the
 * account's, so creating it is idempotent across replicas.
 */
export function founderId(accountId: string): string {
  return `mbr_${accountId}`;
}

export type RemoveResult =
  | { kind: 'removed'; member: MemberRow }
  | { kind: 'last_owner' }
  | { kind: 'not_found' };

export type RoleResult =
  | { kind: 'changed'; member: MemberRow; from: Role }
  | { kind: 'same' }
  | { kind: 'last_owner' }
  | { kind: 'not_found' };

export interface TeamStore {
  /** The account's first owner, created (as an owner named `name`) if the account has none yet. */
  ensureFounder(accountId: string, name: string, now: number): Promise<MemberRow>;
  member(id: string): Promise<MemberRow | undefined>;
  /** Every member the account has had (removed ones too), oldest first. */
  members(accountId: string): Promise<MemberRow[]>;
  addInvite(invite: InviteRow, tokenHash: string): Promise<void>;
  /** Invitations not yet accepted, withdrawn or expired, newest first. */
  openInvites(accountId: string, now: number): Promise<InviteRow[]>;
  /** The invitation of a token's hash while it can still be accepted. */
  inviteByToken(tokenHash: string, now: number): Promise<InviteRow | undefined>;
  revokeInvite(accountId: string, id: string, now: number): Promise<InviteRow | undefined>;
  /** Withdraws the open invitations a member made (when it is removed); returns how many. */
  revokeInvitesBy(accountId: string, memberId: string, now: number): Promise<number>;
  /**
   * Accepts an invitation once: marks it accepted and creates its member, in one transaction. Undefined when the
   * token is unknown, used, withdrawn or expired (or another acceptance won the race).
   */
  accept(
    tokenHash: string,
    member: { id: string; name: string },
    now: number,
  ): Promise<{ invite: InviteRow; member: MemberRow } | undefined>;
  /** Removes a member, unless it is the account's last owner. */
  remove(accountId: string, memberId: string, by: string | null, now: number): Promise<RemoveResult>;
  /** Changes a member's role, unless that leaves the account without an owner. */
  setRole(accountId: string, memberId: string, role: Role): Promise<RoleResult>;
  setKeyOwner(accountId: string, keyId: string, memberId: string, now: number): Promise<void>;
  /** key id → member id, for the account's keys that have a member recorded. */
  keyOwners(accountId: string): Promise<Map<string, string>>;
}

export function openTeamStore(state: StateDb | { stores: StoreDb }): TeamStore {
  return new SqlTeamStore(state.stores);
}

const INVITE_COLUMNS = [
  'id',
  'account_id',
  'role',
  'name',
  'created_by',
  'created_at',
  'expires_at',
  'accepted_at',
  'member_id',
  'revoked_at',
] as const;

class SqlTeamStore implements TeamStore {
  constructor(private readonly db: StoreDb) {}

  async ensureFounder(accountId: string, name: string, now: number): Promise<MemberRow> {
    const id = founderId(accountId);
    const known = await this.member(id);
    if (known) return known;
    await this.db
      .insertInto('account_members')
      .values({
        id,
        account_id: accountId,
        name,
        role: 'owner',
        invited_by: null,
        created_at: now,
        removed_at: null,
        removed_by: null,
      })
      .onConflict((oc) => oc.column('id').doNothing())
      .execute();
    return (await this.member(id)) as MemberRow;
  }

  member(id: string): Promise<MemberRow | undefined> {
    return this.db.selectFrom('account_members').selectAll().where('id', '=', id).executeTakeFirst();
  }

  members(accountId: string): Promise<MemberRow[]> {
    return this.db
      .selectFrom('account_members')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  async addInvite(invite: InviteRow, tokenHash: string): Promise<void> {
    await this.db
      .insertInto('account_invites')
      .values({ ...invite, token_hash: tokenHash })
      .execute();
  }

  openInvites(accountId: string, now: number): Promise<InviteRow[]> {
    return this.db
      .selectFrom('account_invites')
      .select(INVITE_COLUMNS)
      .where('account_id', '=', accountId)
      .where('accepted_at', 'is', null)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', now)
      .orderBy('created_at', 'desc')
      .execute();
  }

  inviteByToken(tokenHash: string, now: number): Promise<InviteRow | undefined> {
    return this.db
      .selectFrom('account_invites')
      .select(INVITE_COLUMNS)
      .where('token_hash', '=', tokenHash)
      .where('accepted_at', 'is', null)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
  }

  revokeInvite(accountId: string, id: string, now: number): Promise<InviteRow | undefined> {
    return this.db
      .updateTable('account_invites')
      .set({ revoked_at: now })
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .where('accepted_at', 'is', null)
      .where('revoked_at', 'is', null)
      .returning(INVITE_COLUMNS)
      .executeTakeFirst();
  }

  async revokeInvitesBy(accountId: string, memberId: string, now: number): Promise<number> {
    const r = await this.db
      .updateTable('account_invites')
      .set({ revoked_at: now })
      .where('account_id', '=', accountId)
      .where('created_by', '=', memberId)
      .where('accepted_at', 'is', null)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows);
  }

  accept(tokenHash: string, m: { id: string; name: string }, now: number) {
    return inTransaction(this.db, async (trx) => {
      // One statement claims it: of two acceptances racing (two replicas), one updates the row, one finds none.
      const invite = await trx
        .updateTable('account_invites')
        .set({ accepted_at: now, member_id: m.id })
        .where('token_hash', '=', tokenHash)
        .where('accepted_at', 'is', null)
        .where('revoked_at', 'is', null)
        .where('expires_at', '>', now)
        .returning(INVITE_COLUMNS)
        .executeTakeFirst();
      if (!invite) return undefined;
      const member: MemberRow = {
        id: m.id,
        account_id: invite.account_id,
        name: m.name,
        role: invite.role,
        invited_by: invite.created_by,
        created_at: now,
        removed_at: null,
        removed_by: null,
      };
      await trx.insertInto('account_members').values(member).execute();
      return { invite, member };
    });
  }

  /** The account's active members, locked until the transaction ends: the one asked for, and whether it is the last owner. */
  private async lockActive(trx: StoreDb, accountId: string, memberId: string) {
    const active = await forUpdate(
      trx,
      trx
        .selectFrom('account_members')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('removed_at', 'is', null),
    ).execute();
    const target = active.find((m) => m.id === memberId);
    const lastOwner = target?.role === 'owner' && active.filter((m) => m.role === 'owner').length <= 1;
    return { target, lastOwner };
  }

  remove(accountId: string, memberId: string, by: string | null, now: number): Promise<RemoveResult> {
    return inTransaction(this.db, async (trx) => {
      const { target, lastOwner } = await this.lockActive(trx, accountId, memberId);
      if (!target) return { kind: 'not_found' };
      if (lastOwner) return { kind: 'last_owner' };
      await trx
        .updateTable('account_members')
        .set({ removed_at: now, removed_by: by })
        .where('id', '=', memberId)
        .execute();
      return { kind: 'removed', member: { ...target, removed_at: now, removed_by: by } };
    });
  }

  setRole(accountId: string, memberId: string, role: Role): Promise<RoleResult> {
    return inTransaction(this.db, async (trx) => {
      const { target, lastOwner } = await this.lockActive(trx, accountId, memberId);
      if (!target) return { kind: 'not_found' };
      if (target.role === role) return { kind: 'same' };
      if (lastOwner) return { kind: 'last_owner' };
      await trx.updateTable('account_members').set({ role }).where('id', '=', memberId).execute();
      return { kind: 'changed', member: { ...target, role }, from: target.role };
    });
  }

  async setKeyOwner(accountId: string, keyId: string, memberId: string, now: number): Promise<void> {
    await this.db
      .insertInto('account_member_keys')
      .values({ key_id: keyId, account_id: accountId, member_id: memberId, created_at: now })
      .onConflict((oc) => oc.column('key_id').doUpdateSet({ member_id: memberId }))
      .execute();
  }

  async keyOwners(accountId: string): Promise<Map<string, string>> {
    const rows = await this.db
      .selectFrom('account_member_keys')
      .select(['key_id', 'member_id'])
      .where('account_id', '=', accountId)
      .execute();
    return new Map(rows.map((r) => [r.key_id, r.member_id]));
  }
}
