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

type WriteMethod = Exclude<keyof LedgerMoney | keyof LedgerAdmin, never>;

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

  override createAccount(...args: Parameters<Ledger['createAccount']>) {
    return this.write<Awaited<ReturnType<Ledger['createAccount']>>>('createAccount', args);
  }
  override insertApiKey(...args: Parameters<Ledger['insertApiKey']>) {
    return this.write<Awaited<ReturnType<Ledger['insertApiKey']>>>('insertApiKey', args);
  }
  override revokeApiKey(...args: Parameters<Ledger['revokeApiKey']>) {
    return this.write<boolean>('revokeApiKey', args);
  }
  override credit(...args: Parameters<Ledger['credit']>) {
    return this.write<Awaited<ReturnType<Ledger['credit']>>>('credit', args);
  }
  override begin(...args: Parameters<Ledger['begin']>) {
    return this.write<Awaited<ReturnType<Ledger['begin']>>>('begin', args);
  }
  override capture(...args: Parameters<Ledger['capture']>) {
    return this.write<Awaited<ReturnType<Ledger['capture']>>>('capture', args);
  }
  override void(...args: Parameters<Ledger['void']>) {
    return this.write<void>('void', args);
  }
  override refundJob(...args: Parameters<Ledger['refundJob']>) {
    return this.write<Awaited<ReturnType<Ledger['refundJob']>>>('refundJob', args);
  }
  override sweep(...args: Parameters<Ledger['sweep']>) {
    return this.write<Awaited<ReturnType<Ledger['sweep']>>>('sweep', args);
  }
  override voidAllPending(...args: Parameters<Ledger['voidAllPending']>) {
    return this.write<number>('voidAllPending', args);
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
  const code = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(code, { eval: true, workerData });
}
