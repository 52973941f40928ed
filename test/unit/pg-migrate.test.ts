import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/db/migrate.js';
import { MIGRATIONS, type Migration } from '../../src/db/migrations/index.js';
import { openSqlite } from '../../src/lib/sqlite.js';
import { openPgPool, type PgPool } from '../../src/pg/pool.js';
import { createTestDatabase, type TestDatabase } from '../helpers/pg.js';

// The one migration runner (src/db/migrate.ts): each migration exactly once, however many processes start at once.

const ROOT = resolve(import.meta.dirname, '..', '..');
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

const ONCE: Migration[] = [
  { version: 9001, name: 'a', up: 'CREATE TABLE t_once (id int PRIMARY KEY)' },
  // Not idempotent on purpose: a second run would fail on the duplicate key.
  { version: 9002, name: 'b', up: 'INSERT INTO t_once VALUES (1)' },
];

describe('[scale:migrations] migrations', () => {
  it('four PostgreSQL replicas starting at once apply each migration exactly once', async () => {
    const results = await Promise.all(pools.map((p) => migrate(p, { migrations: ONCE })));
    expect(results.flatMap((r) => r.applied.map((a) => a.version)).sort()).toEqual([9001, 9002]);
    const rows = await pools[0]!.query('SELECT count(*)::int AS n FROM t_once');
    expect(rows.rows[0].n).toBe(1);
    // And again: nothing left to apply.
    expect((await migrate(pools[1]!, { migrations: ONCE })).applied).toEqual([]);
  });

  it('SQLite processes opening one file at once apply each migration exactly once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tg-migrate-'));
    const path = join(dir, 'tollgate.db');
    const script = `import { migrate } from './src/db/migrate.ts';
      import { sqliteStoreDb } from './src/db/open.ts';
      import { openSqlite } from './src/lib/sqlite.ts';
      const r = await migrate(sqliteStoreDb(openSqlite(${JSON.stringify(path)})), { migrations: ${JSON.stringify(ONCE)} });
      process.stdout.write(JSON.stringify(r.applied.map((a) => a.version)));`;
    const run = () =>
      new Promise<number[]>((done, fail) => {
        const p = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
          cwd: ROOT,
        });
        let out = '';
        let err = '';
        p.stdout.on('data', (d) => {
          out += d;
        });
        p.stderr.on('data', (d) => {
          err += d;
        });
        p.on('error', fail);
        p.on('exit', (code) =>
          code === 0 ? done(JSON.parse(out)) : fail(new Error(`exit ${code}: ${err}`)),
        );
      });
    try {
      const applied = await Promise.all(Array.from({ length: 3 }, run));
      expect(applied.flat().sort()).toEqual([9001, 9002]);
      const db = openSqlite(path);
      expect(db.prepare('SELECT count(*) AS n FROM t_once').get()).toEqual({ n: 1 });
      db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a failing migration is rolled back whole and named in the error', async () => {
    const bad = [{ version: 9100, name: 'broken', up: 'CREATE TABLE t_half (id int); SELECT nope' }];
    await expect(migrate(pools[0]!, { migrations: bad })).rejects.toThrow(/9100 \(broken\)/);
    const t = await pools[0]!.query("SELECT to_regclass('t_half') AS t");
    expect(t.rows[0].t).toBeNull();
  });

  it('the gateway schema migrates on an empty database', async () => {
    const r = await migrate(pools[2]!);
    expect(r.current).toBe(Math.max(0, ...MIGRATIONS.map((m) => m.version)));
    expect(r.applied.map((m) => m.version)).toEqual(MIGRATIONS.map((m) => m.version).sort((a, b) => a - b));
  });
});
