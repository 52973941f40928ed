import type { CapUsage } from './events.js';

// The spending caps an account's alerts watch, behind one small interface so that every kind of cap plugs in:
// OAuth apps' daily limits today (chosen at consent or on the dashboard, counted by the ledger per app and UTC
// day), API keys' daily and monthly caps when they come. A cap is "crossed" at 80 % and at 100 % of its limit once
// per window (the window's end is its identity), and reached at once when it refuses a call.

export interface CapSource {
  /** The account's caps with what each has spent in its current window (spend counted as the cap counts it). */
  capUsage(accountId: string, now: number): Promise<CapUsage[]>;
}

/** The scope a hold refused by this cap names (the principal: `oauth:<client>` for an app, the key's id). */
export function capScope(c: Pick<CapUsage, 'kind' | 'id'>): string {
  return c.kind === 'app' ? `oauth:${c.id}` : c.id;
}

export interface AppLimit {
  client_id: string;
  client_name: string | null;
  daily_limit_micros: number | null;
}

/** OAuth apps' daily limits: the limit per (account, app), the spend from the ledger's per-app daily counter. */
export function appCaps(d: {
  apps(accountId: string): Promise<AppLimit[]>;
  spentToday(accountId: string, scope: string): Promise<number>;
  resetsAt(now: number): number;
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
          spentMicros: await d.spentToday(accountId, capScope({ kind: 'app', id: a.client_id })),
          limitMicros: a.daily_limit_micros,
          resetsAt: d.resetsAt(now),
        });
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
