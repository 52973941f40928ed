import type { AccountRow, ExternalRequest, MovementKind } from './types.js';

// The arithmetic of money from and back to outside (ExternalRequest), shared by both backends so that they
// cannot drift: each backend looks up the movements of the same reference under its account lock (SQLite: one
// synchronous commit; PostgreSQL: the account row FOR UPDATE) and asks `planExternal` what to move.
//
// A debit (`refund`, `dispute`) takes at most the prepaid balance not held by calls in flight. A reversal
// (`refund_reversal`: the refund failed or was cancelled; `dispute_reversal`: Stripe reinstated the funds) gives
// back what the outside returned, less what the debit could not take, and never more than the debit took. The
// outside reports the two in any order and concurrently (Stripe's events are unordered): a reversal that finds no
// debit records a zero movement, and a debit that finds its reversal already recorded moves nothing, so the pair
// nets to what the outside did whichever arrives first.

type DebitKind = 'refund' | 'dispute';
type ReversalKind = 'refund_reversal' | 'dispute_reversal';

const REVERSAL_OF: Record<DebitKind, ReversalKind> = {
  refund: 'refund_reversal',
  dispute: 'dispute_reversal',
};
const DEBIT_OF: Record<ReversalKind, DebitKind> = {
  refund_reversal: 'refund',
  dispute_reversal: 'dispute',
};

/** The movement of the same reference that pairs with `kind` (a debit's reversal, a reversal's debit), if any. */
export function pairedKind(kind: ExternalRequest['kind']): MovementKind | undefined {
  if (kind === 'refund' || kind === 'dispute') return REVERSAL_OF[kind];
  if (kind === 'refund_reversal' || kind === 'dispute_reversal') return DEBIT_OF[kind];
  return undefined;
}

/** What a backend knows of the paired movement: its id, account, signed amount and parsed meta. */
export interface PairedMovement {
  id: string;
  account_id: string;
  amount_micros: number;
  meta: Record<string, unknown> | null;
}

export type ExternalPlan =
  /** A debit whose reversal is already recorded: nothing moves. */
  | { kind: 'reversed'; movementId: string }
  /** Record the movement with this signed amount (0 is a reversal ahead of its debit). */
  | { kind: 'move'; micros: number; unrecoveredMicros: number; meta: Record<string, unknown> };

export function planExternal(
  req: ExternalRequest,
  account: AccountRow,
  paired: PairedMovement | undefined,
): ExternalPlan {
  const base = { ...req.meta, requested_micros: req.micros };
  switch (req.kind) {
    case 'topup':
      return { kind: 'move', micros: req.micros, unrecoveredMicros: 0, meta: base };
    case 'refund':
    case 'dispute': {
      if (paired) return { kind: 'reversed', movementId: paired.id };
      // A hold in flight still captures, and the balance never goes below what the line covers (the line pays
      // for usage, never for a refund or a chargeback).
      const free = Math.max(0, account.balance_micros - account.held_micros);
      const taken = Math.min(req.micros, free);
      const unrecovered = req.micros - taken;
      return {
        kind: 'move',
        micros: -taken,
        unrecoveredMicros: unrecovered,
        meta: unrecovered > 0 ? { ...base, unrecovered_micros: unrecovered } : base,
      };
    }
    case 'refund_reversal':
    case 'dispute_reversal': {
      // A debit of another account under the same reference cannot be undone here (and does not happen:
      // references are Stripe ids of one payment); it is treated as absent.
      if (!paired || paired.account_id !== req.accountId)
        return { kind: 'move', micros: 0, unrecoveredMicros: 0, meta: { ...base, before_debit: true } };
      const taken = Math.max(0, -paired.amount_micros);
      const requested = Number(paired.meta?.requested_micros ?? taken);
      const unrecovered = Math.max(0, requested - taken);
      const back = Math.min(taken, Math.max(0, req.micros - unrecovered));
      return { kind: 'move', micros: back, unrecoveredMicros: 0, meta: { ...base, reverses: paired.id } };
    }
  }
}
