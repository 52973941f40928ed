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
//
// The thread runs only while there is something to checkpoint: a worker is a V8 isolate of its own (~16 MiB of
// RSS), which an idle gateway should not carry. The first commit starts it; once no commit has come for
// `idleMs` it checkpoints what is left and exits; the next commit starts it again (issue 19: idle RSS).

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

  /** Called on the main thread at every commit (the lazy checkpointer starts its thread on it). */
  onCommit: (() => void) | undefined;

  /** Around each commit, so the checkpointer's final pass waits for one in progress. */
  enter(): void {
    Atomics.store(this.flags, 1, 1);
    this.onCommit?.();
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
  /** Whether the thread is up (it runs only while commits come). */
  running(): boolean;
  stop(): Promise<void>;
}

export interface CheckpointerOptions {
  intervalMs?: number;
  restartFrames?: number;
  /** The thread exits once no commit has come for this long (default 10 s); the next commit starts it again. */
  idleMs?: number;
}

/**
 * Checkpoints `dbPath` every `intervalMs` while commits come; once the WAL holds `restartFrames` frames, one final
 * pass under the gate lets the writer restart it. The thread starts with the first commit and leaves after
 * `idleMs` without one (checkpointing what is left first), so an idle gateway carries no second isolate.
 */
export function startCheckpointer(
  dbPath: string,
  onError: (message: string) => void,
  opts: CheckpointerOptions = {},
): Checkpointer {
  const gate = new CheckpointGate();
  const idleMs = opts.idleMs ?? 10_000;
  let worker: CheckpointWorker | undefined;
  let stopping: Promise<void> | undefined;
  /** A commit came while the thread was leaving: start it again once it is gone. */
  let again = false;
  let closed = false;
  let lastCommit = 0;
  // Idleness is judged on the main thread, where commits are seen, by a timer that exists only while the thread
  // runs (unref'd: it keeps nothing alive).
  let idle: NodeJS.Timeout | undefined;
  const start = () => {
    const w = spawnWorker(dbPath, gate, onError, opts);
    worker = w;
    idle ??= setInterval(
      () => {
        if (worker && !stopping && performance.now() - lastCommit >= idleMs) void leave();
      },
      Math.max(10, Math.min(idleMs, 1_000)),
    );
    idle.unref();
    void w.exited.then(() => {
      if (worker === w) worker = undefined;
      if (!worker && idle) {
        clearInterval(idle);
        idle = undefined;
      }
      gate.resume(); // a thread gone mid-pass must not leave the ledger held
    });
  };
  const leave = (): Promise<void> => {
    const w = worker;
    if (!w) return stopping ?? Promise.resolve();
    stopping = w.stop().then(() => {
      stopping = undefined;
      if (again && !closed) {
        again = false;
        start();
      }
    });
    return stopping;
  };
  gate.onCommit = () => {
    lastCommit = performance.now();
    if (closed) return;
    if (stopping) again = true;
    else if (!worker) start();
  };
  return {
    gate,
    running: () => worker !== undefined,
    async stop() {
      closed = true;
      await leave();
      await stopping;
    },
  };
}

interface CheckpointWorker {
  exited: Promise<void>;
  stop(): Promise<void>;
}

function spawnWorker(
  dbPath: string,
  gate: CheckpointGate,
  onError: (message: string) => void,
  opts: CheckpointerOptions,
): CheckpointWorker {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
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
  const gone = new Promise<void>((resolve) =>
    worker.once('exit', () => {
      exited = true;
      resolve();
    }),
  );
  return {
    exited: gone,
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
