import { migrate, type SqliteDb } from '../../lib/sqlite.js';

// Migrations are append-only: a shipped migration is never edited, a change is a new entry.
const LEDGER_MIGRATIONS: string[] = [
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
    account_id      TEXT NOT NULL REFERENCES accounts(id),
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
    CHECK (charged_micros <= hold_micros)
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
];

export function migrateLedger(db: SqliteDb): void {
  migrate(db, 'ledger', LEDGER_MIGRATIONS);
}
