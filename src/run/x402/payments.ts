import type { StateDb } from '../../backend.js';
import type { Clock } from '../../lib/clock.js';
import { type PaymentStore, SqlitePaymentStore } from './payment-store.js';
import { PgPaymentStore } from './payment-store-pg.js';

/** The x402 payment store of the gateway's state: SQLite (one process), or PostgreSQL shared by replicas. */
export function openPaymentStore(state: StateDb, clock: Clock): PaymentStore {
  return state.kind === 'sqlite'
    ? new SqlitePaymentStore(state.db, clock)
    : new PgPaymentStore(state.pool, clock, state.replicaId);
}
