import type { SettleResponse } from '@x402/core/types';
import type { Clock } from '../../lib/clock.js';
import { inTransaction, type PgPool } from '../../pg/pool.js';
import {
  type NewPayment,
  type PaymentDbRow,
  type PaymentRow,
  type PaymentStatus,
  type PaymentStore,
  RETAIN_MS,
  type ReserveResult,
  toRow,
} from './payment-store.js';

// The x402 payment store on PostgreSQL, shared by replicas (table `x402_payments`, src/pg/migrations/stores.ts).
// The claim is the same single INSERT … ON CONFLICT as on SQLite: two replicas presenting one payment at once
// race on the primary key; PostgreSQL makes the second wait for the first and then take the conflict branch,
// whose `WHERE status = 'released'` is false, so exactly one reserves and the other sees `taken`.
// Each row records the replica whose call holds it: recover() moves only this replica's rows and those of
// replicas whose lease has expired, never a live replica's payment mid-call.

/**
 * Rows held by this replica, or by one whose lease ran out (it crashed or hangs: it runs nothing more). A replica
 * that stopped cleanly removed its lease row after its calls finished, so it holds no reservation to recover.
 */
const MINE_OR_DEAD = `(replica = $2 OR replica IN (SELECT id FROM replicas WHERE lease_expires_at <= $1))`;

export class PgPaymentStore implements PaymentStore {
  constructor(
    private readonly pool: PgPool,
    private readonly clock: Clock,
    private readonly replicaId: string,
  ) {}

  async get(key: string): Promise<PaymentRow | undefined> {
    const r = await this.pool.query<PaymentDbRow>({
      name: 'x402_get',
      text: 'SELECT * FROM x402_payments WHERE key = $1',
      values: [key],
    });
    return r.rows[0] ? toRow(r.rows[0]) : undefined;
  }

  async byPaymentId(payer: string, paymentId: string): Promise<PaymentRow | undefined> {
    const r = await this.pool.query<PaymentDbRow>({
      name: 'x402_by_payment_id',
      text: 'SELECT * FROM x402_payments WHERE payer = $1 AND payment_id = $2',
      values: [payer, paymentId],
    });
    return r.rows[0] ? toRow(r.rows[0]) : undefined;
  }

  async reserve(p: NewPayment): Promise<ReserveResult> {
    const now = this.clock.now();
    let changed: number;
    try {
      // One transaction: freeing the id and claiming it commit together (the unique index arbitrates races).
      changed = await inTransaction(this.pool, async (c) => {
        if (p.paymentId !== undefined) {
          await c.query({
            name: 'x402_free_id',
            text: `UPDATE x402_payments SET payment_id = NULL
                   WHERE payer = $1 AND payment_id = $2 AND key <> $3 AND status IN ('released', 'failed')`,
            values: [p.payer, p.paymentId, p.key],
          });
        }
        const r = await c.query({
          name: 'x402_reserve',
          text: `INSERT INTO x402_payments (key, payer, action, fingerprint, status, payload, requirements, expires_at, created_at, updated_at, payment_id, replica)
                 VALUES ($1, $2, $3, $4, 'reserved', $5, $6, $7, $8, $8, $9, $10)
                 ON CONFLICT (key) DO UPDATE SET status = 'reserved', action = excluded.action,
                   fingerprint = excluded.fingerprint, payload = excluded.payload, requirements = excluded.requirements,
                   envelope = NULL, receipt = NULL, updated_at = excluded.updated_at, payment_id = excluded.payment_id,
                   replica = excluded.replica
                 WHERE x402_payments.status = 'released'`,
          values: [
            p.key,
            p.payer,
            p.action,
            p.fingerprint,
            JSON.stringify(p.payload),
            JSON.stringify(p.requirements),
            p.expiresAt,
            now,
            p.paymentId ?? null,
            this.replicaId,
          ],
        });
        return r.rowCount ?? 0;
      });
    } catch (e) {
      const err = e as { code?: string; constraint?: string };
      if (
        err.code !== '23505' ||
        err.constraint !== 'x402_payments_payment_id' ||
        p.paymentId === undefined
      ) {
        throw e;
      }
      const holder = await this.byPaymentId(p.payer, p.paymentId);
      if (!holder) throw e;
      return { kind: 'taken', row: holder };
    }
    if (changed === 1) return { kind: 'reserved' };
    const row = await this.get(p.key);
    if (!row) throw new Error(`x402 payment ${p.key} vanished after a conflicting claim`);
    return { kind: 'taken', row };
  }

  async transition(
    key: string,
    from: PaymentStatus,
    to: PaymentStatus,
    fields: { envelope?: unknown; receipt?: SettleResponse } = {},
  ): Promise<boolean> {
    const r = await this.pool.query({
      name: 'x402_transition',
      text: `UPDATE x402_payments SET status = $1, envelope = coalesce($2, envelope), receipt = coalesce($3, receipt),
               updated_at = $4 WHERE key = $5 AND status = $6`,
      values: [
        to,
        fields.envelope === undefined ? null : JSON.stringify(fields.envelope),
        fields.receipt === undefined ? null : JSON.stringify(fields.receipt),
        this.clock.now(),
        key,
        from,
      ],
    });
    return r.rowCount === 1;
  }

  async recover(): Promise<{ released: number; unknown: number }> {
    const now = this.clock.now();
    const released = await this.pool.query(
      `UPDATE x402_payments SET status = 'released', updated_at = $1 WHERE status = 'reserved' AND ${MINE_OR_DEAD}`,
      [now, this.replicaId],
    );
    const unknown = await this.pool.query(
      `UPDATE x402_payments SET status = 'unknown', updated_at = $1 WHERE status = 'settling' AND ${MINE_OR_DEAD}`,
      [now, this.replicaId],
    );
    return { released: released.rowCount ?? 0, unknown: unknown.rowCount ?? 0 };
  }

  async purge(now: number): Promise<number> {
    const r = await this.pool.query(
      "DELETE FROM x402_payments WHERE status IN ('settled', 'failed', 'released') AND expires_at < $1",
      [now - RETAIN_MS],
    );
    return r.rowCount ?? 0;
  }
}
