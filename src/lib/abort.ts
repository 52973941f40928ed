// One AbortSignal that aborts when any source does or a timeout passes. AbortSignal.any + AbortSignal.timeout
// cost ~27 µs per call on Node 20 (and long-lived sources accumulate dependants); this costs ~1 µs and is
// disposed explicitly when the work is done.

export interface LinkedSignal {
  signal: AbortSignal;
  /** True when the timeout (not a source) aborted it. */
  readonly timedOut: boolean;
  /** Detaches from the sources and clears the timer. Call when the work is finished. */
  dispose(): void;
}

export function linkSignals(
  sources: ReadonlyArray<AbortSignal | undefined>,
  timeoutMs?: number,
): LinkedSignal {
  const ac = new AbortController();
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  const attached: AbortSignal[] = [];
  const onAbort = (event: Event) => ac.abort((event.target as AbortSignal).reason);
  for (const s of sources) {
    if (!s) continue;
    if (s.aborted) {
      ac.abort(s.reason);
      break;
    }
    s.addEventListener('abort', onAbort, { once: true });
    attached.push(s);
  }
  if (timeoutMs !== undefined && !ac.signal.aborted) {
    timer = setTimeout(() => {
      timedOut = true;
      ac.abort(new DOMException('The operation timed out.', 'TimeoutError'));
    }, timeoutMs);
  }
  return {
    signal: ac.signal,
    get timedOut() {
      return timedOut;
    },
    dispose() {
      if (timer) clearTimeout(timer);
      for (const s of attached) s.removeEventListener('abort', onAbort);
    },
  };
}

/**
 * Resolves with the work, or rejects with the signal's reason as soon as it aborts, so a caller is never held by
 * work that ignores its signal (the work itself goes on and its result is dropped).
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
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
