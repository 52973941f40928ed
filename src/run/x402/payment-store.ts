import type { PaymentPayload, PaymentRequirements, SettleResponse } from '@x402/core/types';
import type { StateDb } from '../../backend.js';
import { inTransaction, isUniqueViolation } from '../../db/open.js';
import { pick, prepare } from '../../db/prepared.js';
import type { Database, StoreDb } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';

// One row per signed x402 payment (per on-chain authorization nonce), so that one payment pays for at most
// one call however often, and however concurrently, it is presented. The row is claimed with a single
// INSERT … ON CONFLICT on the primary key before any work: SQLite serializes writers; on PostgreSQL two replicas
// presenting one payment at once race on the key, the second waits for the first and then takes the conflict
// branch, whose `WHERE status = 'released'` is false. Either way exactly one presenter wins.
//
//   reserved ──> settling ──> settled          (the result is kept and replayed to the same presenter)
//      │            ├──────> failed           (settlement refused: the payer must sign a new payment)
//      │            └──────> unknown ─> settling   (outcome unknown: the same payment resumes, never a new one)
//      └──> released ─> reserved               (nothing was collected: the payment may be presented again)
//
// Rows outlive the payment's validBefore by RETAIN_MS (replays of lost responses), then are purged; an
// expired authorization can no longer move money, so forgetting its nonce is safe. Each row records the replica
// whose call holds it (SQLite: the one fixed id), so recovery never touches a live replica's payment mid-call.
// The statements of a paid call are compiled once (src/db/prepared.ts).

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
  /** validBefore, ms. */
  expiresAt: number;
  /** The payer's payment-identifier id, when it gave one (unique per payer). */
  paymentId: string | undefined;
}

export interface NewPayment
  extends Pick<
    PaymentRow,
    'key' | 'payer' | 'action' | 'fingerprint' | 'payload' | 'requirements' | 'expiresAt'
  > {
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
  /**
   * Payments whose call can no longer finish: reserved → released and settling → unknown. Those of replicas
   * whose lease expired (they run nothing more) and, `atStart`, this replica's own (left by its previous run).
   * Never a live replica's, this one's included: its calls are running.
   */
  recover(atStart: boolean): Promise<{ released: number; unknown: number }>;
  /** Forgets finished payments whose validity ended before `now - RETAIN_MS`. */
  purge(now: number): Promise<number>;
}

export const RETAIN_MS = 24 * 3_600_000;

type DbRow = Database['x402_payments'];

function toRow(r: DbRow): PaymentRow {
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

export function openPaymentStore(state: StateDb, clock: Clock): PaymentStore {
  return new SqlPaymentStore(state.stores, clock, state.replicaId);
}

/** The columns a claim writes (besides its status). */
const CLAIM = [
  'key',
  'payer',
  'action',
  'fingerprint',
  'payload',
  'requirements',
  'expires_at',
  'created_at',
  'updated_at',
  'payment_id',
  'replica',
] as const;

function statements(db: StoreDb) {
  const all = db.selectFrom('x402_payments').selectAll();
  return {
    get: prepare(db, (p: { key: string }) => all.where('key', '=', p.key)),
    byPaymentId: prepare(db, (p: { payer: string; paymentId: string }) =>
      all.where('payer', '=', p.payer).where('payment_id', '=', p.paymentId),
    ),
    // An id moves only away from a payment that collected nothing.
    freeId: prepare(db, (p: { payer: string; paymentId: string; key: string }) =>
      db
        .updateTable('x402_payments')
        .set({ payment_id: null })
        .where('payer', '=', p.payer)
        .where('payment_id', '=', p.paymentId)
        .where('key', '<>', p.key)
        .where('status', 'in', ['released', 'failed']),
    ),
    // The conflict branch only fires for a released row: any other state belongs to someone else.
    reserve: prepare(db, (p: Omit<DbRow, 'status' | 'envelope' | 'receipt'>) =>
      db
        .insertInto('x402_payments')
        .values({ ...pick(p, CLAIM), status: 'reserved' })
        .onConflict((oc) =>
          oc
            .column('key')
            .doUpdateSet((eb) => ({
              status: 'reserved',
              action: eb.ref('excluded.action'),
              fingerprint: eb.ref('excluded.fingerprint'),
              payload: eb.ref('excluded.payload'),
              requirements: eb.ref('excluded.requirements'),
              envelope: null,
              receipt: null,
              updated_at: eb.ref('excluded.updated_at'),
              payment_id: eb.ref('excluded.payment_id'),
              replica: eb.ref('excluded.replica'),
            }))
            .where('x402_payments.status', '=', 'released'),
        ),
    ),
    transition: prepare(
      db,
      (p: {
        to: PaymentStatus;
        from: PaymentStatus;
        key: string;
        envelope: string | null;
        receipt: string | null;
        now: number;
      }) =>
        db
          .updateTable('x402_payments')
          .set((eb) => ({
            status: p.to,
            envelope: eb.fn.coalesce(eb.val(p.envelope), 'envelope'),
            receipt: eb.fn.coalesce(eb.val(p.receipt), 'receipt'),
            updated_at: p.now,
          }))
          .where('key', '=', p.key)
          .where('status', '=', p.from),
    ),
  };
}

class SqlPaymentStore implements PaymentStore {
  private readonly q: ReturnType<typeof statements>;

  constructor(
    private readonly db: StoreDb,
    private readonly clock: Clock,
    private readonly replicaId: string,
  ) {
    this.q = statements(db);
  }

  async get(key: string): Promise<PaymentRow | undefined> {
    const r = await this.q.get.first({ key });
    return r ? toRow(r) : undefined;
  }

  async byPaymentId(payer: string, paymentId: string): Promise<PaymentRow | undefined> {
    const r = await this.q.byPaymentId.first({ payer, paymentId });
    return r ? toRow(r) : undefined;
  }

  async reserve(p: NewPayment): Promise<ReserveResult> {
    const now = this.clock.now();
    let changed: number;
    try {
      const { payer, paymentId, key } = p;
      const row = {
        key,
        payer,
        action: p.action,
        fingerprint: p.fingerprint,
        payload: JSON.stringify(p.payload),
        requirements: JSON.stringify(p.requirements),
        expires_at: p.expiresAt,
        created_at: now,
        updated_at: now,
        payment_id: paymentId ?? null,
        replica: this.replicaId,
      };
      // Without a payment-identifier id the claim is one statement. With one, freeing the id and claiming it
      // commit together, in one transaction. A payment whose id another live payment holds violates the unique
      // index: it is then reported as taken by that payment.
      changed =
        paymentId === undefined
          ? await this.q.reserve.run(row)
          : await inTransaction(this.db, async (trx) => {
              await this.q.freeId.run({ payer, paymentId, key }, trx);
              return this.q.reserve.run(row, trx);
            });
    } catch (e) {
      if (!isUniqueViolation(e) || p.paymentId === undefined) throw e;
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
    const changed = await this.q.transition.run({
      to,
      from,
      key,
      envelope: fields.envelope === undefined ? null : JSON.stringify(fields.envelope),
      receipt: fields.receipt === undefined ? null : JSON.stringify(fields.receipt),
      now: this.clock.now(),
    });
    return changed === 1;
  }

  async recover(atStart: boolean): Promise<{ released: number; unknown: number }> {
    const now = this.clock.now();
    const move = async (from: PaymentStatus, to: PaymentStatus) => {
      const r = await this.db
        .updateTable('x402_payments')
        .set({ status: to, updated_at: now })
        .where('status', '=', from)
        .where((eb) => {
          // A replica that stopped cleanly removed its lease row after its calls finished: it holds nothing.
          const dead = eb(
            'replica',
            'in',
            eb.selectFrom('replicas').select('id').where('lease_expires_at', '<=', now),
          );
          return atStart ? eb.or([dead, eb('replica', '=', this.replicaId)]) : dead;
        })
        .executeTakeFirst();
      return Number(r.numUpdatedRows);
    };
    return { released: await move('reserved', 'released'), unknown: await move('settling', 'unknown') };
  }

  async purge(now: number): Promise<number> {
    const r = await this.db
      .deleteFrom('x402_payments')
      .where('status', 'in', ['settled', 'failed', 'released'])
      .where('expires_at', '<', now - RETAIN_MS)
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
