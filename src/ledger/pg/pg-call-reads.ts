import { type CallDbRow, MAX_TIME, toCallRow } from '../db-rows.js';
import type { CallRow, PrincipalSpendRow, TimeRange, UsageRow } from '../types.js';

// The transaction record as PostgreSQL reads it: one call, an account's calls newest first, spend per UTC day and
// service, and the same per principal (a key id, `oauth:<client>`) for team accounts. Named statements, prepared once
// per connection.

/** A CallRow's columns (the table also records the replica that took the call). */
export const CALL_COLUMNS =
  'id, account_id, action, price_micros, hold_micros, charged_micros, refunded_micros, operator_refunded_micros, status, error_code, idempotency_key, payment_method, principal, provider, duration_ms, created_at, finished_at, meta';

export type Rows = <T>(name: string | undefined, text: string, values: unknown[]) => Promise<T[]>;

export class PgCallReads {
  constructor(private readonly rows: Rows) {}

  async call(id: string): Promise<CallRow | undefined> {
    const [r] = await this.rows<CallDbRow>('tg_call', `SELECT ${CALL_COLUMNS} FROM calls WHERE id = $1`, [
      id,
    ]);
    return r ? toCallRow(r) : undefined;
  }

  async calls(accountId: string, limit: number, range: TimeRange): Promise<CallRow[]> {
    const rows = await this.rows<CallDbRow>(
      'tg_calls_of',
      `SELECT ${CALL_COLUMNS} FROM calls WHERE account_id = $1 AND created_at >= $2 AND created_at < $3 ORDER BY created_at DESC, id DESC LIMIT $4`,
      [accountId, range.fromMs ?? 0, range.toMs ?? MAX_TIME, limit],
    );
    return rows.map(toCallRow);
  }

  usage(accountId: string, range: TimeRange): Promise<UsageRow[]> {
    // The service is the action id up to its slash ('' without one, as in SQLite); the day is the UTC day the
    // call started.
    return this.rows(
      'tg_usage',
      `SELECT to_char(to_timestamp(created_at / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day,
              CASE WHEN strpos(action, '/') > 0 THEN split_part(action, '/', 1) ELSE '' END AS service,
              sum(charged_micros - refunded_micros)::bigint AS micros, count(*)::bigint AS calls
         FROM calls
        WHERE account_id = $1 AND created_at >= $2 AND created_at < $3 AND status IN ('succeeded', 'refunded')
        GROUP BY 1, 2 ORDER BY 1, 2`,
      [accountId, range.fromMs ?? 0, range.toMs ?? MAX_TIME],
    );
  }

  /** A cap's counter (src/ledger/spend-caps.ts names them): holds add to it, captures and voids settle it. */
  async capSpend(accountId: string, counter: string): Promise<number> {
    const [r] = await this.rows<{ spent_micros: number }>(
      'tg_cap_spend',
      'SELECT spent_micros FROM spend_counters WHERE account_id = $1 AND counter = $2',
      [accountId, counter],
    );
    return r?.spent_micros ?? 0;
  }

  /** Spend per principal: dashboard reads, on the calls' (account, time) index, never on the call path. */
  spend(accountId: string, range: TimeRange): Promise<PrincipalSpendRow[]> {
    return this.rows(
      'tg_spend_by_principal',
      `SELECT principal, sum(charged_micros - refunded_micros)::bigint AS micros, count(*)::bigint AS calls
         FROM calls
        WHERE account_id = $1 AND created_at >= $2 AND created_at < $3 AND status IN ('succeeded', 'refunded')
        GROUP BY principal ORDER BY 2 DESC, principal`,
      [accountId, range.fromMs ?? 0, range.toMs ?? MAX_TIME],
    );
  }

  async callsOf(
    accountId: string,
    principals: readonly string[],
    limit: number,
    range: TimeRange,
  ): Promise<CallRow[]> {
    if (principals.length === 0) return [];
    const rows = await this.rows<CallDbRow>(
      'tg_calls_of_principals',
      `SELECT ${CALL_COLUMNS} FROM calls
        WHERE account_id = $1 AND principal = ANY($2::text[]) AND created_at >= $3 AND created_at < $4
        ORDER BY created_at DESC, id DESC LIMIT $5`,
      [accountId, principals, range.fromMs ?? 0, range.toMs ?? MAX_TIME, limit],
    );
    return rows.map(toCallRow);
  }

  async usageOf(accountId: string, principals: readonly string[], range: TimeRange): Promise<UsageRow[]> {
    if (principals.length === 0) return [];
    return this.rows(
      'tg_usage_of_principals',
      `SELECT to_char(to_timestamp(created_at / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day,
              CASE WHEN strpos(action, '/') > 0 THEN split_part(action, '/', 1) ELSE '' END AS service,
              sum(charged_micros - refunded_micros)::bigint AS micros, count(*)::bigint AS calls
         FROM calls
        WHERE account_id = $1 AND principal = ANY($2::text[]) AND created_at >= $3 AND created_at < $4
          AND status IN ('succeeded', 'refunded')
        GROUP BY 1, 2 ORDER BY 1, 2`,
      [accountId, principals, range.fromMs ?? 0, range.toMs ?? MAX_TIME],
    );
  }
}
