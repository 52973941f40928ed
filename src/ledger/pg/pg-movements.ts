import { newId } from '../../lib/ids.js';
import { inTransaction, type PgClient, type PgPool } from '../../pg/pool.js';
import { pairedKind, planExternal } from '../card-money.js';
import { balanceOf, MAX_TIME, type MovementDbRow, toMovement } from '../db-rows.js';
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

// Money that moves without a call, credit lines and job refunds, on PostgreSQL, with the semantics of
// src/ledger/sqlite/movements.ts and refunds.ts. None of it is on the hot path, so each is a short transaction
// of plain statements that first locks the account row (the same order as tg_begin/tg_capture: account, then
// the rest, then system shards), which serializes it with the calls of that account on every replica. The
// unique indexes (one movement per outside reference, one grant per card, one pending settlement per account)
// are the backstops when two accounts race.

const CARD = 'sys_card';
const FUNDING = 'sys_funding';
/** SQLSTATE of the errors the ledger's functions raise for a caller's mistake (LedgerStateError). */
const LEDGER_STATE = 'TGL01';

/** Maps a ledger function's refusal (SQLSTATE TGL01) to the LedgerStateError the interface promises. */
export function asLedgerError(err: unknown): unknown {
  const e = err as { code?: string; message?: string };
  return e?.code === LEDGER_STATE ? new LedgerStateError(e.message ?? 'ledger state') : err;
}

const isUnique = (err: unknown) => (err as { code?: string }).code === '23505';

/**
 * What a refund gives back comes off the cap counters the call counted against (`calls.cap_keys`), in the windows
 * it was charged in, never below zero: refunds of failed work here and the operator's (./pg-operator-moves.ts).
 * Under the account's lock, as every change of its counters.
 */
export async function uncountCaps(c: PgClient, accountId: string, caps: string[] | null, micros: number) {
  if (!caps || caps.length === 0) return;
  await c.query(
    'UPDATE spend_counters SET spent_micros = greatest(0, spent_micros - $1) WHERE account_id = $2 AND counter = ANY ($3)',
    [micros, accountId, caps],
  );
}

export class PgMovements {
  constructor(private readonly pool: PgPool) {}

  private tx<T>(fn: (c: PgClient) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, fn).catch((err: unknown) => {
      throw asLedgerError(err);
    });
  }

  /** Locks the account row (FOR UPDATE) and returns it, with a system account's shards added up. */
  private async lock(c: PgClient, id: string): Promise<AccountRow> {
    await c.query({
      name: 'tg_mv_lock',
      text: 'SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE',
      values: [id],
    });
    return this.account(c, id);
  }

  private async account(c: PgClient | PgPool, id: string): Promise<AccountRow> {
    const r = await c.query<AccountRow>({
      name: 'tg_account',
      text: 'SELECT * FROM accounts_v WHERE id = $1',
      values: [id],
    });
    const a = r.rows[0];
    if (!a) throw new LedgerStateError(`unknown account ${id}`);
    return a;
  }

  private async transfer(
    c: PgClient,
    accountId: string,
    system: string,
    micros: number,
    movementId: string,
    memo: string,
    now: number,
  ): Promise<void> {
    await c.query({
      name: 'tg_mv_transfer',
      text: "SELECT tg_transfer($1, $2, $3, 'topup', $4, $5, $6)",
      values: [accountId, system, micros, movementId, memo, now],
    });
  }

  private async insert(
    c: PgClient,
    accountId: string,
    kind: MovementKind,
    micros: number,
    status: MovementRow['status'],
    memo: string,
    externalRef: string | null,
    now: number,
    meta?: Record<string, unknown>,
  ): Promise<string> {
    const id = newId('mv', now);
    await c.query({
      name: 'tg_mv_insert',
      text: 'INSERT INTO movements (id, account_id, kind, amount_micros, status, memo, external_ref, created_at, finished_at, meta) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)',
      values: [
        id,
        accountId,
        kind,
        micros,
        status,
        memo,
        externalRef,
        now,
        status === 'pending' ? null : now,
        meta ? JSON.stringify(meta) : null,
      ],
    });
    return id;
  }

  credit(accountId: string, micros: number, memo: string, now: number): Promise<Balance> {
    return this.tx(async (c) => {
      await this.lock(c, accountId);
      const id = await this.insert(c, accountId, 'credit', micros, 'succeeded', memo, null, now);
      await this.transfer(c, accountId, FUNDING, micros, id, memo, now);
      return balanceOf(await this.account(c, accountId));
    });
  }

  async external(req: ExternalRequest, now: number): Promise<ExternalResult> {
    try {
      return await this.tx(async (c): Promise<ExternalResult> => {
        // The account lock first: a debit and its reversal (one reference, one account) are serialized by it.
        const a = await this.lock(c, req.accountId);
        const seen = await this.byRefOn(c, req.kind, req.externalRef);
        if (seen) return { kind: 'duplicate', movementId: seen.id };
        const pairKind = pairedKind(req.kind);
        const pair = pairKind ? await this.byRefOn(c, pairKind, req.externalRef) : undefined;
        const plan = planExternal(req, a, pair ? toMovement(pair) : undefined);
        if (plan.kind === 'reversed') return plan;
        const id = await this.insert(
          c,
          req.accountId,
          req.kind,
          plan.micros,
          'succeeded',
          req.memo,
          req.externalRef,
          now,
          plan.meta,
        );
        await this.transfer(c, req.accountId, CARD, plan.micros, id, req.memo, now);
        return {
          kind: 'recorded',
          movementId: id,
          movedMicros: Math.abs(plan.micros),
          unrecoveredMicros: plan.unrecoveredMicros,
          balance: balanceOf(await this.account(c, req.accountId)),
        };
      });
    } catch (err) {
      // The same reference reported for another account at the same moment: the index kept it once.
      if (!isUnique(err)) throw err;
      const seen = await this.byRefOn(this.pool, req.kind, req.externalRef);
      if (!seen) throw err;
      return { kind: 'duplicate', movementId: seen.id };
    }
  }

  grantLine(req: GrantLineRequest, now: number): Promise<GrantLineResult> {
    return this.tx(async (c) => {
      const a = await this.lock(c, req.accountId);
      if (a.kind !== 'customer') throw new LedgerStateError(`only customers get a credit line, not ${a.id}`);
      // ON CONFLICT DO NOTHING waits for a racing grant of the same card to commit, then yields to it.
      const ins = await c.query(
        'INSERT INTO credit_line_grants (account_id, card_fingerprint, micros, granted_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING',
        [req.accountId, req.cardFingerprint, req.micros, now],
      );
      if (ins.rowCount !== 1) {
        const mine = await c.query('SELECT 1 FROM credit_line_grants WHERE account_id = $1', [req.accountId]);
        return mine.rowCount ? { kind: 'account_has_line' as const } : { kind: 'card_has_line' as const };
      }
      await c.query('UPDATE accounts SET credit_line_micros = credit_line_micros + $1 WHERE id = $2', [
        req.micros,
        req.accountId,
      ]);
      const id = await this.insert(c, req.accountId, 'line', 0, 'succeeded', req.memo, null, now, {
        line_micros: req.micros,
      });
      return { kind: 'granted' as const, movementId: id };
    });
  }

  freeze(accountId: string, reason: string | null, now: number): Promise<void> {
    return this.tx((c) => this.freezeOn(c, accountId, reason, now));
  }

  private async freezeOn(c: PgClient, accountId: string, reason: string | null, now: number): Promise<void> {
    await this.lock(c, accountId);
    // The first reason stays: it is the one the account holder has to fix.
    if (reason === null)
      await c.query('UPDATE accounts SET line_frozen_at = NULL, line_frozen_reason = NULL WHERE id = $1', [
        accountId,
      ]);
    else
      await c.query(
        'UPDATE accounts SET line_frozen_at = $1, line_frozen_reason = $2 WHERE id = $3 AND line_frozen_at IS NULL',
        [now, reason, accountId],
      );
  }

  beginSettlement(req: SettlementRequest, now: number): Promise<SettlementStart> {
    return this.tx(async (c) => {
      const a = await this.lock(c, req.accountId);
      const pending = await this.pendingOf(c, req.accountId);
      if (pending) return { kind: 'pending' as const, movementId: pending.id, micros: pending.amount_micros };
      const drawn = Math.max(0, -a.balance_micros);
      const due = Math.min(drawn, a.credit_line_micros);
      const micros = req.stepMicros > 0 ? due - (due % req.stepMicros) : due;
      if (micros <= 0 || micros < req.minMicros) return { kind: 'nothing_due' as const, drawnMicros: drawn };
      const id = await this.insert(c, req.accountId, 'settlement', micros, 'pending', req.memo, null, now);
      return { kind: 'started' as const, movementId: id, micros };
    });
  }

  finishSettlement(movementId: string, outcome: SettlementOutcome, now: number): Promise<SettlementResult> {
    return this.tx(async (c) => {
      const first = await this.getOn(c, movementId);
      if (first?.kind !== 'settlement') throw new LedgerStateError(`no settlement ${movementId}`);
      await this.lock(c, first.account_id);
      // Re-read under the account lock: another replica may have finished it meanwhile.
      const m = (await this.getOn(c, movementId)) as MovementDbRow;
      if (m.status === 'succeeded') return { kind: 'already' as const, status: 'succeeded' as const };
      const finish = (status: string, ref: string | null, meta: string | null) =>
        c.query(
          'UPDATE movements SET status = $1, external_ref = coalesce($2, external_ref), finished_at = $3, meta = coalesce($4, meta) WHERE id = $5',
          [status, ref, now, meta, m.id],
        );
      if (!outcome.ok) {
        if (m.status === 'failed') return { kind: 'already' as const, status: 'failed' as const };
        await finish('failed', outcome.externalRef ?? null, JSON.stringify({ reason: outcome.reason }));
        await this.freezeOn(c, m.account_id, outcome.reason, now);
        return { kind: 'failed' as const };
      }
      await finish('succeeded', outcome.externalRef, null);
      await this.transfer(c, m.account_id, CARD, m.amount_micros, m.id, m.memo ?? 'settlement', now);
      await c.query('UPDATE accounts SET line_frozen_at = NULL, line_frozen_reason = NULL WHERE id = $1', [
        m.account_id,
      ]);
      return { kind: 'settled' as const, micros: m.amount_micros };
    });
  }

  /** Refunds the call that started job `handle`, once (src/ledger/sqlite/refunds.ts). */
  async refundJob(
    accountId: string,
    handle: string,
    reason: string,
    now: number,
  ): Promise<{ refundedMicros: number; callId?: string }> {
    return this.tx(async (c) => {
      const found = await c.query<{ call_id: string }>(
        'SELECT call_id FROM call_jobs WHERE account_id = $1 AND handle = $2',
        [accountId, handle],
      );
      const callId = found.rows[0]?.call_id;
      if (callId === undefined) return { refundedMicros: 0 };
      return { refundedMicros: await this.give(c, accountId, callId, reason, now), callId };
    });
  }

  /** Refunds a call by its id (whatever started it), once. */
  async refundCall(callId: string, reason: string, now: number): Promise<{ refundedMicros: number }> {
    return this.tx(async (c) => {
      const found = await c.query<{ account_id: string }>('SELECT account_id FROM calls WHERE id = $1', [
        callId,
      ]);
      const accountId = found.rows[0]?.account_id;
      if (accountId === undefined) return { refundedMicros: 0 };
      return { refundedMicros: await this.give(c, accountId, callId, reason, now) };
    });
  }

  /**
   * The refund itself, under the account's lock: what the call was charged and the operator has not refunded
   * already (./pg-operator-moves.ts) goes back, at most once.
   */
  private async give(c: PgClient, accountId: string, callId: string, reason: string, now: number) {
    await this.lock(c, accountId);
    const marked = await c.query<{ amount: number; cap_keys: string[] | null }>(
      `UPDATE calls SET status = 'refunded', refunded_micros = charged_micros, error_code = $1
         FROM (SELECT refunded_micros AS before FROM calls WHERE id = $2) b
        WHERE id = $2 AND status = 'succeeded' AND charged_micros > refunded_micros
        RETURNING charged_micros - b.before AS amount, calls.cap_keys`,
      [reason, callId],
    );
    const amount = marked.rows[0]?.amount;
    if (amount === undefined) return 0;
    await uncountCaps(c, accountId, marked.rows[0]?.cap_keys ?? null, amount);
    const t = newId('tr', now);
    await c.query(
      "INSERT INTO entries (transfer_id, account_id, amount_micros, kind, call_id, memo, created_at) VALUES ($1, $2, $3, 'refund', $4, $5, $6), ($1, 'sys_revenue', $7, 'refund', $4, $5, $6)",
      [t, accountId, amount, callId, reason, now, -amount],
    );
    // Revenue gives back what this account paid it (its part of sys_revenue: accounts.revenue_micros).
    await c.query(
      'UPDATE accounts SET balance_micros = balance_micros + $1, revenue_micros = revenue_micros - $1 WHERE id = $2',
      [amount, accountId],
    );
    return amount;
  }

  // ---- reads -------------------------------------------------------------------------------------------------

  private async pendingOf(c: PgClient | PgPool, accountId: string): Promise<MovementDbRow | undefined> {
    const r = await c.query<MovementDbRow>(
      "SELECT * FROM movements WHERE account_id = $1 AND kind = 'settlement' AND status = 'pending'",
      [accountId],
    );
    return r.rows[0];
  }

  private async getOn(c: PgClient | PgPool, id: string): Promise<MovementDbRow | undefined> {
    return (await c.query<MovementDbRow>('SELECT * FROM movements WHERE id = $1', [id])).rows[0];
  }

  private async byRefOn(c: PgClient | PgPool, kind: string, ref: string): Promise<MovementDbRow | undefined> {
    const r = await c.query<MovementDbRow>('SELECT * FROM movements WHERE kind = $1 AND external_ref = $2', [
      kind,
      ref,
    ]);
    return r.rows[0];
  }

  async creditLine(accountId: string): Promise<CreditLine> {
    const a = await this.account(this.pool, accountId);
    const grant = await this.pool.query<{ granted_at: number }>(
      'SELECT granted_at FROM credit_line_grants WHERE account_id = $1',
      [accountId],
    );
    const pending = await this.pendingOf(this.pool, accountId);
    return {
      limit_micros: a.credit_line_micros,
      drawn_micros: Math.max(0, -a.balance_micros),
      frozen: a.line_frozen_at === null ? null : { at: a.line_frozen_at, reason: a.line_frozen_reason ?? '' },
      granted_at: grant.rows[0]?.granted_at ?? null,
      settling: pending ? { movement_id: pending.id, micros: pending.amount_micros } : null,
    };
  }

  async movements(accountId: string, limit: number, range: TimeRange = {}): Promise<MovementRow[]> {
    const r = await this.pool.query<MovementDbRow>(
      'SELECT * FROM movements WHERE account_id = $1 AND created_at >= $2 AND created_at < $3 ORDER BY created_at DESC, id DESC LIMIT $4',
      [accountId, range.fromMs ?? 0, range.toMs ?? MAX_TIME, limit],
    );
    return r.rows.map(toMovement);
  }

  async get(id: string): Promise<MovementRow | undefined> {
    const r = await this.getOn(this.pool, id);
    return r ? toMovement(r) : undefined;
  }

  async byRef(kind: MovementKind, ref: string): Promise<MovementRow | undefined> {
    const r = await this.byRefOn(this.pool, kind, ref);
    return r ? toMovement(r) : undefined;
  }

  async drawnAccounts(
    minDrawnMicros: number,
    limit: number,
  ): Promise<Array<{ account_id: string; drawn_micros: number }>> {
    const r = await this.pool.query<{ account_id: string; drawn_micros: number }>(
      `SELECT id AS account_id, -balance_micros AS drawn_micros FROM accounts
        WHERE balance_micros < 0 AND -balance_micros >= $1 AND kind = 'customer'
          AND credit_line_micros > 0 AND line_frozen_at IS NULL
        ORDER BY balance_micros, id LIMIT $2`,
      [Math.max(1, minDrawnMicros), limit],
    );
    return r.rows;
  }

  async pendingSettlements(startedBefore: number, limit: number): Promise<MovementRow[]> {
    const r = await this.pool.query<MovementDbRow>(
      "SELECT * FROM movements WHERE status = 'pending' AND kind = 'settlement' AND created_at < $1 ORDER BY created_at, id LIMIT $2",
      [startedBefore, limit],
    );
    return r.rows.map(toMovement);
  }
}
