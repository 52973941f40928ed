import type { LedgerRecords } from '../ledger/types.js';
import type { Clock } from '../lib/clock.js';
import { type CapSource, capScope } from './caps.js';
import { type AlertEventType, capData, money, newEvent } from './events.js';
import type { AlertSettings, AlertStore, Channel } from './store.js';

// Thresholds, looked at off the call path. The lifecycle marks an account "touched" when money moves on it (a
// set insert, only for accounts with alerts: `watched`, reloaded every few seconds so a rule saved on another
// replica is seen); a pass about every second reads the balance, the line and the caps of the touched accounts
// and records each threshold's state as a mark (./store.ts). An alert is queued only when a mark changes:
//
//   balance:<threshold>   above → below fires balance.below_threshold; below → above re-arms it (a top-up)
//   line                  ok → frozen fires credit_line.frozen; frozen → ok fires credit_line.restored
//   cap:<kind>:<id>:<window>:<80|100>
//                         holds the window (its end) of the last alert: a new window's crossing fires once
//
// A balance or line mark seen for the first time (a rule just saved) records the state without an alert: an
// alert says something changed. Marks live in the database, so a restart or a second replica never fires a
// crossing twice; after a restart every watched account is looked at once (crossings made while it was down).

export interface EvaluatorDeps {
  store: AlertStore;
  ledger: LedgerRecords;
  caps: CapSource;
  clock: Clock;
  /** A look that failed (logged at most so often: a database outage would say it every second). */
  failed(err: unknown, accountId: string): void;
  /** Where the account's alerts go now (none: nothing to evaluate). */
  channels(s: AlertSettings): Channel[];
}

export class Evaluator {
  private watched = new Set<string>();
  private dirty = new Set<string>();
  /** Caps (by scope) that refused a call since the account was last looked at. */
  private readonly refused = new Map<string, Set<string>>();

  constructor(private readonly d: EvaluatorDeps) {}

  touched(accountId: string): void {
    if (this.watched.has(accountId)) this.dirty.add(accountId);
  }

  capRefused(accountId: string, scope: string): void {
    if (!this.watched.has(accountId)) return;
    this.refused.set(accountId, (this.refused.get(accountId) ?? new Set()).add(scope));
    this.dirty.add(accountId);
  }

  watch(accountId: string): void {
    this.watched.add(accountId);
  }

  /** Reloads which accounts have alerts; `all`: look at each of them in the next pass (a start). */
  async refresh(all = false): Promise<void> {
    this.watched = new Set(await this.d.store.watchedAccounts());
    if (all) for (const id of this.watched) this.dirty.add(id);
  }

  /** Looks at every account touched since the last pass. */
  async pass(): Promise<void> {
    if (this.dirty.size === 0) return;
    const batch = this.dirty;
    this.dirty = new Set();
    for (const id of batch) {
      try {
        await this.evaluate(id);
      } catch (err) {
        // Looked at again with the next movement (or the next start); a database hiccup loses no crossing.
        this.dirty.add(id);
        this.d.failed(err, id);
      }
    }
  }

  async evaluate(accountId: string): Promise<void> {
    const s = await this.d.store.settings(accountId);
    const channels = s ? this.d.channels(s) : [];
    if (!s || channels.length === 0) {
      this.watched.delete(accountId);
      return;
    }
    const on = new Set(s.events);
    const now = this.d.clock.now();
    const refused = this.refused.get(accountId);
    this.refused.delete(accountId);
    const mark = this.d.store.mark.bind(this.d.store);

    const threshold = s.balance_threshold_micros;
    if (threshold !== null) {
      // What the account can spend with nothing in flight (the prepaid balance plus a usable line): holds of calls
      // running now would make it jitter around the threshold.
      const b = await this.d.ledger.balance(accountId);
      const available = b.available_micros + b.held_micros;
      const below = available < threshold;
      await mark(
        accountId,
        `balance:${threshold}`,
        below ? 'below' : 'above',
        channels,
        (prev) =>
          prev === 'above' && below && on.has('balance.below_threshold')
            ? newEvent(
                'balance.below_threshold',
                accountId,
                { ...money('available', available), ...money('threshold', threshold) },
                now,
              )
            : undefined,
        now,
      );
    }

    // Recorded with or without a line, so that the first freeze of a line granted later is a change.
    const line = await this.d.ledger.creditLine(accountId);
    const lineType: AlertEventType = line.frozen ? 'credit_line.frozen' : 'credit_line.restored';
    const lineData = {
      ...(line.frozen ? { reason: line.frozen.reason } : {}),
      ...money('limit', line.limit_micros),
      ...money('drawn', line.drawn_micros),
    };
    await mark(
      accountId,
      'line',
      line.frozen ? 'frozen' : 'ok',
      channels,
      (prev) =>
        prev !== undefined && on.has(lineType) ? newEvent(lineType, accountId, lineData, now) : undefined,
      now,
    );

    if (!on.has('cap.warning') && !on.has('cap.reached')) return;
    for (const c of await this.d.caps.capUsage(accountId, now)) {
      if (c.limitMicros <= 0) continue;
      const stopped = refused?.has(capScope(c)) ?? false;
      const levels: Array<[80 | 100, AlertEventType, boolean]> = [
        [80, 'cap.warning', c.spentMicros * 5 >= c.limitMicros * 4],
        [100, 'cap.reached', c.spentMicros >= c.limitMicros || stopped],
      ];
      for (const [level, type, reached] of levels) {
        if (!reached || !on.has(type)) continue;
        await mark(
          accountId,
          `cap:${c.kind}:${c.id}:${c.window}:${level}`,
          String(c.resetsAt),
          channels,
          () => newEvent(type, accountId, capData(c, level, level === 100 && stopped), now),
          now,
        );
      }
    }
  }
}
