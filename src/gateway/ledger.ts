import { isDatabaseUnavailable } from '../errors.js';
import { openStateLedger } from '../ledger/index.js';
import type { Ledger } from '../ledger/types.js';
import { DatabaseHealth } from '../run/db-health.js';
import { Lifecycle } from '../run/lifecycle.js';
import type { X402Deps } from '../run/x402/gate.js';
import type { Base } from './state.js';

// Step 2: the ledger, the watch on the database's health, the one money lifecycle, and x402's payment records;
// what a dead process left half done is resolved before anything runs.

export interface Books {
  ledger: Ledger;
  /** An outage of the database refuses calls with 503 until the ledger answers again (src/run/db-health.ts). */
  health: DatabaseHealth;
  money: Lifecycle;
  /** x402 payments (facilitator and payment store); undefined when TOLLGATE_X402_PAY_TO is unset. */
  x402: X402Deps | undefined;
}

export async function openBooks(b: Base, o: { skipRecovery?: boolean | undefined }): Promise<Books> {
  const { config, clock, log, state, telemetry } = b;
  const ledger = await openStateLedger(state, {
    // A lone call's capture syncs on the event loop (src/ledger/sqlite/group-commit.ts `alone`).
    alone: () => b.inflight.size <= 1,
    clock,
    idempotencyTtlMs: config.idempotencyTtlMs,
    groupCommit: true,
    keyCacheTtlMs: config.keyCacheTtlMs,
    // During an outage a failing checkpoint is the outage's (logged once by `health`), not a line each time.
    onCheckpointError: (message) => void (health.down || log.error({ message }, 'ledger checkpoint failed')),
    commits: b.prom?.commits,
  });
  b.closers.add(() => ledger.close());
  const health = new DatabaseHealth(() => ledger.ping(), log);
  b.closers.add(() => health.close());
  // A lease renewal that finds the database gone starts (or is part of) the outage, said once by `health`;
  // any other failure of it is its own.
  const logLeaseError = b.leaseRenewError.report;
  b.leaseRenewError.report = (err) => {
    health.report(err);
    if (!isDatabaseUnavailable(err)) logLeaseError(err);
  };
  const money = new Lifecycle({
    health,
    ledger,
    clock,
    log,
    holdTtlMs: config.holdTtlMs,
    // With card payments on, a refusal for lack of credit points to the dashboard (top-up, card).
    accountUrl: config.billing.stripe ? () => `${config.publicUrl}/account` : undefined,
    telemetry,
  });
  b.gauges.pendingHolds = () => money.pendingHolds();

  // Holds a dead process left (an older SQLite version's rows; PostgreSQL: this replica's previous run and replicas
  // whose lease expired, never a live replica's) are released now rather than after their TTL.
  if (!o.skipRecovery) {
    const orphans = await money.voidOrphans('orphaned_by_restart');
    if (orphans > 0) log.warn({ orphans }, 'voided holds left pending by a previous process');
  }
  const x402 =
    config.x402 &&
    (await import('../run/x402/index.js')).createX402Payments(config.x402, state, clock, telemetry);
  b.closers.add(x402 && (() => x402.facilitator.close()));
  if (x402 && !o.skipRecovery) {
    // x402 payments mid-call in a dead process (this replica's previous run, or a replica whose lease expired):
    // unused ones are released; a settlement in progress is unknown.
    const r = await x402.payments.recover(true);
    if (r.released + r.unknown > 0) log.warn(r, 'x402: recovered payments left by a previous process');
  }
  return { ledger, health, money, x402 };
}
