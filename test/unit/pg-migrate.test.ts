import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/pg/migrate.js';
import { MIGRATIONS } from '../../src/pg/migrations/index.js';
import { openPgPool, type PgPool } from '../../src/pg/pool.js';
import { createTestDatabase, type TestDatabase } from '../helpers/pg.js';

let db: TestDatabase;
let pools: PgPool[];

beforeAll(async () => {
  db = await createTestDatabase('tg_migrate');
  pools = Array.from({ length: 4 }, () => openPgPool(db.url, { max: 2 }));
});
afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()));
  await db.drop();
});

describe('[scale:migrations] PostgreSQL migrations', () => {
  it('versions are unique, and each area keeps to its range', () => {
    const versions = MIGRATIONS.map((m) => m.version);
    expect(new Set(versions).size).toBe(versions.length);
    for (const v of versions) expect(v).toBeGreaterThan(0);
  });

  it('four replicas starting at once apply each migration exactly once', async () => {
    const list = [
      { version: 9001, name: 'a', sql: 'CREATE TABLE t_once (id int PRIMARY KEY)' },
      // Not idempotent on purpose: a second run would fail on the duplicate key.
      { version: 9002, name: 'b', sql: 'INSERT INTO t_once VALUES (1)' },
    ];
    const results = await Promise.all(pools.map((p) => migrate(p, list)));
    expect(results.flatMap((r) => r.applied.map((a) => a.version)).sort()).toEqual([9001, 9002]);
    const rows = await pools[0]!.query('SELECT count(*)::int AS n FROM t_once');
    expect(rows.rows[0].n).toBe(1);
    // And again: nothing left to apply.
    expect((await migrate(pools[1]!, list)).applied).toEqual([]);
  });

  it('a failing migration is rolled back whole and named in the error', async () => {
    const bad = [{ version: 9100, name: 'broken', sql: 'CREATE TABLE t_half (id int); SELECT nope' }];
    await expect(migrate(pools[0]!, bad)).rejects.toThrow(/9100 \(broken\)/);
    const t = await pools[0]!.query("SELECT to_regclass('t_half') AS t");
    expect(t.rows[0].t).toBeNull();
  });

  it('the gateway schema migrates on an empty database', async () => {
    const r = await migrate(pools[2]!);
    expect(r.current).toBe(Math.max(0, ...MIGRATIONS.map((m) => m.version)));
  });
});
