import type { PaymentPayload, PaymentRequirements, SettleResponse } from '@x402/core/types';
import type { Clock } from '../../lib/clock.js';
import { migrate, type SqliteDb } from '../../lib/sqlite.js';

// One row per signed x402 payment (per on-chain authorization nonce), so that one payment pays for at most
// one call however often, and however concurrently, it is presented. The row is claimed with a single
// INSERT on the primary key before any work: SQLite serializes writers, so exactly one presenter wins.
//
//   reserved ──> settling ──> settled          (the result is kept and replayed to the same presenter)
//      │            ├──────> failed           (settlement refused: the payer must sign a new payment)
//      │            └──────> unknown ─> settling   (outcome unknown: the same payment resumes, never a new one)
//      └──> released ─> reserved               (nothing was collected: the payment may be presented again)
//
// Rows outlive the payment's validBefore by RETAIN_MS (replays of lost responses), then are purged; an
// expired authorization can no longer move money, so forgetting its nonce is safe.

export type PaymentStatus = 'reserved' | 'settling' | 'unknown' | 'settled' | 'failed' | 'released';

export interface PaymentRow {
  key: string;
  payer: string;
  action: string;
  fingerprint: string;
  status: PaymentStatus;
  payload: PaymentPayload;
  requirements: PaymentRequirements;
  /** The call's envelope, stored before settling: replayed after success, delivered when an unknown resolves. */
  envelope: unknown;
  receipt: SettleResponse | undefined;
  expiresAt: number;
  /** The payer's payment-identifier id, when it gave one (unique per payer). */
  paymentId: string | undefined;
}

export interface NewPayment {
  key: string;
  payer: string;
  action: string;
  fingerprint: string;
  payload: PaymentPayload;
  requirements: PaymentRequirements;
  /** validBefore, ms. */
  expiresAt: number;
  /**
   * The payer's payment-identifier id: it moves to this payment from an earlier one of the same payer that
   * collected nothing (released or failed); the caller has checked that no other holds it.
   */
  paymentId?: string | undefined;
}

export type ReserveResult = { kind: 'reserved' } | { kind: 'taken'; row: PaymentRow };

export interface PaymentStore {
  get(key: string): Promise<PaymentRow | undefined>;
  /** The payment a payer named with a payment-identifier id. */
  byPaymentId(payer: string, paymentId: string): Promise<PaymentRow | undefined>;
  /** Claims the payment for one call: new, or previously released. Otherwise returns the row as it is. */
  reserve(p: NewPayment): Promise<ReserveResult>;
  /** Moves `key` from `from` to `to` (and records the envelope/receipt); false if it was not in `from`. */
  transition(
    key: string,
    from: PaymentStatus,
    to: PaymentStatus,
    fields?: { envelope?: unknown; receipt?: SettleResponse },
  ): Promise<boolean>;
  /** After a restart: nothing runs any more, so reserved → released and settling → unknown. */
  recover(): Promise<{ released: number; unknown: number }>;
  /** Forgets finished payments whose validity ended before `now - RETAIN_MS`. */
  purge(now: number): Promise<number>;
}

export const RETAIN_MS = 24 * 3_600_000;

const MIGRATIONS = [
  `
  CREATE TABLE x402_payments (
    key          TEXT PRIMARY KEY,     -- network:asset:from:nonce, lower case
    payer        TEXT NOT NULL,
    action       TEXT NOT NULL,
    fingerprint  TEXT NOT NULL,        -- action + body: a payment replays only the call it paid for
    status       TEXT NOT NULL CHECK (status IN ('reserved', 'settling', 'unknown', 'settled', 'failed', 'released')),
    payload      TEXT NOT NULL,        -- kept to resume a settlement whose outcome was unknown
    requirements TEXT NOT NULL,
    envelope     TEXT,
    receipt      TEXT,
    expires_at   INTEGER NOT NULL,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL
  );
  CREATE INDEX x402_payments_expiry ON x402_payments(expires_at) WHERE status IN ('settled', 'failed', 'released');
  `,
  // payment-identifier (x402 extension): the payer's own idempotency key, one payment per (payer, id).
  `
  ALTER TABLE x402_payments ADD COLUMN payment_id TEXT;
  CREATE UNIQUE INDEX x402_payments_payment_id ON x402_payments(payer, payment_id) WHERE payment_id IS NOT NULL;
  `,
];

/** A payment as both backends store it (JSON as text). */
export interface PaymentDbRow {
  key: string;
  payer: string;
  action: string;
  fingerprint: string;
  status: PaymentStatus;
  payload: string;
  requirements: string;
  envelope: string | null;
  receipt: string | null;
  expires_at: number;
  payment_id: string | null;
}

export function toRow(r: PaymentDbRow): PaymentRow {
  return {
    key: r.key,
    payer: r.payer,
    action: r.action,
    fingerprint: r.fingerprint,
    status: r.status,
    payload: JSON.parse(r.payload) as PaymentPayload,
    requirements: JSON.parse(r.requirements) as PaymentRequirements,
    envelope: r.envelope === null ? undefined : (JSON.parse(r.envelope) as unknown),
    receipt: r.receipt === null ? undefined : (JSON.parse(r.receipt) as SettleResponse),
    expiresAt: r.expires_at,
    paymentId: r.payment_id ?? undefined,
  };
}

/**
 * The SQLite store. Each statement is one autocommit write: better-sqlite3 is synchronous, so no transaction
 * is held across an await, and a claim is durable (synchronous=FULL) before the call runs.
 */
export class SqlitePaymentStore implements PaymentStore {
  private readonly s;
  private readonly reserveTx;

  constructor(
    db: SqliteDb,
    private readonly clock: Clock,
  ) {
    migrate(db, 'x402', MIGRATIONS);
    this.s = {
      get: db.prepare<[string], PaymentDbRow>('SELECT * FROM x402_payments WHERE key = ?'),
      byPaymentId: db.prepare<[string, string], PaymentDbRow>(
        'SELECT * FROM x402_payments WHERE payer = ? AND payment_id = ?',
      ),
      // An id moves only away from a payment that collected nothing.
      freeId: db.prepare(
        `UPDATE x402_payments SET payment_id = NULL
         WHERE payer = ? AND payment_id = ? AND key <> ? AND status IN ('released', 'failed')`,
      ),
      // The conflict branch only fires for a released row: any other state belongs to someone else.
      reserve: db.prepare(
        `INSERT INTO x402_payments (key, payer, action, fingerprint, status, payload, requirements, expires_at, created_at, updated_at, payment_id)
         VALUES (?, ?, ?, ?, 'reserved', ?, ?, ?, ?, ?, ?)
         ON CONFLICT (key) DO UPDATE SET status = 'reserved', action = excluded.action,
           fingerprint = excluded.fingerprint, payload = excluded.payload, requirements = excluded.requirements,
           envelope = NULL, receipt = NULL, updated_at = excluded.updated_at, payment_id = excluded.payment_id
         WHERE x402_payments.status = 'released'`,
      ),
      transition: db.prepare(
        `UPDATE x402_payments SET status = ?, envelope = coalesce(?, envelope), receipt = coalesce(?, receipt),
           updated_at = ? WHERE key = ? AND status = ?`,
      ),
      recoverReserved: db.prepare(
        "UPDATE x402_payments SET status = 'released', updated_at = ? WHERE status = 'reserved'",
      ),
      recoverSettling: db.prepare(
        "UPDATE x402_payments SET status = 'unknown', updated_at = ? WHERE status = 'settling'",
      ),
      purge: db.prepare(
        "DELETE FROM x402_payments WHERE status IN ('settled', 'failed', 'released') AND expires_at < ?",
      ),
    };
    // One transaction: freeing the id and claiming it cannot interleave with another claim. A payment whose id
    // another live payment holds violates the unique index: it is then reported as taken by that payment.
    this.reserveTx = db.transaction((p: NewPayment, now: number): number => {
      if (p.paymentId !== undefined) this.s.freeId.run(p.payer, p.paymentId, p.key);
      return this.s.reserve.run(
        p.key,
        p.payer,
        p.action,
        p.fingerprint,
        JSON.stringify(p.payload),
        JSON.stringify(p.requirements),
        p.expiresAt,
        now,
        now,
        p.paymentId ?? null,
      ).changes;
    });
  }

  get(key: string): Promise<PaymentRow | undefined> {
    const r = this.s.get.get(key);
    return Promise.resolve(r ? toRow(r) : undefined);
  }

  byPaymentId(payer: string, paymentId: string): Promise<PaymentRow | undefined> {
    const r = this.s.byPaymentId.get(payer, paymentId);
    return Promise.resolve(r ? toRow(r) : undefined);
  }

  reserve(p: NewPayment): Promise<ReserveResult> {
    let changed: number;
    try {
      changed = this.reserveTx(p, this.clock.now());
    } catch (e) {
      const holder = p.paymentId === undefined ? undefined : this.s.byPaymentId.get(p.payer, p.paymentId);
      if (!holder || !/UNIQUE/.test(String((e as Error).message))) throw e;
      return Promise.resolve({ kind: 'taken', row: toRow(holder) });
    }
    if (changed === 1) return Promise.resolve({ kind: 'reserved' });
    return Promise.resolve({ kind: 'taken', row: toRow(this.s.get.get(p.key) as PaymentDbRow) });
  }

  transition(
    key: string,
    from: PaymentStatus,
    to: PaymentStatus,
    fields: { envelope?: unknown; receipt?: SettleResponse } = {},
  ): Promise<boolean> {
    const envelope = fields.envelope === undefined ? null : JSON.stringify(fields.envelope);
    const receipt = fields.receipt === undefined ? null : JSON.stringify(fields.receipt);
    const changed = this.s.transition.run(to, envelope, receipt, this.clock.now(), key, from).changes;
    return Promise.resolve(changed === 1);
  }

  recover(): Promise<{ released: number; unknown: number }> {
    const now = this.clock.now();
    const released = this.s.recoverReserved.run(now).changes;
    const unknown = this.s.recoverSettling.run(now).changes;
    return Promise.resolve({ released, unknown });
  }

  purge(now: number): Promise<number> {
    return Promise.resolve(this.s.purge.run(now - RETAIN_MS).changes);
  }
}
