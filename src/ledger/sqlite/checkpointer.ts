import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

// WAL checkpoints off the call path. The gateway's ledger connection never checkpoints (./group-commit.ts:
// synchronous=OFF, wal_autocheckpoint=0); this thread does, on its own connection with synchronous=NORMAL, so each
// checkpoint syncs the WAL before copying pages into the database file and syncs the database file before the WAL
// may be reused. Without it the WAL would grow for ever; with SQLite's own autocheckpoint, every ~60th call paid
// for a checkpoint inside its commit.
//
// PASSIVE checkpoints copy while calls keep committing. But the writer starts the WAL over from its beginning
// only if every frame has been copied when its next transaction starts, and under a steady stream of commits a
// checkpoint (two fsyncs) never quite catches up. So once the WAL passes a size, the thread asks the ledger to
// hold its commits for one short final checkpoint (the gate below): the writes queue exactly as they do while an
// fdatasync runs, nothing blocks the event loop, and the next commit restarts the WAL.

/** Shared between the ledger (main thread) and the checkpointer: [0] hold requested, [1] a commit in progress. */
export class CheckpointGate {
  private readonly flags: Int32Array;
  private resumed: (() => void) | undefined;

  constructor(readonly buffer = new SharedArrayBuffer(8)) {
    this.flags = new Int32Array(buffer);
  }

  /** True while the checkpointer asks the ledger not to commit. */
  held(): boolean {
    return Atomics.load(this.flags, 0) !== 0;
  }

  /** Around each commit, so the checkpointer's final pass waits for one in progress. */
  enter(): void {
    Atomics.store(this.flags, 1, 1);
  }

  leave(): void {
    Atomics.store(this.flags, 1, 0);
    Atomics.notify(this.flags, 1);
  }

  /** Called (on the main thread) when the checkpointer lifts the hold. */
  onResume(fn: () => void): void {
    this.resumed = fn;
  }

  /** The checkpointer lifted the hold (or is gone: then it is lifted here). */
  resume(): void {
    Atomics.store(this.flags, 0, 0);
    this.resumed?.();
  }
}

export interface Checkpointer {
  readonly gate: CheckpointGate;
  stop(): Promise<void>;
}

/**
 * Checkpoints `dbPath` every `intervalMs`; once the WAL holds `restartFrames` frames, one final pass under the
 * gate lets the writer restart it. A PASSIVE checkpoint with nothing to copy returns at once (no sync), so an
 * idle gateway pays nothing.
 */
export function startCheckpointer(
  dbPath: string,
  onError: (message: string) => void,
  opts: { intervalMs?: number; restartFrames?: number } = {},
): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const gate = new CheckpointGate();
  // An eval'd CommonJS worker: no loader needed, from sources (tests) or compiled.
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    const Database = require(workerData.driver);
    const flags = new Int32Array(workerData.gate);
    const db = new Database(workerData.path);
    db.pragma('busy_timeout = 5000');
    db.pragma('synchronous = NORMAL');
    db.pragma('wal_autocheckpoint = 0');
    const passive = () => db.pragma('wal_checkpoint(PASSIVE)')[0];
    const checkpoint = () => {
      try {
        const r = passive();
        if (!r || r.log < workerData.restartFrames) return;
        // The final pass: no commit starts until it is done (the one in progress, if any, finishes first).
        Atomics.store(flags, 0, 1);
        Atomics.wait(flags, 1, 1, 100);
        try { passive(); } finally {
          Atomics.store(flags, 0, 0);
          parentPort.postMessage({ resume: true });
        }
      } catch (e) { parentPort.postMessage({ error: String(e) }); }
    };
    const timer = setInterval(checkpoint, workerData.intervalMs);
    parentPort.on('message', (m) => {
      if (m !== 'stop') return;
      clearInterval(timer);
      try { passive(); } catch {}
      db.close();
      parentPort.postMessage({ stopped: true });
    });
  `;
  const worker = new Worker(code, {
    eval: true,
    workerData: {
      driver,
      path: dbPath,
      gate: gate.buffer,
      intervalMs: opts.intervalMs ?? 100,
      restartFrames: opts.restartFrames ?? 1024,
    },
  });
  worker.unref();
  worker.on('message', (m: { error?: string; resume?: boolean }) => {
    if (m.resume) gate.resume();
    if (m.error) onError(m.error);
  });
  worker.on('error', (e) => onError(e.message));
  let exited = false;
  worker.once('exit', () => {
    exited = true;
    gate.resume(); // a thread gone mid-pass must not leave the ledger held
  });
  return {
    gate,
    stop() {
      if (exited) return Promise.resolve();
      return new Promise<void>((resolve) => {
        worker.once('exit', () => resolve());
        worker.on('message', (m: { stopped?: boolean }) => {
          if (m.stopped) void worker.terminate();
        });
        worker.postMessage('stop');
      });
    },
  };
}
