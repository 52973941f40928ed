import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

// A database of its own for each suite (created from template0 on the server the global set-up found), so
// suites run in parallel without seeing each other's rows. Dropped by `drop()`.

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

export async function createTestDatabase(prefix = 'tg'): Promise<TestDatabase> {
  const admin = inject('pgAdminUrl');
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  try {
    await c.query(`CREATE DATABASE ${name} TEMPLATE template0`);
  } finally {
    await c.end();
  }
  return {
    url: withDatabase(admin, name),
    async drop() {
      const d = new pg.Client({ connectionString: admin });
      await d.connect();
      try {
        await d.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await d.end();
      }
    },
  };
}

/**
 * A pool for a test's own reads. Its `error` is listened to: `pool.end()` resolves before its connections have
 * closed, and a database dropped (or a server stopped) meanwhile ends them with an error that pg-pool re-emits on
 * the pool, which would otherwise be an uncaught exception in the test run.
 */
export function testPool(url: string, max = 2): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max });
  pool.on('error', () => {});
  return pool;
}
