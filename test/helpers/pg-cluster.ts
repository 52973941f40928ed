import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './ports.js';

// A PostgreSQL cluster of the caller's own, from Debian's `postgresql` package (scripts/ensure-postgres.sh
// installs it): the global set-up starts one when no server answers, and the fault tests start one they can
// restart and kill without disturbing anyone else's databases.

export async function answers(url: string): Promise<boolean> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await c.connect();
    await c.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await c.end().catch(() => {});
  }
}

function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  for (const v of versions) if (existsSync(join(root, v, 'bin', 'initdb'))) return join(root, v, 'bin');
  throw new Error(
    'no PostgreSQL binaries (initdb) to start a cluster with: run scripts/ensure-postgres.sh (Debian postgresql)',
  );
}

/** initdb refuses to run as root: run the cluster as the `postgres` user the Debian package creates. */
function asPostgres(cmd: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
}

export interface Cluster {
  /** The `postgres` database as the superuser. */
  url: string;
  port: number;
  /** pg_ctl restart -m fast: sessions are terminated, the server comes back. Waits until it answers. */
  restartFast(): Promise<void>;
  /** pg_ctl stop -m fast: sessions are terminated and the server stays down until `start`. */
  stop(): void;
  /** kill -9 of the postmaster and every backend: shared memory (unflushed WAL) is lost. */
  kill9(): void;
  /** Starts it again after a kill; waits until it answers. */
  start(): Promise<void>;
  /** Stops it and removes its files. */
  destroy(): Promise<void>;
}

export async function startCluster(opts: { settings?: Record<string, string> } = {}): Promise<Cluster> {
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-pg-'));
  chmodSync(dir, 0o777);
  const data = join(dir, 'data');
  const port = await freePort();
  const [initCmd, initArgs] = asPostgres(join(bin, 'initdb'), [
    ...['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8'],
  ]);
  execFileSync(initCmd, initArgs, { stdio: 'ignore' });
  const settings = { listen_addresses: '127.0.0.1', max_connections: '300', ...opts.settings };
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const pgCtl = (args: string[]) => {
    const [cmd, a] = asPostgres(join(bin, 'pg_ctl'), args);
    execFileSync(cmd, a, { stdio: 'ignore' });
  };
  const options = [
    `-p ${port}`,
    `-k ${dir}`,
    ...Object.entries(settings).map(([k, v]) => `-c ${k}=${v}`),
  ].join(' ');
  const waitUp = async () => {
    const deadline = Date.now() + 30_000;
    while (!(await answers(url))) {
      if (Date.now() > deadline) throw new Error('the test PostgreSQL did not answer');
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const start = async () => {
    // After a kill the postmaster takes a moment to go (a zombie until it is reaped): PostgreSQL refuses to start
    // while the pid in its lock file exists.
    const lock = join(data, 'postmaster.pid');
    const pid = existsSync(lock) ? Number(readFileSync(lock, 'utf8').split('\n')[0]) : 0;
    for (let i = 0; pid > 0 && alive(pid) && i < 200; i++) await new Promise((r) => setTimeout(r, 50));
    // Detached from pg_ctl (-l: its log), so the server outlives the command that started it.
    const [cmd, a] = asPostgres(join(bin, 'pg_ctl'), [
      ...['start', '-D', data, '-o', options, '-l', join(dir, 'server.log'), '-W'],
    ]);
    await new Promise<void>((resolve, reject) => {
      const p = spawn(cmd, a, { stdio: 'ignore' });
      p.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`pg_ctl start exited ${code}`))));
    });
    await waitUp();
  };
  await start();
  return {
    url,
    port,
    async restartFast() {
      pgCtl(['restart', '-D', data, '-m', 'fast', '-o', options, '-l', join(dir, 'server.log'), '-W']);
      await waitUp();
    },
    stop() {
      pgCtl(['stop', '-D', data, '-m', 'fast', '-w']);
    },
    kill9() {
      const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      // The postmaster and its children at once, as a crash would take them.
      const children = execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
        .split('\n')
        .filter(Boolean)
        .map(Number);
      for (const p of [pid, ...children]) {
        try {
          process.kill(p, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    },
    start,
    async destroy() {
      try {
        pgCtl(['stop', '-D', data, '-m', 'immediate', '-w']);
      } catch {
        // not running
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
