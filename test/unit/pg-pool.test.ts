import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTransaction, openPgPool, type PgPool } from '../../src/pg/pool.js';
import { createTestDatabase, type TestDatabase } from '../helpers/pg.js';

// A connection the gateway has checked out when PostgreSQL restarts or is killed. pg emits 'error' on such a
// client whether or not a query runs, and pg-pool listens only while the client is idle: without a listener of
// ours the process crashed (an outage test's replica lost its worker under a `pg_ctl restart`). Here the
// server ends the backend of a checked-out client, idle and in the middle of a transaction: the caller gets the
// error, nothing is thrown at the process, and the pool goes on with a fresh connection.

let db: TestDatabase;
let pool: PgPool;
let admin: pg.Client;
const uncaught: unknown[] = [];
const record = (e: unknown) => uncaught.push(e);

beforeAll(async () => {
  db = await createTestDatabase('tg_pool');
  pool = openPgPool(db.url, { max: 2 });
  admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  process.on('uncaughtException', record);
});
afterAll(async () => {
  process.off('uncaughtException', record);
  await admin?.end();
  await pool?.end();
  await db?.drop();
});

const terminate = (pid: number) => admin.query('SELECT pg_terminate_backend($1)', [pid]);
const settle = () => new Promise((r) => setTimeout(r, 200));

describe('openPgPool: a checked-out connection whose server goes away', () => {
  it('idle between statements: no crash; the next statement fails; the pool goes on', async () => {
    const c = await pool.connect();
    const pid = (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid as number;
    await terminate(pid);
    await settle();
    await expect(c.query('SELECT 1')).rejects.toThrow();
    c.release();
    expect(uncaught).toEqual([]);
    expect((await pool.query<{ n: number }>('SELECT 1 AS n')).rows[0]?.n).toBe(1);
  });

  it('mid-transaction: the transaction fails with the error, no crash, and the pool goes on', async () => {
    const out = inTransaction(pool, async (c) => {
      const pid = (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid as number;
      await terminate(pid);
      await settle();
      return c.query('SELECT 1');
    });
    await expect(out).rejects.toThrow();
    expect(uncaught).toEqual([]);
    expect((await pool.query<{ n: number }>('SELECT 2 AS n')).rows[0]?.n).toBe(2);
  });
});
