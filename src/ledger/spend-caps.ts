import { LedgerStateError, type SpendCap } from './types.js';
import { nextUtcMidnight, utcDay } from './utc-day.js';

// The counters behind spending caps, the same on both backends. A counter is one row per (account, counter key),
// the key naming its window and scope: `2026-11-28` (the account's own day: the model router's cap, as it was
// named before there were other caps), `2026-11-28 key:key_…` (a key's day), `2026-11 key:key_…` (a key's month),
// `2026-11-28 oauth:<client id>` (an app's day). A new window is a new row, so nothing is ever reset; the sweeper
// does not need to know about caps.

/** YYYY-MM of `ms` in UTC. */
export function utcMonth(ms: number): string {
  return new Date(ms).toISOString().slice(0, 7);
}

/** When the UTC month of `ms` ends. */
export function nextUtcMonth(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

/** Where the window of `ms` starts (ms since the epoch). */
export function windowStart(window: SpendCap['window'], ms: number): number {
  const d = new Date(ms);
  return window === 'day'
    ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate())
    : Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

/** When the cap's current window ends: the counter starts over from zero then. */
export function capResetsAt(window: SpendCap['window'], ms: number): number {
  return window === 'day' ? nextUtcMidnight(ms) : nextUtcMonth(ms);
}

/** The counter a cap counts against at `ms`. */
export function counterKey(scope: string, window: SpendCap['window'], ms: number): string {
  const w = window === 'day' ? utcDay(ms) : utcMonth(ms);
  return scope === '' ? w : `${w} ${scope}`;
}

/** The counter keys of a request's caps, in its order; refuses two caps on one counter (a caller's mistake). */
export function counterKeys(caps: readonly SpendCap[], ms: number): string[] {
  const keys = caps.map((c) => counterKey(c.scope, c.window, ms));
  if (new Set(keys).size !== keys.length) {
    throw new LedgerStateError(`two caps on one counter: ${keys.join(', ')}`);
  }
  for (const c of caps) {
    if (!Number.isSafeInteger(c.limitMicros) || c.limitMicros < 0)
      throw new LedgerStateError(`a cap's limit must be a non-negative integer, got ${c.limitMicros}`);
  }
  return keys;
}

/** The scope of an API key's own caps. */
export function keyScope(keyId: string): string {
  return `key:${keyId}`;
}

/** An `actions` column (comma-separated, or NULL for every action) as the list KeyLimits carries. */
export function actionsOf(column: string | null): string[] | null {
  return column === null ? null : column.split(',').filter((a) => a !== '');
}

/** The list as the column stores it. */
export function actionsColumn(actions: readonly string[] | null): string | null {
  return actions === null ? null : actions.join(',');
}
