import type { Logger } from 'pino';
import { type AccountPrincipal, principalRef } from '../../auth/principal.js';
import type { AlertSignals } from '../alerts/signals.js';
import { isDatabaseUnavailable } from '../errors.js';
import type {
  AdjustRequest,
  AdjustResult,
  ChargeRefundRequest,
  ChargeRefundResult,
  ExternalRequest,
  ExternalResult,
  GrantLineResult,
  LedgerMoney,
  PaymentMethod,
  SettlementOutcome,
  SettlementRequest,
  SettlementResult,
  SettlementStart,
} from '../ledger/types.js';
import { LedgerStateError } from '../ledger/types.js';
import type { Clock } from '../lib/clock.js';
import { formatUsd } from '../lib/money.js';
import type { HoldRefusal, PaymentLabel, Telemetry } from '../ops/telemetry.js';
import type { DatabaseHealth } from './db-health.js';
import type { CaptureRecord, CreditReason, HoldOutcome, HoldSpec, VoidRecord } from './hold-spec.js';
import { capScopeOf, observed } from './observed.js';
import { operatorMoved } from './operator-moved.js';
import { holdRefusal } from './refusals.js';
import { capsOf, refuseHold } from './spend-limits.js';

export type { HoldSpec } from './hold-spec.js';

// The one place money moves. Every hold, capture, void, refund and credit of the gateway goes through this
// module (test/contract/money.test.ts fails if any other source file calls the ledger's money methods):
//
//   hold ──► the work runs ──► capture (≤ hold) on success
//                          └─► void on any failure: nothing is charged
//   refundJob: a job charged at its start that later failed is given back, once
//   refundCharge, adjust: the operator gives back all or part of a charge (never more than it was, once per
//              reference), or corrects a balance (a debit never takes what pending holds need)
//   credit:    money from outside (operator top-ups, welcome grants, x402 settled before running)
//   recordSettledCall: money that moved without a call waiting for it (an x402 settlement confirmed late)
//   card money: top-ups, refunds and disputes of card payments, once per outside reference, and their reversals
//              (a failed refund, reinstated dispute funds) once each, in whichever order Stripe reports them
//   credit lines: granted once per account and card; usage beyond the balance draws on them, a settlement
//              charges the card for what was drawn (success restores the line, a decline freezes it)
//
// Flat-price actions (execute), metered model calls (src/llm), x402 payments (src/run/x402) and the
// operator's CLI all drive it, so the rules below hold for every door and every way of paying:
// - the price is reserved before the work runs, in one serialized write with the funds check, the idempotency
//   claim and the caps (a door's, an API key's, an OAuth app's), and the caller is told plainly why when it
//   cannot be;
// - a hold resolves exactly once, posting at most its amount;
// - a capture that finds its hold already resolved (swept after expiry) delivers the result uncharged:
//   under-billing is the safe direction, and it is logged as an error.

/** A hold outlives its work's timeout by this much, so the sweeper never voids a call that is still running. */
export const HOLD_MARGIN_MS = 60_000;

export interface LifecycleDeps {
  ledger: LedgerMoney;
  clock: Clock;
  log: Logger;
  /** Minimum hold lifetime (TOLLGATE_HOLD_TTL_SECONDS); a hold always outlives its work's timeout. */
  holdTtlMs: number;
  /**
   * Where an account holder tops up and fixes a card (the dashboard), when card payments are on; refusals for
   * lack of credit then point there instead of to the operator.
   */
  accountUrl?: (() => string) | undefined;
  /** Metrics and trace steps of every money movement (src/ops/telemetry.ts); none when absent. */
  telemetry?: Telemetry | undefined;
  /**
   * Whether the database answers (./db-health.ts): a ledger write that fails because it does not starts an
   * outage, and the holds left unresolved meanwhile are resolved when it answers again.
   */
  health?: DatabaseHealth | undefined;
  /** Told where money moved (thresholds are looked at in the background) and what card money did: alerts. */
  alerts?: AlertSignals | undefined;
}

/** The holds of this process not resolved yet (call id → when taken), oldest first: the pending-holds gauges. */
type PendingHolds = Map<string, number>;

/** A reservation for one call. Resolve it exactly once: capture on success, void otherwise. */
export class Hold {
  private resolved = false;
  private readonly started = performance.now();

  constructor(
    private readonly deps: LifecycleDeps,
    readonly callId: string,
    readonly accountId: string,
    readonly holdMicros: number,
    private readonly labels: {
      action: string;
      payment: PaymentLabel;
      pending?: PendingHolds;
      unresolved?: Set<string>;
    } = {
      action: 'unknown',
      payment: 'api_key',
    },
  ) {
    labels.pending?.set(callId, this.started);
  }

  /** Milliseconds since the hold was taken. */
  elapsedMs(): number {
    return Math.round(performance.now() - this.started);
  }

  /**
   * Posts `amountMicros` (≤ the hold) and releases the rest. Returns what was charged, or undefined when the
   * capture could not be recorded (the hold was resolved elsewhere — expired and swept while the work ran — or
   * the database did not answer): the result then goes out uncharged and without a transaction id or receipt,
   * since the ledger cannot vouch for them, and a hold the database still has is voided when it answers again.
   */
  async capture(amountMicros: number, rec: CaptureRecord): Promise<number | undefined> {
    this.resolve();
    const amount = Math.min(amountMicros, this.holdMicros);
    if (amountMicros > this.holdMicros) {
      this.deps.log.warn(
        { txn: this.callId, cost: amountMicros, hold: this.holdMicros },
        'cost above the hold; capped',
      );
    }
    const tel = this.deps.telemetry;
    try {
      const r = await observed(tel, 'capture', () =>
        this.deps.ledger.capture(this.callId, {
          amountMicros: amount,
          provider: rec.provider,
          durationMs: this.elapsedMs(),
          response: rec.response,
          meta: rec.meta,
          jobHandle: rec.jobHandle,
        }),
      );
      tel?.metrics.charged(this.labels.action, this.labels.payment, r.chargedMicros);
      this.deps.alerts?.touched(this.accountId);
      return r.chargedMicros;
    } catch (err) {
      tel?.metrics.captureFailed();
      this.unresolved(err, 'capture');
      return undefined;
    }
  }

  /** Releases the hold: nothing is charged. Never throws (the sweeper releases a hold a failed void left). */
  async void(errorCode: string, rec: VoidRecord): Promise<void> {
    this.resolve();
    this.deps.telemetry?.metrics.voided(errorCode);
    await observed(this.deps.telemetry, 'void', () =>
      this.deps.ledger.void(this.callId, {
        errorCode,
        provider: rec.provider,
        durationMs: this.elapsedMs(),
        meta: rec.meta,
      }),
    ).catch((err) => this.unresolved(err, 'void'));
  }

  /**
   * A capture or void that could not be written. If the database did not answer, the hold (on PostgreSQL still
   * in the database) is voided as soon as it answers again, by this process — the caller was told nothing was
   * charged; a dead process's holds are the lease sweep's. Otherwise (the hold was resolved elsewhere) it is
   * logged.
   */
  private unresolved(err: unknown, what: 'capture' | 'void'): void {
    const health = this.deps.health;
    health?.report(err);
    if (health && isDatabaseUnavailable(err)) {
      this.deps.log.warn(
        { txn: this.callId, err },
        `${what} not written (the database does not answer): told uncharged; voided when it answers again`,
      );
      this.labels.unresolved?.add(this.callId);
      return;
    }
    this.deps.log.error(
      { err, txn: this.callId },
      what === 'capture'
        ? 'capture failed; the result was delivered uncharged, without a transaction id'
        : 'void failed; the sweeper will release the hold',
    );
  }

  private resolve(): void {
    if (this.resolved) throw new Error(`hold ${this.callId} resolved twice`);
    this.resolved = true;
    this.labels.pending?.delete(this.callId);
  }
}

export class Lifecycle {
  private readonly pending: PendingHolds = new Map();
  /** Calls whose capture or void could not be written while the database did not answer: voided on its return. */
  private readonly unresolved = new Set<string>();

  constructor(private readonly deps: LifecycleDeps) {
    deps.health?.onRecovered(() => this.resolveUnresolved());
  }

  /**
   * Voids the holds of calls whose outcome could not be written while the database was away, to the outcome their
   * callers were told: nothing charged. Idempotent: a hold already voided, expired or never recorded (lost with
   * the database) needs nothing. A capture that did commit although its answer was lost is refunded.
   */
  async resolveUnresolved(): Promise<void> {
    for (const callId of [...this.unresolved]) {
      try {
        await this.deps.ledger.void(callId, {
          errorCode: 'database_unavailable',
          provider: null,
          durationMs: 0,
        });
        this.deps.log.info({ txn: callId }, 'hold voided after the database outage');
      } catch (err) {
        if (isDatabaseUnavailable(err)) return; // still away: the next recovery goes on
        if (err instanceof LedgerStateError && /already posted/.test(err.message)) {
          await this.deps.ledger.refundCall(callId, 'database_unavailable');
          this.deps.log.warn({ txn: callId }, 'a capture the caller was told had failed was refunded');
        }
      }
      this.unresolved.delete(callId);
    }
  }

  /** Holds taken by this process and not yet resolved, and the age of the oldest (the /metrics gauges). */
  pendingHolds(): { count: number; oldestMs: number } {
    const oldest = this.pending.values().next();
    return {
      count: this.pending.size,
      oldestMs: oldest.done ? 0 : Math.max(0, performance.now() - oldest.value),
    };
  }

  /**
   * Reserves the call's price (or worst case) before it runs. Throws the refusal as a GatewayError when the
   * account cannot cover it, a daily cap is reached, or its idempotency key is busy or reused.
   */
  async hold(spec: HoldSpec): Promise<HoldOutcome> {
    const { principal } = spec;
    const holdMicros = spec.holdMicros ?? spec.priceMicros;
    // The caller's maximum per call first (no ledger write for a call that can never run), then every cap with
    // the hold: the door's, the key's day and month, the app's day (./spend-limits.ts).
    try {
      refuseHold(principal, spec.action, holdMicros, spec.holdNote, this.deps.accountUrl?.());
    } catch (e) {
      this.deps.telemetry?.metrics.holdRefused('call_limit_exceeded', capScopeOf(e));
      throw e;
    }
    const begun = await observed(this.deps.telemetry, 'hold', () =>
      this.deps.ledger.begin({
        accountId: principal.accountId,
        action: spec.action,
        priceMicros: spec.priceMicros,
        holdMicros,
        paymentMethod: paymentMethodOf(principal),
        principal: principalRef(principal),
        idempotency: spec.idempotency,
        holdTtlMs: Math.max(this.deps.holdTtlMs, spec.timeoutMs + HOLD_MARGIN_MS),
        caps: capsOf(principal, spec.doorCap),
        funding: spec.funding,
        meta: spec.meta,
      }),
    );
    if (begun.kind === 'started') {
      const labels = {
        action: spec.action,
        payment: principal.kind,
        pending: this.pending,
        unresolved: this.unresolved,
      };
      return {
        kind: 'held',
        hold: new Hold(this.deps, begun.callId, principal.accountId, holdMicros, labels),
      };
    }
    if (begun.kind === 'replay') return begun;
    // A key's or an app's own cap refused it: that cap is reached (an alert; the door's account-wide cap is not one).
    if (begun.kind === 'cap_reached' && begun.cap.scope !== '')
      this.deps.alerts?.capRefused(principal.accountId, begun.cap.scope);
    const refusal = holdRefusal(begun, spec, holdMicros, {
      now: this.deps.clock.now(),
      accountUrl: this.deps.accountUrl?.(),
    });
    this.deps.telemetry?.metrics.holdRefused(refusal.code as HoldRefusal, capScopeOf(refusal));
    throw refusal;
  }

  /**
   * A poll that saw the job fail gives back the call that started it (once; the ledger makes it idempotent).
   * The poll itself succeeded, so a failure here is logged, never turned into a failed poll.
   */
  async refundJob(accountId: string, handle: string, reason: string): Promise<void> {
    try {
      const r = await this.deps.ledger.refundJob(accountId, handle, reason);
      if (r.refundedMicros > 0) {
        this.deps.telemetry?.metrics.refunded(reason, r.refundedMicros);
        this.deps.log.info({ txn: r.callId, micros: r.refundedMicros, handle }, 'refunded a failed job');
      }
    } catch (err) {
      this.deps.log.error({ err, handle }, 'refund of a failed job did not go through');
    }
  }

  /** Money from outside onto an account. Returns the new balance. */
  credit(accountId: string, micros: number, reason: CreditReason, memo: string) {
    this.deps.log.info({ account: accountId, micros, reason }, 'credit');
    return this.deps.ledger.credit(accountId, micros, memo).then((balance) => {
      this.deps.telemetry?.metrics.credited(reason, micros);
      this.deps.alerts?.touched(accountId);
      return balance;
    });
  }

  /**
   * Records money that moved for a call no longer waiting for it (an x402 settlement confirmed only after the
   * call's first attempt was voided): a call funded and captured at once. Returns its transaction id.
   */
  async recordSettledCall(input: {
    principal: AccountPrincipal;
    action: string;
    micros: number;
    memo: string;
    meta: Record<string, unknown>;
  }): Promise<string> {
    const held = await this.hold({
      principal: input.principal,
      action: input.action,
      priceMicros: input.micros,
      timeoutMs: 0,
      funding: { micros: input.micros, memo: input.memo },
    });
    if (held.kind !== 'held') throw new Error(`could not record a settled call: ${held.kind}`);
    await held.hold.capture(input.micros, { provider: null, meta: input.meta });
    return held.hold.callId;
  }

  /**
   * Money from a card (a top-up) or back to it (a refund, a dispute), once per outside reference; a reversal gives
   * a debit back once (src/ledger/card-money.ts).
   */
  async cardMoney(req: ExternalRequest): Promise<ExternalResult> {
    const r = await this.deps.ledger.recordExternal(req);
    if (r.kind === 'recorded') {
      const { accountId, kind, micros, externalRef } = req;
      this.deps.telemetry?.metrics.cardMoney(kind, r.movedMicros);
      this.deps.log.info(
        { account: accountId, kind, micros, moved: r.movedMicros, ref: externalRef, txn: r.movementId },
        'card money',
      );
      if (r.unrecoveredMicros > 0) {
        this.deps.log.warn(
          { account: accountId, kind, unrecovered: r.unrecoveredMicros, ref: externalRef },
          'card money taken back exceeds what the account still held; the rest is unrecovered',
        );
      }
    } else if (r.kind === 'reversed') {
      this.deps.log.info(
        { account: req.accountId, kind: req.kind, ref: req.externalRef, reversal: r.movementId },
        'card money already reversed before it was recorded; nothing moved',
      );
    }
    await this.deps.alerts?.cardMoney(req, r);
    return r;
  }

  /** From now on, money movements are reported to the account's alerts (src/alerts, set up after this). */
  setAlerts(alerts: AlertSignals): void {
    this.deps.alerts = alerts;
  }

  /** A top-up's payment failed (Stripe said so): no money moved; the account's alerts are told. */
  topUpFailed(accountId: string, ref: string, micros: number | null, reason: string): Promise<void> {
    this.deps.log.info({ account: accountId, ref }, 'top-up failed');
    return this.deps.alerts?.topUpFailed(accountId, ref, micros, reason) ?? Promise.resolve();
  }

  /** Grants a credit line (the welcome line once a card is on file): once per account and once per card. */
  async grantLine(accountId: string, micros: number, cardFingerprint: string): Promise<GrantLineResult> {
    const r = await this.deps.ledger.grantCreditLine({
      accountId,
      micros,
      cardFingerprint,
      memo: `welcome credit line of ${formatUsd(micros)}`,
    });
    this.deps.log.info({ account: accountId, micros, outcome: r.kind }, 'credit line');
    return r;
  }

  /** Freezes an account's line (no new hold draws on it) with the reason its holder will be shown. */
  freezeLine(accountId: string, reason: string): Promise<void> {
    this.deps.log.warn({ account: accountId, reason }, 'credit line frozen');
    return this.deps.ledger
      .freezeCreditLine(accountId, reason)
      .then(() => this.deps.alerts?.touched(accountId));
  }

  unfreezeLine(accountId: string): Promise<void> {
    this.deps.log.info({ account: accountId }, 'credit line unfrozen');
    return this.deps.ledger
      .freezeCreditLine(accountId, null)
      .then(() => this.deps.alerts?.touched(accountId));
  }

  /** Reserves what was drawn on the line for one charge of the card (one settlement in flight per account). */
  startSettlement(req: SettlementRequest): Promise<SettlementStart> {
    return this.deps.ledger.beginSettlement(req);
  }

  /** The card's answer: paid (the line is restored) or declined (the line is frozen). */
  async finishSettlement(movementId: string, outcome: SettlementOutcome): Promise<SettlementResult> {
    const r = await this.deps.ledger.finishSettlement(movementId, outcome);
    this.deps.telemetry?.metrics.cardSettlement(r.kind, r.kind === 'settled' ? r.micros : 0);
    this.deps.log.info(
      { txn: movementId, outcome: r.kind, ...(outcome.ok ? {} : { reason: outcome.reason }) },
      'settlement',
    );
    await this.deps.alerts?.settlementFinished(movementId, outcome, r);
    return r;
  }

  /**
   * The operator's refund of all or part of a charge, once per reference, never past what the call was charged
   * in total, and off the cap counters it counted against (./operator-money.ts decides what may be asked).
   */
  async refundCharge(req: ChargeRefundRequest): Promise<ChargeRefundResult> {
    const r = await this.deps.ledger.refundCharge(req);
    if (r.kind === 'refunded') operatorMoved(this.deps, 'refund', r.movement, req.by);
    return r;
  }

  /** The operator's correction of a balance, either way; a debit never takes what pending holds need. */
  async adjust(req: AdjustRequest): Promise<AdjustResult> {
    const r = await this.deps.ledger.adjust(req);
    if (r.kind === 'adjusted') operatorMoved(this.deps, 'adjustment', r.movement, req.by);
    return r;
  }

  /** Voids holds past their expiry and purges idempotency keys past their TTL. */
  async sweep(now: number) {
    const r = await this.deps.ledger.sweep(now);
    if (r.expiredHolds > 0) this.deps.telemetry?.metrics.holdsExpired(r.expiredHolds);
    return r;
  }

  /** At the start of a gateway that owns its database alone: every pending hold was left by a dead process. */
  voidOrphans(reason: string): Promise<number> {
    return this.deps.ledger.voidAllPending(reason);
  }
}

function paymentMethodOf(p: AccountPrincipal): PaymentMethod {
  return p.kind;
}
