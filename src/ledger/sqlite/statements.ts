import type { SqliteDb } from '../../lib/sqlite.js';
import type { CallDbRow } from '../db-rows.js';
import type { KeyDbRow } from '../key-rows.js';
import type { AccountRow, UsageRow } from '../types.js';

// The ledger's prepared statements: every statement is prepared once; the request path only binds and steps.

export interface HoldRow {
  call_id: string;
  account_id: string;
  amount_micros: number;
  status: 'pending' | 'posted' | 'voided' | 'expired';
  cap_day: string | null;
  funding_micros: number;
}

/** A call's columns as CallRow has them (not the counters it counted against: those are the refunds' business). */
const CALL_COLUMNS =
  'id, account_id, action, price_micros, hold_micros, charged_micros, refunded_micros, operator_refunded_micros, status, error_code, idempotency_key, payment_method, principal, provider, duration_ms, created_at, finished_at, meta';

const KEY_COLUMNS =
  'id, account_id, prefix, name, created_at, revoked_at, max_call_micros, daily_limit_micros, monthly_limit_micros, actions';

export function prepareStatements(db: SqliteDb) {
  return {
    account: db.prepare<[string], AccountRow>('SELECT * FROM accounts WHERE id = ?'),
    accountsAll: db.prepare<[], AccountRow>('SELECT * FROM accounts ORDER BY created_at, id'),
    accountsOfKind: db.prepare<[string], AccountRow>(
      'SELECT * FROM accounts WHERE kind = ? ORDER BY created_at, id',
    ),
    insAccount: db.prepare('INSERT INTO accounts (id, name, kind, created_at) VALUES (?, ?, ?, ?)'),
    addBalance: db.prepare('UPDATE accounts SET balance_micros = balance_micros + ? WHERE id = ?'),
    // Rewrites one row unchanged: a write that needs room in the WAL and a sync (the outage probe).
    touch: db.prepare("UPDATE accounts SET balance_micros = balance_micros WHERE id = 'sys_revenue'"),
    // Holds of a database written by an earlier version (held_micros is 0 otherwise).
    releaseHeld: db.prepare('UPDATE accounts SET held_micros = held_micros - ? WHERE id = ?'),
    insEntry: db.prepare(
      'INSERT INTO entries (transfer_id, account_id, amount_micros, kind, call_id, memo, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    insKey: db.prepare(
      `INSERT INTO api_keys (id, account_id, hash, prefix, name, created_at, max_call_micros, daily_limit_micros,
         monthly_limit_micros, actions) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    keyByHash: db.prepare<[string], KeyDbRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE hash = ?`),
    keyById: db.prepare<[string], KeyDbRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = ?`),
    keysAll: db.prepare<[], KeyDbRow>(`SELECT ${KEY_COLUMNS} FROM api_keys ORDER BY created_at`),
    keysOf: db.prepare<[string], KeyDbRow>(
      `SELECT ${KEY_COLUMNS} FROM api_keys WHERE account_id = ? ORDER BY created_at`,
    ),
    revokeKey: db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL'),
    setKeyLimits: db.prepare(
      `UPDATE api_keys SET max_call_micros = ?, daily_limit_micros = ?, monthly_limit_micros = ?, actions = ?
        WHERE id = ? AND revoked_at IS NULL`,
    ),
    // What each key of an account was charged (net of refunds) since $3, and since $1 (today) within that.
    keySpend: db.prepare<
      [number, string, number],
      { principal: string | null; today: number; since: number }
    >(
      `SELECT principal, sum(CASE WHEN created_at >= ? THEN charged_micros - refunded_micros ELSE 0 END) AS today,
              sum(charged_micros - refunded_micros) AS since
         FROM calls
        WHERE account_id = ? AND created_at >= ? AND payment_method = 'api_key'
          AND status IN ('succeeded', 'refunded')
        GROUP BY principal`,
    ),
    idem: db.prepare<
      [string, string],
      { fingerprint: string; call_id: string; status: string; response: string | null; created_at: number }
    >(
      'SELECT fingerprint, call_id, status, response, created_at FROM idempotency_keys WHERE account_id = ? AND key = ?',
    ),
    // Written once the call has succeeded, in its capture's commit; a row left expired but not yet purged is
    // replaced.
    idemDone: db.prepare(
      `INSERT INTO idempotency_keys (account_id, key, fingerprint, call_id, status, response, created_at)
       VALUES (?, ?, ?, ?, 'done', ?, ?)
       ON CONFLICT (account_id, key) DO UPDATE SET fingerprint = excluded.fingerprint, call_id = excluded.call_id,
         status = 'done', response = excluded.response, created_at = excluded.created_at`,
    ),
    delIdemOfCall: db.prepare('DELETE FROM idempotency_keys WHERE account_id = ? AND call_id = ?'),
    purgeIdem: db.prepare("DELETE FROM idempotency_keys WHERE status = 'done' AND created_at < ?"),
    /** Whether the purge has anything to do: an idle sweep then writes nothing (and wakes no checkpointer). */
    staleIdem: db.prepare('SELECT 1 FROM idempotency_keys WHERE created_at < ? LIMIT 1').pluck(),
    // The counters of spending caps (src/ledger/spend-caps.ts): what was charged against each; this process's
    // holds are added from memory (./reservations.ts).
    spent: db.prepare<[string, string], { spent_micros: number }>(
      'SELECT spent_micros FROM spend_counters WHERE account_id = ? AND counter = ?',
    ),
    addSpent: db.prepare(
      'INSERT INTO spend_counters (account_id, counter, spent_micros) VALUES (?, ?, ?) ON CONFLICT (account_id, counter) DO UPDATE SET spent_micros = spent_micros + excluded.spent_micros',
    ),
    subSpent: db.prepare(
      'UPDATE spend_counters SET spent_micros = max(0, spent_micros - ?) WHERE account_id = ? AND counter = ?',
    ),
    // A cap set on a key mid-window starts from what the key was already charged in it (never lower than counted).
    seedSpent: db.prepare(
      'INSERT INTO spend_counters (account_id, counter, spent_micros) VALUES (?, ?, ?) ON CONFLICT (account_id, counter) DO UPDATE SET spent_micros = max(spent_micros, excluded.spent_micros)',
    ),
    principalSpent: db.prepare<[string, string, number], { s: number | null }>(
      `SELECT sum(charged_micros - refunded_micros) AS s FROM calls
        WHERE account_id = ? AND principal = ? AND created_at >= ? AND status IN ('succeeded', 'refunded')`,
    ),
    // A call's one row, written when it is resolved (its hold lived in memory until then: ./reservations.ts).
    insCall: db.prepare(
      `INSERT INTO calls (id, account_id, action, price_micros, hold_micros, charged_micros, status, error_code,
         idempotency_key, payment_method, principal, provider, duration_ms, created_at, finished_at, meta, cap_keys)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    call: db.prepare<[string], CallDbRow>(`SELECT ${CALL_COLUMNS} FROM calls WHERE id = ?`),
    // A call pending in a database written by an earlier version (holds were rows then): voided at start.
    finishFail: db.prepare(
      "UPDATE calls SET status = 'failed', error_code = ?, finished_at = ? WHERE id = ? AND status = 'pending'",
    ),
    callsOf: db.prepare<[string, number, number, number], CallDbRow>(
      `SELECT ${CALL_COLUMNS} FROM calls WHERE account_id = ? AND created_at >= ? AND created_at < ? ORDER BY created_at DESC, id DESC LIMIT ?`,
    ),
    // The service is the action id up to its slash; a day is the UTC day the call started.
    usage: db.prepare<[string, number, number], UsageRow>(
      `SELECT strftime('%Y-%m-%d', created_at / 1000, 'unixepoch') AS day,
              substr(action, 1, instr(action, '/') - 1) AS service,
              sum(charged_micros - refunded_micros) AS micros, count(*) AS calls
         FROM calls
        WHERE account_id = ? AND created_at >= ? AND created_at < ? AND status IN ('succeeded', 'refunded')
        GROUP BY day, service ORDER BY day, service`,
    ),
    resolveHold: db.prepare(
      "UPDATE holds SET status = 'expired', resolved_at = ? WHERE call_id = ? AND status = 'pending'",
    ),
    allPending: db.prepare<[], HoldRow>(
      "SELECT call_id, account_id, amount_micros, status, cap_day, funding_micros FROM holds WHERE status = 'pending'",
    ),
  };
}
