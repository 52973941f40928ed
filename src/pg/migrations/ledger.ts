import type { PgMigration } from './index.js';
import { LEDGER_V5_CAPS } from './ledger-caps.js';
import { LEDGER_V3_LEAN } from './ledger-lean.js';
import { BEGIN_ADMISSION, BEGIN_DAILY_CAP, BEGIN_HEAD_DAILY_CAP } from './ledger-parts.js';

// The PostgreSQL ledger mirrors the SQLite schema (src/ledger/sqlite/schema.ts) row for row: BIGINT micros,
// BIGINT ms times, JSON as text (a stored response replays byte for byte; jsonb would reorder its keys). Ids are
// `COLLATE "C"` so that "newest first, then id" orders as in SQLite.
//
// Two differences, both for throughput with many replicas:
// - the system accounts' balances (revenue, funding, card) are spread over `account_shards` rows: every capture
//   credits revenue, and one hot row locked until each commit's WAL flush would serialize every capture of every
//   customer; a shard per server process spreads that. `accounts_v` adds them back up;
// - begin, capture and the release of a hold are plpgsql functions (tg_begin, tg_capture, tg_release): one round
//   trip each. Each takes the customer's account row `FOR UPDATE` first, which serializes the funds check, the
//   idempotency claim and the daily cap of one account (READ COMMITTED: every later statement sees what the
//   previous holder committed), and always locks in the same order (account, then hold, then system shards:
//   revenue before funding), so that replicas never deadlock.
//
// Rows updated on every call (accounts, calls, holds) leave room on their page (fillfactor), so that an update
// that changes no indexed column stays on the page (a HOT update: no index entries to add).
//
// Errors a caller must see as LedgerStateError are raised with SQLSTATE TGL01.

const V1_TABLES = `
CREATE TABLE accounts (
  id                 text COLLATE "C" PRIMARY KEY,
  name               text,
  kind               text NOT NULL CHECK (kind IN ('customer', 'system', 'x402')),
  balance_micros     bigint NOT NULL DEFAULT 0,
  held_micros        bigint NOT NULL DEFAULT 0 CHECK (held_micros >= 0),
  created_at         bigint NOT NULL,
  credit_line_micros bigint NOT NULL DEFAULT 0 CHECK (credit_line_micros >= 0),
  line_frozen_at     bigint,
  line_frozen_reason text,
  CHECK (kind = 'customer' OR credit_line_micros = 0),
  -- Backstop for the admission check: a customer never holds or spends more than it has plus its line.
  CONSTRAINT accounts_funds_check CHECK (kind = 'system' OR balance_micros - held_micros + credit_line_micros >= 0)
) WITH (fillfactor = 70);
CREATE INDEX accounts_drawn ON accounts (balance_micros) WHERE balance_micros < 0;

-- Parts of a system account's balance (see above): balance = accounts.balance_micros + sum(shards).
CREATE TABLE account_shards (
  account_id text COLLATE "C" NOT NULL REFERENCES accounts (id),
  shard      integer NOT NULL,
  micros     bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (account_id, shard)
);

CREATE VIEW accounts_v AS
  SELECT a.id, a.name, a.kind,
         (a.balance_micros + coalesce((SELECT sum(s.micros) FROM account_shards s WHERE s.account_id = a.id), 0))::bigint
           AS balance_micros,
         a.held_micros, a.created_at, a.credit_line_micros, a.line_frozen_at, a.line_frozen_reason
    FROM accounts a;

-- Double entry: every transfer is two rows that sum to zero. Append-only.
CREATE TABLE entries (
  id            bigserial PRIMARY KEY,
  transfer_id   text NOT NULL,
  account_id    text COLLATE "C" NOT NULL REFERENCES accounts (id),
  amount_micros bigint NOT NULL,
  kind          text NOT NULL CHECK (kind IN ('topup', 'charge', 'refund')),
  call_id       text,
  memo          text,
  created_at    bigint NOT NULL
);
CREATE INDEX entries_account ON entries (account_id);
CREATE UNIQUE INDEX entries_charge_once ON entries (call_id, account_id) WHERE kind = 'charge';
CREATE UNIQUE INDEX entries_refund_once ON entries (call_id, account_id) WHERE kind = 'refund';
CREATE FUNCTION entries_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'entries are append-only';
END $$;
CREATE TRIGGER entries_no_update BEFORE UPDATE OR DELETE ON entries
  FOR EACH ROW EXECUTE FUNCTION entries_append_only();
CREATE TRIGGER entries_no_truncate BEFORE TRUNCATE ON entries
  FOR EACH STATEMENT EXECUTE FUNCTION entries_append_only();

CREATE TABLE api_keys (
  id         text COLLATE "C" PRIMARY KEY,
  account_id text COLLATE "C" NOT NULL REFERENCES accounts (id),
  hash       text NOT NULL UNIQUE,
  prefix     text NOT NULL,
  name       text,
  created_at bigint NOT NULL,
  revoked_at bigint
);
CREATE INDEX api_keys_account ON api_keys (account_id);

CREATE TABLE calls (
  id              text COLLATE "C" PRIMARY KEY,
  account_id      text COLLATE "C" NOT NULL REFERENCES accounts (id),
  action          text NOT NULL,
  price_micros    bigint NOT NULL,
  hold_micros     bigint NOT NULL,
  charged_micros  bigint NOT NULL DEFAULT 0,
  refunded_micros bigint NOT NULL DEFAULT 0,
  status          text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed', 'refunded')),
  error_code      text,
  idempotency_key text,
  payment_method  text NOT NULL,
  principal       text,
  provider        text,
  duration_ms     bigint,
  created_at      bigint NOT NULL,
  finished_at     bigint,
  meta            text,
  CHECK (charged_micros <= hold_micros)
) WITH (fillfactor = 80);
CREATE INDEX calls_account_time ON calls (account_id, created_at DESC);

-- Two-phase holds: pending → posted | voided | expired, exactly once. replica_id: the replica that took it, so
-- that the others can void its holds when its lease expires (src/pg/replicas.ts).
CREATE TABLE holds (
  call_id        text COLLATE "C" PRIMARY KEY REFERENCES calls (id),
  account_id     text COLLATE "C" NOT NULL REFERENCES accounts (id),
  amount_micros  bigint NOT NULL CHECK (amount_micros >= 0),
  posted_micros  bigint,
  status         text NOT NULL CHECK (status IN ('pending', 'posted', 'voided', 'expired')),
  cap_day        text,
  expires_at     bigint NOT NULL,
  created_at     bigint NOT NULL,
  resolved_at    bigint,
  funding_micros bigint NOT NULL DEFAULT 0 CHECK (funding_micros >= 0),
  replica_id     text NOT NULL,
  CHECK (posted_micros IS NULL OR posted_micros <= amount_micros)
) WITH (fillfactor = 80);
CREATE INDEX holds_pending_expiry ON holds (expires_at) WHERE status = 'pending';
CREATE INDEX holds_pending_replica ON holds (replica_id) WHERE status = 'pending';

CREATE TABLE idempotency_keys (
  account_id  text NOT NULL,
  key         text NOT NULL,
  fingerprint text NOT NULL,
  call_id     text NOT NULL,
  status      text NOT NULL CHECK (status IN ('in_flight', 'done')),
  response    text,
  created_at  bigint NOT NULL,
  PRIMARY KEY (account_id, key)
);
CREATE INDEX idempotency_keys_age ON idempotency_keys (created_at);

CREATE TABLE daily_spend (
  account_id   text NOT NULL,
  day          text NOT NULL,
  spent_micros bigint NOT NULL CHECK (spent_micros >= 0),
  PRIMARY KEY (account_id, day)
);

CREATE TABLE call_jobs (
  account_id text NOT NULL,
  handle     text NOT NULL,
  call_id    text COLLATE "C" NOT NULL REFERENCES calls (id),
  PRIMARY KEY (account_id, handle)
);

CREATE TABLE movements (
  id            text COLLATE "C" PRIMARY KEY,
  account_id    text COLLATE "C" NOT NULL REFERENCES accounts (id),
  kind          text NOT NULL CHECK (kind IN ('credit', 'topup', 'settlement', 'refund', 'dispute', 'dispute_reversal', 'line')),
  amount_micros bigint NOT NULL,
  status        text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
  memo          text,
  external_ref  text,
  created_at    bigint NOT NULL,
  finished_at   bigint,
  meta          text
);
CREATE INDEX movements_account_time ON movements (account_id, created_at DESC);
CREATE UNIQUE INDEX movements_external_once ON movements (kind, external_ref) WHERE external_ref IS NOT NULL;
CREATE UNIQUE INDEX movements_one_settlement ON movements (account_id) WHERE kind = 'settlement' AND status = 'pending';
CREATE INDEX movements_pending ON movements (created_at) WHERE status = 'pending';

CREATE TABLE credit_line_grants (
  account_id       text COLLATE "C" PRIMARY KEY REFERENCES accounts (id),
  card_fingerprint text NOT NULL UNIQUE,
  micros           bigint NOT NULL CHECK (micros > 0),
  granted_at       bigint NOT NULL
);

INSERT INTO accounts (id, name, kind, created_at) VALUES
  ('sys_revenue', 'revenue: captured charges', 'system', 0),
  ('sys_funding', 'funding: credit added from outside', 'system', 0),
  ('sys_card', 'card payments: money in from cards, back out through refunds and disputes', 'system', 0);
`;

const V2_FUNCTIONS = `
-- Adds to a system account's balance through one of its shards (see the file comment): the shard of this
-- server process, so that two connections (each running one transaction at a time) rarely share one.
CREATE FUNCTION tg_add_system(p_account text, p_micros bigint) RETURNS void LANGUAGE sql AS $$
  INSERT INTO account_shards (account_id, shard, micros) VALUES (p_account, pg_backend_pid() % 1024, p_micros)
  ON CONFLICT (account_id, shard) DO UPDATE SET micros = account_shards.micros + excluded.micros;
$$;

-- Two entries of one transfer between an account (direct) and a system account (sharded).
CREATE FUNCTION tg_transfer(p_account text, p_system text, p_micros bigint, p_kind text, p_call text,
                            p_memo text, p_now bigint) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  t text := 'tr_' || md5(random()::text || clock_timestamp()::text);
BEGIN
  IF p_micros = 0 THEN RETURN; END IF;
  INSERT INTO entries (transfer_id, account_id, amount_micros, kind, call_id, memo, created_at)
    VALUES (t, p_account, p_micros, p_kind, p_call, p_memo, p_now), (t, p_system, -p_micros, p_kind, p_call, p_memo, p_now);
  UPDATE accounts SET balance_micros = balance_micros + p_micros WHERE id = p_account;
  PERFORM tg_add_system(p_system, -p_micros);
END $$;

-- Claims the idempotency key, checks funds and the daily cap, and takes the hold (BeginRequest).
CREATE FUNCTION tg_begin(
${BEGIN_HEAD_DAILY_CAP}
  -- A hold moves no money: with p_async its commit does not wait for the WAL flush, and is made durable by the
  -- flush of the capture or void that follows it in the WAL (the SQLite ledger does the same with
  -- synchronous=NORMAL). A hold lost in a server crash is a call that was never charged.
${BEGIN_ADMISSION}

${BEGIN_DAILY_CAP}

  IF p_funding > 0 THEN
    PERFORM tg_transfer(p_account, 'sys_funding', p_funding, 'topup', p_call, p_funding_memo, p_now);
  END IF;
  -- The call and its hold in one statement (one executor round inside the function).
  WITH c AS (
    INSERT INTO calls (id, account_id, action, price_micros, hold_micros, status, idempotency_key, payment_method,
                       principal, created_at, meta)
      VALUES (p_call, p_account, p_action, p_price, p_hold, 'pending', p_idem_key, p_method, p_principal, p_now, p_meta)
      RETURNING id
  )
  INSERT INTO holds (call_id, account_id, amount_micros, status, cap_day, expires_at, created_at, funding_micros, replica_id)
    SELECT c.id, p_account, p_hold, 'pending', p_cap_day, p_now + p_ttl, p_now, p_funding, p_replica FROM c;
  UPDATE accounts SET held_micros = held_micros + p_hold WHERE id = p_account;
  IF p_idem_key IS NOT NULL THEN
    INSERT INTO idempotency_keys (account_id, key, fingerprint, call_id, status, created_at)
      VALUES (p_account, p_idem_key, p_idem_fp, p_call, 'in_flight', p_now);
  END IF;
  kind := 'started';
  call_id := p_call;
END $$;

-- Locks the account of a hold, then the hold; returns it if pending. Raises (TGL01) when p_strict and it is
-- not; otherwise returns NULL (a sweeper that lost the race to another replica).
CREATE FUNCTION tg_lock_pending(p_call text, p_strict boolean) RETURNS holds LANGUAGE plpgsql AS $$
DECLARE
  h holds%ROWTYPE;
BEGIN
  -- One statement takes the account lock (found through the hold, whose account never changes).
  PERFORM 1 FROM accounts WHERE id = (SELECT account_id FROM holds WHERE call_id = p_call) FOR UPDATE;
  SELECT * INTO h FROM holds WHERE call_id = p_call FOR UPDATE;
  IF NOT FOUND THEN
    IF p_strict THEN RAISE EXCEPTION 'no hold for call %', p_call USING ERRCODE = 'TGL01'; END IF;
    RETURN NULL;
  END IF;
  IF h.status <> 'pending' THEN
    IF p_strict THEN
      RAISE EXCEPTION 'hold for call % is already %', p_call, h.status USING ERRCODE = 'TGL01';
    END IF;
    RETURN NULL;
  END IF;
  RETURN h;
END $$;

-- Reverses p_micros of a call's provisional funding.
CREATE FUNCTION tg_reverse_funding(h holds, p_micros bigint, p_now bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF p_micros > 0 THEN
    PERFORM tg_transfer(h.account_id, 'sys_funding', -p_micros, 'topup', h.call_id, 'reversal: funding not collected', p_now);
  END IF;
END $$;

-- Posts ≤ the hold and records success (CaptureRequest).
CREATE FUNCTION tg_capture(p_call text, p_amount bigint, p_provider text, p_duration bigint, p_response text,
                           p_meta text, p_job text, p_now bigint) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  h holds%ROWTYPE;
  v_key text;
  t text;
BEGIN
  PERFORM 1 FROM accounts WHERE id = (SELECT account_id FROM holds WHERE call_id = p_call) FOR UPDATE;
  -- Resolved only if pending and within the hold; otherwise the reason is looked up (the error path only).
  UPDATE holds SET status = 'posted', posted_micros = p_amount, resolved_at = p_now
   WHERE call_id = p_call AND status = 'pending' AND amount_micros >= p_amount
   RETURNING * INTO h;
  IF NOT FOUND THEN
    SELECT * INTO h FROM holds WHERE call_id = p_call;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'no hold for call %', p_call USING ERRCODE = 'TGL01';
    ELSIF h.status <> 'pending' THEN
      RAISE EXCEPTION 'hold for call % is already %', p_call, h.status USING ERRCODE = 'TGL01';
    END IF;
    RAISE EXCEPTION 'capture of % exceeds hold of % for %', p_amount, h.amount_micros, p_call USING ERRCODE = 'TGL01';
  END IF;
  UPDATE accounts SET balance_micros = balance_micros - p_amount, held_micros = held_micros - h.amount_micros
   WHERE id = h.account_id;
  IF p_amount > 0 THEN
    -- The transfer id: the call's own (a call is charged once: entries_charge_once).
    t := 'tr_' || p_call;
    INSERT INTO entries (transfer_id, account_id, amount_micros, kind, call_id, memo, created_at)
      VALUES (t, h.account_id, -p_amount, 'charge', p_call, NULL, p_now), (t, 'sys_revenue', p_amount, 'charge', p_call, NULL, p_now);
    INSERT INTO account_shards (account_id, shard, micros) VALUES ('sys_revenue', pg_backend_pid() % 1024, p_amount)
      ON CONFLICT (account_id, shard) DO UPDATE SET micros = account_shards.micros + excluded.micros;
  END IF;
  IF h.cap_day IS NOT NULL THEN
    UPDATE daily_spend SET spent_micros = spent_micros - (h.amount_micros - p_amount)
     WHERE account_id = h.account_id AND day = h.cap_day;
  END IF;
  IF h.funding_micros > p_amount THEN PERFORM tg_reverse_funding(h, h.funding_micros - p_amount, p_now); END IF;
  UPDATE calls SET status = 'succeeded', charged_micros = p_amount, provider = p_provider, duration_ms = p_duration,
                   finished_at = p_now, meta = coalesce(p_meta, meta)
   WHERE id = p_call RETURNING idempotency_key INTO v_key;
  IF p_job IS NOT NULL THEN
    INSERT INTO call_jobs (account_id, handle, call_id) VALUES (h.account_id, p_job, p_call) ON CONFLICT DO NOTHING;
  END IF;
  IF v_key IS NOT NULL THEN
    UPDATE idempotency_keys SET status = 'done', response = p_response
     WHERE account_id = h.account_id AND key = v_key AND call_id = p_call;
  END IF;
  RETURN p_amount;
END $$;

-- Releases a pending hold and records failure (void, expiry, an orphaned replica). Returns whether this call
-- resolved it: with p_strict false, a hold already resolved (by another replica's sweep) is left alone.
CREATE FUNCTION tg_release(p_call text, p_status text, p_error text, p_provider text, p_duration bigint,
                           p_meta text, p_now bigint, p_strict boolean) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  h holds%ROWTYPE;
BEGIN
  h := tg_lock_pending(p_call, p_strict);
  IF h.call_id IS NULL THEN RETURN false; END IF;
  UPDATE holds SET status = p_status, posted_micros = NULL, resolved_at = p_now WHERE call_id = p_call;
  UPDATE accounts SET held_micros = held_micros - h.amount_micros WHERE id = h.account_id;
  IF h.cap_day IS NOT NULL THEN
    UPDATE daily_spend SET spent_micros = spent_micros - h.amount_micros
     WHERE account_id = h.account_id AND day = h.cap_day;
  END IF;
  IF h.funding_micros > 0 THEN PERFORM tg_reverse_funding(h, h.funding_micros, p_now); END IF;
  UPDATE calls SET status = 'failed', error_code = p_error, provider = coalesce(p_provider, provider),
                   duration_ms = coalesce(p_duration, duration_ms), finished_at = p_now, meta = coalesce(p_meta, meta)
   WHERE id = p_call;
  -- Nothing was charged, so the key is released: a retry with the same key runs the call again.
  DELETE FROM idempotency_keys WHERE account_id = h.account_id AND call_id = p_call;
  RETURN true;
END $$;
`;

/** The PostgreSQL schema of the ledger: accounts, keys, calls (holds), entries, movements, idempotency, daily caps (versions 1–99). */
export const LEDGER_MIGRATIONS: readonly PgMigration[] = [
  { version: 1, name: 'ledger tables', sql: V1_TABLES },
  { version: 2, name: 'ledger functions: begin, capture, release', sql: V2_FUNCTIONS },
  LEDGER_V3_LEAN,
  // A refund that Stripe later reports failed or cancelled gives its debit back (src/ledger/card-money.ts).
  {
    version: 4,
    name: 'movement kind refund_reversal',
    sql: `
ALTER TABLE movements DROP CONSTRAINT movements_kind_check;
ALTER TABLE movements ADD CONSTRAINT movements_kind_check
  CHECK (kind IN ('credit', 'topup', 'settlement', 'refund', 'refund_reversal', 'dispute', 'dispute_reversal', 'line'));
`,
  },
  LEDGER_V5_CAPS,
  // The operator's refunds of calls and adjustments of balances (src/ledger/pg/pg-operator-moves.ts); a call
  // records the part of its refunds the operator made (each one a movement of its own).
  {
    version: 6,
    name: 'operator refunds and adjustments',
    sql: `
ALTER TABLE movements DROP CONSTRAINT movements_kind_check;
ALTER TABLE movements ADD CONSTRAINT movements_kind_check
  CHECK (kind IN ('credit', 'topup', 'settlement', 'refund', 'refund_reversal', 'dispute', 'dispute_reversal', 'line',
                  'call_refund', 'adjustment'));
ALTER TABLE calls ADD COLUMN operator_refunded_micros bigint NOT NULL DEFAULT 0;
`,
  },
];
