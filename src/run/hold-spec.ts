import type { AccountPrincipal } from '../../auth/principal.js';
import type { Hold } from './lifecycle.js';
import type { DoorCap } from './spend-limits.js';

// What the lifecycle (./lifecycle.ts) is asked for and answers about a call's hold: the request of a hold, its
// outcome, and what a capture or a void records. Types only, kept apart so the lifecycle's file holds its rules.

export interface HoldSpec {
  principal: AccountPrincipal;
  /** The action id, for the record (`llm/chat.completions` for the model router). */
  action: string;
  /** The price quoted to the caller. */
  priceMicros: number;
  /** The worst case reserved (metered calls); a fixed price holds exactly its price. */
  holdMicros?: number | undefined;
  /** How long the work may take: the hold outlives it by HOLD_MARGIN_MS. */
  timeoutMs: number;
  idempotency?: { key: string; fingerprint: string } | undefined;
  /**
   * A per-UTC-day cap of the door on the whole account, checked with the hold (the model router's inference cap;
   * `name` starts the refusal: "Daily inference cap"). The caller's own limits (an API key's, an OAuth app's)
   * apply besides it.
   */
  doorCap?: DoorCap | undefined;
  /** Money that comes with the call (a verified x402 payment): credited with the hold, reversed if unused. */
  funding?: { micros: number; memo: string } | undefined;
  meta?: Record<string, unknown> | undefined;
  /** Says what the hold is made of, for the insufficient-credit message of a metered call. */
  holdNote?: string | undefined;
}

export type HoldOutcome =
  | { kind: 'held'; hold: Hold }
  /** An earlier call with the same idempotency key finished: its stored response, no new charge. */
  | { kind: 'replay'; callId: string; response: unknown };

export interface CaptureRecord {
  provider: string | null;
  /** Stored for idempotent replays (the envelope). */
  response?: unknown;
  meta?: Record<string, unknown> | undefined;
  /** The job this call started (render, crawl…): a later poll that sees it fail refunds the call. */
  jobHandle?: string | undefined;
}

export interface VoidRecord {
  provider: string | null;
  meta?: Record<string, unknown> | undefined;
}

export type CreditReason = 'operator' | 'welcome' | 'x402_prepaid';
