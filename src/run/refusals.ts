import type { AccountPrincipal } from '../../auth/principal.js';
import type { Action } from '../../catalog/index.js';
import { GatewayError } from '../errors.js';
import type { BeginResult } from '../ledger/types.js';
import { formatUsd, microsToCents } from '../lib/money.js';

// The ways a call is refused before it runs, with messages that tell the caller what to do next.

/** The ways to pay, named in every 402. The x402 challenge joins the list when x402 is configured. */
export function paymentRequired(action: Action): GatewayError {
  return new GatewayError(
    'payment_required',
    `${action.id} costs ${action.priceCents} cents per successful call. Send an API key as ` +
      '"Authorization: Bearer tg_sk_…" (ask the operator for one: `tollgate accounts create`).',
    {
      details: {
        price_cents: action.priceCents,
        accepts: [{ method: 'api_key', header: 'Authorization: Bearer tg_sk_…' }],
      },
    },
  );
}

export function unauthorized(action: Action): GatewayError {
  return new GatewayError(
    'unauthorized',
    `${action.id} acts on your own account: send your API key as "Authorization: Bearer tg_sk_…".`,
  );
}

export function beginRefusal(
  r: Exclude<BeginResult, { kind: 'started' } | { kind: 'replay' }>,
  action: Action,
  principal: AccountPrincipal,
): GatewayError {
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
    case 'insufficient':
      return new GatewayError(
        'insufficient_credit',
        `Insufficient credit: ${action.id} needs ${formatUsd(r.requiredMicros)} and ${formatUsd(r.availableMicros)} ` +
          `is available. Ask the operator to add credit (\`tollgate credit ${principal.accountId} <usd>\`). ` +
          'Nothing was charged.',
        {
          details: {
            required_cents: microsToCents(r.requiredMicros),
            available_micros: r.availableMicros,
            account_id: principal.accountId,
          },
        },
      );
    case 'daily_cap': {
      const retryAfterSeconds = Math.max(1, Math.ceil((r.resetsAt - Date.now()) / 1000));
      return new GatewayError(
        'daily_cap_exceeded',
        `Daily spending cap of ${formatUsd(r.limitMicros)} reached; it resets at 00:00 UTC.`,
        { retryAfterSeconds, details: { limit_micros: r.limitMicros, spent_micros: r.spentMicros } },
      );
    }
  }
}
