import { Worker } from 'node:worker_threads';
import type { Clock } from '../../lib/clock.js';
import type { CommitHistograms } from '../../lib/histogram.js';
import type { SqliteDb } from '../../lib/sqlite.js';
import { type Ledger, type LedgerAdmin, type LedgerMoney, LedgerStateError } from '../types.js';
import { SqliteLedger } from './sqlite-ledger.js';

// The SQLite ledger as the gateway runs it: reads on the calling thread (its own connection; WAL lets readers
// see every committed write at once), writes on the writer thread (./writer-thread.ts), one message each way.
// The writer thread runs the same SqliteLedger, so the behaviour — group commit, fsync'd money, the checks of
// one serialized write — is the embedded ledger's to the letter; only where the fsync waits changes.

type WriteMethod = keyof LedgerMoney | keyof LedgerAdmin;

/** Every write of the ledger goes to the writer thread: a new one that is not listed here does not compile. */
const WRITES: Record<WriteMethod, true> = {
  createAccount: true,
  insertApiKey: true,
  revokeApiKey: true,
  credit: true,
  begin: true,
  capture: true,
  void: true,
  refundJob: true,
  sweep: true,
  voidAllPending: true,
  recordExternal: true,
  grantCreditLine: true,
  freezeCreditLine: true,
  beginSettlement: true,
  finishSettlement: true,
};

export type WriteRequest =
  | { id: number; method: WriteMethod; args: unknown[]; now: number }
  | { id: number; method: 'close' };

export type WriteResponse =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: { name: string; message: string } };

export class WorkerLedger extends SqliteLedger implements Ledger {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve(v: unknown): void; reject(e: unknown): void }>();
  private nextId = 1;
  private failure: Error | undefined;

  constructor(
    db: SqliteDb,
    path: string,
    private readonly opts: { clock: Clock; idempotencyTtlMs: number; commits?: CommitHistograms | undefined },
  ) {
    // Runs the migrations on this connection before the writer opens its own.
    super(db, { clock: opts.clock, idempotencyTtlMs: opts.idempotencyTtlMs });
    // The commits happen on the writer thread: it observes them into the same (shared) histograms.
    const c = opts.commits;
    this.worker = spawnWriter({
      path,
      idempotencyTtlMs: opts.idempotencyTtlMs,
      commits: c && {
        seconds: { bounds: c.seconds.bounds, buffer: c.seconds.data.buffer },
        writes: { bounds: c.writes.bounds, buffer: c.writes.data.buffer },
      },
    });
    // The writes shadow SqliteLedger's own (which the writer thread runs); reads stay inherited.
    for (const method of Object.keys(WRITES) as WriteMethod[]) {
      Object.defineProperty(this, method, { value: (...args: unknown[]) => this.write(method, args) });
    }
    this.worker.on('message', (m: WriteResponse) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.ok) p.resolve(m.value);
      else
        p.reject(
          m.error.name === 'LedgerStateError'
            ? new LedgerStateError(m.error.message)
            : new Error(m.error.message),
        );
    });
    this.worker.on('error', (e) => this.fail(e));
    this.worker.on('exit', (code) => this.fail(new Error(`the ledger writer thread exited (${code})`)));
  }

  private fail(e: Error): void {
    this.failure ??= e;
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
  }

  private write<T>(method: WriteMethod, args: unknown[]): Promise<T> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.worker.postMessage({ id, method, args, now: this.opts.clock.now() } satisfies WriteRequest);
    });
  }

  override async close(): Promise<void> {
    if (!this.failure) {
      const id = this.nextId++;
      await new Promise<void>((resolve) => {
        this.pending.set(id, { resolve: () => resolve(), reject: () => resolve() });
        this.worker.postMessage({ id, method: 'close' } satisfies WriteRequest);
      });
    }
    await this.worker.terminate();
  }
}

/**
 * Starts ./writer-thread: the compiled .js in production; from TypeScript sources (tests, `npm run dev`)
 * through tsx's loader, registered inside the worker (Node 20 workers do not take `--import` loaders).
 */
/** What the writer thread is started with; the commit histograms' buffers are SharedArrayBuffers. */
export interface WriterData {
  path: string;
  idempotencyTtlMs: number;
  commits?: { seconds: SharedHistogramData; writes: SharedHistogramData } | undefined;
}

interface SharedHistogramData {
  bounds: readonly number[];
  buffer: ArrayBufferLike;
}

function spawnWriter(workerData: WriterData): Worker {
  const here = import.meta.url;
  if (!here.endsWith('.ts')) return new Worker(new URL('./writer-thread.js', here), { workerData });
  const entry = new URL('./writer-thread.ts', here).href;
  // Resolved here, from this file: an eval worker would resolve 'tsx' from the working directory, which need
  // not be the project's (the CLI's tests run it from a temporary one).
  const tsx = import.meta.resolve('tsx/esm/api');
  const code = `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(code, { eval: true, workerData });
}
