import {
  BEGIN_ADMISSION,
  BEGIN_DAILY_CAP,
  BEGIN_HEAD_DAILY_CAP,
  CAPTURE_CTES,
  CAPTURE_TAIL,
  RELEASE_CTES,
  RELEASE_TAIL,
} from './ledger-parts.js';

// Ledger migration 3: a paid call's pair (hold + capture) at fewer rows, indexes, checks and statements, from a
// profile of the PostgreSQL server's CPU per pair (docs/decisions.md "The PostgreSQL ledger's hot path"):
//
// - A hold is a row of `pending_holds` while it is pending, and nothing after: the capture or release deletes
//   it (exactly once: a second DELETE finds nothing), and the call row keeps what the hold was (hold_micros,
//   charged_micros, status, finished_at). Before, `holds` kept every hold forever, with three indexes and two
//   foreign keys, and its resolution was an update that could not be HOT (its status was in the partial
//   indexes' predicates). The sweeps read this small table directly.
// - A plain call (no idempotency key, no daily cap, no funding: the common one) takes its hold in one statement
//   and resolves it in one statement, sent by PgLedger as named prepared statements (src/ledger/pg/pg-pair.ts):
//   the begin's conditional UPDATE of the account checks the funds, locks the row and reserves the hold, and
//   feeds the call's and the pending hold's inserts; the capture's DELETE of the pending hold feeds the
//   account's update, the call's update, the charge's entries and revenue's credit. Anything else (a refusal,
//   an error, a key, a cap, funding, a job) goes through the functions below, which do the same with the rest.
//   Lock order everywhere: the pending hold, then the rest; a hold is only ever inserted by a transaction that
//   already holds its account.
// - Revenue is credited on the customer's own row (accounts.revenue_micros: what it has paid to revenue), which
//   the capture updates anyway, instead of on a shard row of sys_revenue: one row less per capture. The
//   balance of sys_revenue (accounts_v) adds them up; nothing on a call's path reads it.
// - No foreign keys on the hot tables (calls, entries): every row is written by these functions, after they
//   locked or updated the account it names, and accounts are never deleted. Each foreign key was a
//   `SELECT … FOR KEY SHARE` per row inserted — on `sys_revenue` by every capture.
// - Only the CHECKs that guard money stay on the hot tables (held ≥ 0 and the funds rule on accounts, charged ≤
//   hold on calls): every statement that writes a table parses and compiles each of its CHECKs again, and the
//   lists of allowed values (kind, status) cost the most. The rules on an account's kind and line are checked
//   when it is created (a trigger on insert); statuses and kinds are written by this file's functions and
//   src/ledger/pg only.
// - The index on accounts(balance_micros) made every capture's balance update a non-HOT one (and bloated the
//   primary key that every statement looks the account up by); the drawn accounts are found through the few
//   that have a credit line instead. `entries` keeps the indexes a query or a rule uses.

const V3_LEAN = `
CREATE TABLE pending_holds (
  call_id        text COLLATE "C" PRIMARY KEY,
  account_id     text COLLATE "C" NOT NULL,
  amount_micros  bigint NOT NULL,
  cap_day        text,
  expires_at     bigint NOT NULL,
  funding_micros bigint NOT NULL DEFAULT 0,
  idempotency_key text,
  replica_id     text NOT NULL
);
INSERT INTO pending_holds (call_id, account_id, amount_micros, cap_day, expires_at, funding_micros, idempotency_key, replica_id)
  SELECT h.call_id, h.account_id, h.amount_micros, h.cap_day, h.expires_at, h.funding_micros, c.idempotency_key, h.replica_id
    FROM holds h JOIN calls c ON c.id = h.call_id WHERE h.status = 'pending';
-- The replica that took the call (the holds kept it; a pending hold is gone once resolved).
ALTER TABLE calls ADD COLUMN replica_id text;
UPDATE calls SET replica_id = h.replica_id FROM holds h WHERE h.call_id = calls.id;
-- Revenue's shards are the customers' own rows (see the file comment): what each has paid to revenue.
ALTER TABLE accounts ADD COLUMN revenue_micros bigint NOT NULL DEFAULT 0;
CREATE OR REPLACE VIEW accounts_v AS
  SELECT a.id, a.name, a.kind,
         (a.balance_micros + coalesce((SELECT sum(s.micros) FROM account_shards s WHERE s.account_id = a.id), 0)
          + CASE WHEN a.id = 'sys_revenue' THEN (SELECT coalesce(sum(r.revenue_micros), 0) FROM accounts r) ELSE 0 END)::bigint
           AS balance_micros,
         a.held_micros, a.created_at, a.credit_line_micros, a.line_frozen_at, a.line_frozen_reason
    FROM accounts a;

DROP FUNCTION tg_release(text, text, text, text, bigint, text, bigint, boolean);
DROP FUNCTION tg_capture(text, bigint, text, bigint, text, text, text, bigint);
DROP FUNCTION tg_reverse_funding(holds, bigint, bigint);
DROP FUNCTION tg_lock_pending(text, boolean);
DROP TABLE holds;

ALTER TABLE calls DROP CONSTRAINT calls_account_id_fkey;
ALTER TABLE entries DROP CONSTRAINT entries_account_id_fkey;

ALTER TABLE accounts DROP CONSTRAINT accounts_check, DROP CONSTRAINT accounts_credit_line_micros_check,
  DROP CONSTRAINT accounts_funds_check, DROP CONSTRAINT accounts_held_micros_check, DROP CONSTRAINT accounts_kind_check;
-- The backstop for the admission check: a customer never holds or spends more than it has plus its line.
ALTER TABLE accounts ADD CONSTRAINT accounts_funds_check CHECK (
  held_micros >= 0 AND (kind = 'system' OR balance_micros - held_micros + credit_line_micros >= 0));
CREATE FUNCTION tg_account_rules() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.kind NOT IN ('customer', 'system', 'x402') OR NEW.credit_line_micros < 0
     OR (NEW.kind <> 'customer' AND NEW.credit_line_micros <> 0) THEN
    RAISE EXCEPTION 'account % violates check: kind % with a line of %', NEW.id, NEW.kind, NEW.credit_line_micros
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END $$;
-- On insert only: an update trigger, even limited to these columns, fetches the old row on every update. After
-- the insert, the kind never changes and only PgMovements.grantLine (customers only) writes the line.
CREATE TRIGGER accounts_rules AFTER INSERT ON accounts FOR EACH ROW EXECUTE FUNCTION tg_account_rules();
ALTER TABLE calls DROP CONSTRAINT calls_check, DROP CONSTRAINT calls_status_check;
ALTER TABLE calls ADD CONSTRAINT calls_charged_check CHECK (charged_micros <= hold_micros);
ALTER TABLE entries DROP CONSTRAINT entries_kind_check;

DROP INDEX accounts_drawn;
CREATE INDEX accounts_with_line ON accounts (id) WHERE credit_line_micros > 0;
-- Nothing reads entries by account on PostgreSQL (balances are kept on the account rows).
DROP INDEX entries_account;
-- A call is charged once and refunded once: one index for both, over the leg that leaves an account (a charge's
-- customer leg, a refund's revenue leg; the other leg is its mirror). One index fewer to open on every insert.
DROP INDEX entries_charge_once;
DROP INDEX entries_refund_once;
CREATE UNIQUE INDEX entries_once ON entries (call_id, kind) WHERE kind <> 'topup' AND amount_micros <= 0;

-- Claims the idempotency key, checks funds and the daily cap, and takes the hold (BeginRequest).
CREATE OR REPLACE FUNCTION tg_begin(
${BEGIN_HEAD_DAILY_CAP}
  -- A hold moves no money: with p_async its commit does not wait for the WAL flush, and is made durable by the
  -- flush of the capture or void that follows it in the WAL. A hold lost in a server crash is a call that was
  -- never charged (its capture finds no hold and says so).
${BEGIN_ADMISSION}

${BEGIN_DAILY_CAP}

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
                       principal, created_at, meta, replica_id)
      VALUES (p_call, p_account, p_action, p_price, p_hold, 'pending', p_idem_key, p_method, p_principal, p_now, p_meta,
              p_replica)
      RETURNING id
  )
  INSERT INTO pending_holds (call_id, account_id, amount_micros, cap_day, expires_at, funding_micros, idempotency_key,
                             replica_id)
    SELECT c.id, p_account, p_hold, p_cap_day, p_now + p_ttl, p_funding, p_idem_key, p_replica FROM c;
  kind := 'started';
  call_id := p_call;
END $$;

-- Why a hold could not be resolved (raised as TGL01 when p_strict): unknown, already resolved, or too small.
CREATE FUNCTION tg_not_pending(p_call text, p_amount bigint, p_strict boolean) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  c calls%ROWTYPE;
  held bigint;
BEGIN
  IF NOT p_strict THEN RETURN false; END IF;
  SELECT amount_micros INTO held FROM pending_holds WHERE call_id = p_call;
  IF FOUND THEN
    RAISE EXCEPTION 'capture of % exceeds hold of % for %', p_amount, held, p_call USING ERRCODE = 'TGL01';
  END IF;
  SELECT * INTO c FROM calls WHERE id = p_call;
  IF NOT FOUND THEN RAISE EXCEPTION 'no hold for call %', p_call USING ERRCODE = 'TGL01'; END IF;
  RAISE EXCEPTION 'hold for call % is already %', p_call,
    CASE WHEN c.status IN ('succeeded', 'refunded') THEN 'posted'
         WHEN c.error_code = 'hold_expired' THEN 'expired'
         ELSE 'voided' END
    USING ERRCODE = 'TGL01';
END $$;

-- Posts ≤ the hold and records success (CaptureRequest): one statement resolves the hold, moves the money and
-- records the call; the rare parts (daily cap, funding, job, idempotency key) follow when they apply.
CREATE FUNCTION tg_capture(p_call text, p_amount bigint, p_provider text, p_duration bigint, p_response text,
                           p_meta text, p_job text, p_now bigint) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  v_account text;
  v_hold bigint;
  v_cap text;
  v_funding bigint;
  v_key text;
BEGIN
  WITH h AS (
    DELETE FROM pending_holds WHERE call_id = p_call AND amount_micros >= p_amount
      RETURNING account_id, amount_micros, cap_day, funding_micros
${CAPTURE_CTES}
    -- The transfer id: the call's own (a call is charged once: entries_once).
    INSERT INTO entries (transfer_id, account_id, amount_micros, kind, call_id, memo, created_at)
      SELECT 'tr_' || p_call, leg.account_id, leg.micros, 'charge', p_call, NULL, p_now
        FROM h, LATERAL (VALUES (h.account_id, -p_amount), ('sys_revenue', p_amount)) AS leg (account_id, micros)
       WHERE p_amount > 0
  )
  SELECT h.account_id, h.amount_micros, h.cap_day, h.funding_micros, c.idempotency_key
    INTO v_account, v_hold, v_cap, v_funding, v_key
    FROM h, c;
  IF NOT FOUND THEN PERFORM tg_not_pending(p_call, p_amount, true); END IF;
  IF v_cap IS NOT NULL THEN
    UPDATE daily_spend SET spent_micros = spent_micros - (v_hold - p_amount)
     WHERE account_id = v_account AND day = v_cap;
  END IF;
${CAPTURE_TAIL}

-- Releases a pending hold and records failure (void, expiry, an orphaned replica). Returns whether this call
-- resolved it: with p_strict false, a hold already resolved (by another replica's sweep) is left alone.
-- p_status ('voided' | 'expired') is kept for the callers; the call row says why in its error code.
CREATE FUNCTION tg_release(p_call text, p_status text, p_error text, p_provider text, p_duration bigint,
                           p_meta text, p_now bigint, p_strict boolean) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  v_account text;
  v_hold bigint;
  v_cap text;
  v_funding bigint;
  v_key text;
BEGIN
  WITH h AS (
    DELETE FROM pending_holds WHERE call_id = p_call RETURNING account_id, amount_micros, cap_day, funding_micros
${RELEASE_CTES}
  SELECT h.account_id, h.amount_micros, h.cap_day, h.funding_micros, c.idempotency_key
    INTO v_account, v_hold, v_cap, v_funding, v_key
    FROM h, c;
  IF NOT FOUND THEN RETURN tg_not_pending(p_call, 0, p_strict); END IF;
  IF v_cap IS NOT NULL THEN
    UPDATE daily_spend SET spent_micros = spent_micros - v_hold WHERE account_id = v_account AND day = v_cap;
  END IF;
${RELEASE_TAIL}
`;

export const LEDGER_V3_LEAN = {
  version: 3,
  name: 'ledger: lean pair (pending holds, one-statement resolve)',
  sql: V3_LEAN,
};
