import { newId } from '../../lib/ids.js';
import type { KeyCache } from '../key-cache.js';
import { currentWindows, keyUsageOf, mergeLimits, toKeyRow } from '../key-rows.js';
import { actionsColumn, counterKey, keyScope } from '../spend-caps.js';
import {
  type ApiKeyRow,
  type KeyLimits,
  type KeyUsage,
  LedgerStateError,
  type NewApiKey,
  NO_KEY_LIMITS,
} from '../types.js';
import type { prepareStatements } from './statements.js';

// API keys on SQLite: creation, look-up (through the key cache), revocation and limits. Every write is a
// synchronous step run inside one of the ledger's commits (`write`).

type Statements = ReturnType<typeof prepareStatements>;

export class SqliteKeys {
  constructor(
    private readonly s: Statements,
    private readonly cache: KeyCache,
    private readonly write: <T>(run: () => T) => Promise<T>,
  ) {}

  insert(input: NewApiKey, now: number): Promise<ApiKeyRow> {
    return this.write(() => {
      const limits = mergeLimits(NO_KEY_LIMITS, input.limits ?? {});
      if (!this.s.account.get(input.accountId))
        throw new LedgerStateError(`unknown account ${input.accountId}`);
      const id = newId('key', now);
      this.s.insKey.run(
        id,
        input.accountId,
        input.hash,
        input.prefix,
        input.name ?? null,
        now,
        limits.max_call_micros,
        limits.daily_limit_micros,
        limits.monthly_limit_micros,
        actionsColumn(limits.actions),
      );
      return toKeyRow(this.s.keyById.get(id) as NonNullable<ReturnType<Statements['keyById']['get']>>);
    });
  }

  findByHash(hash: string): ApiKeyRow | undefined {
    const cached = this.cache.get(hash);
    if (cached) return cached;
    const r = this.s.keyByHash.get(hash);
    if (!r) return undefined;
    const row = toKeyRow(r);
    this.cache.remember(hash, row);
    return row;
  }

  list(accountId?: string): ApiKeyRow[] {
    return (accountId ? this.s.keysOf.all(accountId) : this.s.keysAll.all()).map(toKeyRow);
  }

  revoke(id: string, now: number): Promise<boolean> {
    this.cache.forget(id);
    // Again once it is written: a look-up while the write was queued may have cached the row as it was.
    return this.write(() => this.s.revokeKey.run(now, id).changes === 1).then((revoked) => {
      this.cache.forget(id);
      return revoked;
    });
  }

  /**
   * Changes the limits and, for a daily or monthly limit that is set, starts its counter of the current window
   * from what the key was already charged in it: one write, so a capture cannot fall between the two.
   */
  setLimits(id: string, changes: Partial<KeyLimits>, now: number): Promise<ApiKeyRow | undefined> {
    this.cache.forget(id);
    return this.write(() => {
      const r = this.s.keyById.get(id);
      if (!r || r.revoked_at !== null) return undefined;
      const next = mergeLimits(toKeyRow(r), changes);
      this.s.setKeyLimits.run(
        next.max_call_micros,
        next.daily_limit_micros,
        next.monthly_limit_micros,
        actionsColumn(next.actions),
        id,
      );
      const { dayStart, monthStart } = currentWindows(now);
      const seeds = [
        next.daily_limit_micros !== null && (['day', dayStart] as const),
        next.monthly_limit_micros !== null && (['month', monthStart] as const),
      ];
      for (const seed of seeds) {
        if (!seed) continue;
        const spent = this.s.principalSpent.get(r.account_id, id, seed[1])?.s ?? 0;
        if (spent > 0) this.s.seedSpent.run(r.account_id, counterKey(keyScope(id), seed[0], now), spent);
      }
      return toKeyRow(this.s.keyById.get(id) as NonNullable<typeof r>);
    }).then((row) => {
      this.cache.forget(id);
      return row;
    });
  }

  usage(accountId: string, now: number): KeyUsage[] {
    const { dayStart, monthStart } = currentWindows(now);
    return keyUsageOf(this.list(accountId), this.s.keySpend.all(dayStart, accountId, monthStart), now);
  }
}
