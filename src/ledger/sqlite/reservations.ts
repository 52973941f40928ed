import type { BeginRequest } from '../types.js';

// Holds on SQLite live in the one process that owns the database (the data dir's lock), not in a table: a hold
// moves no money, so writing it down would be durable work for nothing. Every admission check reads the
// committed row and subtracts what this process has reserved, so nothing can overspend; a capture posts its
// amount and releases its reservation in the same synchronous step (./sqlite-ledger.ts), so the reserved money
// is never counted twice or not at all. A crash loses the reservations, which is exactly how an uncaptured hold
// was voided before: nothing was charged for them.

/** One call's reservation: everything the capture or void will record. */
export interface MemHold {
  callId: string;
  accountId: string;
  action: string;
  priceMicros: number;
  holdMicros: number;
  paymentMethod: BeginRequest['paymentMethod'];
  principal: string | null;
  idempotency: { key: string; fingerprint: string } | undefined;
  /** The cap counters this hold counts against (src/ledger/spend-caps.ts), released with it. */
  caps: string[];
  /** Money that came with the call (x402): written only if the hold posts. */
  funding: { micros: number; memo: string } | undefined;
  createdAt: number;
  expiresAt: number;
  meta: Record<string, unknown> | undefined;
}

export class Reservations {
  private readonly holds = new Map<string, MemHold>();
  private readonly heldByAccount = new Map<string, number>();
  /** Money that came with pending calls (x402), up to each call's hold: it backs those holds. */
  private readonly fundingByAccount = new Map<string, number>();
  /** Idempotency keys of calls in flight ("account\0key" → the hold). */
  private readonly claims = new Map<string, MemHold>();
  /** What pending holds count against each capped counter ("account\0cap key"). */
  private readonly capHeld = new Map<string, number>();

  get(callId: string): MemHold | undefined {
    return this.holds.get(callId);
  }

  /** What this process has reserved on an account (its pending holds). */
  heldOf(accountId: string): number {
    return this.heldByAccount.get(accountId) ?? 0;
  }

  /** Money that came with this process's pending calls on an account (counted as if on its balance). */
  fundingOf(accountId: string): number {
    return this.fundingByAccount.get(accountId) ?? 0;
  }

  claimOf(accountId: string, key: string): MemHold | undefined {
    return this.claims.get(`${accountId}\0${key}`);
  }

  capHeldOf(accountId: string, cap: string): number {
    return this.capHeld.get(`${accountId}\0${cap}`) ?? 0;
  }

  add(h: MemHold): void {
    this.holds.set(h.callId, h);
    this.heldByAccount.set(h.accountId, this.heldOf(h.accountId) + h.holdMicros);
    if (h.funding) bump(this.fundingByAccount, h.accountId, fundingShare(h));
    if (h.idempotency) this.claims.set(`${h.accountId}\0${h.idempotency.key}`, h);
    for (const c of h.caps) bump(this.capHeld, `${h.accountId}\0${c}`, h.holdMicros);
  }

  /**
   * Takes the hold out of reach (no second capture, void or expiry finds it); its money, idempotency claim and cap
   * share stay reserved until release(). Returns it, or undefined if it was already taken.
   */
  take(callId: string): MemHold | undefined {
    const h = this.holds.get(callId);
    if (h) this.holds.delete(callId);
    return h;
  }

  /** Gives back what a taken hold reserved: in the same synchronous step as the commit that posted it, if any. */
  release(h: MemHold): void {
    bump(this.heldByAccount, h.accountId, -h.holdMicros);
    if (h.funding) bump(this.fundingByAccount, h.accountId, -fundingShare(h));
    if (h.idempotency) this.claims.delete(`${h.accountId}\0${h.idempotency.key}`);
    for (const c of h.caps) bump(this.capHeld, `${h.accountId}\0${c}`, -h.holdMicros);
  }

  /** Holds past their expiry, oldest first. */
  expired(now: number): MemHold[] {
    const out: MemHold[] = [];
    for (const h of this.holds.values()) if (h.expiresAt <= now) out.push(h);
    return out;
  }

  /** The pending holds of an account, newest first (the transaction history shows them as pending). */
  ofAccount(accountId: string): MemHold[] {
    const out: MemHold[] = [];
    for (const h of this.holds.values()) if (h.accountId === accountId) out.push(h);
    return out.reverse();
  }

  all(): MemHold[] {
    return [...this.holds.values()];
  }
}

/** Adds `by` to a counter, dropping it at zero (maps stay the size of what is in flight). */
function bump(m: Map<string, number>, key: string, by: number): void {
  const v = (m.get(key) ?? 0) + by;
  if (v === 0) m.delete(key);
  else m.set(key, v);
}

/** A call's funding backs at most its own hold, so a failed call never leaves another's hold unbacked. */
function fundingShare(h: MemHold): number {
  return Math.min(h.funding?.micros ?? 0, h.holdMicros);
}
