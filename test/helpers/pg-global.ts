import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { freePort } from './ports.js';

// Vitest global set-up: a PostgreSQL server the PostgreSQL suites can create databases on. The one named by
// TOLLGATE_TEST_DATABASE_URL, else the machine's own at 127.0.0.1:5432 (user postgres), else a throw-away
// cluster started here from Debian's `postgresql` package (scripts/ensure-postgres.sh installs it) and
// removed afterwards. No server and no package: the set-up fails, so those suites fail rather than skip.

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
  }
}

const DEFAULT_URL = 'postgres://postgres@127.0.0.1:5432/test';

async function answers(url: string): Promise<boolean> {
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
    'no PostgreSQL answers (TOLLGATE_TEST_DATABASE_URL or 127.0.0.1:5432) and no initdb to start one: run scripts/ensure-postgres.sh',
  );
}

/** initdb refuses to run as root: run the cluster as the `postgres` user the Debian package creates. */
function asPostgres(cmd: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const given = process.env.TOLLGATE_TEST_DATABASE_URL;
  if (given) {
    if (!(await answers(given))) throw new Error(`TOLLGATE_TEST_DATABASE_URL (${given}) does not answer`);
    project.provide('pgAdminUrl', given);
    return async () => {};
  }
  if (await answers(DEFAULT_URL)) {
    project.provide('pgAdminUrl', DEFAULT_URL);
    return async () => {};
  }
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-pg-'));
  chmodSync(dir, 0o777);
  const data = join(dir, 'data');
  const port = await freePort();
  const [initCmd, initArgs] = asPostgres(join(bin, 'initdb'), [
    '-D',
    data,
    '-U',
    'postgres',
    '--auth=trust',
    '--no-sync',
    '-E',
    'UTF8',
  ]);
  execFileSync(initCmd, initArgs, { stdio: 'ignore' });
  const [cmd, args] = asPostgres(join(bin, 'postgres'), [
    '-D',
    data,
    '-p',
    String(port),
    '-k',
    dir,
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'fsync=off',
    '-c',
    'max_connections=300',
  ]);
  const server = spawn(cmd, args, { stdio: 'ignore' });
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const deadline = Date.now() + 30_000;
  while (!(await answers(url))) {
    if (Date.now() > deadline || server.exitCode !== null)
      throw new Error('the throw-away PostgreSQL did not start');
    await new Promise((r) => setTimeout(r, 200));
  }
  project.provide('pgAdminUrl', url);
  return async () => {
    // Through pg_ctl: a signal to runuser does not reach the server it started.
    const [stopCmd, stopArgs] = asPostgres(join(bin, 'pg_ctl'), [
      'stop',
      '-D',
      data,
      '-m',
      'immediate',
      '-w',
    ]);
    execFileSync(stopCmd, stopArgs, { stdio: 'ignore' });
    if (server.exitCode === null) await new Promise((r) => server.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
  };
}
