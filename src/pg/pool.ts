import pg from 'pg';

// PostgreSQL through node-postgres (`pg`): measured against `postgres` (porsager) on this repository's machine,
// a prepared one-row query at 32 in flight over a pool of 10 ran 12.2k/s against 10.0k/s (docs/decisions.md
// "PostgreSQL client").

export type PgPool = pg.Pool;
export type PgClient = pg.PoolClient;

// BIGINT (int8, OID 20) comes back as a JS number: every amount is in micros and stays far below 2^53
// (90 billion USD); ids are text. Parsed once, for every pool.
pg.types.setTypeParser(20, (v) => {
  const n = Number(v);
  if (!Number.isSafeInteger(n)) throw new Error(`int8 ${v} beyond 2^53`);
  return n;
});

/** A pool for the gateway's database. `max`: connections this process may hold. */
export function openPgPool(url: string, opts: { max?: number; applicationName?: string } = {}): PgPool {
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.max ?? 10,
    application_name: opts.applicationName ?? 'tollgate',
    // A connection that cannot be had in 10 s is an outage, not a queue: fail the call (nothing charged).
    connectionTimeoutMillis: 10_000,
    idleTimeoutMillis: 30_000,
  });
  // An idle client whose server went away emits on the pool; without a listener that would crash the process.
  pool.on('error', () => {});
  // A checked-out client has no pool listener (pg-pool removes it on checkout), and pg emits 'error' on the client
  // when its connection dies, whether or not a query is running: a restart or a kill of the server mid-transaction
  // would crash the process. The query in flight fails with the error anyway, and a client that is no longer
  // queryable is dropped from the pool when released.
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });
  return pool;
}

/** Runs `fn` in one transaction on one connection (READ COMMITTED unless `isolation` says otherwise). */
export async function inTransaction<T>(
  pool: PgPool,
  fn: (c: PgClient) => Promise<T>,
  isolation?: 'serializable' | 'repeatable read',
): Promise<T> {
  const c = await pool.connect();
  try {
    await c.query(isolation ? `BEGIN ISOLATION LEVEL ${isolation.toUpperCase()}` : 'BEGIN');
    const out = await fn(c);
    await c.query('COMMIT');
    return out;
  } catch (err) {
    await c.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    c.release();
  }
}
