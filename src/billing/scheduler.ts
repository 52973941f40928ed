import type { Logger } from 'pino';
import { type BillingConfig, STRIPE_MIN_CHARGE_MICROS } from '../config/index.js';
import type { LedgerRecords } from '../ledger/types.js';
import type { Clock } from '../lib/clock.js';
import type { Settlements } from './settle.js';
import type { BillingStore } from './store.js';

// When lines are settled (docs/decisions.md "Card payments and the credit line"): every check interval, each
// account whose drawn amount reached the threshold, and settlements whose outcome is not known yet (the same
// request again); at each multiple of the settlement period (UTC), every account with anything drawn from
// Stripe's minimum charge up. Runs one pass at a time; a failing account never stops the others.

const SCHEDULE_STATE = 'settled_period_start';
/** A pending settlement is asked again after this long without an answer. */
const RETRY_AFTER_MS = 60_000;
const BATCH = 200;

export class SettlementScheduler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly d: {
      ledger: LedgerRecords;
      settlements: Settlements;
      store: BillingStore;
      clock: Clock;
      log: Logger;
      config: BillingConfig;
    },
  ) {}

  /** The first period starts now: a fresh gateway does not settle everything at its first start. */
  async init(): Promise<void> {
    await this.d.store.swapState(SCHEDULE_STATE, undefined, String(this.periodStart()));
  }

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.d.config.settleCheckMs);
    this.timer.unref();
  }

  /** One pass (also what tests call); concurrent calls share the pass in progress. */
  tick(): Promise<void> {
    this.running ??= this.pass().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  private periodStart(): number {
    const every = this.d.config.settleEveryMs;
    return Math.floor(this.d.clock.now() / every) * every;
  }

  private async pass(): Promise<void> {
    const { ledger, settlements, log, config } = this.d;
    const now = this.d.clock.now();
    const each = async (what: string, accountId: string, f: () => Promise<unknown>) => {
      try {
        await f();
      } catch (err) {
        log.error({ err, account: accountId, what }, 'settlement pass: account skipped');
      }
    };
    for (const m of await ledger.pendingSettlements(now - RETRY_AFTER_MS, BATCH)) {
      await each('retry', m.account_id, () =>
        settlements.retry(m.id, m.account_id, m.amount_micros, m.created_at),
      );
    }
    for (const a of await ledger.drawnAccounts(config.settleThresholdMicros, BATCH)) {
      await each('threshold', a.account_id, () => settlements.settle(a.account_id, 'threshold'));
    }
    const period = this.periodStart();
    const last = await this.d.store.state(SCHEDULE_STATE);
    // Of replicas passing at once, the one that moves the period on runs the scheduled settlements.
    if (Number(last ?? 0) < period && (await this.d.store.swapState(SCHEDULE_STATE, last, String(period)))) {
      let due = await ledger.drawnAccounts(STRIPE_MIN_CHARGE_MICROS, BATCH);
      // A batch at a time; each settled account leaves the list (its drawn amount is reserved or repaid).
      for (let rounds = 0; due.length > 0 && rounds < 50; rounds++) {
        for (const a of due)
          await each('schedule', a.account_id, () => settlements.settle(a.account_id, 'schedule'));
        if (due.length < BATCH) break;
        due = await ledger.drawnAccounts(STRIPE_MIN_CHARGE_MICROS, BATCH);
      }
    }
  }
}
