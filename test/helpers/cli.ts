import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';

// The operator CLI run as a user runs it: its own process, from a working directory of the test's choosing.
// Never the repository root: the CLI reads `.env` of its working directory, and a developer's own .env there
// must not leak into the tests.

const ROOT = join(import.meta.dirname, '..', '..');
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const CLI = ['--import', TSX, join(ROOT, 'src', 'cli', 'entry.ts')];

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs one command to completion; `env` is the whole environment besides PATH. */
export function runCli(args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv }): CliRun {
  const r = spawnSync(process.execPath, [...CLI, ...args], {
    cwd: opts.cwd,
    env: { PATH: process.env.PATH, TOLLGATE_LOG_LEVEL: 'silent', ...opts.env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** As runCli, without blocking this process: for a CLI that talks to a gateway running in the test's own process. */
export function runCliAsync(args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<CliRun> {
  const proc = spawn(process.execPath, [...CLI, ...args], {
    cwd: opts.cwd,
    env: { PATH: process.env.PATH, TOLLGATE_LOG_LEVEL: 'silent', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 60_000,
  });
  let stdout = '';
  let stderr = '';
  proc.stdout?.on('data', (d) => {
    stdout += String(d);
  });
  proc.stderr?.on('data', (d) => {
    stderr += String(d);
  });
  return new Promise((resolve, reject) => {
    proc.once('error', reject);
    proc.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * stderr without the one line oidc-provider prints at import on a Node release it does not list as supported
 * (Node 20: it works there, and the tests run there).
 */
export function ownStderr(stderr: string): string {
  return stderr
    .split('\n')
    .filter((l) => !l.startsWith('oidc-provider WARNING: Unsupported runtime'))
    .join('\n');
}

export interface ServeProcess {
  proc: ChildProcess;
  /**
   * The JSON object `serve --json` printed (url, data_dir, operator, …); a first start's operator key read from the
   * file it names (the key is never printed when no terminal is attached).
   */
  started: {
    url: string;
    data_dir: string;
    operator: { account_id: string; api_key_file: string | null; api_key: string } | null;
  };
  /** Every line written on stdout so far (log lines and the result object). */
  stdout: string[];
  stop(): Promise<void>;
}

/** The key in a first start's operator key file (its last line; the others are comments). */
export function readKeyFile(path: string): string {
  return readFileSync(path, 'utf8').trim().split('\n').at(-1) as string;
}

/** `tollgate serve --json` in the background; resolves once it listens. */
export async function serveCli(opts: {
  cwd: string;
  env?: NodeJS.ProcessEnv;
  args?: string[];
}): Promise<ServeProcess> {
  const proc = spawn(process.execPath, [...CLI, 'serve', '--json', ...(opts.args ?? [])], {
    cwd: opts.cwd,
    env: { PATH: process.env.PATH, TOLLGATE_LOG_LEVEL: 'silent', TOLLGATE_PORT: '0', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  proc.stderr?.on('data', (d) => {
    stderr += String(d);
  });
  const lines = createInterface({ input: proc.stdout as NodeJS.ReadableStream });
  const stdout: string[] = [];
  lines.on('line', (line) => stdout.push(line));
  const started = await new Promise<ServeProcess['started']>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start: ${stderr}`)), 30_000);
    lines.on('line', (line) => {
      const msg = JSON.parse(line) as ServeProcess['started'] & { level?: number };
      // The result object, not a log line (those carry a level).
      if (msg.url && msg.level === undefined) {
        clearTimeout(timer);
        if (msg.operator?.api_key_file) msg.operator.api_key = readKeyFile(msg.operator.api_key_file);
        resolve(msg);
      }
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited with ${code}: ${stderr}`));
    });
  });
  return {
    proc,
    started,
    stdout,
    stop: async () => {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await exited;
    },
  };
}
