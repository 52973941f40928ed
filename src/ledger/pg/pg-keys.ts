import { newId } from '../../lib/ids.js';
import { inTransaction, type PgPool } from '../../pg/pool.js';
import type { KeyCache } from '../key-cache.js';
import { currentWindows, type KeyDbRow, keyUsageOf, mergeLimits, toKeyRow } from '../key-rows.js';
import { actionsColumn, counterKey, keyScope } from '../spend-caps.js';
import {
  type ApiKeyRow,
  type KeyLimits,
  type KeyUsage,
  LedgerStateError,
  type NewApiKey,
  NO_KEY_LIMITS,
} from '../types.js';
import type { Rows } from './pg-call-reads.js';
import { asLedgerError } from './pg-movements.js';

// API keys on PostgreSQL (src/ledger/sqlite/keys.ts is SQLite's): creation, look-up through the key cache,
// revocation, limits, and what each key spent.

const KEY_COLUMNS =
  'id, account_id, prefix, name, created_at, revoked_at, max_call_micros, daily_limit_micros, monthly_limit_micros, actions';

export class PgKeys {
  /** `rows`: the ledger's query, its refusals mapped to LedgerStateError. */
  constructor(
    private readonly pool: PgPool,
    private readonly cache: KeyCache,
    private readonly rows: Rows,
  ) {}

  async insert(input: NewApiKey, now: number): Promise<ApiKeyRow> {
    const limits = mergeLimits(NO_KEY_LIMITS, input.limits ?? {});
    const known = await this.rows(undefined, 'SELECT 1 FROM accounts WHERE id = $1', [input.accountId]);
    if (known.length === 0) throw new LedgerStateError(`unknown account ${input.accountId}`);
    const [row] = await this.rows<KeyDbRow>(
      undefined,
      `INSERT INTO api_keys (id, account_id, hash, prefix, name, created_at, max_call_micros, daily_limit_micros,
                             monthly_limit_micros, actions)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ${KEY_COLUMNS}`,
      [
        newId('key', now),
        input.accountId,
        input.hash,
        input.prefix,
        input.name ?? null,
        now,
        limits.max_call_micros,
        limits.daily_limit_micros,
        limits.monthly_limit_micros,
        actionsColumn(limits.actions),
      ],
    );
    return toKeyRow(row as KeyDbRow);
  }

  async findByHash(hash: string): Promise<ApiKeyRow | undefined> {
    const cached = this.cache.get(hash);
    if (cached) return cached;
    const [r] = await this.rows<KeyDbRow>(
      'tg_key_hash_limits',
      `SELECT ${KEY_COLUMNS} FROM api_keys WHERE hash = $1`,
      [hash],
    );
    if (!r) return undefined;
    const row = toKeyRow(r);
    this.cache.remember(hash, row);
    return row;
  }

  async list(accountId?: string): Promise<ApiKeyRow[]> {
    const rows = accountId
      ? await this.rows<KeyDbRow>(
          undefined,
          `SELECT ${KEY_COLUMNS} FROM api_keys WHERE account_id = $1 ORDER BY created_at, id`,
          [accountId],
        )
      : await this.rows<KeyDbRow>(
          undefined,
          `SELECT ${KEY_COLUMNS} FROM api_keys ORDER BY created_at, id`,
          [],
        );
    return rows.map(toKeyRow);
  }

  async revoke(id: string, now: number): Promise<boolean> {
    this.cache.forget(id);
    const r = await this.pool.query(
      'UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL',
      [now, id],
    );
    // Again once it is written: a look-up while the update ran may have cached the row as it was.
    this.cache.forget(id);
    return r.rowCount === 1;
  }

  /**
   * Changes the limits and starts the counters of a daily or monthly limit that is set from what the key was
   * already charged in the current window: one transaction under the account's lock (the lock every hold of the
   * account takes first), so no capture or hold falls between the sum and the counter.
   */
  async setLimits(id: string, changes: Partial<KeyLimits>, now: number): Promise<ApiKeyRow | undefined> {
    this.cache.forget(id);
    try {
      return await inTransaction(this.pool, async (c) => {
        const [current] = (
          await c.query<KeyDbRow>(
            `SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = $1 AND revoked_at IS NULL FOR UPDATE`,
            [id],
          )
        ).rows;
        if (!current) return undefined;
        await c.query('SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', [current.account_id]);
        const next = mergeLimits(toKeyRow(current), changes);
        const [updated] = (
          await c.query<KeyDbRow>(
            `UPDATE api_keys SET max_call_micros = $1, daily_limit_micros = $2, monthly_limit_micros = $3,
                                 actions = $4
              WHERE id = $5 RETURNING ${KEY_COLUMNS}`,
            [
              next.max_call_micros,
              next.daily_limit_micros,
              next.monthly_limit_micros,
              actionsColumn(next.actions),
              id,
            ],
          )
        ).rows;
        const { dayStart, monthStart } = currentWindows(now);
        for (const [window, start, on] of [
          ['day', dayStart, next.daily_limit_micros !== null],
          ['month', monthStart, next.monthly_limit_micros !== null],
        ] as const) {
          if (!on) continue;
          // What the key was charged in the window, net of refunds; a counter that counts more keeps its count.
          await c.query(
            `INSERT INTO spend_counters (account_id, counter, spent_micros)
             SELECT $1, $2, coalesce(sum(charged_micros - refunded_micros), 0) FROM calls
              WHERE account_id = $1 AND principal = $3 AND created_at >= $4 AND status IN ('succeeded', 'refunded')
             ON CONFLICT (account_id, counter)
               DO UPDATE SET spent_micros = greatest(spend_counters.spent_micros, excluded.spent_micros)`,
            [current.account_id, counterKey(keyScope(id), window, now), id, start],
          );
        }
        return toKeyRow(updated as KeyDbRow);
      });
    } catch (err) {
      throw asLedgerError(err);
    } finally {
      this.cache.forget(id);
    }
  }

  async usage(accountId: string, now: number): Promise<KeyUsage[]> {
    const { dayStart, monthStart } = currentWindows(now);
    const [keys, spend] = await Promise.all([
      this.list(accountId),
      this.rows<{ principal: string | null; today: number; since: number }>(
        undefined,
        `SELECT principal,
                sum(CASE WHEN created_at >= $1 THEN charged_micros - refunded_micros ELSE 0 END)::bigint AS today,
                sum(charged_micros - refunded_micros)::bigint AS since
           FROM calls
          WHERE account_id = $2 AND created_at >= $3 AND payment_method = 'api_key'
            AND status IN ('succeeded', 'refunded')
          GROUP BY principal`,
        [dayStart, accountId, monthStart],
      ),
    ]);
    return keyUsageOf(keys, spend, now);
  }
}
