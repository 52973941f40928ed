import type { Clock } from '../../lib/clock.js';
import type { CommitHistograms } from '../../lib/histogram.js';
import { newId } from '../../lib/ids.js';
import type { SqliteDb } from '../../lib/sqlite.js';
import {
  type AccountKind,
  type AccountRow,
  type ApiKeyRow,
  type Balance,
  type BeginRequest,
  type BeginResult,
  type CallRow,
  type CaptureRequest,
  type CreditLine,
  type ExternalRequest,
  type ExternalResult,
  type GrantLineRequest,
  type GrantLineResult,
  type Ledger,
  LedgerStateError,
  type MovementKind,
  type MovementRow,
  type SettlementOutcome,
  type SettlementRequest,
  type SettlementResult,
  type SettlementStart,
  type SweepResult,
  type TimeRange,
  type UsageRow,
  type VoidRequest,
} from '../types.js';
import { nextUtcMidnight, utcDay } from '../utc-day.js';
import { availableOf, balanceOfRow, SqliteMovements } from './movements.js';
import { SqliteRefunds } from './refunds.js';
import { migrateLedger } from './schema.js';
import { type CallDbRow, type HoldRow, prepareStatements } from './statements.js';
import { WriteQueue } from './write-queue.js';

export interface SqliteLedgerOptions {
  clock: Clock;
  /** Idempotency keys older than this are forgotten (Stripe: at least 24 h). */
  idempotencyTtlMs: number;
  /** Each group commit is observed into these: seconds from BEGIN to COMMIT, and the writes it carried. */
  commits?: CommitHistograms | undefined;
}

const MAX_TIME = Number.MAX_SAFE_INTEGER;

function assertMicros(n: number, what: string): void {
  if (!Number.isSafeInteger(n) || n < 0)
    throw new LedgerStateError(`${what} must be a non-negative integer, got ${n}`);
}

function toCallRow(r: CallDbRow): CallRow {
  return { ...r, meta: r.meta === null ? null : (JSON.parse(r.meta) as Record<string, unknown>) };
}

export class SqliteLedger implements Ledger {
  private readonly q: WriteQueue;
  private readonly refunds: SqliteRefunds;
  private readonly movements_: SqliteMovements;
  private readonly clock: Clock;
  private readonly idempotencyTtlMs: number;
  private readonly s;

  constructor(db: SqliteDb, opts: SqliteLedgerOptions) {
    migrateLedger(db);
    this.clock = opts.clock;
    this.idempotencyTtlMs = opts.idempotencyTtlMs;
    const c = opts.commits;
    this.q = new WriteQueue(
      db,
      undefined,
      c &&
        ((seconds, writes) => {
          c.seconds.observe(seconds);
          c.writes.observe(writes);
        }),
    );
    this.refunds = new SqliteRefunds(db);
    this.movements_ = new SqliteMovements(db);
    this.s = prepareStatements(db);
  }

  // ---- accounts and keys -------------------------------------------------------------------------------

  createAccount(input: { name?: string | null; kind?: AccountKind; id?: string }): Promise<AccountRow> {
    const now = this.clock.now();
    return this.q.run(() => {
      const id = input.id ?? newId('acct', now);
      this.s.insAccount.run(id, input.name ?? null, input.kind ?? 'customer', now);
      return this.s.account.get(id) as AccountRow;
    });
  }

  getAccount(id: string): Promise<AccountRow | undefined> {
    return Promise.resolve(this.s.account.get(id));
  }

  listAccounts(kind?: AccountKind): Promise<AccountRow[]> {
    return Promise.resolve(kind ? this.s.accountsOfKind.all(kind) : this.s.accountsAll.all());
  }

  credit(accountId: string, micros: number, memo: string): Promise<Balance> {
    assertMicros(micros, 'credit');
    const now = this.clock.now();
    return this.q.run(() => this.movements_.credit(accountId, micros, memo, now));
  }

  balance(accountId: string): Promise<Balance> {
    return Promise.resolve(this.balanceOf(accountId));
  }

  private balanceOf(accountId: string): Balance {
    const a = this.s.account.get(accountId);
    if (!a) throw new LedgerStateError(`unknown account ${accountId}`);
    return balanceOfRow(a);
  }

  insertApiKey(input: {
    accountId: string;
    hash: string;
    prefix: string;
    name?: string | null;
  }): Promise<ApiKeyRow> {
    const now = this.clock.now();
    return this.q.run(() => {
      if (!this.s.account.get(input.accountId))
        throw new LedgerStateError(`unknown account ${input.accountId}`);
      const id = newId('key', now);
      this.s.insKey.run(id, input.accountId, input.hash, input.prefix, input.name ?? null, now);
      return this.s.keyById.get(id) as ApiKeyRow;
    });
  }

  findApiKeyByHash(hash: string): Promise<ApiKeyRow | undefined> {
    return Promise.resolve(this.s.keyByHash.get(hash));
  }

  listApiKeys(accountId?: string): Promise<ApiKeyRow[]> {
    return Promise.resolve(accountId ? this.s.keysOf.all(accountId) : this.s.keysAll.all());
  }

  revokeApiKey(id: string): Promise<boolean> {
    const now = this.clock.now();
    return this.q.run(() => this.s.revokeKey.run(now, id).changes === 1);
  }

  // ---- the call lifecycle ------------------------------------------------------------------------------

  begin(req: BeginRequest): Promise<BeginResult> {
    assertMicros(req.priceMicros, 'price');
    assertMicros(req.holdMicros, 'hold');
    if (req.funding) assertMicros(req.funding.micros, 'funding');
    const now = this.clock.now();
    return this.q.run(
      (): BeginResult => {
        const idem = req.idempotency;
        if (idem) {
          const row = this.s.idem.get(req.accountId, idem.key);
          if (row && row.status === 'done' && row.created_at < now - this.idempotencyTtlMs) {
            this.s.delIdem.run(req.accountId, idem.key); // expired, not yet purged: forget it
          } else if (row) {
            if (row.fingerprint !== idem.fingerprint) return { kind: 'mismatch', callId: row.call_id };
            if (row.status === 'in_flight') return { kind: 'in_flight', callId: row.call_id };
            return { kind: 'replay', callId: row.call_id, response: JSON.parse(row.response ?? 'null') };
          }
        }

        const acct = this.s.account.get(req.accountId);
        if (!acct) throw new LedgerStateError(`unknown account ${req.accountId}`);
        const funding = req.funding?.micros ?? 0;
        if (acct.kind !== 'system') {
          // The call's own funding counts; it is written only once every check has passed. A credit line counts
          // unless it is frozen.
          const available = availableOf(acct) + funding;
          if (available < req.holdMicros) {
            const refused = {
              kind: 'insufficient' as const,
              availableMicros: available,
              requiredMicros: req.holdMicros,
            };
            return acct.credit_line_micros > 0 && acct.line_frozen_at !== null
              ? { ...refused, lineFrozen: { reason: acct.line_frozen_reason ?? '' } }
              : refused;
          }
        }

        let capDay: string | null = null;
        if (req.dailyCap) {
          // A scoped cap keeps its own counter row, told apart in the day key ("2026-05-01 oauth:<client>"):
          // the hold records that key (cap_day), so capture and void release exactly the counter they charged.
          capDay = req.dailyCap.scope ? `${utcDay(now)} ${req.dailyCap.scope}` : utcDay(now);
          const spent = this.s.daily.get(req.accountId, capDay)?.spent_micros ?? 0;
          if (spent + req.holdMicros > req.dailyCap.limitMicros) {
            return {
              kind: 'daily_cap',
              spentMicros: spent,
              limitMicros: req.dailyCap.limitMicros,
              resetsAt: nextUtcMidnight(now),
            };
          }
          this.s.addDaily.run(req.accountId, capDay, req.holdMicros);
        }

        const callId = newId('txn', now);
        if (req.funding && funding > 0) {
          const transfer = newId('tr', now);
          this.s.insEntry.run(transfer, req.accountId, funding, 'topup', callId, req.funding.memo, now);
          this.s.insEntry.run(transfer, 'sys_funding', -funding, 'topup', callId, req.funding.memo, now);
          this.s.addBalance.run(funding, req.accountId);
          this.s.addBalance.run(-funding, 'sys_funding');
        }
        this.s.insCall.run(
          callId,
          req.accountId,
          req.action,
          req.priceMicros,
          req.holdMicros,
          idem?.key ?? null,
          req.paymentMethod,
          req.principal,
          now,
          req.meta ? JSON.stringify(req.meta) : null,
        );
        this.s.insHold.run(callId, req.accountId, req.holdMicros, capDay, now + req.holdTtlMs, now, funding);
        this.s.addHeld.run(req.holdMicros, req.accountId);
        if (idem) this.s.insIdem.run(req.accountId, idem.key, idem.fingerprint, callId, now);
        return { kind: 'started', callId };
        // A hold moves no money: it is made durable by the fsync of its capture or void (see WriteQueue).
      },
      { durable: false },
    );
  }

  capture(callId: string, req: CaptureRequest): Promise<{ chargedMicros: number }> {
    assertMicros(req.amountMicros, 'capture');
    const now = this.clock.now();
    return this.q.run(() => {
      const hold = this.pendingHold(callId);
      if (req.amountMicros > hold.amount_micros) {
        throw new LedgerStateError(
          `capture of ${req.amountMicros} exceeds hold of ${hold.amount_micros} for ${callId}`,
        );
      }
      this.s.resolveHold.run('posted', req.amountMicros, now, callId);
      this.s.settle.run(req.amountMicros, hold.amount_micros, hold.account_id);
      if (req.amountMicros > 0) {
        const transfer = newId('tr', now);
        this.s.insEntry.run(transfer, hold.account_id, -req.amountMicros, 'charge', callId, null, now);
        this.s.insEntry.run(transfer, 'sys_revenue', req.amountMicros, 'charge', callId, null, now);
        this.s.addBalance.run(req.amountMicros, 'sys_revenue');
      }
      if (hold.cap_day)
        this.s.subDaily.run(hold.amount_micros - req.amountMicros, hold.account_id, hold.cap_day);
      this.reverseFunding(hold, hold.funding_micros - req.amountMicros, now);
      this.s.finishOk.run(
        req.amountMicros,
        req.provider,
        req.durationMs,
        now,
        req.meta ? JSON.stringify(req.meta) : null,
        callId,
      );
      if (req.jobHandle !== undefined) this.refunds.linkJob(hold.account_id, req.jobHandle, callId);
      const call = this.s.call.get(callId) as CallDbRow;
      if (call.idempotency_key !== null) {
        this.s.idemDone.run(
          JSON.stringify(req.response ?? null),
          hold.account_id,
          call.idempotency_key,
          callId,
        );
      }
      return { chargedMicros: req.amountMicros };
    });
  }

  refundJob(
    accountId: string,
    handle: string,
    reason: string,
  ): Promise<{ refundedMicros: number; callId?: string }> {
    const now = this.clock.now();
    return this.q.run(() => this.refunds.refund(accountId, handle, reason, now));
  }

  void(callId: string, req: VoidRequest): Promise<void> {
    const now = this.clock.now();
    return this.q.run(() => {
      const hold = this.pendingHold(callId);
      this.voidHold(hold, 'voided', now, req.errorCode, req.provider, req.durationMs, req.meta);
    });
  }

  private pendingHold(callId: string): HoldRow {
    const hold = this.s.hold.get(callId);
    if (!hold) throw new LedgerStateError(`no hold for call ${callId}`);
    if (hold.status !== 'pending')
      throw new LedgerStateError(`hold for call ${callId} is already ${hold.status}`);
    return hold;
  }

  /** Releases a pending hold; the caller runs inside the write queue. */
  private voidHold(
    hold: HoldRow,
    status: 'voided' | 'expired',
    now: number,
    errorCode: string,
    provider: string | null,
    durationMs: number | null,
    meta: Record<string, unknown> | undefined,
  ): void {
    if (this.s.resolveHold.run(status, null, now, hold.call_id).changes !== 1) {
      throw new LedgerStateError(`hold for call ${hold.call_id} was resolved concurrently`);
    }
    this.s.settle.run(0, hold.amount_micros, hold.account_id);
    if (hold.cap_day) this.s.subDaily.run(hold.amount_micros, hold.account_id, hold.cap_day);
    // Funding that came with the call was never collected: take it back out.
    this.reverseFunding(hold, hold.funding_micros, now);
    this.s.finishFail.run(
      errorCode,
      provider,
      durationMs,
      now,
      meta ? JSON.stringify(meta) : null,
      hold.call_id,
    );
    // Nothing was charged, so the key is released: a retry with the same key runs the call again.
    this.s.delIdemOfCall.run(hold.account_id, hold.call_id);
  }

  /** Reverses `micros` of a call's provisional funding (negative topup entries back to sys_funding). */
  private reverseFunding(hold: HoldRow, micros: number, now: number): void {
    if (micros <= 0) return;
    const transfer = newId('tr', now);
    const memo = 'reversal: funding not collected';
    this.s.insEntry.run(transfer, hold.account_id, -micros, 'topup', hold.call_id, memo, now);
    this.s.insEntry.run(transfer, 'sys_funding', micros, 'topup', hold.call_id, memo, now);
    this.s.addBalance.run(-micros, hold.account_id);
    this.s.addBalance.run(micros, 'sys_funding');
  }

  sweep(now: number): Promise<SweepResult> {
    return this.q.run(() => {
      const expired = this.s.expired.all(now);
      for (const hold of expired) this.voidHold(hold, 'expired', now, 'hold_expired', null, null, undefined);
      const purged = this.s.purgeIdem.run(now - this.idempotencyTtlMs).changes;
      return { expiredHolds: expired.length, purgedKeys: purged };
    });
  }

  voidAllPending(reason: string): Promise<number> {
    const now = this.clock.now();
    return this.q.run(() => {
      const pending = this.s.allPending.all();
      for (const hold of pending) this.voidHold(hold, 'expired', now, reason, null, null, undefined);
      return pending.length;
    });
  }

  // ---- reads ---------------------------------------------------------------------------------------------

  getCall(id: string): Promise<CallRow | undefined> {
    const r = this.s.call.get(id);
    return Promise.resolve(r ? toCallRow(r) : undefined);
  }

  transactions(accountId: string, limit: number, range: TimeRange = {}): Promise<CallRow[]> {
    const rows = this.s.callsOf.all(accountId, range.fromMs ?? 0, range.toMs ?? MAX_TIME, limit);
    return Promise.resolve(rows.map(toCallRow));
  }

  usageByDay(accountId: string, range: TimeRange): Promise<UsageRow[]> {
    return Promise.resolve(this.s.usage.all(accountId, range.fromMs ?? 0, range.toMs ?? MAX_TIME));
  }

  movements(accountId: string, limit: number, range?: TimeRange): Promise<MovementRow[]> {
    return Promise.resolve(this.movements_.movements(accountId, limit, range));
  }

  getMovement(id: string): Promise<MovementRow | undefined> {
    return Promise.resolve(this.movements_.get(id));
  }

  movementByRef(kind: MovementKind, externalRef: string): Promise<MovementRow | undefined> {
    return Promise.resolve(this.movements_.byRef(kind, externalRef));
  }

  creditLine(accountId: string): Promise<CreditLine> {
    return Promise.resolve(this.movements_.creditLine(accountId));
  }

  drawnAccounts(minDrawnMicros: number, limit: number) {
    return Promise.resolve(this.movements_.drawnAccounts(minDrawnMicros, limit));
  }

  pendingSettlements(startedBefore: number, limit: number): Promise<MovementRow[]> {
    return Promise.resolve(this.movements_.pendingSettlements(startedBefore, limit));
  }

  // ---- money without a call: card payments and credit lines (./movements.ts) ----------------------------

  recordExternal(req: ExternalRequest): Promise<ExternalResult> {
    assertMicros(req.micros, 'amount');
    if (req.micros === 0) throw new LedgerStateError('an external movement needs an amount above zero');
    const now = this.clock.now();
    return this.q.run(() => this.movements_.external(req, now));
  }

  grantCreditLine(req: GrantLineRequest): Promise<GrantLineResult> {
    assertMicros(req.micros, 'credit line');
    if (req.micros === 0 || req.cardFingerprint === '')
      throw new LedgerStateError('a credit line needs an amount and a card fingerprint');
    const now = this.clock.now();
    return this.q.run(() => this.movements_.grantLine(req, now));
  }

  freezeCreditLine(accountId: string, reason: string | null): Promise<void> {
    const now = this.clock.now();
    return this.q.run(() => this.movements_.freeze(accountId, reason, now));
  }

  beginSettlement(req: SettlementRequest): Promise<SettlementStart> {
    assertMicros(req.minMicros, 'minimum');
    assertMicros(req.stepMicros, 'step');
    // Durable before the card is charged: the charge names this movement, so it must survive power loss.
    const now = this.clock.now();
    return this.q.run(() => this.movements_.beginSettlement(req, now));
  }

  finishSettlement(movementId: string, outcome: SettlementOutcome): Promise<SettlementResult> {
    const now = this.clock.now();
    return this.q.run(() => this.movements_.finishSettlement(movementId, outcome, now));
  }

  close(): Promise<void> {
    this.q.drain();
    return Promise.resolve();
  }
}
