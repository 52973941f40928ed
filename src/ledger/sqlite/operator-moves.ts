import { newId } from '../../lib/ids.js';
import type { SqliteDb } from '../../lib/sqlite.js';
import { type CallDbRow, type MovementDbRow, withMeta } from '../db-rows.js';
import {
  type AccountRow,
  type AdjustRequest,
  type AdjustResult,
  type Balance,
  type CallRow,
  type ChargeRefundRequest,
  type ChargeRefundResult,
  LedgerStateError,
  type MovementRow,
} from '../types.js';

// The operator's money on SQLite: refunds of calls (all or part of a charge) and adjustments of balances. Each
// runs inside one of the ledger's serialized commits (./group-commit.ts), so the check of what is left (or free)
// and the write are one step; the guarded UPDATE of the call (refunded + amount ≤ charged) is the backstop for a
// second process writing the same file (the CLI beside a gateway). Entries stay double and append-only: a refund
// is revenue → account, an adjustment sys_funding ↔ account, both tagged with the movement's id.

const REVENUE = 'sys_revenue';
const FUNDING = 'sys_funding';

export interface OperatorMovesDeps {
  /** A call this process holds in memory (pending: its row is written when it resolves). */
  pending(callId: string): CallRow | undefined;
  /** What a new hold may take on the account, this process's holds included. */
  available(a: AccountRow): number;
  balance(accountId: string): Balance;
  /** Takes a refund off the cap counters the call counted against (`calls.cap_keys`): ./refunds.ts. */
  uncountCaps(accountId: string, caps: string | null, micros: number): void;
}

export class SqliteOperatorMoves {
  private readonly s;

  constructor(
    db: SqliteDb,
    private readonly deps: OperatorMovesDeps,
  ) {
    this.s = {
      account: db.prepare<[string], AccountRow>('SELECT * FROM accounts WHERE id = ?'),
      call: db.prepare<[string], CallDbRow>('SELECT * FROM calls WHERE id = ?'),
      caps: db.prepare<[string], { cap_keys: string | null }>('SELECT cap_keys FROM calls WHERE id = ?'),
      byRef: db.prepare<[string, string], MovementDbRow>(
        'SELECT * FROM movements WHERE kind = ? AND external_ref = ?',
      ),
      movement: db.prepare<[string], MovementDbRow>('SELECT * FROM movements WHERE id = ?'),
      insMovement: db.prepare(
        "INSERT INTO movements (id, account_id, kind, amount_micros, status, memo, external_ref, created_at, finished_at, meta) VALUES (?, ?, ?, ?, 'succeeded', ?, ?, ?, ?, ?)",
      ),
      insEntry: db.prepare(
        'INSERT INTO entries (transfer_id, account_id, amount_micros, kind, call_id, memo, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      addBalance: db.prepare('UPDATE accounts SET balance_micros = balance_micros + ? WHERE id = ?'),
      // Refunded in full: `refunded`; in part: still `succeeded`, with what was refunded. Never past the charge.
      refund: db.prepare(
        `UPDATE calls SET refunded_micros = refunded_micros + @micros,
                          operator_refunded_micros = operator_refunded_micros + @micros,
                          status = CASE WHEN refunded_micros + @micros = charged_micros THEN 'refunded' ELSE status END
          WHERE id = @id AND status = 'succeeded' AND refunded_micros + @micros <= charged_micros`,
      ),
    };
  }

  private callRow(id: string): CallRow | undefined {
    const r = this.s.call.get(id);
    if (!r) return this.deps.pending(id);
    // The counters it counted against are the ledger's business, not the row's (as PostgreSQL's CALL_COLUMNS).
    const { cap_keys: _, ...row } = r as CallDbRow & { cap_keys?: unknown };
    return withMeta(row);
  }

  private movement(id: string): MovementRow {
    return withMeta(this.s.movement.get(id) as MovementDbRow);
  }

  /** Two entries summing to zero, the movement's id in call_id, and the cached balances with them. */
  private transfer(
    accountId: string,
    system: string,
    micros: number,
    kind: 'refund' | 'topup',
    movementId: string,
    memo: string,
    now: number,
  ): void {
    const t = newId('tr', now);
    this.s.insEntry.run(t, accountId, micros, kind, movementId, memo, now);
    this.s.insEntry.run(t, system, -micros, kind, movementId, memo, now);
    this.s.addBalance.run(micros, accountId);
    this.s.addBalance.run(-micros, system);
  }

  refundCharge(req: ChargeRefundRequest, now: number): ChargeRefundResult {
    const requested = req.micros ?? null;
    const seen = this.s.byRef.get('call_refund', req.ref);
    if (seen) {
      const m = withMeta(seen);
      const same =
        m.meta?.refund_of === req.callId && m.meta?.requested_micros === requested && m.memo === req.reason;
      if (!same) return { kind: 'mismatch', movementId: m.id };
      const call = this.callRow(req.callId) as CallRow;
      return { kind: 'duplicate', movement: m, call, balance: this.deps.balance(m.account_id) };
    }
    const call = this.callRow(req.callId);
    if (!call) return { kind: 'unknown_call' };
    const left = call.charged_micros - call.refunded_micros;
    if (call.status !== 'succeeded' || left <= 0) return { kind: 'not_refundable', call };
    const micros = requested ?? left;
    if (micros > left) return { kind: 'exceeds', call, leftMicros: left };
    if (this.s.refund.run({ micros, id: req.callId }).changes !== 1) {
      throw new LedgerStateError(`refund of ${micros} for ${req.callId} did not fit what is left`);
    }
    const id = newId('mv', now);
    const meta = { refund_of: req.callId, requested_micros: requested, by: req.by };
    this.s.insMovement.run(
      id,
      call.account_id,
      'call_refund',
      micros,
      req.reason,
      req.ref,
      now,
      now,
      JSON.stringify(meta),
    );
    this.transfer(call.account_id, REVENUE, micros, 'refund', id, req.reason, now);
    // As a failed job's refund: off the cap counters the call counted against (docs/decisions.md "Limits per API
    // key"), so what the key may spend in that window grows by as much.
    this.deps.uncountCaps(call.account_id, this.s.caps.get(req.callId)?.cap_keys ?? null, micros);
    return {
      kind: 'refunded',
      movement: this.movement(id),
      call: this.callRow(req.callId) as CallRow,
      balance: this.deps.balance(call.account_id),
    };
  }

  adjust(req: AdjustRequest, now: number): AdjustResult {
    const a = this.s.account.get(req.accountId);
    if (!a) throw new LedgerStateError(`unknown account ${req.accountId}`);
    if (a.kind !== 'customer') throw new LedgerStateError(`only customer balances are adjusted, not ${a.id}`);
    if (req.ref !== undefined) {
      const seen = this.s.byRef.get('adjustment', req.ref);
      if (seen) {
        const m = withMeta(seen);
        const same =
          m.account_id === req.accountId && m.amount_micros === req.micros && m.memo === req.reason;
        return same
          ? { kind: 'duplicate', movement: m, balance: this.deps.balance(a.id) }
          : { kind: 'mismatch', movementId: m.id };
      }
    }
    // A debit takes only what no pending hold needs (this process's holds included: ./reservations.ts).
    if (req.micros < 0 && this.deps.available(a) < -req.micros) {
      return { kind: 'insufficient', balance: this.deps.balance(a.id) };
    }
    const id = newId('mv', now);
    this.s.insMovement.run(
      id,
      a.id,
      'adjustment',
      req.micros,
      req.reason,
      req.ref ?? null,
      now,
      now,
      JSON.stringify({ by: req.by }),
    );
    this.transfer(a.id, FUNDING, req.micros, 'topup', id, req.reason, now);
    return { kind: 'adjusted', movement: this.movement(id), balance: this.deps.balance(a.id) };
  }
}
