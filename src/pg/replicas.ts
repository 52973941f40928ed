import type { Clock } from '../lib/clock.js';
import type { PgPool } from './pool.js';

// A replica's lease on PostgreSQL (table `replicas`, migration src/pg/migrations/replicas.ts). Each replica
// registers itself and renews its lease every third of the lease period, so two renewals can fail before the
// lease runs out. A replica whose lease has expired (it crashed, or hangs) is presumed gone: the others' ledger
// sweeps void its pending holds (PgLedger.sweep, error `orphaned_by_replica`). A replica that stops cleanly
// deletes its row: its calls have finished, and any hold still pending expires with its TTL.

export interface ReplicaLeaseOptions {
  replicaId: string;
  /** How long the lease lasts without renewal (TOLLGATE_REPLICA_LEASE_SECONDS × 1000). */
  leaseMs: number;
  clock: Clock;
  /** Called when a renewal fails (the lease may lapse if it keeps failing). */
  onError?: (err: unknown) => void;
}

export class ReplicaLease {
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  /** A renewal failed and none has succeeded since (its failure was reported). */
  private failing = false;
  private renewing: Promise<void> | undefined;

  constructor(
    private readonly pool: PgPool,
    private readonly opts: ReplicaLeaseOptions,
  ) {}

  /** Registers the replica (or takes its row back, after a restart with the same id) and starts renewing. */
  async start(): Promise<void> {
    const now = this.opts.clock.now();
    await this.pool.query(
      `INSERT INTO replicas (id, started_at, lease_expires_at) VALUES ($1, $2, $3)
       ON CONFLICT (id) DO UPDATE SET started_at = excluded.started_at, lease_expires_at = excluded.lease_expires_at`,
      [this.opts.replicaId, now, now + this.opts.leaseMs],
    );
    if (this.closed) return;
    const every = Math.max(1, Math.floor(this.opts.leaseMs / 3));
    this.timer = setInterval(() => {
      this.renewing = this.renew().then(
        () => {
          this.failing = false;
        },
        (err: unknown) => {
          // Said once a streak: renewals run every third of the lease, and an outage fails them all.
          if (!this.failing) this.opts.onError?.(err);
          this.failing = true;
        },
      );
    }, every);
    // The lease never keeps the process alive on its own.
    this.timer.unref();
  }

  /** Extends the lease from now; re-registers if the row went missing. */
  async renew(): Promise<void> {
    if (this.closed) return;
    const now = this.opts.clock.now();
    await this.pool.query(
      `INSERT INTO replicas (id, started_at, lease_expires_at) VALUES ($1, $2, $3)
       ON CONFLICT (id) DO UPDATE SET lease_expires_at = excluded.lease_expires_at`,
      [this.opts.replicaId, now, now + this.opts.leaseMs],
    );
  }

  /** Graceful stop: no more renewals, and the row goes (this replica is not orphaned, it has left). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    // A renewal still in flight must not put the row back after it is deleted.
    await this.renewing;
    await this.pool.query('DELETE FROM replicas WHERE id = $1', [this.opts.replicaId]);
  }
}
