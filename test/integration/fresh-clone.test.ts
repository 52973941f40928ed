import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readKeyFile } from '../helpers/cli.js';
import { freePort } from '../helpers/ports.js';
import { html, startSite, type TestSite } from '../helpers/site.js';

// A fresh clone of this repository, installed and run with the commands the Dockerfile runs and the README gives
// (Docker itself cannot run here): `npm ci`, `npm start` (which builds dist/ on a first start with the command of
// `npm run build`, and must hand SIGTERM to the gateway), `npm ci --omit=dev` (the image's dependencies: no dev
// dependency left; it needs no build step of ours, test/contract/deploy-files.test.ts: no install script), then
// `node bin/tollgate.js serve` from it, each with a paid call. It clones the committed HEAD, so it checks what a
// new operator gets. Slow (better-sqlite3 compiles where no prebuilt binary can be downloaded, and tsc builds):
// the npm commands run niced.

const ROOT = join(import.meta.dirname, '..', '..');
const work = mkdtempSync(join(tmpdir(), 'tollgate-clone-'));
const clone = join(work, 'tollgate');
const dataDir = join(work, 'data');
let site: TestSite;

const ENV = {
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  npm_config_cache: process.env.npm_config_cache ?? join(process.env.HOME ?? tmpdir(), '.npm'),
  npm_config_update_notifier: 'false',
  npm_config_fund: 'false',
  npm_config_audit: 'false',
  TOLLGATE_DATA_DIR: dataDir,
  TOLLGATE_FETCH_ALLOW: '127.0.0.1',
  TOLLGATE_OPERATOR_CREDIT_USD: '1',
  TOLLGATE_LOG_LEVEL: 'info',
};

function sh(cmd: string, args: string[]): { stdout: string; stderr: string } {
  const r = spawnSync('nice', ['-n', '10', cmd, ...args], {
    cwd: clone,
    env: ENV,
    encoding: 'utf8',
    timeout: 15 * 60_000,
  });
  if (r.status !== 0)
    throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
  return { stdout: r.stdout, stderr: r.stderr };
}

interface Running {
  proc: ChildProcess;
  port: number;
  lines: string[];
  stderr: () => string;
  exited: Promise<number | null>;
}

/** Starts `cmd` in the clone and resolves once the gateway logged that it listens. */
async function started(cmd: string, args: string[]): Promise<Running> {
  const port = await freePort();
  const proc = spawn(cmd, args, {
    cwd: clone,
    env: { ...ENV, TOLLGATE_PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  proc.stderr?.on('data', (d) => {
    stderr += String(d);
  });
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  const lines: string[] = [];
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line: ${stderr}`)), 5 * 60_000);
    createInterface({ input: proc.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      lines.push(line);
      if (line.includes('"tollgate listening on')) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${cmd} exited ${code}: ${stderr}`));
    });
  });
  return { proc, port, lines, stderr: () => stderr, exited };
}

async function paidCall(port: number, key: string) {
  const res = await request(`http://127.0.0.1:${port}/api/run/scraperC/markdown`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url: `${site.url}/`, browser: false }),
  });
  return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
}

async function refused(port: number): Promise<boolean> {
  try {
    await request(`http://127.0.0.1:${port}/healthz`, { headersTimeout: 2000 });
    return false;
  } catch {
    return true;
  }
}

beforeAll(async () => {
  site = await startSite({
    '/': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(html('<h1>Fresh</h1><p>A page to pay for.</p>'));
    },
  });
  const r = spawnSync('git', ['clone', '--quiet', '--no-hardlinks', ROOT, clone], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git clone: ${r.stderr}`);
});
afterAll(async () => {
  await site?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('a fresh clone', () => {
  it(
    '[deploy:fresh-clone] [deploy:npm-start-sigterm] npm ci && npm start builds, serves a paid call and stops on SIGTERM; with npm ci --omit=dev, node bin/tollgate.js serve does too',
    async () => {
      expect(existsSync(join(clone, 'dist')), 'nothing built in the repository').toBe(false);
      sh('npm', ['ci']);

      // The README's `npm install && npm start`: the first start builds dist/, then the gateway itself runs.
      const dev = await started('npm', ['start']);
      expect(dev.stderr()).toContain('building dist/ (first start)');
      // One log format: every line the gateway wrote is JSON (npm's own "> tollgate start" banner aside).
      const own = dev.lines.filter((l) => l.trim() !== '' && !l.startsWith('>'));
      for (const l of own) expect(() => JSON.parse(l), l).not.toThrow();
      const keyFile = join(dataDir, 'operator-key.txt');
      expect(statSync(keyFile).mode & 0o777).toBe(0o600);
      const key = readKeyFile(keyFile);
      expect(dev.lines.join('\n')).not.toContain(key);
      expect(dev.lines.join('\n')).toContain(keyFile);
      const first = await paidCall(dev.port, key);
      expect(first.status, JSON.stringify(first.body)).toBe(200);
      expect(first.body.charged_cents).toBe(1);
      // A supervisor stopping `npm start` stops the gateway: npm hands SIGTERM to it (the script execs node).
      dev.proc.kill('SIGTERM');
      await dev.exited;
      expect(await refused(dev.port), 'the gateway stopped with npm').toBe(true);
      expect(dev.lines.join('\n')).toContain('shutting down');

      // The Dockerfile's image: the production dependencies of `npm ci --omit=dev` (its deps stage) beside the
      // build (npm ci replaces node_modules and leaves dist/). TypeScript and @types/node stay: viem and stripe
      // declare them as peer dependencies.
      sh('npm', ['ci', '--omit=dev']);
      for (const dev of ['vitest', 'tsx', '@biomejs/biome', 'solc', 'openai']) {
        expect(existsSync(join(clone, 'node_modules', dev)), `${dev} is a dev dependency`).toBe(false);
      }

      const credited = spawnSync('node', ['bin/tollgate.js', 'credit', 'operator', '1', '--json'], {
        cwd: clone,
        env: ENV,
        encoding: 'utf8',
      });
      expect(credited.status, credited.stderr).toBe(0);
      expect(JSON.parse(credited.stdout)).toMatchObject({
        account_id: 'acct_operator',
        balance_usd: '$1.99',
      });

      const slim = await started('node', ['bin/tollgate.js', 'serve']);
      const second = await paidCall(slim.port, key);
      expect(second.status, JSON.stringify(second.body)).toBe(200);
      expect(second.body.charged_cents).toBe(1);
      slim.proc.kill('SIGTERM');
      expect(await slim.exited).toBe(0);
    },
    20 * 60_000,
  );
});
