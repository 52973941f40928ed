import type { SqliteDb } from '../../lib/sqlite.js';
import type { CallDbRow } from '../db-rows.js';
import { MAX_TIME } from '../db-rows.js';
import type { PrincipalSpendRow, TimeRange, UsageRow } from '../types.js';

// The transaction record read per principal (who presented the credential: a key id, `oauth:<client>`), for
// team accounts: spend per key and per member, and a member's own calls and usage. Dashboard reads, never on the
// call path; they use the calls' (account, time) index and filter by principal within the account's range. A set
// of principals is bound as one JSON array (json_each), so each statement is prepared once.

export class SqlitePrincipalReads {
  private readonly s;

  constructor(db: SqliteDb) {
    this.s = {
      spend: db.prepare<[string, number, number], PrincipalSpendRow>(
        `SELECT principal, sum(charged_micros - refunded_micros) AS micros, count(*) AS calls
           FROM calls
          WHERE account_id = ? AND created_at >= ? AND created_at < ? AND status IN ('succeeded', 'refunded')
          GROUP BY principal ORDER BY micros DESC, principal`,
      ),
      calls: db.prepare<[string, string, number, number, number], CallDbRow>(
        `SELECT * FROM calls
          WHERE account_id = ? AND principal IN (SELECT value FROM json_each(?))
            AND created_at >= ? AND created_at < ?
          ORDER BY created_at DESC, id DESC LIMIT ?`,
      ),
      usage: db.prepare<[string, string, number, number], UsageRow>(
        `SELECT strftime('%Y-%m-%d', created_at / 1000, 'unixepoch') AS day,
                substr(action, 1, instr(action, '/') - 1) AS service,
                sum(charged_micros - refunded_micros) AS micros, count(*) AS calls
           FROM calls
          WHERE account_id = ? AND principal IN (SELECT value FROM json_each(?))
            AND created_at >= ? AND created_at < ? AND status IN ('succeeded', 'refunded')
          GROUP BY day, service ORDER BY day, service`,
      ),
    };
  }

  spend(accountId: string, range: TimeRange): PrincipalSpendRow[] {
    return this.s.spend.all(accountId, range.fromMs ?? 0, range.toMs ?? MAX_TIME);
  }

  /** Recorded calls only: the caller merges this process's pending ones (held in memory). */
  calls(accountId: string, principals: readonly string[], limit: number, range: TimeRange): CallDbRow[] {
    if (principals.length === 0) return [];
    return this.s.calls.all(
      accountId,
      JSON.stringify(principals),
      range.fromMs ?? 0,
      range.toMs ?? MAX_TIME,
      limit,
    );
  }

  usage(accountId: string, principals: readonly string[], range: TimeRange): UsageRow[] {
    if (principals.length === 0) return [];
    return this.s.usage.all(accountId, JSON.stringify(principals), range.fromMs ?? 0, range.toMs ?? MAX_TIME);
  }
}
