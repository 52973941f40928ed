import { capResetsAt } from '../spend-caps.js';
import type { BeginRequest, BeginResult } from '../types.js';

// The hot path of the PostgreSQL ledger: a plain call's hold and its resolution, one statement each, sent as
// named prepared statements (parsed and planned once per connection). A plain call has no idempotency key, no
// cap and no funding; its hold is a row of `pending_holds` (migration src/pg/migrations/ledger-lean.ts).
// Each statement either does the whole operation or nothing (zero rows back): then PgLedger asks the plpgsql
// function that handles every case (tg_begin, tg_capture, tg_release), which also says why (a refusal, an
// unknown or resolved hold). Why this shape: docs/decisions.md "The PostgreSQL ledger's hot path".

/** A call's meta as the `meta` text column keeps it (NULL for none). */
export const metaText = (v: Record<string, unknown> | undefined) => (v ? JSON.stringify(v) : null);

/**
 * Checks the funds, locks the account and reserves the hold in one conditional UPDATE (READ COMMITTED: an update
 * that waited for the row re-checks its condition on the version it then locks), then records the call and its
 * pending hold. `async`: the commit does not wait for its WAL flush (synchronous_commit off for this transaction
 * only; see PgLedgerOptions.durableHolds). Returns the call id, or no row (not enough funds, an unknown account:
 * tg_begin says which).
 */
export function beginPlain(async: boolean): { name: string; text: string } {
  return {
    name: async ? 'tg_begin_plain_async' : 'tg_begin_plain',
    text: `WITH a AS (
  UPDATE accounts SET held_micros = held_micros + $4
   WHERE id = $2
     AND (kind = 'system'
          OR balance_micros - held_micros + CASE WHEN line_frozen_at IS NULL THEN credit_line_micros ELSE 0 END >= $4)
  RETURNING id
), c AS (
  INSERT INTO calls (id, account_id, action, price_micros, hold_micros, status, payment_method, principal, created_at,
                     meta, replica_id)
  SELECT $1, a.id, $3, $5, $4, 'pending', $6, $7, $8, $9, $10 FROM a
  RETURNING id
)${async ? ", s AS (SELECT set_config('synchronous_commit', 'off', true) AS v)" : ''}
INSERT INTO pending_holds (call_id, account_id, amount_micros, expires_at, replica_id)
SELECT c.id, $2, $4, $8::bigint + $11::bigint, $10 FROM c${async ? ', s' : ''}
RETURNING call_id`,
  };
}

/**
 * Resolves a plain pending hold with a capture of $2 ≤ the hold: deletes the pending hold (once: a concurrent
 * resolver's DELETE finds nothing), posts the amount and releases the hold on the account, records the call's
 * success, writes the charge's two entries and credits revenue on the customer's row (accounts.revenue_micros,
 * which sys_revenue's balance adds up).
 * Returns one row, or none (not pending, not plain, or above the hold: tg_capture handles or says which).
 */
export const CAPTURE_PLAIN = {
  name: 'tg_capture_plain',
  text: `WITH h AS (
  DELETE FROM pending_holds
   WHERE call_id = $1 AND amount_micros >= $2
     AND idempotency_key IS NULL AND cap_keys IS NULL AND funding_micros = 0
  RETURNING account_id, amount_micros
), a AS (
  UPDATE accounts SET balance_micros = balance_micros - $2, held_micros = held_micros - h.amount_micros,
                      revenue_micros = revenue_micros + $2
    FROM h WHERE accounts.id = h.account_id
), c AS (
  UPDATE calls SET status = 'succeeded', charged_micros = $2, provider = $3, duration_ms = $4, finished_at = $5,
                   meta = coalesce($6, calls.meta)
    FROM h WHERE calls.id = $1
), e AS (
  INSERT INTO entries (transfer_id, account_id, amount_micros, kind, call_id, memo, created_at)
  SELECT 'tr_' || $1, leg.account_id, leg.micros, 'charge', $1, NULL, $5
    FROM h, LATERAL (VALUES (h.account_id, -$2::bigint), ('sys_revenue', $2::bigint)) AS leg (account_id, micros)
   WHERE $2::bigint > 0
)
SELECT h.account_id FROM h`,
};

/**
 * Releases a plain pending hold (a void): deletes it (once), releases it on the account and records the call's
 * failure. Returns one row, or none (tg_release handles the rest or says why).
 */
export const VOID_PLAIN = {
  name: 'tg_void_plain',
  text: `WITH h AS (
  DELETE FROM pending_holds
   WHERE call_id = $1 AND idempotency_key IS NULL AND cap_keys IS NULL AND funding_micros = 0
  RETURNING account_id, amount_micros
), a AS (
  UPDATE accounts SET held_micros = held_micros - h.amount_micros FROM h WHERE accounts.id = h.account_id
), c AS (
  UPDATE calls SET status = 'failed', error_code = $2, provider = coalesce($3, calls.provider),
                   duration_ms = coalesce($4, calls.duration_ms), finished_at = $5, meta = coalesce($6, calls.meta)
    FROM h WHERE calls.id = $1
)
SELECT h.account_id FROM h`,
};

/**
 * `beginPlain` for many calls at once (./pg-batch.ts), one row of each array per call: the holds are summed per
 * account, and an account whose funds do not cover its sum gets none of them here (each then goes alone through
 * tg_begin, which starts it or refuses it on its own). Accounts are locked in id order, so two batches that share
 * accounts wait for each other rather than deadlock. Returns the call ids started.
 */
export function beginPlainBatch(async: boolean): { name: string; text: string } {
  return {
    name: async ? 'tg_begin_plain_batch_async' : 'tg_begin_plain_batch',
    text: `WITH x AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::text[], $7::text[],
                       $8::bigint[], $9::text[], $11::bigint[])
    AS x (call_id, account_id, action, hold, price, method, principal, now, meta, ttl)
), w AS (
  SELECT account_id, sum(hold)::bigint AS total FROM x GROUP BY account_id
), l AS MATERIALIZED (
  SELECT accounts.id FROM accounts JOIN w ON accounts.id = w.account_id ORDER BY accounts.id FOR UPDATE OF accounts
), a AS (
  UPDATE accounts SET held_micros = held_micros + w.total
    FROM w JOIN l ON l.id = w.account_id
   WHERE accounts.id = w.account_id
     AND (kind = 'system'
          OR balance_micros - held_micros + CASE WHEN line_frozen_at IS NULL THEN credit_line_micros ELSE 0 END >= w.total)
  RETURNING accounts.id
), c AS (
  INSERT INTO calls (id, account_id, action, price_micros, hold_micros, status, payment_method, principal, created_at,
                     meta, replica_id)
  SELECT x.call_id, x.account_id, x.action, x.price, x.hold, 'pending', x.method, x.principal, x.now, x.meta, $10
    FROM x JOIN a ON a.id = x.account_id
  RETURNING id
)${async ? ", s AS (SELECT set_config('synchronous_commit', 'off', true) AS v)" : ''}
INSERT INTO pending_holds (call_id, account_id, amount_micros, expires_at, replica_id)
SELECT x.call_id, x.account_id, x.hold, x.now + x.ttl, $10 FROM x JOIN c ON c.id = x.call_id${async ? ', s' : ''}
RETURNING call_id`,
  };
}

/**
 * CAPTURE_PLAIN for many calls at once (./pg-batch.ts), one row of each array per call; what each posts is
 * summed per account, whose rows are locked in id order (see beginPlainBatch). Returns the position (from 1) of
 * each capture it did: one that is not a plain pending hold covering its amount is left to tg_capture, and
 * of two captures of one call, one.
 */
export const CAPTURE_PLAIN_BATCH = {
  name: 'tg_capture_plain_batch',
  text: `WITH x AS (
  SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::bigint[], $5::bigint[], $6::text[]) WITH ORDINALITY
    AS x (call_id, amount, provider, duration, now, meta, n)
), h AS (
  DELETE FROM pending_holds p USING x
   WHERE p.call_id = x.call_id AND p.amount_micros >= x.amount
     AND p.idempotency_key IS NULL AND p.cap_keys IS NULL AND p.funding_micros = 0
  RETURNING x.n, p.call_id, p.account_id, p.amount_micros AS held, x.amount, x.provider, x.duration, x.now, x.meta
), s AS (
  SELECT account_id, sum(amount)::bigint AS amount, sum(held)::bigint AS held FROM h GROUP BY account_id
), l AS MATERIALIZED (
  SELECT accounts.id FROM accounts JOIN s ON accounts.id = s.account_id ORDER BY accounts.id FOR UPDATE OF accounts
), a AS (
  UPDATE accounts SET balance_micros = balance_micros - s.amount, held_micros = held_micros - s.held,
                      revenue_micros = revenue_micros + s.amount
    FROM s JOIN l ON l.id = s.account_id
   WHERE accounts.id = s.account_id
), c AS (
  UPDATE calls SET status = 'succeeded', charged_micros = h.amount, provider = h.provider, duration_ms = h.duration,
                   finished_at = h.now, meta = coalesce(h.meta, calls.meta)
    FROM h WHERE calls.id = h.call_id
), e AS (
  INSERT INTO entries (transfer_id, account_id, amount_micros, kind, call_id, memo, created_at)
  SELECT 'tr_' || h.call_id, leg.account_id, leg.micros, 'charge', h.call_id, NULL, h.now
    FROM h, LATERAL (VALUES (h.account_id, -h.amount), ('sys_revenue', h.amount)) AS leg (account_id, micros)
   WHERE h.amount > 0
)
SELECT h.n FROM h`,
};

/** What tg_begin returns. */
export interface BeginRow {
  kind: BeginResult['kind'];
  call_id: string | null;
  response: string | null;
  available: number | null;
  spent: number | null;
  frozen_reason: string | null;
  /** Which of the request's caps refused it (from 0). */
  cap_index: number | null;
}

export function toBeginResult(r: BeginRow, req: BeginRequest, now: number): BeginResult {
  const callId = r.call_id ?? '';
  switch (r.kind) {
    case 'started':
    case 'in_flight':
    case 'mismatch':
      return { kind: r.kind, callId };
    case 'replay':
      return { kind: 'replay', callId, response: JSON.parse(r.response ?? 'null') };
    case 'insufficient': {
      const refused = {
        kind: 'insufficient' as const,
        availableMicros: r.available ?? 0,
        requiredMicros: req.holdMicros,
      };
      return r.frozen_reason === null ? refused : { ...refused, lineFrozen: { reason: r.frozen_reason } };
    }
    case 'cap_reached': {
      const cap = req.caps?.[r.cap_index ?? 0];
      if (!cap) throw new Error(`tg_begin refused on cap ${r.cap_index} of ${req.caps?.length ?? 0}`);
      return {
        kind: 'cap_reached',
        cap,
        spentMicros: Number(r.spent ?? 0),
        resetsAt: capResetsAt(cap.window, now),
      };
    }
  }
}
