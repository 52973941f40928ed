import { parentPort, workerData } from 'node:worker_threads';
import { Histogram } from '../../lib/histogram.js';
import { openSqlite } from '../../lib/sqlite.js';
import { SqliteLedger } from './sqlite-ledger.js';
import type { WriteRequest, WriteResponse, WriterData } from './worker-ledger.js';

// The ledger's writer, on its own thread: every write of the ledger (holds, captures, voids, credits, keys)
// runs here, through the same SqliteLedger and its group-commit write queue, so the fsync of a commit never
// blocks the event loop that serves requests. A promise on the main thread settles only after the commit
// returned here, so every acknowledged charge is durable, exactly as before.

const port = parentPort;
if (!port) throw new Error('writer-thread.ts runs as a worker');
const { path, idempotencyTtlMs, commits: shared } = workerData as WriterData;
// The commit metrics: views of the main thread's histograms (SharedArrayBuffers), observed here.
const commits = shared && {
  seconds: new Histogram(shared.seconds.bounds, shared.seconds.buffer as SharedArrayBuffer),
  writes: new Histogram(shared.writes.bounds, shared.writes.buffer as SharedArrayBuffer),
};
const db = openSqlite(path);
// The main thread's clock, as of each request (tests drive it by hand): read by the ledger when it is called.
let now = 0;
const ledger = new SqliteLedger(db, { clock: { now: () => now }, idempotencyTtlMs, commits });
type Method = (...args: unknown[]) => Promise<unknown>;

port.on('message', (m: WriteRequest) => {
  if (m.method === 'close') {
    void ledger.close().then(() => {
      db.close();
      port.postMessage({ id: m.id, ok: true, value: undefined } satisfies WriteResponse);
    });
    return;
  }
  now = m.now;
  let done: Promise<unknown>;
  try {
    done = (ledger[m.method] as Method).apply(ledger, m.args);
  } catch (e) {
    // A refusal of the arguments themselves (a negative amount) is thrown before anything is queued.
    done = Promise.reject(e);
  }
  done.then(
    (value) => port.postMessage({ id: m.id, ok: true, value } satisfies WriteResponse),
    (e: unknown) => {
      const error =
        e instanceof Error ? { name: e.name, message: e.message } : { name: 'Error', message: String(e) };
      port.postMessage({ id: m.id, ok: false, error } satisfies WriteResponse);
    },
  );
});
