import { setMaxListeners } from 'node:events';

/**
 * Calls in flight, for graceful shutdown: stop admitting, let running calls finish (their holds are then
 * captured or voided normally), and abort the ones still running after the grace period so that they void.
 */
export class Inflight {
  private readonly running = new Set<Promise<unknown>>();
  /** The calls' own aborts, called at shutdown: a Set beats a listener each on one shared signal. */
  private readonly aborts = new Set<(reason: unknown) => void>();
  private readonly shutdown = new AbortController();
  private closing = false;
  /** Calls started since the process began: how the idle trim (src/lib/idle-trim.ts) sees activity. */
  started = 0;

  constructor() {
    // Every call in flight listens for shutdown; hundreds at once are normal, not a leak.
    setMaxListeners(0, this.shutdown.signal);
  }

  get signal(): AbortSignal {
    return this.shutdown.signal;
  }

  get accepting(): boolean {
    return !this.closing;
  }

  get size(): number {
    return this.running.size;
  }

  /** Registers what aborts a call's work at shutdown; returns the way to take it back when the work ends. */
  enlist(abort: (reason: unknown) => void): () => void {
    if (this.shutdown.signal.aborted) abort(this.shutdown.signal.reason);
    else this.aborts.add(abort);
    return () => this.aborts.delete(abort);
  }

  track<T>(p: Promise<T>): Promise<T> {
    this.started++;
    this.running.add(p);
    const untrack = () => this.running.delete(p);
    p.then(untrack, untrack);
    return p;
  }

  /** Stops admission, waits up to `graceMs` for running calls, then aborts the rest and waits for them. */
  async drain(graceMs: number): Promise<void> {
    this.closing = true;
    const all = () => Promise.allSettled([...this.running]);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((r) => {
      timer = setTimeout(() => r('timeout'), graceMs);
    });
    const first = await Promise.race([all().then(() => 'done' as const), timedOut]);
    clearTimeout(timer);
    if (first === 'timeout') {
      const reason = new Error('gateway shutting down');
      this.shutdown.abort(reason);
      for (const abort of this.aborts) abort(reason);
      this.aborts.clear();
      await all();
    }
  }
}
