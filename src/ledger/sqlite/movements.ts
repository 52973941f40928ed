import { newId } from '../../lib/ids.js';
import type { SqliteDb } from '../../lib/sqlite.js';
import { pairedKind, planExternal } from '../card-money.js';
import { balanceOf as balanceOfRow, MAX_TIME, type MovementDbRow, toMovement } from '../db-rows.js';
import {
  type AccountRow,
  type Balance,
  type CreditLine,
  type ExternalRequest,
  type ExternalResult,
  type GrantLineRequest,
  type GrantLineResult,
  LedgerStateError,
  type MovementKind,
  type MovementRow,
  type SettlementOutcome,
  type SettlementRequest,
  type SettlementResult,
  type SettlementStart,
  type TimeRange,
} from '../types.js';

// Money that moves without a call, and credit lines. Every method that writes runs inside the ledger's write
// queue (one serialized transaction, no await inside); each transfer is two entries summing to zero, tagged with
// the movement's id. The outside's money goes through `sys_card` (card payments) or `sys_funding` (operator
// credits), so "entries sum to zero" keeps holding.

const CARD = 'sys_card';
const FUNDING = 'sys_funding';

export class SqliteMovements {
  private readonly s;

  /** `heldInMemory`: what the process holds on an account besides the row's held_micros (the gateway's holds). */
  constructor(
    db: SqliteDb,
    private readonly heldInMemory: (accountId: string) => number = () => 0,
  ) {
    this.s = {
      account: db.prepare<[string], AccountRow>('SELECT * FROM accounts WHERE id = ?'),
      addBalance: db.prepare('UPDATE accounts SET balance_micros = balance_micros + ? WHERE id = ?'),
      insEntry: db.prepare(
        "INSERT INTO entries (transfer_id, account_id, amount_micros, kind, call_id, memo, created_at) VALUES (?, ?, ?, 'topup', ?, ?, ?)",
      ),
      insMovement: db.prepare(
        'INSERT INTO movements (id, account_id, kind, amount_micros, status, memo, external_ref, created_at, finished_at, meta) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      ),
      movement: db.prepare<[string], MovementDbRow>('SELECT * FROM movements WHERE id = ?'),
      byRef: db.prepare<[string, string], MovementDbRow>(
        'SELECT * FROM movements WHERE kind = ? AND external_ref = ?',
      ),
      movementsOf: db.prepare<[string, number, number, number], MovementDbRow>(
        'SELECT * FROM movements WHERE account_id = ? AND created_at >= ? AND created_at < ? ORDER BY created_at DESC, id DESC LIMIT ?',
      ),
      pendingSettlementOf: db.prepare<[string], MovementDbRow>(
        "SELECT * FROM movements WHERE account_id = ? AND kind = 'settlement' AND status = 'pending'",
      ),
      pendingSettlements: db.prepare<[number, number], MovementDbRow>(
        "SELECT * FROM movements WHERE status = 'pending' AND kind = 'settlement' AND created_at < ? ORDER BY created_at LIMIT ?",
      ),
      finishMovement: db.prepare(
        'UPDATE movements SET status = ?, amount_micros = ?, external_ref = coalesce(?, external_ref), finished_at = ?, meta = coalesce(?, meta) WHERE id = ?',
      ),
      grant: db.prepare<[string], { granted_at: number }>(
        'SELECT granted_at FROM credit_line_grants WHERE account_id = ?',
      ),
      grantOfCard: db.prepare<[string], { account_id: string }>(
        'SELECT account_id FROM credit_line_grants WHERE card_fingerprint = ?',
      ),
      insGrant: db.prepare(
        'INSERT INTO credit_line_grants (account_id, card_fingerprint, micros, granted_at) VALUES (?, ?, ?, ?)',
      ),
      setLine: db.prepare('UPDATE accounts SET credit_line_micros = credit_line_micros + ? WHERE id = ?'),
      freeze: db.prepare(
        'UPDATE accounts SET line_frozen_at = ?, line_frozen_reason = ? WHERE id = ? AND line_frozen_at IS NULL',
      ),
      unfreeze: db.prepare(
        'UPDATE accounts SET line_frozen_at = NULL, line_frozen_reason = NULL WHERE id = ?',
      ),
      drawn: db.prepare<[number, number], { account_id: string; drawn_micros: number }>(
        `SELECT id AS account_id, -balance_micros AS drawn_micros FROM accounts
          WHERE balance_micros < 0 AND -balance_micros >= ? AND kind = 'customer'
            AND credit_line_micros > 0 AND line_frozen_at IS NULL
          ORDER BY balance_micros LIMIT ?`,
      ),
    };
  }

  private balanceOf(a: AccountRow): Balance {
    const held = this.heldInMemory(a.id);
    const b = balanceOfRow(a);
    return { ...b, held_micros: b.held_micros + held, available_micros: b.available_micros - held };
  }

  private account(id: string): AccountRow {
    const a = this.s.account.get(id);
    if (!a) throw new LedgerStateError(`unknown account ${id}`);
    return a;
  }

  /** Moves `micros` (signed, + into the account) between the account and a system account, as two entries. */
  private transfer(
    accountId: string,
    system: string,
    micros: number,
    movementId: string,
    memo: string,
    now: number,
  ) {
    if (micros === 0) return;
    const transfer = newId('tr', now);
    this.s.insEntry.run(transfer, accountId, micros, movementId, memo, now);
    this.s.insEntry.run(transfer, system, -micros, movementId, memo, now);
    this.s.addBalance.run(micros, accountId);
    this.s.addBalance.run(-micros, system);
  }

  private insert(
    accountId: string,
    kind: MovementKind,
    micros: number,
    status: MovementRow['status'],
    memo: string,
    externalRef: string | null,
    now: number,
    meta?: Record<string, unknown>,
  ): string {
    const id = newId('mv', now);
    const finished = status === 'pending' ? null : now;
    this.s.insMovement.run(
      id,
      accountId,
      kind,
      micros,
      status,
      memo,
      externalRef,
      now,
      finished,
      meta ? JSON.stringify(meta) : null,
    );
    return id;
  }

  /** An operator credit or a welcome grant: money from outside (sys_funding), recorded as a movement. */
  credit(accountId: string, micros: number, memo: string, now: number): Balance {
    this.account(accountId);
    const id = this.insert(accountId, 'credit', micros, 'succeeded', memo, null, now);
    this.transfer(accountId, FUNDING, micros, id, memo, now);
    return this.balanceOf(this.account(accountId));
  }

  external(req: ExternalRequest, now: number): ExternalResult {
    const seen = this.s.byRef.get(req.kind, req.externalRef);
    if (seen) return { kind: 'duplicate', movementId: seen.id };
    const a = this.account(req.accountId);
    const pairKind = pairedKind(req.kind);
    const pair = pairKind ? this.s.byRef.get(pairKind, req.externalRef) : undefined;
    // The gateway's in-memory holds count as held: a call in flight still captures.
    const held = { ...a, held_micros: a.held_micros + this.heldInMemory(a.id) };
    const plan = planExternal(req, held, pair ? toMovement(pair) : undefined);
    if (plan.kind === 'reversed') return plan;
    const id = this.insert(
      req.accountId,
      req.kind,
      plan.micros,
      'succeeded',
      req.memo,
      req.externalRef,
      now,
      plan.meta,
    );
    this.transfer(req.accountId, CARD, plan.micros, id, req.memo, now);
    return {
      kind: 'recorded',
      movementId: id,
      movedMicros: Math.abs(plan.micros),
      unrecoveredMicros: plan.unrecoveredMicros,
      balance: this.balanceOf(this.account(req.accountId)),
    };
  }

  grantLine(req: GrantLineRequest, now: number): GrantLineResult {
    const a = this.account(req.accountId);
    if (a.kind !== 'customer') throw new LedgerStateError(`only customers get a credit line, not ${a.id}`);
    if (this.s.grant.get(req.accountId)) return { kind: 'account_has_line' };
    if (this.s.grantOfCard.get(req.cardFingerprint)) return { kind: 'card_has_line' };
    this.s.insGrant.run(req.accountId, req.cardFingerprint, req.micros, now);
    this.s.setLine.run(req.micros, req.accountId);
    const id = this.insert(req.accountId, 'line', 0, 'succeeded', req.memo, null, now, {
      line_micros: req.micros,
    });
    return { kind: 'granted', movementId: id };
  }

  freeze(accountId: string, reason: string | null, now: number): void {
    this.account(accountId);
    // The first reason stays: it is the one the account holder has to fix.
    if (reason === null) this.s.unfreeze.run(accountId);
    else this.s.freeze.run(now, reason, accountId);
  }

  beginSettlement(req: SettlementRequest, now: number): SettlementStart {
    const pending = this.s.pendingSettlementOf.get(req.accountId);
    if (pending) return { kind: 'pending', movementId: pending.id, micros: pending.amount_micros };
    const a = this.account(req.accountId);
    const drawn = Math.max(0, -a.balance_micros);
    // Only what the line paid for: a balance below the line cannot happen (debits stop at the prepaid balance).
    const due = Math.min(drawn, a.credit_line_micros);
    const micros = req.stepMicros > 0 ? due - (due % req.stepMicros) : due;
    if (micros <= 0 || micros < req.minMicros) return { kind: 'nothing_due', drawnMicros: drawn };
    const id = this.insert(req.accountId, 'settlement', micros, 'pending', req.memo, null, now);
    return { kind: 'started', movementId: id, micros };
  }

  finishSettlement(movementId: string, outcome: SettlementOutcome, now: number): SettlementResult {
    const m = this.s.movement.get(movementId);
    if (m?.kind !== 'settlement') throw new LedgerStateError(`no settlement ${movementId}`);
    if (m.status === 'succeeded') return { kind: 'already', status: 'succeeded' };
    if (!outcome.ok) {
      if (m.status === 'failed') return { kind: 'already', status: 'failed' };
      this.s.finishMovement.run(
        'failed',
        m.amount_micros,
        outcome.externalRef ?? null,
        now,
        JSON.stringify({ reason: outcome.reason }),
        m.id,
      );
      this.freeze(m.account_id, outcome.reason, now);
      return { kind: 'failed' };
    }
    // Pending, or failed and then reported paid after all (events can arrive out of order): the card paid.
    this.s.finishMovement.run('succeeded', m.amount_micros, outcome.externalRef, now, null, m.id);
    this.transfer(m.account_id, CARD, m.amount_micros, m.id, m.memo ?? 'settlement', now);
    this.s.unfreeze.run(m.account_id);
    return { kind: 'settled', micros: m.amount_micros };
  }

  // ---- reads -------------------------------------------------------------------------------------------------

  creditLine(accountId: string): CreditLine {
    const a = this.account(accountId);
    const grant = this.s.grant.get(accountId);
    const pending = this.s.pendingSettlementOf.get(accountId);
    return {
      limit_micros: a.credit_line_micros,
      drawn_micros: Math.max(0, -a.balance_micros),
      frozen: a.line_frozen_at === null ? null : { at: a.line_frozen_at, reason: a.line_frozen_reason ?? '' },
      granted_at: grant?.granted_at ?? null,
      settling: pending ? { movement_id: pending.id, micros: pending.amount_micros } : null,
    };
  }

  movements(accountId: string, limit: number, range: TimeRange = {}): MovementRow[] {
    return this.s.movementsOf
      .all(accountId, range.fromMs ?? 0, range.toMs ?? MAX_TIME, limit)
      .map(toMovement);
  }

  get(id: string): MovementRow | undefined {
    const r = this.s.movement.get(id);
    return r ? toMovement(r) : undefined;
  }

  byRef(kind: MovementKind, ref: string): MovementRow | undefined {
    const r = this.s.byRef.get(kind, ref);
    return r ? toMovement(r) : undefined;
  }

  drawnAccounts(minDrawnMicros: number, limit: number) {
    return this.s.drawn.all(Math.max(1, minDrawnMicros), limit);
  }

  pendingSettlements(startedBefore: number, limit: number): MovementRow[] {
    return this.s.pendingSettlements.all(startedBefore, limit).map(toMovement);
  }
}
