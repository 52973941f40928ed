import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { createApiKey } from '../auth/api-keys.js';
import { envSchema } from '../src/config/index.js';
import { systemClock } from '../src/lib/clock.js';
import { openLedger } from '../test/helpers/sqlite-ledger.js';

// What the benches share: `tollgate serve` as its own compiled process on a fresh data dir with a funded
// account (as production runs it), and a fake page to fetch.

const ROOT = join(import.meta.dirname, '..');
const PAGE = `<!doctype html><html><head><title>bench</title></head><body>${'<p>payload</p>'.repeat(50)}</body></html>`;

export interface GatewayProcess {
  url: string;
  key: string;
  accountId: string;
  dataDir: string;
  proc: ChildProcess;
  /** CPU time (user + system) the gateway process has used so far, ms; undefined where /proc is absent. */
  cpuMs(): number | undefined;
  /** What the gateway wrote on stderr so far (when started with `captureStderr`; else it goes to ours). */
  stderr(): string;
  stop(): Promise<void>;
}

/**
 * Node's flags for the gateway, as `npm start`, the Dockerfile and deploy/tollgate.service pass them (a contract
 * test keeps the four alike): V8's young generation at 2 × 4 MiB instead of 2 × 16 MiB. Under 1,000 calls in flight
 * that is ~40 MiB less peak RSS at the same calls/s; and two V8 worker threads instead of four (idle RSS steady at
 * ~81 MiB instead of 81–87; docs/decisions.md "Node's flags").
 */
export const SERVE_NODE_FLAGS = ['--max-semi-space-size=4', '--v8-pool-size=2'];

/**
 * Starts `tollgate serve` in a child process on a fresh data dir with a funded account. `root`: another checkout
 * whose build to run (two builds side by side in one run, an A/B of a change on a machine whose speed drifts).
 */
export async function startGatewayProcess(
  env: Record<string, string> = {},
  nodeArgs: string[] = [],
  opts: { captureStderr?: boolean; root?: string } = {},
): Promise<GatewayProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-bench-'));
  const { ledger, db } = openLedger(dataDir, { clock: systemClock, idempotencyTtlMs: 86_400_000 });
  const acct = await ledger.createAccount({ name: 'bench' });
  await ledger.credit(acct.id, 100_000_000_000, 'bench');
  const { key } = await createApiKey(ledger, acct.id);
  await ledger.close();
  db.close();
  const proc = spawn(
    process.execPath,
    [...SERVE_NODE_FLAGS, ...nodeArgs, 'bin/tollgate.js', 'serve', '--json'],
    {
      cwd: opts.root ?? ROOT,
      env: {
        PATH: process.env.PATH,
        TOLLGATE_DATA_DIR: dataDir,
        TOLLGATE_PORT: '0',
        TOLLGATE_FETCH_ALLOW: '127.0.0.1',
        TOLLGATE_LOG_LEVEL: 'info',
        // One account drives the whole load; the per-account limit would measure itself.
        TOLLGATE_RATE_LIMIT_PER_SECOND: '0',
        ...env,
      },
      stdio: ['ignore', 'pipe', opts.captureStderr ? 'pipe' : 'inherit'],
    },
  );
  let stderr = '';
  proc.stderr?.on('data', (d) => {
    stderr += String(d);
  });
  const url = await addressOf(proc, 'gateway');
  return {
    url,
    key,
    accountId: acct.id,
    dataDir,
    proc,
    cpuMs: () => procCpuMs(proc.pid),
    stderr: () => stderr,
    async stop() {
      proc.kill('SIGTERM');
      await new Promise((r) => proc.once('exit', r));
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(gcFile(proc.pid), { force: true });
    },
  };
}

export async function startFakePage(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(PAGE);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/page`;
  return {
    url,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/**
 * Node's flags for the bare proxy: the gateway's own V8 settings (SERVE_NODE_FLAGS, and the old generation's growth
 * that the gateway sets at start from TOLLGATE_HEAP_GROWTH_PERCENT, its default here), so that its figures — RSS
 * above all — are the floor of the same Node, not of a differently tuned one.
 */
export const BARE_NODE_FLAGS = [
  ...SERVE_NODE_FLAGS,
  `--heap-growing-percent=${envSchema.shape.TOLLGATE_HEAP_GROWTH_PERCENT.parse(undefined)}`,
];

/**
 * The URL a `tollgate serve --json` process prints once it listens. The request log that follows is drained
 * unread: parsing it would load the load generator's own process, which shares the machine.
 */
export function addressOf(proc: ChildProcess, what: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: proc.stdout as NodeJS.ReadableStream });
    lines.on('line', (line) => {
      try {
        const msg = JSON.parse(line) as { url?: string };
        if (!msg.url) return;
        lines.close();
        proc.stdout?.resume();
        resolve(msg.url);
      } catch {
        // log lines before the address
      }
    });
    proc.once('exit', (c) => reject(new Error(`${what} exited ${c}`)));
  });
}

/** A server of the bench run by plain `node` with BARE_NODE_FLAGS, as its own process. */
export interface ScriptServer {
  url: string;
  /** The API key it takes, when it takes one (the paid-call floor). */
  key: string;
  pid: number | undefined;
  cpuMs(): number | undefined;
  stop(): Promise<void>;
}

/** The bare Node pass-through proxy (bench/bare-proxy.mjs) as its own process: the baseline of the shim. */
export function startBareProxy(
  opts: { connections?: number; nodeArgs?: string[] } = {},
): Promise<ScriptServer> {
  return startScript(
    'bare-proxy.mjs',
    opts.connections ? { BARE_PROXY_CONNECTIONS: String(opts.connections) } : {},
    opts.nodeArgs,
  );
}

/**
 * The paid-call floor (bench/paid-floor.mjs): the least a paid call must do, durable commit and receipt included.
 * `parts` leaves some out (PAID_FLOOR_SYNC, PAID_FLOOR_RECEIPT, PAID_FLOOR_LEDGER = '0') to see what each costs.
 */
export function startPaidFloor(
  parts: Record<string, string> = {},
  nodeArgs: string[] = [],
): Promise<ScriptServer> {
  return startScript('paid-floor.mjs', parts, nodeArgs);
}

async function startScript(
  file: string,
  env: Record<string, string>,
  nodeArgs: string[] = [],
): Promise<ScriptServer> {
  const proc = spawn(process.execPath, [...BARE_NODE_FLAGS, ...nodeArgs, join(ROOT, 'bench', file)], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const first = await new Promise<{ url: string; key?: string }>((resolve, reject) => {
    createInterface({ input: proc.stdout as NodeJS.ReadableStream }).once('line', (line) =>
      resolve(JSON.parse(line) as { url: string; key?: string }),
    );
    proc.once('exit', (c) => reject(new Error(`bench/${file} exited ${c}`)));
  });
  return {
    url: first.url,
    key: first.key ?? '',
    pid: proc.pid,
    cpuMs: () => procCpuMs(proc.pid),
    async stop() {
      proc.kill('SIGTERM');
      await new Promise((r) => proc.once('exit', r));
      rmSync(gcFile(proc.pid), { force: true });
    },
  };
}

/**
 * Node's arguments that preload bench/gc-stats.mjs into a server: its garbage collections, counted, for `gcStats`.
 * A server started without them must not be asked (SIGUSR2 would end it).
 */
export const GC_STATS_ARGS = ['--import', pathToFileURL(join(ROOT, 'bench', 'gc-stats.mjs')).href];

export interface GcStats {
  /** Scavenges (young generation), and the ms the main thread stood in them. */
  minor: number;
  minorMs: number;
  /** Every other collection (mark-compact, incremental marking steps, weak callbacks), likewise. */
  major: number;
  majorMs: number;
}

const gcFile = (pid: number | undefined) => join(tmpdir(), `tollgate-bench-gc-${pid}.json`);

/** The collections so far of a server started with GC_STATS_ARGS (it writes them when signalled). */
export async function gcStats(pid: number): Promise<GcStats> {
  const file = gcFile(pid);
  const seqOf = () => {
    try {
      return JSON.parse(readFileSync(file, 'utf8')) as GcStats & { seq: number };
    } catch {
      return undefined; // not written yet, or caught half-written
    }
  };
  const before = seqOf()?.seq ?? 0;
  process.kill(pid, 'SIGUSR2');
  for (let waited = 0; waited < 5000; waited += 10) {
    await new Promise((r) => setTimeout(r, 10));
    const s = seqOf();
    if (s && s.seq > before) return s;
  }
  throw new Error(`process ${pid} wrote no GC counts (started without GC_STATS_ARGS?)`);
}

/** CPU time (user + system) a process has used so far, ms; undefined where /proc is absent. */
export function procCpuMs(pid: number | undefined): number | undefined {
  return statCpuMs(`/proc/${pid}/stat`);
}

/** The same for a process's main thread alone (its event loop), without libuv's pool, V8's or other threads. */
export function mainThreadCpuMs(pid: number | undefined): number | undefined {
  return statCpuMs(`/proc/${pid}/task/${pid}/stat`);
}

function statCpuMs(path: string): number | undefined {
  try {
    // Fields 14 and 15 of a stat file (after the command name): utime and stime in clock ticks (100/s).
    const f = readFileSync(path, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return undefined;
  }
}
