// The one way the gateway links abort signals: one AbortSignal that aborts when any source does or a timeout
// passes. AbortSignal.any + AbortSignal.timeout cost far more per call on Node 20 (measured in `npm run bench`,
// section "abort"), and long-lived sources (the shutdown signal) accumulate their dependants until GC; this
// detaches explicitly when the work is done (dispose).

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

/** A class rather than a closure-built object: one allocation shape for every call on the hot path. */
class Link implements LinkedSignal {
  private readonly ac = new AbortController();
  private readonly attached: AbortSignal[] = [];
  private timer: NodeJS.Timeout | undefined;
  timedOut = false;
  private readonly onAbort = (event: Event) => this.ac.abort((event.target as AbortSignal).reason);

  constructor(sources: ReadonlyArray<AbortSignal | undefined>, timeoutMs: number | undefined) {
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
      this.timer = setTimeout(() => {
        this.timedOut = true;
        this.ac.abort(new DOMException('The operation timed out.', 'TimeoutError'));
      }, timeoutMs);
      // A deadline never keeps the process alive on its own (as AbortSignal.timeout's does not).
      this.timer.unref();
    }
  }

  get signal(): AbortSignal {
    return this.ac.signal;
  }

  abort(reason?: unknown): void {
    this.ac.abort(reason);
  }

  clearDeadline(): void {
    if (this.timer) clearTimeout(this.timer);
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const s of this.attached) s.removeEventListener('abort', this.onAbort);
  }
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
