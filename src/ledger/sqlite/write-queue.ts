import type { SqliteDb } from '../../lib/sqlite.js';

interface Job {
  fn: () => unknown;
  durable: boolean;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

/**
 * Group commit. Writes queued in the same turn of the event loop run in one `BEGIN IMMEDIATE … COMMIT`, so
 * concurrent calls share one fsync instead of paying one each (TigerBeetle's batching, in miniature).
 *
 * - Each job runs inside its own SAVEPOINT: a job that throws is rolled back alone and rejects alone.
 * - Promises settle only after COMMIT returned, so nobody acts on state that could still be lost.
 * - If COMMIT fails, every job of the batch rejects: none of them happened.
 * - Jobs are synchronous functions; no transaction is ever held across an `await`.
 * - A batch is committed with `synchronous=FULL` (fsync'd) if any of its jobs is durable. A job that is not
 *   (a hold) still survives any process crash (WAL); on power loss it could be lost only together with every
 *   later commit, because the WAL is replayed in order and a later fsync makes every earlier frame durable.
 *   Losing a hold that was never captured charges nothing and acknowledged nothing, so it needs no fsync of
 *   its own; every commit that moves money or records an outcome does.
 */
export class WriteQueue {
  private queue: Job[] = [];
  private scheduled = false;
  private readonly savepoint;
  private readonly release;
  private readonly rollbackTo;
  private readonly begin;
  private readonly commit;
  private synchronousFull = true;

  constructor(
    private readonly db: SqliteDb,
    private readonly maxBatch = 256,
    /** Told of each commit: BEGIN to COMMIT in seconds, and the writes it carried (the /metrics histograms). */
    private readonly onCommit?: ((seconds: number, writes: number) => void) | undefined,
  ) {
    this.savepoint = db.prepare('SAVEPOINT op');
    this.release = db.prepare('RELEASE op');
    this.rollbackTo = db.prepare('ROLLBACK TO op');
    this.begin = db.prepare('BEGIN IMMEDIATE');
    this.commit = db.prepare('COMMIT');
  }

  run<T>(fn: () => T, opts: { durable?: boolean } = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({
        fn,
        durable: opts.durable ?? true,
        resolve: resolve as (v: unknown) => void,
        reject,
      });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Runs whatever is queued now (used at shutdown). */
  drain(): void {
    while (this.queue.length > 0) this.flush();
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.queue.splice(0, this.maxBatch);
    if (this.queue.length > 0) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
    if (batch.length === 0) return;

    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    const full = batch.some((j) => j.durable);
    if (full !== this.synchronousFull) {
      // Not a prepared statement: SQLite runs a PRAGMA when it is prepared, not when it is stepped.
      this.db.pragma(`synchronous = ${full ? 'FULL' : 'NORMAL'}`);
      this.synchronousFull = full;
    }
    const started = this.onCommit ? performance.now() : 0;
    try {
      this.begin.run();
      for (const job of batch) {
        this.savepoint.run();
        try {
          const value = job.fn();
          this.release.run();
          outcomes.push({ ok: true, value });
        } catch (error) {
          this.rollbackTo.run();
          this.release.run();
          outcomes.push({ ok: false, error });
        }
      }
      this.commit.run();
      this.onCommit?.((performance.now() - started) / 1000, batch.length);
    } catch (error) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      for (const job of batch) job.reject(error);
      return;
    }
    for (let i = 0; i < batch.length; i++) {
      const o = outcomes[i] as (typeof outcomes)[number];
      const job = batch[i] as Job;
      if (o.ok) job.resolve(o.value);
      else job.reject(o.error);
    }
  }
}
