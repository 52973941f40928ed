import { closeSync, fdatasync, fdatasyncSync, openSync } from 'node:fs';
import { LEDGER_STOPPED } from '../../errors.js';
import type { SqliteDb } from '../../lib/sqlite.js';
import type { CheckpointGate } from './checkpointer.js';

/** One write of the ledger: synchronous statements, then what follows in memory once they are committed. */
export interface Write<T> {
  /** The statements. Runs inside the batch's transaction, in its own savepoint; never awaits. */
  run(): T;
  /** In memory, right after COMMIT and before anything else runs (e.g. releasing the reservation it posted). */
  committed?(value: T): void;
  /** In memory, when the statements threw or the commit failed: nothing of it happened. */
  failed?(error: unknown): void;
  /** Money moved or an outcome was recorded: its promise waits until the commit is on disk. */
  durable: boolean;
}

interface Queued {
  write: Write<unknown>;
  resolve(v: unknown): void;
  reject(e: unknown): void;
}

export type Durability =
  /**
   * The gateway's: statements commit with synchronous=OFF (no fsync inside COMMIT, so the event loop never waits
   * on the disk) and one fdatasync of the WAL, on libuv's pool, makes every commit before it durable. While one
   * runs, new writes queue and then commit together in one transaction, covered by the next fdatasync: group
   * commit, sized by the load. Checkpoints never run on this connection (./checkpointer.ts runs them).
   */
  | {
      kind: 'group';
      walPath: string;
      /** The sync itself (tests hold it to see what waits for it); fs.fdatasync by default. */
      sync?: ((fd: number, done: (err: NodeJS.ErrnoException | null) => void) => void) | undefined;
      /**
       * True when the commit at hand is the only work the process has in flight (the gateway: one call). Its
       * fdatasync then runs right here: with nothing else for the event loop to do, a hop to libuv's pool only
       * adds the thread hand-off and the loop's wake-up (tens of µs each on a VM) to what the lone caller waits
       * for. With more than one call in flight the fdatasync goes to the pool and the others keep running.
       */
      alone?: (() => boolean) | undefined;
      /** The inline sync (tests count it); fs.fdatasyncSync by default. */
      syncNow?: ((fd: number) => void) | undefined;
    }
  /** Short-lived tools (the CLI) and in-memory databases: each COMMIT is fsync'd by SQLite itself. */
  | { kind: 'inline' };

/**
 * The ledger's commits. At most one fdatasync is in flight; writes that arrive meanwhile wait for it and then
 * commit as one batch, so under load a batch carries many calls (one fsync, each hot page written once) and a
 * lone call commits at once. A promise settles only when its write is as durable as it claims: a durable write
 * after the fdatasync that covers it, so no caller is ever told of a charge that could still be lost.
 *
 * If the WAL cannot be synced the ledger stops (every later write is refused): what reached the disk is unknown,
 * and SQLite's recovery at the next start decides (docs/decisions.md "One durable commit per paid call").
 */
export class GroupCommit {
  private queue: Queued[] = [];
  private syncing = false;
  /** Durable writes committed and waiting for the next fdatasync, with what they resolve to. */
  private waiting: Array<{ q: Queued; value: unknown }> = [];
  private walFd: number | undefined;
  private broken: Error | undefined;
  /** The checkpointer's request to hold commits for its final pass (./checkpointer.ts). */
  private gate: CheckpointGate | undefined;
  private readonly begin;
  private readonly commit;
  private readonly savepoint;
  private readonly release;
  private readonly rollbackTo;

  constructor(
    private readonly db: SqliteDb,
    private readonly durability: Durability,
    private readonly onCommit?: ((seconds: number, writes: number) => void) | undefined,
    private readonly maxBatch = 512,
  ) {
    if (durability.kind === 'group') {
      // Never a checkpoint on this connection: without its own fsync it would copy pages into the database
      // file unsynced, and a later WAL restart could then lose them on power loss.
      db.pragma('wal_autocheckpoint = 0');
      db.pragma('synchronous = OFF');
      // A WAL grown under a burst is cut back when it starts over.
      db.pragma('journal_size_limit = 16777216');
    }
    this.begin = db.prepare('BEGIN IMMEDIATE');
    this.commit = db.prepare('COMMIT');
    this.savepoint = db.prepare('SAVEPOINT w');
    this.release = db.prepare('RELEASE w');
    this.rollbackTo = db.prepare('ROLLBACK TO w');
  }

  /** Lets the checkpointer hold commits briefly; queued writes commit when it lifts the hold. */
  attach(gate: CheckpointGate): void {
    this.gate = gate;
    gate.onResume(() => this.pump());
  }

  /** Writes now when nothing is syncing (the lone call's path), else with the next batch. */
  write<T>(write: Write<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const q: Queued = { write: write as Write<unknown>, resolve: resolve as (v: unknown) => void, reject };
      if (this.broken) {
        write.failed?.(this.broken);
        reject(this.broken);
        return;
      }
      if (this.syncing || this.gate?.held()) this.queue.push(q);
      else this.flush([q]);
    });
  }

  /** Commits what is queued, a batch at a time, until a batch leaves an fdatasync in flight. */
  private pump(): void {
    while (!this.syncing && !this.gate?.held() && this.queue.length > 0) {
      this.flush(this.queue.splice(0, this.maxBatch));
    }
  }

  /** Waits for the fdatasync in flight and commits what is queued, then stops syncing (close). */
  async close(): Promise<void> {
    while (this.syncing || this.queue.length > 0) {
      this.pump();
      if (this.syncing || this.queue.length > 0) await new Promise((r) => setImmediate(r));
    }
    if (this.walFd !== undefined) closeSync(this.walFd);
    this.walFd = undefined;
    // The last connection to close checkpoints: let that checkpoint sync the database file.
    if (this.durability.kind === 'group') this.db.pragma('synchronous = FULL');
  }

  private flush(batch: Queued[]): void {
    const started = this.onCommit ? performance.now() : 0;
    const results: Array<{ ok: boolean; value: unknown }> = [];
    this.gate?.enter();
    try {
      this.begin.run();
      for (const q of batch) {
        this.savepoint.run();
        try {
          results.push({ ok: true, value: q.write.run() });
          this.release.run();
        } catch (error) {
          this.rollbackTo.run();
          this.release.run();
          results.push({ ok: false, value: error });
        }
      }
      this.commit.run();
    } catch (error) {
      // The transaction failed as a whole (a full disk, a read-only file): none of it happened.
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      for (const q of batch) {
        q.write.failed?.(error);
        q.reject(error);
      }
      return;
    } finally {
      this.gate?.leave();
    }
    this.onCommit?.((performance.now() - started) / 1000, batch.length);
    for (let i = 0; i < batch.length; i++) {
      const q = batch[i] as Queued;
      const r = results[i] as { ok: boolean; value: unknown };
      if (!r.ok) {
        q.write.failed?.(r.value);
        q.reject(r.value);
        continue;
      }
      q.write.committed?.(r.value);
      if (q.write.durable && this.durability.kind === 'group') this.waiting.push({ q, value: r.value });
      else q.resolve(r.value);
    }
    if (this.waiting.length > 0) this.sync();
  }

  /** One fdatasync of the WAL for every durable write committed so far; then the writes queued meanwhile. */
  private sync(): void {
    const waiters = this.waiting;
    this.waiting = [];
    this.syncing = true;
    const d = this.durability;
    if (d.kind === 'group' && this.queue.length === 0 && d.alone?.()) {
      let error: NodeJS.ErrnoException | null = null;
      try {
        (d.syncNow ?? fdatasyncSync)(this.wal());
      } catch (e) {
        error = e as NodeJS.ErrnoException;
      }
      this.synced(waiters, error);
      return;
    }
    const sync = (d.kind === 'group' && d.sync) || fdatasync;
    sync(this.wal(), (err) => this.synced(waiters, err));
  }

  /** The fdatasync covering `waiters` finished: they are durable (or, on an error, the ledger stops). */
  private synced(waiters: Array<{ q: Queued; value: unknown }>, err: NodeJS.ErrnoException | null): void {
    this.syncing = false;
    if (err) {
      this.broken = Object.assign(new Error(`the ledger could not sync its journal: ${err.message}`), {
        code: LEDGER_STOPPED,
        cause: err,
      });
      for (const w of waiters) w.q.reject(this.broken);
      const queued = this.queue;
      this.queue = [];
      for (const q of queued) {
        q.write.failed?.(this.broken);
        q.reject(this.broken);
      }
      return;
    }
    for (const w of waiters) w.q.resolve(w.value);
    this.pump();
  }

  private wal(): number {
    if (this.walFd === undefined) {
      // The WAL exists once the first transaction has committed; it is not deleted while the database is open.
      this.walFd = openSync((this.durability as { walPath: string }).walPath, 'r');
    }
    return this.walFd;
  }
}
