// The one way the gateway links abort signals: one AbortSignal that aborts when any source does or a timeout
// passes. AbortSignal.any + AbortSignal.timeout cost far more per call on Node 20 (measured in `npm run bench`,
// section "abort"), and long-lived sources (the shutdown signal) accumulate their dependants until GC; this
// detaches explicitly when the work is done (dispose). The timeouts of the whole process share one timer
// (./deadlines.ts), and work inside a call whose deadline comes first uses the call's own signal (linkWithin).

import { type Deadline, deadline } from './deadlines.js';

export interface LinkedSignal {
  signal: AbortSignal;
  /** True when the timeout (not a source) aborted it. */
  readonly timedOut: boolean;
  /** Aborts it from the owner's side (the work is abandoned). */
  abort(reason?: unknown): void;
  /** Clears the timeout only; the sources still abort it (a stream past its first-byte deadline). */
  clearDeadline(): void;
  /** Detaches from the sources and clears the timer. Call when the work is finished. */
  dispose(): void;
}

export function linkSignals(
  sources: ReadonlyArray<AbortSignal | undefined>,
  timeoutMs?: number,
): LinkedSignal {
  return new Link(sources, timeoutMs);
}

/**
 * A caller's own controller as the call's one signal: the deadline aborts it (TimeoutError, `timedOut`), and so
 * may the call's owner (`abort`); nothing is linked, so no second controller and no listener.
 */
export function adoptController(ac: AbortController, timeoutMs: number): LinkedSignal {
  return new Link([], timeoutMs, ac);
}

/**
 * The signal for work inside a call (a fetch) that must stop when the call does or after `timeoutMs`. When the
 * call's own deadline comes first, its signal already aborts in time: that one signal serves (no controller, no
 * listener, no deadline of its own). The work must not abort the result itself — it would abort its call.
 */
export function linkWithin(signal: AbortSignal | undefined, timeoutMs: number): LinkedSignal {
  const owner = signal && ownerOf.get(signal);
  if (owner && owner.deadlineAt <= performance.now() + timeoutMs) return new Borrowed(owner);
  return new Link([signal], timeoutMs);
}

/** The link that owns a signal, for links inside it (above). */
const ownerOf = new WeakMap<AbortSignal, Link>();

/** A class rather than a closure-built object: one allocation shape for every call on the hot path. */
class Link implements LinkedSignal {
  private readonly ac: AbortController;
  private readonly attached: AbortSignal[] = [];
  private deadline: Deadline | undefined;
  /** When the deadline passes (performance.now() time), or +Infinity without one. */
  deadlineAt = Number.POSITIVE_INFINITY;
  timedOut = false;
  private readonly onAbort = (event: Event) => this.ac.abort((event.target as AbortSignal).reason);

  constructor(
    sources: ReadonlyArray<AbortSignal | undefined>,
    timeoutMs: number | undefined,
    ac: AbortController = new AbortController(),
  ) {
    this.ac = ac;
    for (const s of sources) {
      if (!s) continue;
      if (s.aborted) {
        this.ac.abort(s.reason);
        break;
      }
      s.addEventListener('abort', this.onAbort, { once: true });
      this.attached.push(s);
    }
    if (timeoutMs !== undefined && !this.ac.signal.aborted) {
      // One timer for all of the process's deadlines (./deadlines.ts); never keeps the process alive.
      this.deadlineAt = performance.now() + timeoutMs;
      this.deadline = deadline(timeoutMs, () => {
        this.timedOut = true;
        this.ac.abort(new DOMException('The operation timed out.', 'TimeoutError'));
      });
      ownerOf.set(this.ac.signal, this);
    }
  }

  get signal(): AbortSignal {
    return this.ac.signal;
  }

  abort(reason?: unknown): void {
    this.ac.abort(reason);
  }

  clearDeadline(): void {
    this.deadline?.cancel();
    this.deadlineAt = Number.POSITIVE_INFINITY;
  }

  dispose(): void {
    this.deadline?.cancel();
    for (const s of this.attached) s.removeEventListener('abort', this.onAbort);
  }
}

/** A link inside a call that the call's own signal already covers: it is that signal. */
class Borrowed implements LinkedSignal {
  constructor(private readonly owner: Link) {}

  get signal(): AbortSignal {
    return this.owner.signal;
  }

  get timedOut(): boolean {
    return this.owner.timedOut;
  }

  /** Not for borrowed signals: it would abort the call they belong to (linkWithin says so). */
  abort(): void {
    throw new Error('a signal borrowed from its call cannot be aborted on its own');
  }

  clearDeadline(): void {}

  dispose(): void {}
}

/**
 * Resolves with the work, or rejects with the signal's reason as soon as it aborts, so a caller is never held by
 * work that ignores its signal (the work itself goes on and its result is dropped).
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    // The work was started anyway (a caller gone before the handler ran): its own rejection, typically the
    // same abort, is dropped here — left unobserved it would be an unhandled rejection and end the process.
    work.catch(() => undefined);
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
