import type { Channel, ChannelStorage } from '@x402/evm/batch-settlement/server';
import { sql } from 'kysely';
import type { StateDb } from '../../backend.js';
import { dialectOf, inTransaction } from '../../db/open.js';
import { prepare } from '../../db/prepared.js';
import type { Clock } from '../../lib/clock.js';

// The channels of x402 sessions (the `batch-settlement` scheme) in the gateway's database, behind the scheme's own
// storage interface (ChannelStorage: get, list, and an atomic read-modify-write), so that every replica sees one
// state per channel and a restart loses nothing: the charged total and the latest signed voucher (what a claim
// puts on chain), the mirrored on-chain balance, and the per-request reservation (`pendingRequest`) that keeps one
// request at a time on a channel. Written once over the store layer (src/db), one table `x402_channels`.
//
// Atomicity: an immediate transaction on SQLite (one process writes); on PostgreSQL a transaction-scoped advisory
// lock on the channel id serializes every writer on every replica, creation included (the one dialect branch).
// Durability: these writes move no money by themselves; the call's ledger capture, a durable commit made after
// them, makes them durable too (PostgreSQL: synchronous_commit off rides on the next synchronous commit; SQLite:
// committed with the connection's synchronous switched off, the capture's fsync of the shared WAL covers every
// frame before it). A crash before that capture loses the
// channel update and the charge together.

export interface SessionChannelStore extends ChannelStorage {
  /**
   * Clears the reservations left by a process that died mid-call: this replica's at start (SQLite, a cluster of
   * one: all of them), and those of replicas whose lease expired. Returns how many were cleared.
   */
  recover(atStart: boolean): Promise<number>;
}

type Update = (c: Channel | undefined) => Channel | undefined;
type Outcome = { channel: Channel | undefined; status: 'unchanged' | 'deleted' | 'updated' };

const parse = (data: string): Channel => JSON.parse(data) as Channel;
/** SQLite: committed without an fsync of its own (see Durability above). */
const NOT_FLUSHED = { flush: false };

export function openChannelStore(state: StateDb, clock: Clock): SessionChannelStore {
  const db = state.stores;
  const replicaId = state.replicaId;
  const postgres = dialectOf(db) === 'postgres';

  // Every voucher of a session call reads and writes its channel twice (reserve, commit): compiled once, these run on
  // kept statements (src/db/prepared.ts) instead of being built, compiled and prepared again each time.
  const q = {
    read: prepare<{ id: string }, { data: string; replica: string }>(db, (p) =>
      db.selectFrom('x402_channels').select(['data', 'replica']).where('channel_id', '=', p.id),
    ),
    remove: prepare<{ id: string }, unknown>(db, (p) =>
      db.deleteFrom('x402_channels').where('channel_id', '=', p.id),
    ),
    write: prepare<{ id: string; data: string; replica: string; at: number }, unknown>(db, (p) =>
      db
        .insertInto('x402_channels')
        .values({ channel_id: p.id, data: p.data, replica: p.replica, updated_at: p.at })
        .onConflict((oc) =>
          oc.column('channel_id').doUpdateSet({ data: p.data, replica: p.replica, updated_at: p.at }),
        ),
    ),
    lock: postgres
      ? prepare<{ id: string }, unknown>(
          db,
          (p) => sql`SELECT pg_advisory_xact_lock(hashtextextended(${p.id}, 402))`,
        )
      : undefined,
    unsynced: postgres
      ? prepare<object, unknown>(db, () => sql`SET LOCAL synchronous_commit = off`)
      : undefined,
  };

  const update = (id: string, fn: Update, onlyIfReplica?: string[]): Promise<Outcome> =>
    inTransaction(
      db,
      async (trx) => {
        if (q.lock && q.unsynced) {
          await q.unsynced.run({}, trx);
          // Every writer of this channel, on every replica, queues here until this transaction ends.
          await q.lock.run({ id }, trx);
        }
        const row = await q.read.first({ id }, trx);
        if (onlyIfReplica && (!row || !onlyIfReplica.includes(row.replica))) {
          return { channel: row ? parse(row.data) : undefined, status: 'unchanged' };
        }
        const current = row ? parse(row.data) : undefined;
        const next = fn(current);
        if (next === current) return { channel: current, status: 'unchanged' };
        if (next === undefined) {
          await q.remove.run({ id }, trx);
          return { channel: undefined, status: 'deleted' };
        }
        await q.write.run({ id, data: JSON.stringify(next), replica: replicaId, at: clock.now() }, trx);
        return { channel: next, status: 'updated' };
      },
      NOT_FLUSHED,
    );

  return {
    async get(id) {
      const row = await q.read.first({ id: id.toLowerCase() });
      return row ? parse(row.data) : undefined;
    },
    async list() {
      return (await db.selectFrom('x402_channels').select('data').execute()).map((r) => parse(r.data));
    },
    updateChannel: (id, fn) => update(id.toLowerCase(), fn),
    async recover(atStart) {
      // The replicas whose reservations may be cleared: this one at start, and every one whose lease ran out.
      const dead = await db
        .selectFrom('replicas')
        .select('id')
        .where('lease_expires_at', '<=', clock.now())
        .execute();
      const owners = [...dead.map((r) => r.id), ...(atStart ? [replicaId] : [])];
      if (owners.length === 0) return 0;
      const rows = await db
        .selectFrom('x402_channels')
        .select(['channel_id', 'data'])
        .where('replica', 'in', owners)
        .execute();
      let n = 0;
      for (const row of rows) {
        if (!parse(row.data).pendingRequest) continue;
        const clear: Update = (cur) => (cur?.pendingRequest ? { ...cur, pendingRequest: undefined } : cur);
        if ((await update(row.channel_id, clear, owners)).status === 'updated') n++;
      }
      return n;
    },
  };
}
