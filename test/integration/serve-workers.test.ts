import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, serveCli } from '../helpers/cli.js';
import { createTestDatabase, type TestDatabase, testPool } from '../helpers/pg.js';
import { html, startSite, type TestSite } from '../helpers/site.js';

// [scale:workers] `tollgate serve --workers N`: N worker processes behind one port on PostgreSQL, each a
// replica with its own lease; one that dies is replaced; SIGTERM stops them all. With SQLite, refused.

let db: TestDatabase;
let site: TestSite;
let work: string;
let sql: pg.Pool;

beforeAll(async () => {
  db = await createTestDatabase('tg_workers');
  sql = testPool(db.url);
  site = await startSite({
    '/page': (_req, res) => void res.writeHead(200, { 'content-type': 'text/html' }).end(html('<p>hi</p>')),
  });
  work = mkdtempSync(join(tmpdir(), 'tollgate-workers-'));
});
afterAll(async () => {
  await sql?.end();
  await site?.close();
  await db?.drop();
  rmSync(work, { recursive: true, force: true });
});

async function pids(): Promise<string[]> {
  const r = await sql.query('SELECT id FROM replicas ORDER BY id');
  return r.rows.map((x) => x.id as string);
}

describe('[scale:workers] serve --workers', () => {
  it('with SQLite, more than one worker is refused in one line that names TOLLGATE_DATABASE_URL', () => {
    const r = runCli(['serve', '--workers', '2', '--json'], {
      cwd: work,
      env: { TOLLGATE_DATA_DIR: join(work, 'sqlite'), TOLLGATE_PORT: '0' },
    });
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout.trim());
    expect(out.error.code).toBe('workers_need_postgres');
    expect(out.error.message).toContain('TOLLGATE_DATABASE_URL');
    const bad = runCli(['serve', '--workers', 'many', '--json'], { cwd: work, env: { TOLLGATE_PORT: '0' } });
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.stdout.trim()).error.message).toContain('--workers');
  });

  it('[ops:json-logs] two workers serve one port as two replicas; a killed worker is replaced; SIGTERM stops all', async () => {
    const env = {
      TOLLGATE_DATABASE_URL: db.url,
      TOLLGATE_DATA_DIR: join(work, 'pg'),
      TOLLGATE_FETCH_ALLOW: '127.0.0.1',
      TOLLGATE_RATE_LIMIT_PER_SECOND: '0',
      TOLLGATE_REPLICA_LEASE_SECONDS: '5',
      TOLLGATE_LOG_LEVEL: 'info',
    };
    let killed = '';
    const gw = await serveCli({ cwd: work, env, args: ['--workers', '2'] });
    try {
      // The first start's operator account: created once, by one worker, and printed once.
      const key = gw.started.operator?.api_key as string;
      expect(key).toMatch(/^tg_sk_/);
      expect(
        runCli(['credit', gw.started.operator?.account_id as string, '1'], { cwd: work, env }).code,
      ).toBe(0);
      expect(await pids()).toHaveLength(2);

      const call = () =>
        fetch(`${gw.started.url}/api/run/scraperC/scrape`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ url: `${site.url}/page`, browser: false }),
        });
      const replies = await Promise.all(Array.from({ length: 40 }, call));
      expect(replies.map((r) => r.status)).toEqual(Array(40).fill(200));
      const byReplica = await sql.query('SELECT DISTINCT replica_id FROM calls');
      // Connections are handed to the workers in turn: both took holds.
      expect(byReplica.rows.length).toBe(2);

      // A worker killed outright is replaced by a new replica; the gateway keeps answering.
      const before = await pids();
      const victim = before[0] as string;
      killed = victim;
      const victimPid = Number(/_(\d+)_[0-9a-f]+$/.exec(victim)?.[1]);
      process.kill(victimPid, 'SIGKILL');
      let now = await pids();
      const deadline = Date.now() + 30_000;
      while (now.filter((id) => !before.includes(id)).length === 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 200));
        now = await pids();
      }
      expect(now.filter((id) => !before.includes(id))).toHaveLength(1);
      expect((await call()).status).toBe(200);
      // The primary said so in the log, as JSON naming itself worker 0 and the worker that exited.
      const logs = gw.stdout.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.level);
      expect(logs.find((l) => l.msg === 'a worker exited: starting another')).toMatchObject({
        worker: 0,
        exited_pid: victimPid,
        exit: 'SIGKILL',
      });
      // Each worker's own lines name it.
      const workers = new Set(logs.map((l) => l.worker));
      expect(workers.has(1) && workers.has(2), [...workers].join()).toBe(true);
    } finally {
      const exited = new Promise<number | null>((r) => gw.proc.once('exit', (code) => r(code)));
      gw.proc.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
    // Every worker left cleanly: the replicas still listed are only the one killed (its lease runs out).
    const left = await pids();
    expect(left.length, `${left} (killed: ${killed})`).toBeLessThanOrEqual(1);
  }, 90_000);
});
