// Small concurrency tools for the engine: a counting semaphore whose waiters can give up, and a per-host
// gate that spaces requests to one origin (crawl politeness).

export class Semaphore {
  private active = 0;
  private readonly waiters: Array<() => void> = [];

  constructor(private readonly size: number) {}

  /** Resolves with a release function once a slot is free; rejects if `signal` aborts first. */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.active < this.size) {
      this.active++;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const grant = () => {
        signal?.removeEventListener('abort', onAbort);
        this.active++;
        resolve(this.releaser());
      };
      const onAbort = () => {
        const i = this.waiters.indexOf(grant);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(grant);
    });
  }

  private releaser(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.active--;
      this.waiters.shift()?.();
    };
  }
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * At most `concurrency` requests in flight per origin, and at least `delayMs` between the starts of two
 * requests to the same origin — shared by every crawl, so two crawls of one site do not double the load.
 */
export class HostGate {
  private readonly hosts = new Map<string, { sem: Semaphore; next: number; users: number }>();

  constructor(private readonly concurrency: number) {}

  async run<T>(origin: string, delayMs: number, signal: AbortSignal, work: () => Promise<T>): Promise<T> {
    let h = this.hosts.get(origin);
    if (!h) {
      h = { sem: new Semaphore(this.concurrency), next: 0, users: 0 };
      this.hosts.set(origin, h);
    }
    h.users++;
    try {
      const release = await h.sem.acquire(signal);
      try {
        const now = Date.now();
        const wait = h.next - now;
        h.next = Math.max(now, h.next) + delayMs;
        await sleep(wait, signal);
        return await work();
      } finally {
        release();
      }
    } finally {
      if (--h.users === 0) this.hosts.delete(origin);
    }
  }
}
