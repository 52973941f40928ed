import { capResetsAt, keyScope } from '../ledger/spend-caps.js';
import type { ApiKeyRow, CapWindow } from '../ledger/types.js';
import type { CapUsage } from './events.js';

// The spending caps an account's alerts watch, behind one small interface so that every kind of cap plugs in:
// OAuth apps' daily limits (chosen at consent or on the dashboard, counted by the ledger per app and UTC day) and
// API keys' daily and monthly caps (docs/decisions.md "Limits per API key"). A cap is "crossed" at 80 % and at
// 100 % of its limit once per window (the window's end is its identity), and reached at once when it refuses a
// call. Spend is read from the ledger's counter of the cap (what is charged plus what is held), as the cap counts
// it: the alert agrees with the refusal.

export interface CapSource {
  /** The account's caps with what each has spent in its current window (spend counted as the cap counts it). */
  capUsage(accountId: string, now: number): Promise<CapUsage[]>;
}

/** The scope a hold refused by this cap names (the ledger's: `oauth:<client>` for an app, `key:<key id>`). */
export function capScope(c: Pick<CapUsage, 'kind' | 'id'>): string {
  return c.kind === 'app' ? `oauth:${c.id}` : keyScope(c.id);
}

export interface AppLimit {
  client_id: string;
  client_name: string | null;
  daily_limit_micros: number | null;
}

/** OAuth apps' daily limits: the limit per (account, app), the spend from the ledger's per-app daily counter. */
export function appCaps(d: {
  apps(accountId: string): Promise<AppLimit[]>;
  spent(accountId: string, scope: string, window: CapWindow): Promise<number>;
}): CapSource {
  return {
    async capUsage(accountId, now) {
      const out: CapUsage[] = [];
      for (const a of await d.apps(accountId)) {
        if (a.daily_limit_micros === null || a.daily_limit_micros <= 0) continue;
        out.push({
          kind: 'app',
          id: a.client_id,
          name: a.client_name ?? undefined,
          window: 'day',
          spentMicros: await d.spent(accountId, capScope({ kind: 'app', id: a.client_id }), 'day'),
          limitMicros: a.daily_limit_micros,
          resetsAt: capResetsAt('day', now),
        });
      }
      return out;
    },
  };
}

/** API keys' daily and monthly caps: the limits on each active key, the spend from the ledger's counters. */
export function keyCaps(d: {
  keys(accountId: string): Promise<ApiKeyRow[]>;
  spent(accountId: string, scope: string, window: CapWindow): Promise<number>;
}): CapSource {
  return {
    async capUsage(accountId, now) {
      const out: CapUsage[] = [];
      for (const k of await d.keys(accountId)) {
        if (k.revoked_at !== null) continue;
        const windows: Array<[CapWindow, number | null]> = [
          ['day', k.daily_limit_micros],
          ['month', k.monthly_limit_micros],
        ];
        for (const [window, limit] of windows) {
          if (limit === null || limit <= 0) continue;
          out.push({
            kind: 'key',
            id: k.id,
            name: k.name ?? k.prefix,
            window,
            spentMicros: await d.spent(accountId, keyScope(k.id), window),
            limitMicros: limit,
            resetsAt: capResetsAt(window, now),
          });
        }
      }
      return out;
    },
  };
}

/** Several sources as one (apps, keys). */
export function allCaps(...sources: CapSource[]): CapSource {
  return {
    async capUsage(accountId, now) {
      return (await Promise.all(sources.map((s) => s.capUsage(accountId, now)))).flat();
    },
  };
}
