import { type Migration, migrate, type SqliteDb } from '../../lib/sqlite.js';

/** The columns of `calls` after its id: the first table's, and its rebuild's (migration 6). */
const CALL_COLUMNS = `    account_id      TEXT NOT NULL REFERENCES accounts(id),
    action          TEXT NOT NULL,
    price_micros    INTEGER NOT NULL,
    hold_micros     INTEGER NOT NULL,
    charged_micros  INTEGER NOT NULL DEFAULT 0,
    refunded_micros INTEGER NOT NULL DEFAULT 0,
    status          TEXT NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed', 'refunded')),
    error_code      TEXT,
    idempotency_key TEXT,
    payment_method  TEXT NOT NULL,
    principal       TEXT,
    provider        TEXT,
    duration_ms     INTEGER,
    created_at      INTEGER NOT NULL,
    finished_at     INTEGER,
    meta            TEXT,
    CHECK (charged_micros <= hold_micros)`;

// Migrations are append-only: a shipped migration is never edited, a change is a new entry. The list is the
// ledger's schema on SQLite (src/pg/migrations/ledger.ts is PostgreSQL's); an upgrade test builds a database at
// an earlier version from its first entries.
export const SQLITE_LEDGER_MIGRATIONS: readonly Migration[] = [
  `
  CREATE TABLE accounts (
    id             TEXT PRIMARY KEY,
    name           TEXT,
    kind           TEXT NOT NULL CHECK (kind IN ('customer', 'system', 'x402')),
    -- Posted balance (credits minus charges) and the sum of pending holds, in micro-USD. Both are caches of
    -- entries/holds kept in the same transaction; test/unit/ledger-invariants checks they agree.
    balance_micros INTEGER NOT NULL DEFAULT 0,
    held_micros    INTEGER NOT NULL DEFAULT 0 CHECK (held_micros >= 0),
    created_at     INTEGER NOT NULL,
    -- Backstop for the admission check: a customer can never hold or spend more than it has.
    CHECK (kind = 'system' OR balance_micros - held_micros >= 0)
  );

  -- Double entry: every transfer is two rows that sum to zero. Append-only.
  CREATE TABLE entries (
    id            INTEGER PRIMARY KEY,
    transfer_id   TEXT NOT NULL,
    account_id    TEXT NOT NULL REFERENCES accounts(id),
    amount_micros INTEGER NOT NULL,
    kind          TEXT NOT NULL CHECK (kind IN ('topup', 'charge', 'refund')),
    call_id       TEXT,
    memo          TEXT,
    created_at    INTEGER NOT NULL
  );
  CREATE INDEX entries_account ON entries(account_id);
  -- A call is charged at most once.
  CREATE UNIQUE INDEX entries_charge_once ON entries(call_id, account_id) WHERE kind = 'charge';
  -- … and refunded at most once.
  CREATE UNIQUE INDEX entries_refund_once ON entries(call_id, account_id) WHERE kind = 'refund';
  CREATE TRIGGER entries_no_update BEFORE UPDATE ON entries BEGIN SELECT RAISE(ABORT, 'entries are append-only'); END;
  CREATE TRIGGER entries_no_delete BEFORE DELETE ON entries BEGIN SELECT RAISE(ABORT, 'entries are append-only'); END;

  CREATE TABLE api_keys (
    id         TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    hash       TEXT NOT NULL UNIQUE,
    prefix     TEXT NOT NULL,
    name       TEXT,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
  );
  CREATE INDEX api_keys_account ON api_keys(account_id);

  -- One row per call: the transaction record.
  CREATE TABLE calls (
    id              TEXT PRIMARY KEY,
${CALL_COLUMNS}
  );
  CREATE INDEX calls_account_time ON calls(account_id, created_at DESC);

  -- Two-phase holds: pending → posted | voided | expired, exactly once.
  CREATE TABLE holds (
    call_id       TEXT PRIMARY KEY REFERENCES calls(id),
    account_id    TEXT NOT NULL REFERENCES accounts(id),
    amount_micros INTEGER NOT NULL CHECK (amount_micros >= 0),
    posted_micros INTEGER,
    status        TEXT NOT NULL CHECK (status IN ('pending', 'posted', 'voided', 'expired')),
    cap_day       TEXT,
    expires_at    INTEGER NOT NULL,
    created_at    INTEGER NOT NULL,
    resolved_at   INTEGER,
    CHECK (posted_micros IS NULL OR posted_micros <= amount_micros)
  );
  CREATE INDEX holds_pending_expiry ON holds(expires_at) WHERE status = 'pending';

  -- Idempotency keys, scoped per account (IETF draft: composite key).
  CREATE TABLE idempotency_keys (
    account_id  TEXT NOT NULL,
    key         TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    call_id     TEXT NOT NULL,
    status      TEXT NOT NULL CHECK (status IN ('in_flight', 'done')),
    response    TEXT,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (account_id, key)
  );
  CREATE INDEX idempotency_keys_age ON idempotency_keys(created_at);

  -- Per-account, per-UTC-day spend (posted + pending) for capped doors (the model router).
  CREATE TABLE daily_spend (
    account_id   TEXT NOT NULL,
    day          TEXT NOT NULL,
    spent_micros INTEGER NOT NULL CHECK (spent_micros >= 0),
    PRIMARY KEY (account_id, day)
  );

  INSERT INTO accounts (id, name, kind, created_at) VALUES
    ('sys_revenue', 'revenue: captured charges', 'system', 0),
    ('sys_funding', 'funding: credit added from outside', 'system', 0);
  `,
  // Provisional funding that came with a call (x402), reversed if the hold does not post.
  `ALTER TABLE holds ADD COLUMN funding_micros INTEGER NOT NULL DEFAULT 0 CHECK (funding_micros >= 0);`,
  // Which call started which job (render, crawl…), so a poll that sees the job fail can refund that call.
  `CREATE TABLE call_jobs (
     account_id TEXT NOT NULL,
     handle     TEXT NOT NULL,
     call_id    TEXT NOT NULL REFERENCES calls(id),
     PRIMARY KEY (account_id, handle)
   );`,
  // Credit lines (docs/spec.md §5: "a welcome credit line of 2 USD once a card is on file; the card settles only actual
  // usage"). A customer's balance may now go below zero, down to its line: a negative balance is usage the card
  // still owes (what is "drawn"). The backstop becomes balance − held + line ≥ 0; SQLite cannot change a CHECK in
  // place, so the table is rebuilt (with foreign keys off, see migrate()).
  {
    rebuildsTables: true,
    sql: `
  CREATE TABLE accounts_new (
    id                 TEXT PRIMARY KEY,
    name               TEXT,
    kind               TEXT NOT NULL CHECK (kind IN ('customer', 'system', 'x402')),
    balance_micros     INTEGER NOT NULL DEFAULT 0,
    held_micros        INTEGER NOT NULL DEFAULT 0 CHECK (held_micros >= 0),
    created_at         INTEGER NOT NULL,
    -- The credit line granted (0: none). Only customers have one.
    credit_line_micros INTEGER NOT NULL DEFAULT 0 CHECK (credit_line_micros >= 0),
    -- Set while the line is frozen (a declined settlement, a dispute): no new hold may draw on it.
    line_frozen_at     INTEGER,
    line_frozen_reason TEXT,
    CHECK (kind = 'customer' OR credit_line_micros = 0),
    -- Backstop for the admission check: a customer can never hold or spend more than it has plus its line.
    CHECK (kind = 'system' OR balance_micros - held_micros + credit_line_micros >= 0)
  );
  INSERT INTO accounts_new (id, name, kind, balance_micros, held_micros, created_at)
    SELECT id, name, kind, balance_micros, held_micros, created_at FROM accounts;
  DROP TABLE accounts;
  ALTER TABLE accounts_new RENAME TO accounts;
  -- Accounts that owe usage to their card, for the settlement scheduler.
  CREATE INDEX accounts_drawn ON accounts(balance_micros) WHERE balance_micros < 0;

  -- Money that moved without a call: operator credits, card top-ups, settlements of the line, refunds and
  -- disputes of card payments, and the grant of a line (amount 0: a limit, not money). Its entries carry the
  -- movement id in entries.call_id. amount_micros is signed (+ into the account, − out of it); a pending or
  -- failed settlement moved nothing yet.
  CREATE TABLE movements (
    id            TEXT PRIMARY KEY,
    account_id    TEXT NOT NULL REFERENCES accounts(id),
    kind          TEXT NOT NULL CHECK (kind IN ('credit', 'topup', 'settlement', 'refund', 'dispute', 'dispute_reversal', 'line')),
    amount_micros INTEGER NOT NULL,
    status        TEXT NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
    memo          TEXT,
    external_ref  TEXT,
    created_at    INTEGER NOT NULL,
    finished_at   INTEGER,
    meta          TEXT
  );
  CREATE INDEX movements_account_time ON movements(account_id, created_at DESC);
  -- Money from outside moves once per outside reference (a Checkout session, a refund, a dispute).
  CREATE UNIQUE INDEX movements_external_once ON movements(kind, external_ref) WHERE external_ref IS NOT NULL;
  -- One settlement in flight per account, so the same usage is never charged twice.
  CREATE UNIQUE INDEX movements_one_settlement ON movements(account_id) WHERE kind = 'settlement' AND status = 'pending';
  CREATE INDEX movements_pending ON movements(created_at) WHERE status = 'pending';

  -- A line is granted once per account and once per card: a second account with the same card gets none.
  CREATE TABLE credit_line_grants (
    account_id       TEXT PRIMARY KEY REFERENCES accounts(id),
    card_fingerprint TEXT NOT NULL UNIQUE,
    micros           INTEGER NOT NULL CHECK (micros > 0),
    granted_at       INTEGER NOT NULL
  );

  INSERT INTO accounts (id, name, kind, created_at) VALUES
    ('sys_card', 'card payments: money in from cards, back out through refunds and disputes', 'system', 0);
  `,
  },
  // A refund that Stripe later reports failed or cancelled gives its debit back: the movement kind
  // 'refund_reversal'. SQLite cannot change a CHECK in place, so the movements table is rebuilt (nothing references
  // it) with its indexes.
  {
    rebuildsTables: true,
    sql: `
${rebuildMovements("'credit', 'topup', 'settlement', 'refund', 'refund_reversal', 'dispute', 'dispute_reversal', 'line'")}
  `,
  },
  // One durable commit per paid call (docs/decisions.md): holds now live in the gateway's memory and a call's row
  // is written once, when it is resolved, so `calls` becomes clustered on its id (WITHOUT ROWID: one b-tree
  // instead of a table and its id index; ids are time-ordered, so inserts append). Entries lose the indexes no
  // query reads: their per-account index (audits scan) and the charge-once index (a call's row is inserted once,
  // so its primary key already refuses a second capture).
  {
    rebuildsTables: true,
    sql: `
  CREATE TABLE calls_new (
    id              TEXT NOT NULL PRIMARY KEY,
${CALL_COLUMNS}
  ) WITHOUT ROWID;
  INSERT INTO calls_new SELECT id, account_id, action, price_micros, hold_micros, charged_micros, refunded_micros,
    status, error_code, idempotency_key, payment_method, principal, provider, duration_ms, created_at, finished_at,
    meta FROM calls;
  DROP TABLE calls;
  ALTER TABLE calls_new RENAME TO calls;
  CREATE INDEX calls_account_time ON calls(account_id, created_at DESC);
  DROP INDEX entries_account;
  DROP INDEX entries_charge_once;
  `,
  },
  // Limits per API key (docs/decisions.md "Limits per API key"): a key's maximum per call, daily and monthly caps
  // and allowed actions. The daily cap's counters become counters of any cap (a day or a month, of the account, a
  // key or an OAuth app: src/ledger/spend-caps.ts), and a call records the counters it counted against, so that a
  // refund takes its amount back off them (`cap_keys`, a JSON list; PostgreSQL's is a text[] of the same name).
  `
  ALTER TABLE daily_spend RENAME TO spend_counters;
  ALTER TABLE spend_counters RENAME COLUMN day TO counter;
  ALTER TABLE api_keys ADD COLUMN max_call_micros INTEGER CHECK (max_call_micros >= 0);
  ALTER TABLE api_keys ADD COLUMN daily_limit_micros INTEGER CHECK (daily_limit_micros >= 0);
  ALTER TABLE api_keys ADD COLUMN monthly_limit_micros INTEGER CHECK (monthly_limit_micros >= 0);
  ALTER TABLE api_keys ADD COLUMN actions TEXT;
  ALTER TABLE calls ADD COLUMN cap_keys TEXT;
  `,
  // The operator's refunds of calls (all or part of a charge, each a 'call_refund' movement linked to its call by
  // meta.refund_of and external_ref) and adjustments of balances ('adjustment'). The movements table is rebuilt for
  // its CHECK; a call records the part of its refunds the operator made, so its row in the history shows what it
  // was charged less only the refunds that are not rows of their own.
  {
    rebuildsTables: true,
    sql: `
${rebuildMovements(
  "'credit', 'topup', 'settlement', 'refund', 'refund_reversal', 'dispute', 'dispute_reversal', 'line', 'call_refund', 'adjustment'",
)}
  ALTER TABLE calls ADD COLUMN operator_refunded_micros INTEGER NOT NULL DEFAULT 0;
  `,
  },
];

export function migrateLedger(db: SqliteDb): void {
  migrate(db, 'ledger', SQLITE_LEDGER_MIGRATIONS);
}

/**
 * Rebuilds the movements table with another list of kinds: SQLite cannot change a CHECK in place. The text is the
 * one migrations 5 and 7 ran when each was written out in full.
 */
function rebuildMovements(kinds: string): string {
  return `  CREATE TABLE movements_new (
    id            TEXT PRIMARY KEY,
    account_id    TEXT NOT NULL REFERENCES accounts(id),
    kind          TEXT NOT NULL CHECK (kind IN (${kinds})),
    amount_micros INTEGER NOT NULL,
    status        TEXT NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
    memo          TEXT,
    external_ref  TEXT,
    created_at    INTEGER NOT NULL,
    finished_at   INTEGER,
    meta          TEXT
  );
  INSERT INTO movements_new (id, account_id, kind, amount_micros, status, memo, external_ref, created_at, finished_at, meta)
    SELECT id, account_id, kind, amount_micros, status, memo, external_ref, created_at, finished_at, meta FROM movements;
  DROP TABLE movements;
  ALTER TABLE movements_new RENAME TO movements;
  CREATE INDEX movements_account_time ON movements(account_id, created_at DESC);
  CREATE UNIQUE INDEX movements_external_once ON movements(kind, external_ref) WHERE external_ref IS NOT NULL;
  CREATE UNIQUE INDEX movements_one_settlement ON movements(account_id) WHERE kind = 'settlement' AND status = 'pending';
  CREATE INDEX movements_pending ON movements(created_at) WHERE status = 'pending';`;
}
