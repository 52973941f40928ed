import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Agent, request } from 'undici';
import { freePort } from '../test/helpers/ports.js';
import { addressOf, startFakePage } from './process.js';
import { load } from './stats.js';
import type { BenchModule } from './types.js';

// Paid calls per second with one replica and with two (`serve --workers 1` and `--workers 2` on one
// PostgreSQL), against the same database server in the same run, and the embedded SQLite gateway as the
// reference. A paid call is `scraperC/scrape` of a local page (1 cent): a hold and a capture in the ledger.

const ROOT = join(import.meta.dirname, '..');
const ADMIN = process.env.TOLLGATE_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const CONCURRENCY = 64;
const CALLS = 6000;

function cli(args: string[], env: NodeJS.ProcessEnv, cwd: string) {
  const r = spawnSync(process.execPath, ['bin/tollgate.js', ...args, '--json'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, TOLLGATE_LOG_LEVEL: 'silent', TOLLGATE_DATA_DIR: cwd, ...env },
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`tollgate ${args.join(' ')}: ${r.stdout}${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').at(-1) as string);
}

async function serve(env: NodeJS.ProcessEnv, workers: number) {
  const port = await freePort();
  const proc = spawn(process.execPath, ['bin/tollgate.js', 'serve', '--json', '--workers', String(workers)], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      TOLLGATE_PORT: String(port),
      TOLLGATE_FETCH_ALLOW: '127.0.0.1',
      TOLLGATE_LOG_LEVEL: 'info',
      TOLLGATE_RATE_LIMIT_PER_SECOND: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await addressOf(proc, 'serve');
  return {
    url,
    async stop() {
      proc.kill('SIGTERM');
      await new Promise((r) => proc.once('exit', r));
    },
  };
}

async function measure(url: string, key: string, page: string, agent: Agent) {
  const body = JSON.stringify({ url: page, browser: false });
  const call = async () => {
    const res = await request(`${url}/api/run/scraperC/scrape`, {
      method: 'POST',
      dispatcher: agent,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body,
    });
    await res.body.dump();
    if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}`);
  };
  await load(500, CONCURRENCY, call);
  let best = 0;
  for (let round = 0; round < 2; round++)
    best = Math.max(best, (await load(CALLS, CONCURRENCY, call)).perSecond);
  return best;
}

const bench: BenchModule = async () => {
  const name = `tg_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name} TEMPLATE template0`);
  const u = new URL(ADMIN);
  u.pathname = `/${name}`;
  const dbUrl = u.toString();
  const page = await startFakePage();
  const agent = new Agent({ connections: CONCURRENCY * 2 });
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-bench-replicas-'));
  const rows: Array<[string, number]> = [];
  try {
    const pgEnv = { TOLLGATE_DATABASE_URL: dbUrl, TOLLGATE_DATA_DIR: dir };
    cli(['migrate'], pgEnv, dir);
    const acct = cli(['accounts', 'create', '--credit-usd', '100000'], pgEnv, dir);
    for (const workers of [1, 2]) {
      const gw = await serve(pgEnv, workers);
      try {
        rows.push([
          `PostgreSQL, ${workers === 1 ? 'one replica' : 'two replicas (`--workers 2`)'}`,
          await measure(gw.url, acct.api_key, page.url, agent),
        ]);
      } finally {
        await gw.stop();
      }
    }
    const sqliteDir = mkdtempSync(join(tmpdir(), 'tollgate-bench-sqlite-'));
    try {
      const local = cli(['accounts', 'create', '--credit-usd', '100000'], {}, sqliteDir);
      const gw = await serve({ TOLLGATE_DATA_DIR: sqliteDir }, 1);
      try {
        rows.push([
          'SQLite, one process (the embedded default)',
          await measure(gw.url, local.api_key, page.url, agent),
        ]);
      } finally {
        await gw.stop();
      }
    } finally {
      rmSync(sqliteDir, { recursive: true, force: true });
    }
  } finally {
    await agent.close();
    await page.close();
    rmSync(dir, { recursive: true, force: true });
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
  const one = rows[0]?.[1] ?? 0;
  const two = rows[1]?.[1] ?? 0;
  return {
    id: 'replicas',
    title: 'Replicas: paid calls per second on PostgreSQL, one replica against two',
    body: `A paid cheap action (\`scraperC/scrape\` of a local page, 1 cent: a hold and a capture) through
\`POST /api/run\` at ${CONCURRENCY} in flight, best of two rounds of ${CALLS} calls after 500 to warm up. The compiled
gateway runs \`serve --workers 1\` and then \`serve --workers 2\` (two replicas behind one port, each with its own
pool and lease) on the same PostgreSQL database (local server, \`synchronous_commit=on\`), and, as the
reference, the embedded SQLite gateway. The load generator, the gateway processes, PostgreSQL and the fake
page share this 2-core machine.

| gateway | paid calls/s |
|---|---|
${rows.map(([k, v]) => `| ${k} | ${Math.round(v).toLocaleString('en-US')} |`).join('\n')}

Two replicas against one: **×${(two / Math.max(one, 1)).toFixed(2)}**. With two cores shared by the load
generator, PostgreSQL and the workers, a second worker can take at most the CPU the first leaves idle; on a
machine with cores to spare the replicas scale until PostgreSQL's commits (group-committed across
connections) are the limit.`,
    targets: [
      {
        target: '#11 paid calls/s, one replica vs two on one PostgreSQL',
        measured: `${Math.round(one).toLocaleString('en-US')} vs ${Math.round(two).toLocaleString('en-US')} calls/s (×${(two / Math.max(one, 1)).toFixed(2)}); SQLite one process ${Math.round(rows[2]?.[1] ?? 0).toLocaleString('en-US')}`,
        verdict: 'reported',
      },
    ],
  };
};

export default bench;
