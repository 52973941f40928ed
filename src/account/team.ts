import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { createApiKey, hasLimits } from '../../auth/api-keys.js';
import type { OAuthStore } from '../../auth/oauth/store.js';
import type { StateDb } from '../backend.js';
import type { ApiKeyRow, KeyLimits, LedgerRecords } from '../ledger/types.js';
import type { Clock } from '../lib/clock.js';
import { sha256Hex } from '../lib/hash.js';
import { newId } from '../lib/ids.js';
import { limitsText } from '../run/key-limit-input.js';
import { type AuditActor, type AuditEventInput, type AuditLog, openAuditLog } from './audit.js';
import { can, type Role } from './roles.js';
import { openSessionStore, type SessionStore } from './session-store.js';
import {
  founderId,
  type InviteRow,
  type MemberRow,
  openTeamStore,
  type RemoveResult,
  type RoleResult,
  type TeamStore,
} from './team-store.js';

// Team accounts (docs/decisions.md "Team accounts"): an account has members, each with a role and keys of its
// own; money stays the account's (one balance, one credit line). A person joins by a one-time link an owner made
// (or the operator, `tollgate members invite`), which creates its member and a first API key of its own: it signs
// in to the dashboard with that key, on its own. Credentials without a member of their own (the sign-up session,
// the account's upstream identity, keys made by the operator or before teams) act as the account's first owner.
// Every change is recorded on the account's event log.

/** How long an invitation link can be accepted. */
export const INVITE_TTL_MS = 7 * 86_400_000;
const TOKEN = /^[A-Za-z0-9_-]{43}$/;
export const NAME_MAX = 60;

/** Who is looking at the dashboard: a member of the account, still a member now. */
export interface Viewer {
  accountId: string;
  member: MemberRow;
  role: Role;
}

/** A key with the member it belongs to. */
export interface MemberKey extends ApiKeyRow {
  member_id: string;
}

export interface TeamDeps {
  state: StateDb | Pick<StateDb, 'stores'>;
  ledger: LedgerRecords;
  clock: Clock;
  log: Logger;
  /**
   * When the account's first owner is removed: forget the account's upstream identity (that person signing in
   * there again gets an account of their own) and drop the OAuth grants it made without a key.
   */
  forgetFounder?: ((accountId: string) => Promise<void>) | undefined;
}

export const actorOf = (v: Viewer): AuditActor => ({ memberId: v.member.id, name: v.member.name });

/** `forgetFounder` through the OAuth store: the account's upstream identity, and the grants it made (no key). */
export function forgetUpstreamSignIns(
  oauth: Pick<OAuthStore, 'unlinkIdentities' | 'grantsOf' | 'grantKey' | 'dropGrant'>,
): (accountId: string) => Promise<void> {
  return async (accountId) => {
    await oauth.unlinkIdentities(accountId);
    for (const g of await oauth.grantsOf(accountId)) {
      if ((await oauth.grantKey(g.grantId)) === undefined) await oauth.dropGrant(g.grantId);
    }
  };
}

export class Team {
  readonly store: TeamStore;
  readonly audit: AuditLog;
  private readonly sessions: SessionStore;

  constructor(private readonly d: TeamDeps) {
    this.store = openTeamStore(d.state);
    this.audit = openAuditLog(d.state);
    this.sessions = openSessionStore(d.state);
  }

  private now(): number {
    return this.d.clock.now();
  }

  /** Records on the account's event log what a signed-in viewer did. */
  private recordBy(v: Viewer, e: Omit<AuditEventInput, 'accountId' | 'actor'>, now = this.now()) {
    return this.audit.record({ accountId: v.accountId, actor: actorOf(v), ...e }, now);
  }

  /** The account's first owner (created, named after the account, the first time anyone asks). */
  async founder(accountId: string): Promise<MemberRow> {
    const known = await this.store.member(founderId(accountId));
    if (known) return known;
    const account = await this.d.ledger.getAccount(accountId);
    // A member since the account exists.
    const since = account?.created_at ?? this.now();
    return this.store.ensureFounder(accountId, account?.name?.slice(0, NAME_MAX) || 'Owner', since);
  }

  /**
   * Who a key signs in as: its member, or the first owner for a key that has none. Maybe a removed member; never
   * someone else when its member's row cannot be read (undefined).
   */
  async memberForKey(accountId: string, keyId: string): Promise<MemberRow | undefined> {
    const owner = (await this.store.keyOwners(accountId)).get(keyId);
    return owner ? this.store.member(owner) : this.founder(accountId);
  }

  /** The viewer behind a session, read afresh on every request; undefined once its member was removed. */
  async viewerOf(s: { accountId: string; keyId: string | null; memberId: string | null }) {
    const member = s.memberId
      ? await this.store.member(s.memberId)
      : s.keyId
        ? await this.memberForKey(s.accountId, s.keyId)
        : await this.founder(s.accountId);
    if (!member || member.account_id !== s.accountId || member.removed_at !== null) return undefined;
    return { accountId: s.accountId, member, role: member.role } satisfies Viewer;
  }

  /** Every key of the account with the member it belongs to (the first owner for keys without one). */
  async keysOf(accountId: string): Promise<MemberKey[]> {
    const [keys, owners] = await Promise.all([
      this.d.ledger.listApiKeys(accountId),
      this.store.keyOwners(accountId),
    ]);
    const first = founderId(accountId);
    return keys.map((k) => ({ ...k, member_id: owners.get(k.id) ?? first }));
  }

  /**
   * The keys a viewer may see and manage (revoked ones too: their calls are still its calls): every key for an
   * owner, its own otherwise (their limits read only: only an owner changes limits).
   */
  async visibleKeys(v: Viewer): Promise<MemberKey[]> {
    const keys = await this.keysOf(v.accountId);
    return can(v.role, 'keys.others') ? keys : keys.filter((k) => k.member_id === v.member.id);
  }

  /**
   * A new key for the viewer, or (an owner) for another active member, with `limits` (the caller decides which:
   * an owner's form, or for others the limits of the key they signed in with). `forbidden`: the role may not make
   * keys for others; `no_member`: no such active member of this account.
   */
  async createKey(
    v: Viewer,
    forMember: string | undefined,
    name: string | null,
    limits?: Partial<KeyLimits>,
  ) {
    const targetId = forMember || v.member.id;
    if (targetId !== v.member.id && !can(v.role, 'keys.others')) return 'forbidden' as const;
    const target = targetId === v.member.id ? v.member : await this.store.member(targetId);
    if (!target || target.account_id !== v.accountId || target.removed_at !== null)
      return 'no_member' as const;
    const { key, row } = await createApiKey(this.d.ledger, v.accountId, name, limits);
    await this.store.setKeyOwner(v.accountId, row.id, target.id, this.now());
    await this.recordBy(v, {
      action: 'key.created',
      subject: { id: row.id, name: row.prefix },
      detail: {
        key_name: name,
        member_id: target.id,
        member_name: target.name,
        ...(hasLimits(row) ? { limits: limitsText(row) } : {}),
      },
    });
    return { key, row, member: target };
  }

  /**
   * Changes the limits of an active key of the account: owners only (`keys.others`; the route checks the role
   * too). Undefined: no such active key. Recorded on the event log with the limits as they now are.
   */
  async setKeyLimits(v: Viewer, keyId: string, changes: Partial<KeyLimits>) {
    if (!can(v.role, 'keys.others')) return undefined;
    const key = (await this.keysOf(v.accountId)).find((k) => k.id === keyId && k.revoked_at === null);
    const row = key && (await this.d.ledger.setApiKeyLimits(keyId, changes));
    if (!key || !row) return undefined;
    const member = await this.store.member(key.member_id);
    await this.recordBy(v, {
      action: 'key.limit_changed',
      subject: { id: key.id, name: key.prefix },
      detail: { summary: limitsText(row), member_id: key.member_id, member_name: member?.name ?? null },
    });
    return row;
  }

  /** Revokes a key the viewer may manage (an owner: any of the account's; others: their own). */
  async revokeKey(v: Viewer, keyId: string): Promise<boolean> {
    const key = (await this.visibleKeys(v)).find((k) => k.id === keyId && k.revoked_at === null);
    if (!key || !(await this.d.ledger.revokeApiKey(keyId))) return false;
    const member = await this.store.member(key.member_id);
    await this.recordBy(v, {
      action: 'key.revoked',
      subject: { id: key.id, name: key.prefix },
      detail: { member_id: key.member_id, member_name: member?.name ?? null },
    });
    return true;
  }

  /** A one-time link's token (returned once; only its hash is kept) and its invitation. */
  async invite(accountId: string, by: AuditActor, role: Role, name: string | null) {
    const token = randomBytes(32).toString('base64url');
    const now = this.now();
    const invite: InviteRow = {
      id: newId('inv', now),
      account_id: accountId,
      role,
      name,
      created_by: by.memberId,
      created_at: now,
      expires_at: now + INVITE_TTL_MS,
      accepted_at: null,
      member_id: null,
      revoked_at: null,
    };
    await this.store.addInvite(invite, sha256Hex(token));
    await this.audit.record(
      {
        accountId,
        actor: by,
        action: 'member.invited',
        subject: { id: invite.id, name: name ?? 'someone' },
        detail: { role, expires_at: new Date(invite.expires_at).toISOString() },
      },
      now,
    );
    return { token, invite };
  }

  async revokeInvite(v: Viewer, inviteId: string): Promise<boolean> {
    const r = await this.store.revokeInvite(v.accountId, inviteId, this.now());
    if (!r) return false;
    await this.recordBy(v, {
      action: 'invite.revoked',
      subject: { id: r.id, name: r.name ?? 'someone' },
      detail: { role: r.role },
    });
    return true;
  }

  /** What a link invites to, while it can be accepted: the invitation, the account's name, who invited. */
  async invitation(token: string) {
    if (!TOKEN.test(token)) return undefined;
    const invite = await this.store.inviteByToken(sha256Hex(token), this.now());
    if (!invite) return undefined;
    const [account, by] = await Promise.all([
      this.d.ledger.getAccount(invite.account_id),
      invite.created_by ? this.store.member(invite.created_by) : undefined,
    ]);
    if (!account) return undefined;
    return { invite, accountName: account.name ?? account.id, invitedBy: by?.name ?? 'the operator' };
  }

  /** Accepts a link once: the new member and its first key (shown once). Undefined: not valid (any more). */
  async accept(token: string, name: string) {
    const found = await this.invitation(token);
    if (!found) return undefined;
    const now = this.now();
    const done = await this.store.accept(sha256Hex(token), { id: newId('mbr', now), name }, now);
    if (!done) return undefined;
    const { member } = done;
    const { key, row } = await createApiKey(this.d.ledger, member.account_id, 'default');
    await this.store.setKeyOwner(member.account_id, row.id, member.id, now);
    const actor = { memberId: member.id, name: member.name };
    const events: Omit<AuditEventInput, 'accountId' | 'actor'>[] = [
      {
        action: 'member.joined',
        subject: { id: member.id, name: member.name },
        detail: { role: member.role, invite_id: done.invite.id, invited_by_name: found.invitedBy },
      },
      {
        action: 'key.created',
        subject: { id: row.id, name: row.prefix },
        detail: { key_name: 'default', member_id: member.id, member_name: member.name },
      },
    ];
    for (const e of events) await this.audit.record({ accountId: member.account_id, actor, ...e }, now);
    this.d.log.info({ account: member.account_id, member: member.id, role: member.role }, 'member joined');
    return { member, key, row, accountName: found.accountName };
  }

  /**
   * Removes a member: at once it can no longer sign in, its sessions end (on every replica: they are read from
   * the shared database on each request), its keys are revoked (here at once; other replicas within the key
   * cache's TOLLGATE_KEY_CACHE_SECONDS), with the OAuth grants made by signing in with them, and its open
   * invitations are withdrawn. The account keeps at least one owner.
   */
  async remove(v: Viewer, memberId: string): Promise<RemoveResult & { keysRevoked?: number }> {
    const now = this.now();
    const r = await this.store.remove(v.accountId, memberId, v.member.id, now);
    if (r.kind !== 'removed') return r;
    let keysRevoked = 0;
    for (const k of await this.keysOf(v.accountId)) {
      if (k.member_id === memberId && k.revoked_at === null && (await this.d.ledger.revokeApiKey(k.id))) {
        keysRevoked++;
      }
    }
    await this.sessions.removeOfMember(memberId);
    await this.store.revokeInvitesBy(v.accountId, memberId, now);
    if (memberId === founderId(v.accountId)) await this.d.forgetFounder?.(v.accountId);
    await this.recordBy(
      v,
      {
        action: 'member.removed',
        subject: { id: memberId, name: r.member.name },
        detail: { role: r.member.role, keys_revoked: keysRevoked },
      },
      now,
    );
    this.d.log.info({ account: v.accountId, member: memberId, keys: keysRevoked }, 'member removed');
    return { ...r, keysRevoked };
  }

  async setRole(v: Viewer, memberId: string, role: Role): Promise<RoleResult> {
    const r = await this.store.setRole(v.accountId, memberId, role);
    if (r.kind === 'changed') {
      await this.recordBy(v, {
        action: 'member.role_changed',
        subject: { id: memberId, name: r.member.name },
        detail: { from: r.from, to: role },
      });
    }
    return r;
  }
}
