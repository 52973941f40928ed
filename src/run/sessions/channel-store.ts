import type { Channel, ChannelStorage } from '@x402/evm/batch-settlement/server';
import type { StateDb } from '../../backend.js';
import type { Clock } from '../../lib/clock.js';
import { migrate, type SqliteDb } from '../../lib/sqlite.js';
import { inTransaction, type PgPool } from '../../pg/pool.js';

// The channels of x402 sessions (the `batch-settlement` scheme) in the gateway's database, behind the scheme's own
// storage interface (ChannelStorage: get, list, and an atomic read-modify-write), so that every replica sees one
// state per channel and a restart loses nothing: the charged total and the latest signed voucher (what a claim
// puts on chain), the mirrored on-chain balance, and the per-request reservation (`pendingRequest`) that keeps one
// request at a time on a channel.
//
// Atomicity: on SQLite the callback runs inside one synchronous transaction (one process writes); on PostgreSQL a
// transaction-scoped advisory lock on the channel id serializes every writer on every replica, creation included.
// Durability: these writes move no money by themselves; the call's ledger capture, a durable commit made after
// them, makes them durable too (SQLite: synchronous=NORMAL rides on the next fsync of the same WAL; PostgreSQL:
// synchronous_commit off rides on the next synchronous commit). A crash before that capture loses the channel
// update and the charge together.
//
// One table, `x402_channels (channel_id, data JSON, replica, updated_at)`; the other stores are moving to Kysely,
// and this one is kept to this file and this interface so that it moves with them.

export interface SessionChannelStore extends ChannelStorage {
  /**
   * Clears the reservations left by a process that died mid-call: this replica's at start (SQLite: all of them),
   * and those of replicas whose lease expired. Returns how many were cleared.
   */
  recover(atStart: boolean): Promise<number>;
}

const MIGRATIONS = [
  `
  CREATE TABLE x402_channels (
    channel_id TEXT PRIMARY KEY,  -- lower-case bytes32 hex
    data       TEXT NOT NULL,     -- the scheme's channel record (JSON)
    replica    TEXT NOT NULL,
    updated_at INTEGER NOT NULL
  );
  `,
];

const parse = (data: string): Channel => JSON.parse(data) as Channel;

export function openChannelStore(state: StateDb, clock: Clock): SessionChannelStore {
  return state.kind === 'sqlite'
    ? sqliteChannels(state.db, clock)
    : pgChannels(state.pool, clock, state.replicaId);
}

function sqliteChannels(db: SqliteDb, clock: Clock): SessionChannelStore {
  migrate(db, 'x402-sessions', MIGRATIONS);
  const s = {
    get: db.prepare<[string], { data: string }>('SELECT data FROM x402_channels WHERE channel_id = ?'),
    list: db.prepare<[], { data: string }>('SELECT data FROM x402_channels'),
    put: db.prepare(
      `INSERT INTO x402_channels (channel_id, data, replica, updated_at) VALUES (?, ?, 'local', ?)
       ON CONFLICT (channel_id) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at`,
    ),
    del: db.prepare('DELETE FROM x402_channels WHERE channel_id = ?'),
    // Prepared once: a pragma statement compiled per call costs more than the write it wraps.
    normal: db.prepare('PRAGMA synchronous = NORMAL'),
    full: db.prepare('PRAGMA synchronous = FULL'),
  };
  const update = db.transaction((id: string, fn: (c: Channel | undefined) => Channel | undefined) => {
    const row = s.get.get(id);
    const current = row ? parse(row.data) : undefined;
    const next = fn(current);
    if (next === current) return { channel: current, status: 'unchanged' as const };
    if (next === undefined) {
      s.del.run(id);
      return { channel: undefined, status: 'deleted' as const };
    }
    s.put.run(id, JSON.stringify(next), clock.now());
    return { channel: next, status: 'updated' as const };
  });
  return {
    get: (id) => {
      const row = s.get.get(id.toLowerCase());
      return Promise.resolve(row ? parse(row.data) : undefined);
    },
    list: () => Promise.resolve(s.list.all().map((r) => parse(r.data))),
    updateChannel(id, fn) {
      // Not money (see above): committed without its own fsync, made durable by the capture that follows.
      s.normal.run();
      try {
        return Promise.resolve(update(id.toLowerCase(), fn));
      } finally {
        s.full.run();
      }
    },
    recover() {
      // One process owns a SQLite database: any reservation left is a dead process's.
      let n = 0;
      for (const c of s.list.all().map((r) => parse(r.data))) {
        if (!c.pendingRequest) continue;
        update(c.channelId.toLowerCase(), (cur) => (cur ? { ...cur, pendingRequest: undefined } : cur));
        n++;
      }
      return Promise.resolve(n);
    },
  };
}

function pgChannels(pool: PgPool, clock: Clock, replicaId: string): SessionChannelStore {
  const update = (
    id: string,
    fn: (c: Channel | undefined) => Channel | undefined,
    onlyIfReplica?: string[],
  ) =>
    inTransaction(pool, async (c) => {
      await c.query('SET LOCAL synchronous_commit = off');
      // Every writer of this channel, on every replica, queues here until this transaction ends.
      await c.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 402))', [id]);
      const r = await c.query<{ data: string; replica: string }>(
        'SELECT data, replica FROM x402_channels WHERE channel_id = $1',
        [id],
      );
      const row = r.rows[0];
      if (onlyIfReplica && (!row || !onlyIfReplica.includes(row.replica))) {
        return { channel: row ? parse(row.data) : undefined, status: 'unchanged' as const };
      }
      const current = row ? parse(row.data) : undefined;
      const next = fn(current);
      if (next === current) return { channel: current, status: 'unchanged' as const };
      if (next === undefined) {
        await c.query('DELETE FROM x402_channels WHERE channel_id = $1', [id]);
        return { channel: undefined, status: 'deleted' as const };
      }
      await c.query(
        `INSERT INTO x402_channels (channel_id, data, replica, updated_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (channel_id) DO UPDATE SET data = excluded.data, replica = excluded.replica,
           updated_at = excluded.updated_at`,
        [id, JSON.stringify(next), replicaId, clock.now()],
      );
      return { channel: next, status: 'updated' as const };
    });
  return {
    async get(id) {
      const r = await pool.query<{ data: string }>({
        name: 'x402_channel_get',
        text: 'SELECT data FROM x402_channels WHERE channel_id = $1',
        values: [id.toLowerCase()],
      });
      return r.rows[0] ? parse(r.rows[0].data) : undefined;
    },
    async list() {
      const r = await pool.query<{ data: string }>('SELECT data FROM x402_channels');
      return r.rows.map((row) => parse(row.data));
    },
    updateChannel: (id, fn) => update(id.toLowerCase(), fn),
    async recover(atStart) {
      // The replicas whose reservations may be cleared: this one at start, and every one whose lease ran out.
      const dead = await pool.query<{ id: string }>('SELECT id FROM replicas WHERE lease_expires_at <= $1', [
        clock.now(),
      ]);
      const owners = [...dead.rows.map((r) => r.id), ...(atStart ? [replicaId] : [])];
      if (owners.length === 0) return 0;
      const rows = await pool.query<{ channel_id: string; data: string }>(
        'SELECT channel_id, data FROM x402_channels WHERE replica = ANY($1)',
        [owners],
      );
      let n = 0;
      for (const row of rows.rows) {
        if (!parse(row.data).pendingRequest) continue;
        const r = await update(
          row.channel_id,
          (cur) => (cur?.pendingRequest ? { ...cur, pendingRequest: undefined } : cur),
          owners,
        );
        if (r.status === 'updated') n++;
      }
      return n;
    },
  };
}
