import type { AccountRow, Balance, CallRow, MovementRow } from './types.js';

// What both backends share to read their rows: meta is stored as JSON text (a replay is byte for byte), a time
// range without an end is open, and an account row says what it leaves to spend.

/** The end of a time range that has none. */
export const MAX_TIME = Number.MAX_SAFE_INTEGER;

export interface CallDbRow extends Omit<CallRow, 'meta'> {
  meta: string | null;
}

export interface MovementDbRow extends Omit<MovementRow, 'meta'> {
  meta: string | null;
}

/** A row with its meta parsed. */
export function withMeta<T extends { meta: string | null }>(
  r: T,
): Omit<T, 'meta'> & { meta: Record<string, unknown> | null } {
  return { ...r, meta: r.meta === null ? null : (JSON.parse(r.meta) as Record<string, unknown>) };
}

export const toCallRow: (r: CallDbRow) => CallRow = withMeta;
export const toMovement: (r: MovementDbRow) => MovementRow = withMeta;

/** What a new hold may take: the balance minus holds, plus the line unless it is frozen. */
export function availableOf(a: AccountRow): number {
  return a.balance_micros - a.held_micros + (a.line_frozen_at === null ? a.credit_line_micros : 0);
}

export function balanceOf(a: AccountRow): Balance {
  return { balance_micros: a.balance_micros, held_micros: a.held_micros, available_micros: availableOf(a) };
}
