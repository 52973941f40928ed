import { newId } from '../../lib/ids.js';
import { inTransaction, type PgClient, type PgPool } from '../../pg/pool.js';
import {
  availableOf,
  balanceOf,
  type CallDbRow,
  type MovementDbRow,
  toCallRow,
  toMovement,
} from '../db-rows.js';
import { checkAdjust, checkRefund } from '../input-rules.js';
import {
  type AccountRow,
  type AdjustRequest,
  type AdjustResult,
  type CallRow,
  type ChargeRefundRequest,
  type ChargeRefundResult,
  LedgerStateError,
  type MovementRow,
} from '../types.js';
import { CALL_COLUMNS } from './pg-call-reads.js';
import { asLedgerError, uncountCaps } from './pg-movements.js';

// The operator's money on PostgreSQL, with the semantics of src/ledger/sqlite/operator-moves.ts. Each is one
// short transaction that first locks the account row (FOR UPDATE, as tg_begin and the other movements do), so
// the refunds of one call, and a debit against the holds of that account, are serialized on every replica; the
// refund's guarded UPDATE (refunded + amount ≤ charged, re-checked on the row's newest version) and the unique
// index on (kind, external_ref) are the backstops.

const isUnique = (err: unknown) => (err as { code?: string }).code === '23505';

export class PgOperatorMoves {
  constructor(private readonly pool: PgPool) {}

  /** One transaction; a request racing another with the same reference runs again and finds the first. */
  private async tx<T>(fn: (c: PgClient) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await inTransaction(this.pool, fn);
      } catch (err) {
        if (attempt === 0 && isUnique(err)) continue;
        throw asLedgerError(err);
      }
    }
  }

  private async lock(c: PgClient, id: string): Promise<AccountRow> {
    await c.query({
      name: 'tg_op_lock',
      text: 'SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE',
      values: [id],
    });
    const r = await c.query<AccountRow>({
      name: 'tg_account',
      text: 'SELECT * FROM accounts_v WHERE id = $1',
      values: [id],
    });
    const a = r.rows[0];
    if (!a) throw new LedgerStateError(`unknown account ${id}`);
    return a;
  }

  private async call(c: PgClient, id: string): Promise<CallRow | undefined> {
    const r = await c.query<CallDbRow>(`SELECT ${CALL_COLUMNS} FROM calls WHERE id = $1`, [id]);
    return r.rows[0] && toCallRow(r.rows[0]);
  }

  private async byRef(c: PgClient, kind: string, ref: string): Promise<MovementRow | undefined> {
    const r = await c.query<MovementDbRow>('SELECT * FROM movements WHERE kind = $1 AND external_ref = $2', [
      kind,
      ref,
    ]);
    return r.rows[0] && toMovement(r.rows[0]);
  }

  private async insert(
    c: PgClient,
    accountId: string,
    kind: 'call_refund' | 'adjustment',
    micros: number,
    memo: string,
    ref: string | null,
    meta: Record<string, unknown>,
    now: number,
  ): Promise<MovementRow> {
    const r = await c.query<MovementDbRow>(
      `INSERT INTO movements (id, account_id, kind, amount_micros, status, memo, external_ref, created_at, finished_at, meta)
       VALUES ($1, $2, $3, $4, 'succeeded', $5, $6, $7, $7, $8) RETURNING *`,
      [newId('mv', now), accountId, kind, micros, memo, ref, now, JSON.stringify(meta)],
    );
    return toMovement(r.rows[0] as MovementDbRow);
  }

  private async balance(c: PgClient, id: string) {
    const r = await c.query<AccountRow>({
      name: 'tg_account',
      text: 'SELECT * FROM accounts_v WHERE id = $1',
      values: [id],
    });
    return balanceOf(r.rows[0] as AccountRow);
  }

  async refundCharge(req: ChargeRefundRequest, now: number): Promise<ChargeRefundResult> {
    checkRefund(req);
    const requested = req.micros ?? null;
    return this.tx(async (c): Promise<ChargeRefundResult> => {
      const first = await this.call(c, req.callId);
      if (!first) return { kind: 'unknown_call' };
      await this.lock(c, first.account_id);
      const seen = await this.byRef(c, 'call_refund', req.ref);
      // Read again under the account's lock: another replica may have refunded it meanwhile.
      const call = (await this.call(c, req.callId)) as CallRow;
      if (seen) {
        const same =
          seen.meta?.refund_of === req.callId &&
          seen.meta?.requested_micros === requested &&
          seen.memo === req.reason;
        if (!same) return { kind: 'mismatch', movementId: seen.id };
        return { kind: 'duplicate', movement: seen, call, balance: await this.balance(c, seen.account_id) };
      }
      const left = call.charged_micros - call.refunded_micros;
      if (call.status !== 'succeeded' || left <= 0) return { kind: 'not_refundable', call };
      const micros = requested ?? left;
      if (micros > left) return { kind: 'exceeds', call, leftMicros: left };
      const updated = await c.query<CallDbRow & { cap_keys: string[] | null }>(
        `UPDATE calls SET refunded_micros = refunded_micros + $1, operator_refunded_micros = operator_refunded_micros + $1,
                          status = CASE WHEN refunded_micros + $1 = charged_micros THEN 'refunded' ELSE status END
          WHERE id = $2 AND status = 'succeeded' AND refunded_micros + $1 <= charged_micros
          RETURNING ${CALL_COLUMNS}, cap_keys`,
        [micros, req.callId],
      );
      const row = updated.rows[0];
      if (!row) throw new LedgerStateError(`refund of ${micros} for ${req.callId} did not fit what is left`);
      const { cap_keys: caps, ...after } = row;
      // As a failed job's refund: it comes off the cap counters the call counted against (docs/decisions.md
      // "Limits per API key"), so what the key may spend in that window grows by as much.
      await uncountCaps(c, call.account_id, caps, micros);
      const meta = { refund_of: req.callId, requested_micros: requested, by: req.by };
      const m = await this.insert(c, call.account_id, 'call_refund', micros, req.reason, req.ref, meta, now);
      await c.query(
        "INSERT INTO entries (transfer_id, account_id, amount_micros, kind, call_id, memo, created_at) VALUES ($1, $2, $3, 'refund', $4, $5, $6), ($1, 'sys_revenue', $7, 'refund', $4, $5, $6)",
        [newId('tr', now), call.account_id, micros, m.id, req.reason, now, -micros],
      );
      // Revenue gives back what this account paid it (its part of sys_revenue: accounts.revenue_micros).
      await c.query(
        'UPDATE accounts SET balance_micros = balance_micros + $1, revenue_micros = revenue_micros - $1 WHERE id = $2',
        [micros, call.account_id],
      );
      return {
        kind: 'refunded',
        movement: m,
        call: toCallRow(after),
        balance: await this.balance(c, call.account_id),
      };
    });
  }

  async adjust(req: AdjustRequest, now: number): Promise<AdjustResult> {
    checkAdjust(req);
    return this.tx(async (c): Promise<AdjustResult> => {
      const a = await this.lock(c, req.accountId);
      if (a.kind !== 'customer')
        throw new LedgerStateError(`only customer balances are adjusted, not ${a.id}`);
      if (req.ref !== undefined) {
        const seen = await this.byRef(c, 'adjustment', req.ref);
        if (seen) {
          const same =
            seen.account_id === req.accountId &&
            seen.amount_micros === req.micros &&
            seen.memo === req.reason;
          return same
            ? { kind: 'duplicate', movement: seen, balance: balanceOf(a) }
            : { kind: 'mismatch', movementId: seen.id };
        }
      }
      // held_micros counts every replica's pending holds on this account (they are rows here).
      if (req.micros < 0 && availableOf(a) < -req.micros)
        return { kind: 'insufficient', balance: balanceOf(a) };
      const m = await this.insert(
        c,
        a.id,
        'adjustment',
        req.micros,
        req.reason,
        req.ref ?? null,
        { by: req.by },
        now,
      );
      await c.query({
        name: 'tg_mv_transfer',
        text: "SELECT tg_transfer($1, $2, $3, 'topup', $4, $5, $6)",
        values: [a.id, 'sys_funding', req.micros, m.id, req.reason, now],
      });
      return { kind: 'adjusted', movement: m, balance: await this.balance(c, a.id) };
    });
  }
}
