// Statements of the same kind, batched while others run (group commit, as the SQLite ledger does with its
// fdatasync). At most `inFlight` batches of a kind run at once; what arrives meanwhile waits and goes out with
// the next one, as one statement and one commit. A lone caller is never held back: with fewer than `inFlight`
// batches running, its item goes out at once, alone. Under load each statement carries many calls, so
// PostgreSQL's per-statement and per-commit work (the wire, the backend's wake-up, executor start-up, the commit
// record and its flush) is paid once per batch instead of once per call (docs/decisions.md "The PostgreSQL
// ledger's hot path": 0.15–0.3 ms of PostgreSQL CPU per pair at 64 in flight against 0.5–0.6 one by one).

/**
 * Runs one batch: for each item, in order, whether the statement did it (true) or left it alone (false: the
 * caller takes the item's slow path, which does it or says why not). Rejects only when no item's fate is known
 * or can be learned one by one (the database did not answer).
 */
export type RunBatch<I> = (items: I[]) => Promise<boolean[]>;

interface Waiting<I> {
  item: I;
  resolve(done: boolean): void;
  reject(err: unknown): void;
}

export class Batches<I> {
  private queue: Array<Waiting<I>> = [];
  private running = 0;

  constructor(
    private readonly run: RunBatch<I>,
    private readonly inFlight: number,
    private readonly maxBatch = 256,
  ) {}

  /** Resolves with whether the batch statement did the item (false: take the slow path). */
  add(item: I): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.running < this.inFlight && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      this.running++;
      this.run(batch.map((w) => w.item))
        .then(
          (done) => {
            for (let i = 0; i < batch.length; i++) (batch[i] as Waiting<I>).resolve(done[i] === true);
          },
          (err: unknown) => {
            for (const w of batch) w.reject(err);
          },
        )
        .finally(() => {
          this.running--;
          this.pump();
        });
    }
  }
}
