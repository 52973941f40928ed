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
  type Ledger,
  LedgerStateError,
  type SweepResult,
  type VoidRequest,
} from '../types.js';
import { SqliteRefunds } from './refunds.js';
import { migrateLedger } from './schema.js';
import { WriteQueue } from './write-queue.js';

export interface SqliteLedgerOptions {
  clock: Clock;
  /** Idempotency keys older than this are forgotten (Stripe: at least 24 h). */
  idempotencyTtlMs: number;
  /** Each group commit is observed into these: seconds from BEGIN to COMMIT, and the writes it carried. */
  commits?: CommitHistograms | undefined;
}

interface HoldRow {
  call_id: string;
  account_id: string;
  amount_micros: number;
  status: 'pending' | 'posted' | 'voided' | 'expired';
  cap_day: string | null;
  funding_micros: number;
}

interface CallDbRow extends Omit<CallRow, 'meta'> {
  meta: string | null;
}

const MS_PER_DAY = 86_400_000;

export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export function nextUtcMidnight(ms: number): number {
  return (Math.floor(ms / MS_PER_DAY) + 1) * MS_PER_DAY;
}

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
    // Every statement is prepared once; the request path only binds and steps.
    this.s = {
      account: db.prepare<[string], AccountRow>('SELECT * FROM accounts WHERE id = ?'),
      accountsAll: db.prepare<[], AccountRow>('SELECT * FROM accounts ORDER BY created_at, id'),
      accountsOfKind: db.prepare<[string], AccountRow>(
        'SELECT * FROM accounts WHERE kind = ? ORDER BY created_at, id',
      ),
      insAccount: db.prepare('INSERT INTO accounts (id, name, kind, created_at) VALUES (?, ?, ?, ?)'),
      addBalance: db.prepare('UPDATE accounts SET balance_micros = balance_micros + ? WHERE id = ?'),
      addHeld: db.prepare('UPDATE accounts SET held_micros = held_micros + ? WHERE id = ?'),
      settle: db.prepare(
        'UPDATE accounts SET balance_micros = balance_micros - ?, held_micros = held_micros - ? WHERE id = ?',
      ),
      insEntry: db.prepare(
        'INSERT INTO entries (transfer_id, account_id, amount_micros, kind, call_id, memo, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      insKey: db.prepare(
        'INSERT INTO api_keys (id, account_id, hash, prefix, name, created_at) VALUES (?, ?, ?, ?, ?, ?)',
      ),
      keyByHash: db.prepare<[string], ApiKeyRow>(
        'SELECT id, account_id, prefix, name, created_at, revoked_at FROM api_keys WHERE hash = ?',
      ),
      keyById: db.prepare<[string], ApiKeyRow>(
        'SELECT id, account_id, prefix, name, created_at, revoked_at FROM api_keys WHERE id = ?',
      ),
      keysAll: db.prepare<[], ApiKeyRow>(
        'SELECT id, account_id, prefix, name, created_at, revoked_at FROM api_keys ORDER BY created_at',
      ),
      keysOf: db.prepare<[string], ApiKeyRow>(
        'SELECT id, account_id, prefix, name, created_at, revoked_at FROM api_keys WHERE account_id = ? ORDER BY created_at',
      ),
      revokeKey: db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL'),
      idem: db.prepare<
        [string, string],
        { fingerprint: string; call_id: string; status: string; response: string | null; created_at: number }
      >(
        'SELECT fingerprint, call_id, status, response, created_at FROM idempotency_keys WHERE account_id = ? AND key = ?',
      ),
      insIdem: db.prepare(
        "INSERT INTO idempotency_keys (account_id, key, fingerprint, call_id, status, created_at) VALUES (?, ?, ?, ?, 'in_flight', ?)",
      ),
      delIdem: db.prepare('DELETE FROM idempotency_keys WHERE account_id = ? AND key = ?'),
      idemDone: db.prepare(
        "UPDATE idempotency_keys SET status = 'done', response = ? WHERE account_id = ? AND key = ? AND call_id = ?",
      ),
      delIdemOfCall: db.prepare('DELETE FROM idempotency_keys WHERE account_id = ? AND call_id = ?'),
      purgeIdem: db.prepare("DELETE FROM idempotency_keys WHERE status = 'done' AND created_at < ?"),
      daily: db.prepare<[string, string], { spent_micros: number }>(
        'SELECT spent_micros FROM daily_spend WHERE account_id = ? AND day = ?',
      ),
      addDaily: db.prepare(
        'INSERT INTO daily_spend (account_id, day, spent_micros) VALUES (?, ?, ?) ON CONFLICT (account_id, day) DO UPDATE SET spent_micros = spent_micros + excluded.spent_micros',
      ),
      subDaily: db.prepare(
        'UPDATE daily_spend SET spent_micros = spent_micros - ? WHERE account_id = ? AND day = ?',
      ),
      insCall: db.prepare(
        "INSERT INTO calls (id, account_id, action, price_micros, hold_micros, status, idempotency_key, payment_method, principal, created_at, meta) VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?)",
      ),
      call: db.prepare<[string], CallDbRow>('SELECT * FROM calls WHERE id = ?'),
      finishOk: db.prepare(
        "UPDATE calls SET status = 'succeeded', charged_micros = ?, provider = ?, duration_ms = ?, finished_at = ?, meta = coalesce(?, meta) WHERE id = ?",
      ),
      finishFail: db.prepare(
        "UPDATE calls SET status = 'failed', error_code = ?, provider = coalesce(?, provider), duration_ms = coalesce(?, duration_ms), finished_at = ?, meta = coalesce(?, meta) WHERE id = ?",
      ),
      callsOf: db.prepare<[string, number], CallDbRow>(
        'SELECT * FROM calls WHERE account_id = ? ORDER BY created_at DESC, id DESC LIMIT ?',
      ),
      hold: db.prepare<[string], HoldRow>(
        'SELECT call_id, account_id, amount_micros, status, cap_day, funding_micros FROM holds WHERE call_id = ?',
      ),
      insHold: db.prepare(
        "INSERT INTO holds (call_id, account_id, amount_micros, status, cap_day, expires_at, created_at, funding_micros) VALUES (?, ?, ?, 'pending', ?, ?, ?, ?)",
      ),
      resolveHold: db.prepare(
        "UPDATE holds SET status = ?, posted_micros = ?, resolved_at = ? WHERE call_id = ? AND status = 'pending'",
      ),
      expired: db.prepare<[number], HoldRow>(
        "SELECT call_id, account_id, amount_micros, status, cap_day, funding_micros FROM holds WHERE status = 'pending' AND expires_at <= ? ORDER BY expires_at LIMIT 500",
      ),
      allPending: db.prepare<[], HoldRow>(
        "SELECT call_id, account_id, amount_micros, status, cap_day, funding_micros FROM holds WHERE status = 'pending'",
      ),
    };
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
    return this.q.run(() => {
      const acct = this.s.account.get(accountId);
      if (!acct) throw new LedgerStateError(`unknown account ${accountId}`);
      const transfer = newId('tr', now);
      this.s.insEntry.run(transfer, accountId, micros, 'topup', null, memo, now);
      this.s.insEntry.run(transfer, 'sys_funding', -micros, 'topup', null, memo, now);
      this.s.addBalance.run(micros, accountId);
      this.s.addBalance.run(-micros, 'sys_funding');
      return this.balanceOf(accountId);
    });
  }

  balance(accountId: string): Promise<Balance> {
    return Promise.resolve(this.balanceOf(accountId));
  }

  private balanceOf(accountId: string): Balance {
    const a = this.s.account.get(accountId);
    if (!a) throw new LedgerStateError(`unknown account ${accountId}`);
    return {
      balance_micros: a.balance_micros,
      held_micros: a.held_micros,
      available_micros: a.balance_micros - a.held_micros,
    };
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
          // The call's own funding counts; it is written only once every check has passed.
          const available = acct.balance_micros - acct.held_micros + funding;
          if (available < req.holdMicros) {
            return { kind: 'insufficient', availableMicros: available, requiredMicros: req.holdMicros };
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

  transactions(accountId: string, limit: number): Promise<CallRow[]> {
    return Promise.resolve(this.s.callsOf.all(accountId, limit).map(toCallRow));
  }

  close(): Promise<void> {
    this.q.drain();
    return Promise.resolve();
  }
}
