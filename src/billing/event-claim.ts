// A Stripe webhook event's claim (Stripe delivers at least once, and to any replica): see BillingStore.claimEvent.

export type EventClaim = 'claimed' | 'handled' | 'busy';

/** A claim left unmarked this long was left by a crash: the next delivery takes it over (handlers are idempotent). */
export const STALE_CLAIM_MS = 60_000;
