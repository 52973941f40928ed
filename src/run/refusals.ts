import type { Action } from '../../catalog/index.js';
import { GatewayError } from '../errors.js';
import type { BeginResult } from '../ledger/types.js';
import { centsPhrase, formatUsd, microsToCents } from '../lib/money.js';
import { fixAt } from './fixes.js';
import type { HoldSpec } from './lifecycle.js';
import { capRefusal } from './spend-limits.js';

// The ways a call is refused before it runs, with messages that tell the caller what to do next.

/** Why a payment presented with the call did not pay, for the 402 that answers it. */
export interface Refused {
  /** The rail, as the caller knows it: `x402`, `MPP`. */
  rail: string;
  reason: string;
  message: string;
  /** A URL naming the problem, where the rail's protocol has one (MPP's problem types). */
  problem?: string;
}

/**
 * The one 402 of a paid action (src/run/rails.ts `Rails.refusal` gathers the offers): the price, every way to pay
 * that the gateway's rails offer for it, and the API key; with `refused`, why the payment presented did not pay.
 */
export function paymentRequired(
  action: Action,
  offers: ReadonlyArray<{ words: string; accepts: Record<string, unknown> }>,
  refused?: Refused,
): GatewayError {
  const apiKey = { method: 'api_key', header: 'Authorization: Bearer tg_sk_…' };
  const price = `${action.id} costs ${centsPhrase(action.priceCents)} per successful call.`;
  const keyHint =
    'an API key as "Authorization: Bearer tg_sk_…" (ask the operator for one: `tollgate accounts create`)';
  const why = refused
    ? `The ${refused.rail} payment was refused (${refused.reason}): ${refused.message}. Nothing was charged. `
    : '';
  const ways =
    offers.length > 0
      ? ` Pay with ${offers.map((o) => o.words).join('; or with ')}; or send ${keyHint}.`
      : ` This gateway accepts only API keys (x402 payments are not enabled). Send ${keyHint}.`;
  return new GatewayError('payment_required', `${why}${price}${ways}`, {
    details: {
      price_cents: action.priceCents,
      ...(refused ? { reason: refused.reason } : {}),
      ...(refused?.problem ? { problem: refused.problem } : {}),
      accepts: [apiKey, ...offers.map((o) => o.accepts)],
    },
  });
}

export function unauthorized(action: Action): GatewayError {
  return new GatewayError(
    'unauthorized',
    `${action.id} acts on your own account: send your API key as "Authorization: Bearer tg_sk_…".`,
  );
}

/**
 * Why a hold was refused, in words that say what to do next: wait (a busy idempotency key, a spending cap), use
 * a new key, or add money (top up, fix the card, ask the operator).
 */
export function holdRefusal(
  r: Exclude<BeginResult, { kind: 'started' } | { kind: 'replay' }>,
  spec: HoldSpec,
  holdMicros: number,
  ctx: { now: number; accountUrl: string | undefined },
): GatewayError {
  const { principal } = spec;
  switch (r.kind) {
    case 'in_flight':
      return new GatewayError(
        'idempotency_in_flight',
        'A call with this Idempotency-Key is still running; retry after it finishes to get its result.',
        { retryAfterSeconds: 1, details: { transaction_id: r.callId } },
      );
    case 'mismatch':
      return new GatewayError(
        'idempotency_mismatch',
        'This Idempotency-Key was already used with a different action or body; use a new key for a new call.',
        { details: { transaction_id: r.callId } },
      );
    case 'insufficient': {
      const needs = spec.holdNote
        ? `this call holds up to ${formatUsd(holdMicros)} while it runs (${spec.holdNote})`
        : `${spec.action} needs ${formatUsd(r.requiredMicros)}`;
      // With card payments on, the page that fixes it (./fixes.ts): a new card unfreezes a frozen line.
      const fix = ctx.accountUrl ? fixAt(ctx.accountUrl, r.lineFrozen ? 'add_card' : 'top_up') : undefined;
      const frozen = r.lineFrozen
        ? ` Your credit line is frozen: ${r.lineFrozen.reason}.` +
          (fix ? ` Update your card or top up at ${fix.url}.` : ' Ask the operator to add credit.')
        : fix
          ? ` Top up or add a card at ${fix.url}.`
          : ` Ask the operator to add credit (\`tollgate credit ${principal.accountId} <usd>\`).`;
      return new GatewayError(
        'insufficient_credit',
        `Insufficient credit: ${needs} and ${formatUsd(Math.max(0, r.availableMicros))} is available.${frozen} Nothing was charged.`,
        {
          details: {
            required_cents: microsToCents(r.requiredMicros),
            required_micros: r.requiredMicros,
            available_micros: r.availableMicros,
            account_id: principal.accountId,
            ...(r.lineFrozen ? { credit_line: 'frozen', frozen_reason: r.lineFrozen.reason } : {}),
            ...(fix ? { fix } : {}),
          },
        },
      );
    }
    case 'cap_reached':
      return capRefusal(r, principal, spec.doorCap, ctx.now, ctx.accountUrl);
  }
}
