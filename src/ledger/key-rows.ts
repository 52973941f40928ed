import { actionsOf, utcMonth, windowStart } from './spend-caps.js';
import { type ApiKeyRow, type KeyLimits, type KeyUsage, LedgerStateError } from './types.js';
import { utcDay } from './utc-day.js';

// API key rows as both backends store them, and the limit rules they share.

/** A stored row: the allowed actions comma-separated. */
export type KeyDbRow = Omit<ApiKeyRow, 'actions'> & { actions: string | null };

export function toKeyRow(r: KeyDbRow): ApiKeyRow {
  return {
    id: r.id,
    account_id: r.account_id,
    prefix: r.prefix,
    name: r.name,
    created_at: Number(r.created_at),
    revoked_at: r.revoked_at === null ? null : Number(r.revoked_at),
    max_call_micros: r.max_call_micros === null ? null : Number(r.max_call_micros),
    daily_limit_micros: r.daily_limit_micros === null ? null : Number(r.daily_limit_micros),
    monthly_limit_micros: r.monthly_limit_micros === null ? null : Number(r.monthly_limit_micros),
    actions: actionsOf(r.actions),
  };
}

/** The limits a key has after `changes` (absent: unchanged; null: removed), checked. */
export function mergeLimits(current: KeyLimits, changes: Partial<KeyLimits>): KeyLimits {
  const next: KeyLimits = {
    max_call_micros: pick(changes, current, 'max_call_micros'),
    daily_limit_micros: pick(changes, current, 'daily_limit_micros'),
    monthly_limit_micros: pick(changes, current, 'monthly_limit_micros'),
    actions: pick(changes, current, 'actions'),
  };
  for (const f of ['max_call_micros', 'daily_limit_micros', 'monthly_limit_micros'] as const) {
    const v = next[f];
    if (v !== null && (!Number.isSafeInteger(v) || v < 0))
      throw new LedgerStateError(`${f} must be a non-negative integer, got ${v}`);
  }
  if (next.actions !== null && (next.actions.length === 0 || next.actions.some((a) => !/^[^,\s]+$/.test(a))))
    throw new LedgerStateError(`actions must be a non-empty list of ids without commas or spaces`);
  return next;
}

function pick<K extends keyof KeyLimits>(
  changes: Partial<KeyLimits>,
  current: KeyLimits,
  k: K,
): KeyLimits[K] {
  return k in changes && changes[k] !== undefined ? (changes[k] as KeyLimits[K]) : current[k];
}

/** The windows a key's caps count in at `now`: where today and this month start. */
export function currentWindows(now: number): { dayStart: number; monthStart: number } {
  return { dayStart: windowStart('day', now), monthStart: windowStart('month', now) };
}

/** Keys with what each spent, from the per-principal sums of the month (`today` within it). */
export function keyUsageOf(
  keys: readonly ApiKeyRow[],
  spend: ReadonlyArray<{
    principal: string | null;
    today: number | string | null;
    since: number | string | null;
  }>,
  now: number,
): KeyUsage[] {
  const byKey = new Map(spend.map((s) => [s.principal, s]));
  return keys.map((k) => {
    const s = byKey.get(k.id);
    return {
      ...k,
      day: utcDay(now),
      month: utcMonth(now),
      spent_today_micros: Number(s?.today ?? 0),
      spent_month_micros: Number(s?.since ?? 0),
    };
  });
}
