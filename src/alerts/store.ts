import type { StateDb } from '../backend.js';
import { forUpdate, inTransaction } from '../db/open.js';
import type { StoreDb } from '../db/schema.js';
import type { AlertEvent } from './events.js';

// What alerts keep, on SQLite or the PostgreSQL every replica shares (tables: src/db/migrations/alerts.ts):
// each account's settings, the last state seen of each threshold it watches (marks), and the outbox.
//
// Once per crossing: a mark changes and the event is queued in one transaction (the row locked on PostgreSQL,
// SQLite's write lock taken at BEGIN), so of two replicas seeing the same crossing one changes the mark and queues
// the event, the other finds it changed. Events reported more than once (a top-up) carry a stable id, and the
// outbox's key (event, channel) lets one row in. Exactly one replica sends each attempt: it claims the row with
// a conditional update (a lease); a replica that dies mid-attempt leaves a lease that expires, and the attempt is
// made again (delivery is at least once; receivers deduplicate on the event id).

export interface AlertSettings {
  account_id: string;
  webhook_url: string | null;
  webhook_secret: string | null;
  emails: string[];
  balance_threshold_micros: number | null;
  events: string[];
  created_at: number;
  updated_at: number;
}

export type Channel = 'webhook' | 'email';

export interface DeliveryRow {
  event_id: string;
  channel: Channel;
  account_id: string;
  type: string;
  payload: string;
  target: string | null;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: number;
  last_status: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}

/** How an attempt ended: delivered, to be retried at `retryAt`, or given up (`retryAt` undefined). */
export interface AttemptResult {
  delivered: boolean;
  retryAt?: number | undefined;
  target: string | null;
  status: number | null;
  error: string | null;
}

/**
 * A mark's change: given the value last recorded (undefined: never seen), what it is now and the event to queue
 * with the change (undefined: none).
 */
export type MarkDecision = (previous: string | undefined) => AlertEvent | undefined;

export interface AlertStore {
  settings(accountId: string): Promise<AlertSettings | undefined>;
  putSettings(s: AlertSettings): Promise<void>;
  /** Accounts with somewhere to deliver (a webhook or an address): those whose thresholds are watched. */
  watchedAccounts(): Promise<string[]>;
  /**
   * Sets the mark to `value` if it holds another (or none) and, in the same transaction, queues what `decide`
   * returns on the given channels. Returns the event queued, if any.
   */
  mark(
    accountId: string,
    mark: string,
    value: string,
    channels: Channel[],
    decide: MarkDecision,
    now: number,
  ): Promise<AlertEvent | undefined>;
  /** Forgets the marks whose name starts with `prefix` (a threshold changed: its state starts afresh). */
  dropMarks(accountId: string, prefix: string): Promise<void>;
  /** Queues an event on each channel; one reported again (same id) is not queued twice. Returns rows added. */
  enqueue(e: AlertEvent, channels: Channel[], now: number): Promise<number>;
  /** Pending deliveries due now whose lease (if any) has run out, oldest first. */
  due(now: number, limit: number): Promise<Array<{ event_id: string; channel: Channel }>>;
  /** Takes a due delivery for one attempt (exactly one replica gets it); its row with the attempt counted. */
  claim(
    eventId: string,
    channel: Channel,
    owner: string,
    now: number,
    leaseMs: number,
  ): Promise<DeliveryRow | undefined>;
  /** Records an attempt's outcome; only the lease holder of that attempt can. */
  finish(row: DeliveryRow, owner: string, r: AttemptResult, now: number): Promise<boolean>;
  /** Frees the leases this replica holds (a start: any attempt in progress died with the previous process). */
  releaseLeases(owner: string): Promise<void>;
  recent(accountId: string, limit: number): Promise<DeliveryRow[]>;
  /** Deletes finished deliveries last touched before `before`. */
  purge(before: number): Promise<number>;
}

export function openAlertStore(state: StateDb): AlertStore {
  return new SqlAlertStore(state.stores);
}

const list = (s: string) => (s ? s.split(',') : []);

/** A DeliveryRow's columns (the lease's are the store's own). */
const DELIVERY_COLUMNS = [
  'event_id',
  'channel',
  'account_id',
  'type',
  'payload',
  'target',
  'status',
  'attempts',
  'next_attempt_at',
  'last_status',
  'last_error',
  'created_at',
  'updated_at',
] as const;

class SqlAlertStore implements AlertStore {
  constructor(private readonly db: StoreDb) {}

  async settings(accountId: string): Promise<AlertSettings | undefined> {
    const r = await this.db
      .selectFrom('alert_settings')
      .selectAll()
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return r && { ...r, emails: list(r.emails), events: list(r.events) };
  }

  async putSettings(s: AlertSettings): Promise<void> {
    const row = { ...s, emails: s.emails.join(','), events: s.events.join(',') };
    const { account_id: _, created_at: __, ...changes } = row;
    await this.db
      .insertInto('alert_settings')
      .values(row)
      .onConflict((oc) => oc.column('account_id').doUpdateSet(changes))
      .execute();
  }

  async watchedAccounts(): Promise<string[]> {
    const rows = await this.db
      .selectFrom('alert_settings')
      .select('account_id')
      .where((eb) => eb.or([eb('webhook_url', 'is not', null), eb('emails', '<>', '')]))
      .execute();
    return rows.map((r) => r.account_id);
  }

  async mark(
    accountId: string,
    mark: string,
    value: string,
    channels: Channel[],
    decide: MarkDecision,
    now: number,
  ): Promise<AlertEvent | undefined> {
    const read = (db: StoreDb) =>
      db
        .selectFrom('alert_marks')
        .select('value')
        .where('account_id', '=', accountId)
        .where('mark', '=', mark);
    // Most looks find the state unchanged: read it first, and only a change takes the write lock (and re-reads).
    if ((await read(this.db).executeTakeFirst())?.value === value) return undefined;
    return inTransaction(this.db, async (trx) => {
      const row = await forUpdate(trx, read(trx)).executeTakeFirst();
      if (row?.value === value) return undefined;
      if (row) {
        await trx
          .updateTable('alert_marks')
          .set({ value, updated_at: now })
          .where('account_id', '=', accountId)
          .where('mark', '=', mark)
          .execute();
      } else {
        // Two replicas seeing a mark first: one inserts, the other's insert does nothing (and it queues nothing).
        const ins = await trx
          .insertInto('alert_marks')
          .values({ account_id: accountId, mark, value, updated_at: now })
          .onConflict((oc) => oc.columns(['account_id', 'mark']).doNothing())
          .executeTakeFirst();
        if (Number(ins.numInsertedOrUpdatedRows ?? 0) !== 1) return undefined;
      }
      const event = decide(row?.value);
      if (event) await this.insertEvent(trx, event, channels, now);
      return event;
    });
  }

  async dropMarks(accountId: string, prefix: string): Promise<void> {
    await this.db
      .deleteFrom('alert_marks')
      .where('account_id', '=', accountId)
      .where('mark', 'like', `${prefix}%`)
      .execute();
  }

  enqueue(e: AlertEvent, channels: Channel[], now: number): Promise<number> {
    return this.insertEvent(this.db, e, channels, now);
  }

  private async insertEvent(db: StoreDb, e: AlertEvent, channels: Channel[], now: number): Promise<number> {
    if (channels.length === 0) return 0;
    const payload = JSON.stringify(e);
    const r = await db
      .insertInto('alert_outbox')
      .values(
        channels.map((channel) => ({
          event_id: e.id,
          channel,
          account_id: e.account,
          type: e.type,
          payload,
          target: null,
          status: 'pending' as const,
          next_attempt_at: now,
          lease_owner: null,
          lease_until: null,
          last_status: null,
          last_error: null,
          created_at: now,
          updated_at: now,
        })),
      )
      .onConflict((oc) => oc.columns(['event_id', 'channel']).doNothing())
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0);
  }

  async due(now: number, limit: number): Promise<Array<{ event_id: string; channel: Channel }>> {
    return this.db
      .selectFrom('alert_outbox')
      .select(['event_id', 'channel'])
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now)]))
      .orderBy('next_attempt_at')
      .limit(limit)
      .execute();
  }

  async claim(
    eventId: string,
    channel: Channel,
    owner: string,
    now: number,
    leaseMs: number,
  ): Promise<DeliveryRow | undefined> {
    // The same conditions as `due`, checked again by the update itself: of replicas racing, one row changes.
    return this.db
      .updateTable('alert_outbox')
      .set((eb) => ({
        lease_owner: owner,
        lease_until: now + leaseMs,
        attempts: eb('attempts', '+', 1),
        updated_at: now,
      }))
      .where('event_id', '=', eventId)
      .where('channel', '=', channel)
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now)]))
      .returning(DELIVERY_COLUMNS)
      .executeTakeFirst();
  }

  async finish(row: DeliveryRow, owner: string, r: AttemptResult, now: number): Promise<boolean> {
    const status = r.delivered ? 'delivered' : r.retryAt === undefined ? 'failed' : 'pending';
    const u = await this.db
      .updateTable('alert_outbox')
      .set({
        status,
        next_attempt_at: r.retryAt ?? row.next_attempt_at,
        lease_owner: null,
        lease_until: null,
        target: r.target,
        last_status: r.status,
        last_error: r.error,
        updated_at: now,
      })
      .where('event_id', '=', row.event_id)
      .where('channel', '=', row.channel)
      .where('lease_owner', '=', owner)
      .where('attempts', '=', row.attempts)
      .executeTakeFirst();
    return Number(u.numUpdatedRows) === 1;
  }

  async releaseLeases(owner: string): Promise<void> {
    await this.db
      .updateTable('alert_outbox')
      .set({ lease_owner: null, lease_until: null })
      .where('lease_owner', '=', owner)
      .where('status', '=', 'pending')
      .execute();
  }

  recent(accountId: string, limit: number): Promise<DeliveryRow[]> {
    return this.db
      .selectFrom('alert_outbox')
      .select(DELIVERY_COLUMNS)
      .where('account_id', '=', accountId)
      .orderBy('created_at', 'desc')
      .orderBy('event_id', 'desc')
      .orderBy('channel')
      .limit(limit)
      .execute();
  }

  async purge(before: number): Promise<number> {
    const r = await this.db
      .deleteFrom('alert_outbox')
      .where('status', '<>', 'pending')
      .where('updated_at', '<', before)
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
