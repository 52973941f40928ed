import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import { deliverOperatorKey } from './first-start.js';
import { CliError, type Out, UsageError } from './output.js';
import { listening as logListening } from './start-checks.js';

// `tollgate serve --workers N`: N worker processes behind one port (node:cluster hands each new connection to
// a worker in turn). Every worker is a whole gateway on the shared PostgreSQL state; the primary holds no
// state, starts them, replaces one that dies, and stops them together. With SQLite (one writer, one process
// owning the data dir) there is one process: docs/decisions.md "serve --workers".

/** Messages from a worker to the primary. */
export type WorkerMessage =
  | { tollgate: 'listening'; url: string }
  | { tollgate: 'failed'; error: { code: string; message: string } }
  | { tollgate: 'bootstrapped'; operator: { account_id: string; api_key: string; credit: string } | null };

/** From the primary to worker 1, once every worker listens: create the operator account on a first start. */
export type PrimaryMessage = { tollgate: 'bootstrap' };

const RESTARTS_PER_MINUTE = 5;

/** How many processes `serve` runs: --workers, else every core with PostgreSQL and one with SQLite. */
export function workerCount(config: Pick<Config, 'database'>, flag: string | undefined): number {
  if (flag === undefined) return config.database ? availableParallelism() : 1;
  const n = Number(flag);
  if (!Number.isInteger(n) || n < 1 || n > 256) throw new UsageError('--workers must be an integer 1-256');
  if (n > 1 && !config.database) {
    throw new CliError(
      'workers_need_postgres',
      `--workers ${n} needs PostgreSQL (TOLLGATE_DATABASE_URL): with SQLite one process owns the data directory, so serve runs one (docs/decisions.md "serve --workers")`,
      1,
    );
  }
  return n;
}

export function isWorker(): boolean {
  return cluster.isWorker;
}

/** Primary side: start `n` workers, print once all listen, and run until a signal stops them. */
export async function runPrimary(
  config: Config,
  out: Out,
  n: number,
  envFile: string | undefined,
  logger: Logger,
): Promise<number> {
  // The primary's own lines: worker 0.
  const log = logger.child({ worker: 0 });
  let stopping = false;
  const restarts: number[] = [];
  const exited = new Set<Worker>();
  const fork = (): Worker => {
    const w = cluster.fork();
    w.once('exit', () => exited.add(w));
    return w;
  };

  // 1. Every worker listens (or the first failure stops all of them and is the command's error).
  const workers = Array.from({ length: n }, fork);
  let url: string;
  try {
    const urls = await Promise.all(workers.map(listening));
    url = urls[0] as string;
  } catch (err) {
    await stopAll(workers);
    throw err;
  }
  // 2. The first start's operator account, created once (by worker 1) and printed once (here).
  const first = workers[0] as Worker;
  first.send({ tollgate: 'bootstrap' } satisfies PrimaryMessage);
  const operator = await new Promise<Extract<WorkerMessage, { tollgate: 'bootstrapped' }>['operator']>(
    (resolve, reject) => {
      first.on('message', (m: WorkerMessage) => {
        if (m?.tollgate === 'bootstrapped') resolve(m.operator);
      });
      first.once('exit', () =>
        reject(new CliError('worker_died', 'worker 1 exited before the first start finished')),
      );
    },
  );
  const delivered = operator
    ? deliverOperatorKey(
        { accountId: operator.account_id, key: operator.api_key, credit: operator.credit },
        config.dataDir,
        log,
      )
    : null;
  // The primary's JSON does not name the database (the log line does).
  const { database: _, ...fields } = logListening(log, config, url, n, envFile);
  if (out.json) out.result({ ...fields, operator: delivered }, '');

  // 3. A worker that dies is replaced (its holds are voided by the others once its lease expires), unless
  // workers keep dying: then the gateway stops rather than crash-looping.
  const live = new Set(workers);
  return new Promise<number>((resolve) => {
    cluster.on('exit', (w, code, signal) => {
      live.delete(w);
      if (stopping) {
        if (live.size === 0) resolve(0);
        return;
      }
      const now = Date.now();
      restarts.push(now);
      while (restarts.length > 0 && (restarts[0] as number) < now - 60_000) restarts.shift();
      const exit = { exited_worker: w.id, exited_pid: w.process.pid, exit: signal ?? code };
      if (restarts.length > RESTARTS_PER_MINUTE) {
        log.error(exit, 'a worker exited: too many exits in a minute, stopping');
        stopping = true;
        void stopAll([...live]).then(() => resolve(1));
        return;
      }
      log.warn(exit, 'a worker exited: starting another');
      const next = fork();
      live.add(next);
      listening(next).catch((err: unknown) => log.error({ err }, 'a replacement worker failed to start'));
    });
    const stop = () => {
      if (stopping) return;
      stopping = true;
      for (const w of live) w.process.kill('SIGTERM');
      if (live.size === 0) resolve(0);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });

  function listening(w: Worker): Promise<string> {
    return new Promise((resolve, reject) => {
      const onMessage = (m: WorkerMessage) => {
        if (m?.tollgate === 'listening') {
          w.off('message', onMessage);
          resolve(m.url);
        } else if (m?.tollgate === 'failed') {
          w.off('message', onMessage);
          reject(new CliError(m.error.code, m.error.message, 1));
        }
      };
      w.on('message', onMessage);
      w.once('exit', (code) => {
        if (!exited.has(w) || code !== null)
          reject(new CliError('worker_died', `a worker exited (${code}) before listening`, 1));
      });
    });
  }
}

async function stopAll(workers: Worker[]): Promise<void> {
  await Promise.all(
    workers.map(
      (w) =>
        new Promise<void>((resolve) => {
          if (w.isDead()) return resolve();
          w.once('exit', () => resolve());
          w.process.kill('SIGTERM');
        }),
    ),
  );
}

/** Worker side: report to the primary. */
export function tellPrimary(m: WorkerMessage): void {
  process.send?.(m);
}

/** Worker side: wait for the primary's go-ahead to bootstrap (only worker 1 gets one). */
export function onBootstrap(fn: () => Promise<WorkerMessage & { tollgate: 'bootstrapped' }>): void {
  process.on('message', (m: PrimaryMessage) => {
    if (m?.tollgate !== 'bootstrap') return;
    fn().then(tellPrimary, (err: unknown) =>
      tellPrimary({ tollgate: 'failed', error: { code: 'bootstrap_failed', message: String(err) } }),
    );
  });
}
