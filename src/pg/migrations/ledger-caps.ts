import { BEGIN_ADMISSION, CAPTURE_CTES, CAPTURE_TAIL, RELEASE_CTES, RELEASE_TAIL } from './ledger-parts.js';

// Ledger migration 5: limits per API key (docs/decisions.md "Limits per API key").
//
// - A hold takes a list of caps instead of one daily cap: each a counter (src/ledger/spend-caps.ts names them: a
//   UTC day or month, of the account, an API key or an OAuth app) and its limit. tg_begin checks them all under
//   the account's row lock — the lock every begin, capture and release of the account takes first — and only
//   then adds the hold to each, so parallel calls on any number of replicas never pass a cap. The counters count
//   what is charged and what is held; capture gives back the unused part of the hold, release all of it.
// - The daily cap's table becomes the counters of any cap (`daily_spend.day` → `spend_counters.counter`); the
//   rows of today keep counting (their names do not change).
// - The pending hold keeps its counters (`cap_keys`, NULL for none: what the one-statement capture and void of a
//   plain call test, src/ledger/pg/pg-pair.ts), and so does the call (`calls.cap_keys`), so that a refund takes
//   its amount back off them.
// - API keys carry their limits. A plain call — no idempotency key, no cap, no funding — still takes the
//   one-statement path: a key without daily or monthly limits adds nothing to it.

const V5_CAPS = `
ALTER TABLE daily_spend RENAME TO spend_counters;
ALTER TABLE spend_counters RENAME COLUMN day TO counter;
ALTER TABLE pending_holds RENAME COLUMN cap_day TO cap_keys;
ALTER TABLE pending_holds ALTER COLUMN cap_keys TYPE text[]
  USING CASE WHEN cap_keys IS NULL THEN NULL ELSE ARRAY[cap_keys] END;
ALTER TABLE calls ADD COLUMN cap_keys text[];
ALTER TABLE api_keys
  ADD COLUMN max_call_micros bigint CHECK (max_call_micros >= 0),
  ADD COLUMN daily_limit_micros bigint CHECK (daily_limit_micros >= 0),
  ADD COLUMN monthly_limit_micros bigint CHECK (monthly_limit_micros >= 0),
  ADD COLUMN actions text;

DROP FUNCTION tg_begin(text, text, bigint, bigint, text, text, text, text, bigint, bigint, text, bigint, text, text,
                       bigint, bigint, text, text, boolean);

-- Claims the idempotency key, checks funds and every cap, and takes the hold (BeginRequest). p_cap_keys and
-- p_cap_limits are parallel arrays (NULL: no cap); a refusal names the first cap passed (cap_index, from 0).
CREATE FUNCTION tg_begin(
  p_account text, p_action text, p_price bigint, p_hold bigint, p_method text, p_principal text,
  p_idem_key text, p_idem_fp text, p_ttl bigint, p_cap_limits bigint[], p_cap_keys text[],
  p_funding bigint, p_funding_memo text, p_meta text, p_now bigint, p_idem_ttl bigint,
  p_replica text, p_call text, p_async boolean,
  OUT kind text, OUT call_id text, OUT response text, OUT available bigint, OUT spent bigint,
  OUT frozen_reason text, OUT cap_index integer
) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  a accounts%ROWTYPE;
  k idempotency_keys%ROWTYPE;
BEGIN
${BEGIN_ADMISSION}

  IF p_cap_keys IS NOT NULL THEN
    FOR i IN 1 .. cardinality(p_cap_keys) LOOP
      SELECT d.spent_micros INTO spent FROM spend_counters d WHERE d.account_id = p_account AND d.counter = p_cap_keys[i];
      spent := coalesce(spent, 0);
      IF spent + p_hold > p_cap_limits[i] THEN kind := 'cap_reached'; cap_index := i - 1; RETURN; END IF;
    END LOOP;
    spent := NULL;
    INSERT INTO spend_counters (account_id, counter, spent_micros)
      SELECT p_account, c.key, p_hold FROM unnest(p_cap_keys) AS c (key)
      ON CONFLICT (account_id, counter) DO UPDATE SET spent_micros = spend_counters.spent_micros + excluded.spent_micros;
  END IF;

  IF p_funding > 0 THEN
    PERFORM tg_transfer(p_account, 'sys_funding', p_funding, 'topup', p_call, p_funding_memo, p_now);
  END IF;
  UPDATE accounts SET held_micros = held_micros + p_hold WHERE id = p_account;
  IF p_idem_key IS NOT NULL THEN
    INSERT INTO idempotency_keys (account_id, key, fingerprint, call_id, status, created_at)
      VALUES (p_account, p_idem_key, p_idem_fp, p_call, 'in_flight', p_now);
  END IF;
  -- The call and its pending hold in one statement.
  WITH c AS (
    INSERT INTO calls (id, account_id, action, price_micros, hold_micros, status, idempotency_key, payment_method,
                       principal, created_at, meta, replica_id, cap_keys)
      VALUES (p_call, p_account, p_action, p_price, p_hold, 'pending', p_idem_key, p_method, p_principal, p_now, p_meta,
              p_replica, p_cap_keys)
      RETURNING id
  )
  INSERT INTO pending_holds (call_id, account_id, amount_micros, cap_keys, expires_at, funding_micros, idempotency_key,
                             replica_id)
    SELECT c.id, p_account, p_hold, p_cap_keys, p_now + p_ttl, p_funding, p_idem_key, p_replica FROM c;
  kind := 'started';
  call_id := p_call;
END $$;

-- Posts ≤ the hold and records success (CaptureRequest), as migration 3's, with a hold's counters given back
-- the part of it the capture did not use.
CREATE OR REPLACE FUNCTION tg_capture(p_call text, p_amount bigint, p_provider text, p_duration bigint,
                                      p_response text, p_meta text, p_job text, p_now bigint)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  v_account text;
  v_hold bigint;
  v_caps text[];
  v_funding bigint;
  v_key text;
BEGIN
  WITH h AS (
    DELETE FROM pending_holds WHERE call_id = p_call AND amount_micros >= p_amount
      RETURNING account_id, amount_micros, cap_keys, funding_micros
${CAPTURE_CTES}
    INSERT INTO entries (transfer_id, account_id, amount_micros, kind, call_id, memo, created_at)
      SELECT 'tr_' || p_call, leg.account_id, leg.micros, 'charge', p_call, NULL, p_now
        FROM h, LATERAL (VALUES (h.account_id, -p_amount), ('sys_revenue', p_amount)) AS leg (account_id, micros)
       WHERE p_amount > 0
  )
  SELECT h.account_id, h.amount_micros, h.cap_keys, h.funding_micros, c.idempotency_key
    INTO v_account, v_hold, v_caps, v_funding, v_key
    FROM h, c;
  IF NOT FOUND THEN PERFORM tg_not_pending(p_call, p_amount, true); END IF;
  IF v_caps IS NOT NULL AND v_hold > p_amount THEN
    UPDATE spend_counters SET spent_micros = spent_micros - (v_hold - p_amount)
     WHERE account_id = v_account AND counter = ANY (v_caps);
  END IF;
${CAPTURE_TAIL}

-- Releases a pending hold and records failure, as migration 3's, with the whole hold given back to its counters.
CREATE OR REPLACE FUNCTION tg_release(p_call text, p_status text, p_error text, p_provider text, p_duration bigint,
                                      p_meta text, p_now bigint, p_strict boolean)
RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  v_account text;
  v_hold bigint;
  v_caps text[];
  v_funding bigint;
  v_key text;
BEGIN
  WITH h AS (
    DELETE FROM pending_holds WHERE call_id = p_call RETURNING account_id, amount_micros, cap_keys, funding_micros
${RELEASE_CTES}
  SELECT h.account_id, h.amount_micros, h.cap_keys, h.funding_micros, c.idempotency_key
    INTO v_account, v_hold, v_caps, v_funding, v_key
    FROM h, c;
  IF NOT FOUND THEN RETURN tg_not_pending(p_call, 0, p_strict); END IF;
  IF v_caps IS NOT NULL THEN
    UPDATE spend_counters SET spent_micros = spent_micros - v_hold
     WHERE account_id = v_account AND counter = ANY (v_caps);
  END IF;
${RELEASE_TAIL}
`;

export const LEDGER_V5_CAPS = {
  version: 5,
  name: 'ledger: caps per API key and window (spend counters, key limits)',
  sql: V5_CAPS,
};
