import type { StoreDb } from '../db/schema.js';
import { randomToken } from '../lib/ids.js';
import { formatUsd } from '../lib/money.js';
import type { OperatorMove } from '../run/operator-money.js';

// An account's event log: who invited, who joined, who removed whom or changed a role, who made or revoked a key,
// who changed a limit. Written through the store layer (both backends), shown on the dashboard to owners and
// billing. Other code records through `recordAuditEvent` (the per-key limits record their changes with
// `key.limit_changed`). Names are kept as they were at the time: a member removed later still reads as who acted.

export type AuditAction =
  | 'member.invited'
  | 'invite.revoked'
  | 'member.joined'
  | 'member.removed'
  | 'member.role_changed'
  | 'key.created'
  | 'key.revoked'
  | 'key.limit_changed'
  | 'app.limit_changed'
  | 'app.disconnected'
  | 'call.refunded'
  | 'balance.adjusted';

/** Who acted: a member of the account, or the operator (the CLI), with the name to show. */
export interface AuditActor {
  memberId: string | null;
  name: string;
}

export const OPERATOR_ACTOR: AuditActor = { memberId: null, name: 'the operator' };

export interface AuditEventInput {
  accountId: string;
  actor: AuditActor;
  action: AuditAction;
  /** What was acted on: a member, an invitation, a key, an app. */
  subject?: { id: string; name: string } | undefined;
  /** Small facts for the record: a role before and after, a limit, the member a key was made for. */
  detail?: Record<string, unknown> | undefined;
}

export interface AuditEvent extends AuditEventInput {
  id: string;
  created_at: number;
}

export interface AuditLog {
  record(e: AuditEventInput, now?: number): Promise<AuditEvent>;
  /** The account's events, newest first. */
  list(accountId: string, limit: number): Promise<AuditEvent[]>;
}

let seq = 0;

/**
 * Time-ordered like other ids, with a counter after the millisecond: events this process records in the same
 * millisecond (a member joins and gets its first key) list in the order they happened.
 */
function eventId(now: number): string {
  seq = (seq + 1) % 36 ** 4;
  return `evt_${now.toString(36).padStart(9, '0')}${seq.toString(36).padStart(4, '0')}${randomToken(12)}`;
}

export function openAuditLog(state: { stores: StoreDb }): AuditLog {
  const db = state.stores;
  return {
    async record(e, now = Date.now()) {
      const event: AuditEvent = { ...e, id: eventId(now), created_at: now };
      await db
        .insertInto('account_events')
        .values({
          id: event.id,
          account_id: e.accountId,
          created_at: now,
          actor_id: e.actor.memberId,
          actor_name: e.actor.name,
          action: e.action,
          subject_id: e.subject?.id ?? null,
          subject_name: e.subject?.name ?? null,
          detail: e.detail ? JSON.stringify(e.detail) : null,
        })
        .execute();
      return event;
    },
    async list(accountId, limit) {
      const rows = await db
        .selectFrom('account_events')
        .selectAll()
        .where('account_id', '=', accountId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit)
        .execute();
      return rows.map((r) => ({
        id: r.id,
        created_at: r.created_at,
        accountId: r.account_id,
        actor: { memberId: r.actor_id, name: r.actor_name },
        action: r.action as AuditAction,
        subject:
          r.subject_id === null ? undefined : { id: r.subject_id, name: r.subject_name ?? r.subject_id },
        detail: r.detail === null ? undefined : (JSON.parse(r.detail) as Record<string, unknown>),
      }));
    },
  };
}

/** Records one event on the account's log (for code outside the dashboard: the CLI, the per-key limits). */
export function recordAuditEvent(
  state: { stores: StoreDb },
  e: AuditEventInput,
  now = Date.now(),
): Promise<AuditEvent> {
  return openAuditLog(state).record(e, now);
}

/**
 * The event log's hook for the operator's refunds and adjustments (src/run/operator-money.ts, by the CLI or the
 * operator's HTTP endpoints): each recorded as the operator's, with who asked (`by`), the amount and the reason.
 * Money has moved by then: a failure to record is handed to `failed`, never thrown.
 */
export function operatorMoveLog(
  state: { stores: StoreDb },
  failed: (err: unknown, movementId: string) => void,
): (m: OperatorMove) => Promise<void> {
  return (m) =>
    recordAuditEvent(state, {
      accountId: m.accountId,
      actor: OPERATOR_ACTOR,
      action: m.kind === 'call_refund' ? 'call.refunded' : 'balance.adjusted',
      subject: { id: m.callId ?? m.movementId, name: m.callId ?? m.movementId },
      detail: { movement_id: m.movementId, micros: m.micros, reason: m.reason, by: m.by },
    }).then(
      () => undefined,
      (err: unknown) => failed(err, m.movementId),
    );
}

const str = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v) : '');

/** The event in words, as the dashboard shows it ("Ada invited Bob as billing"). */
export function describeAuditEvent(e: AuditEvent): string {
  const who = e.actor.name;
  const what = e.subject?.name ?? '';
  const d = e.detail ?? {};
  // "for Bob" / "of Bob" only when someone acted on another member's key.
  const whose = d.member_name && d.member_id !== e.actor.memberId ? str(d.member_name) : '';
  switch (e.action) {
    case 'member.invited':
      return `${who} invited ${what || 'someone'} as ${str(d.role)}`;
    case 'invite.revoked':
      return `${who} withdrew the invitation of ${what || 'someone'}`;
    case 'member.joined':
      return `${what} joined as ${str(d.role)}${d.invited_by_name ? `, invited by ${str(d.invited_by_name)}` : ''}`;
    case 'member.removed':
      return `${who} removed ${what}${d.keys_revoked ? ` (${str(d.keys_revoked)} key(s) revoked)` : ''}`;
    case 'member.role_changed':
      return `${who} changed the role of ${what} from ${str(d.from)} to ${str(d.to)}`;
    case 'key.created':
      return `${who} created key ${what}${whose ? ` for ${whose}` : ''}${d.limits ? ` with limits: ${str(d.limits)}` : ''}`;
    case 'key.revoked':
      return `${who} revoked key ${what}${whose ? ` of ${whose}` : ''}`;
    case 'key.limit_changed':
      return `${who} changed the limits of key ${what}${d.summary ? `: ${str(d.summary)}` : ''}`;
    case 'app.limit_changed':
      return `${who} set the daily limit of app ${what} to ${str(d.limit) || 'none'}`;
    case 'app.disconnected':
      return `${who} disconnected app ${what}`;
    case 'call.refunded':
      return `${who} refunded ${formatUsd(Number(d.micros))} of ${what}: ${str(d.reason)}`;
    case 'balance.adjusted':
      return `${who} adjusted the balance by ${Number(d.micros) > 0 ? '+' : ''}${formatUsd(Number(d.micros))}: ${str(d.reason)}`;
    default:
      return `${who}: ${String(e.action)} ${what}`.trim();
  }
}
