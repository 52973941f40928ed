import { newId } from '../../lib/ids.js';
import { availableOf } from '../db-rows.js';
import { capResetsAt, counterKeys } from '../spend-caps.js';
import {
  type AccountRow,
  type BeginRequest,
  type BeginResult,
  type CallRow,
  type CaptureRequest,
  LedgerStateError,
  type VoidRequest,
} from '../types.js';
import type { GroupCommit } from './group-commit.js';
import type { SqliteRefunds } from './refunds.js';
import { type MemHold, Reservations } from './reservations.js';
import type { prepareStatements } from './statements.js';

// The call lifecycle on SQLite: begin checks and reserves in memory (./reservations.ts) with no write at all;
// capture is the call's one durable commit (its row, the double-entry charge, the idempotency record, the cap
// counters); void releases at once and records the failure without waiting for the disk.

type Statements = ReturnType<typeof prepareStatements>;

const NO_CAPS: string[] = [];

function json(v: unknown): string | null {
  return v === undefined ? null : JSON.stringify(v);
}

export class SqliteCalls {
  readonly reserved = new Reservations();
  /**
   * Holds whose capture or failure record could not be written (a full or read-only disk): released, and
   * recorded as failed once a void for them is asked again (the lifecycle does when the database answers), so
   * the transaction id their caller may have seen exists.
   */
  private readonly lost = new Map<string, MemHold>();

  constructor(
    private readonly s: Statements,
    private readonly commits: GroupCommit,
    private readonly refunds: SqliteRefunds,
    private readonly idempotencyTtlMs: number,
  ) {}

  begin(req: BeginRequest, now: number): BeginResult {
    const idem = req.idempotency;
    if (idem) {
      const claim = this.reserved.claimOf(req.accountId, idem.key);
      if (claim) {
        return claim.idempotency?.fingerprint === idem.fingerprint
          ? { kind: 'in_flight', callId: claim.callId }
          : { kind: 'mismatch', callId: claim.callId };
      }
      const row = this.s.idem.get(req.accountId, idem.key);
      // A done row past its TTL but not yet purged is forgotten (the capture replaces it).
      if (row && !(row.status === 'done' && row.created_at < now - this.idempotencyTtlMs)) {
        if (row.fingerprint !== idem.fingerprint) return { kind: 'mismatch', callId: row.call_id };
        if (row.status === 'in_flight') return { kind: 'in_flight', callId: row.call_id };
        return { kind: 'replay', callId: row.call_id, response: JSON.parse(row.response ?? 'null') };
      }
    }

    const acct = this.s.account.get(req.accountId);
    if (!acct) throw new LedgerStateError(`unknown account ${req.accountId}`);
    const funding = req.funding?.micros ?? 0;
    if (acct.kind !== 'system') {
      // The call's own funding counts; a credit line counts unless it is frozen.
      const available = this.availableOf(acct) + funding;
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

    // Each cap: what its counter has (charged) plus what this process holds against it, and this hold.
    let caps = NO_CAPS;
    if (req.caps && req.caps.length > 0) {
      caps = counterKeys(req.caps, now);
      for (let i = 0; i < caps.length; i++) {
        const key = caps[i] as string;
        const cap = req.caps[i] as (typeof req.caps)[number];
        const spent =
          (this.s.spent.get(req.accountId, key)?.spent_micros ?? 0) +
          this.reserved.capHeldOf(req.accountId, key);
        if (spent + req.holdMicros > cap.limitMicros) {
          return { kind: 'cap_reached', cap, spentMicros: spent, resetsAt: capResetsAt(cap.window, now) };
        }
      }
    }

    const callId = newId('txn', now);
    this.reserved.add({
      callId,
      accountId: req.accountId,
      action: req.action,
      priceMicros: req.priceMicros,
      holdMicros: req.holdMicros,
      paymentMethod: req.paymentMethod,
      principal: req.principal,
      idempotency: idem,
      caps,
      funding: req.funding && funding > 0 ? req.funding : undefined,
      createdAt: now,
      expiresAt: now + req.holdTtlMs,
      meta: req.meta,
    });
    return { kind: 'started', callId };
  }

  /**
   * balance − held (in the row: only an older version's holds) + the usable line − what this process holds +
   * the money that came with those holds (x402 funding, counted as the old row-holds credited it).
   */
  availableOf(acct: AccountRow): number {
    return availableOf(acct) - this.reserved.heldOf(acct.id) + this.reserved.fundingOf(acct.id);
  }

  capture(callId: string, req: CaptureRequest, now: number): Promise<{ chargedMicros: number }> {
    const h = this.reserved.get(callId);
    if (!h) return Promise.reject(this.notPending(callId));
    if (req.amountMicros > h.holdMicros) {
      return Promise.reject(
        new LedgerStateError(`capture of ${req.amountMicros} exceeds hold of ${h.holdMicros} for ${callId}`),
      );
    }
    // Out of reach of a second capture, a void or the sweep at once; its money stays reserved until the
    // statements that post it have committed (then both happen in one synchronous step).
    this.reserved.take(callId);
    const amount = req.amountMicros;
    return this.commits.write({
      durable: true,
      run: () => {
        const s = this.s;
        s.insCall.run(
          callId,
          h.accountId,
          h.action,
          h.priceMicros,
          h.holdMicros,
          amount,
          'succeeded',
          null,
          h.idempotency?.key ?? null,
          h.paymentMethod,
          h.principal,
          req.provider,
          req.durationMs,
          h.createdAt,
          now,
          json(req.meta ?? h.meta),
          h.caps.length > 0 ? JSON.stringify(h.caps) : null,
        );
        // Money that came with the call pays for it: only what the capture used is taken in from outside.
        const funded = h.funding ? Math.min(h.funding.micros, amount) : 0;
        if (funded > 0 && h.funding) {
          const t = newId('tr', now);
          s.insEntry.run(t, h.accountId, funded, 'topup', callId, h.funding.memo, now);
          s.insEntry.run(t, 'sys_funding', -funded, 'topup', callId, h.funding.memo, now);
          s.addBalance.run(-funded, 'sys_funding');
        }
        if (amount > 0) {
          const t = newId('tr', now);
          s.insEntry.run(t, h.accountId, -amount, 'charge', callId, null, now);
          s.insEntry.run(t, 'sys_revenue', amount, 'charge', callId, null, now);
          if (funded !== amount) s.addBalance.run(funded - amount, h.accountId);
          s.addBalance.run(amount, 'sys_revenue');
        }
        for (const cap of h.caps) s.addSpent.run(h.accountId, cap, amount);
        if (req.jobHandle !== undefined) this.refunds.linkJob(h.accountId, req.jobHandle, callId);
        if (h.idempotency) {
          s.idemDone.run(
            h.accountId,
            h.idempotency.key,
            h.idempotency.fingerprint,
            callId,
            JSON.stringify(req.response ?? null),
            now,
          );
        }
        return { chargedMicros: amount };
      },
      committed: () => this.reserved.release(h),
      // Not posted (the database refused it): nothing moved; its failure is recorded when a void is asked again.
      failed: () => {
        this.reserved.release(h);
        this.lost.set(h.callId, h);
      },
    });
  }

  void(callId: string, req: VoidRequest, now: number): Promise<void> {
    const lost = this.lost.get(callId);
    if (lost) return this.record([lost], req.errorCode, now, req);
    const h = this.reserved.take(callId);
    if (!h) return Promise.reject(this.notPending(callId));
    this.reserved.release(h);
    return this.record([h], req.errorCode, now, req);
  }

  /** Why a call has no pending hold: resolved already (as its row says), or never held here. */
  private notPending(callId: string): LedgerStateError {
    const row = this.s.call.get(callId);
    if (!row) return new LedgerStateError(`no pending hold for call ${callId}`);
    const was =
      row.status === 'failed' ? (row.error_code === 'hold_expired' ? 'expired' : 'voided') : 'posted';
    return new LedgerStateError(`hold for call ${callId} is already ${was}`);
  }

  /** Voids the holds past their expiry (the call's work outlived its hold). */
  expire(now: number): Promise<number> {
    return this.voidAll(this.reserved.expired(now), 'hold_expired', now);
  }

  /** Voids every hold of this process (`reason` recorded as the calls' error). */
  voidPending(reason: string, now: number): Promise<number> {
    return this.voidAll(this.reserved.all(), reason, now);
  }

  private voidAll(holds: MemHold[], reason: string, now: number): Promise<number> {
    for (const h of holds) {
      this.reserved.take(h.callId);
      this.reserved.release(h);
    }
    if (holds.length === 0) return Promise.resolve(0);
    return this.record(holds, reason, now).then(() => holds.length);
  }

  /**
   * The failed calls' rows. Nothing moved, so nobody waits for the disk: the rows ride on the next fsync, and a
   * crash before it loses only the record of calls that charged nothing.
   */
  private record(
    holds: MemHold[],
    errorCode: string,
    now: number,
    req?: Pick<VoidRequest, 'provider' | 'durationMs' | 'meta'>,
  ): Promise<void> {
    return this.commits.write({
      durable: false,
      committed: () => {
        for (const h of holds) this.lost.delete(h.callId);
      },
      failed: () => {
        for (const h of holds) this.lost.set(h.callId, h);
      },
      run: () => {
        for (const h of holds) {
          this.s.insCall.run(
            h.callId,
            h.accountId,
            h.action,
            h.priceMicros,
            h.holdMicros,
            0,
            'failed',
            errorCode,
            h.idempotency?.key ?? null,
            h.paymentMethod,
            h.principal,
            req?.provider ?? null,
            req?.durationMs ?? null,
            h.createdAt,
            now,
            json(req?.meta ?? h.meta),
            null,
          );
        }
      },
    });
  }

  /** A pending call as the transaction history shows it. */
  static pendingRow(h: MemHold): CallRow {
    return {
      id: h.callId,
      account_id: h.accountId,
      action: h.action,
      price_micros: h.priceMicros,
      hold_micros: h.holdMicros,
      charged_micros: 0,
      status: 'pending',
      refunded_micros: 0,
      operator_refunded_micros: 0,
      error_code: null,
      idempotency_key: h.idempotency?.key ?? null,
      payment_method: h.paymentMethod,
      principal: h.principal,
      provider: null,
      duration_ms: null,
      created_at: h.createdAt,
      finished_at: null,
      meta: h.meta ?? null,
    };
  }
}
