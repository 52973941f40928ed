import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteLedger } from '../../src/ledger/sqlite/sqlite-ledger.js';
import type { Ledger } from '../../src/ledger/types.js';
import { openSqlite, type SqliteDb } from '../../src/lib/sqlite.js';
import { ManualClock } from '../helpers/clock.js';

// The ledger's scoped daily cap, which carries an OAuth client's daily limit: its own counter inside the
// account, checked and reserved with the hold, released by capture (the unused part) and void, reset at 00:00 UTC.

let db: SqliteDb;
let ledger: Ledger;
let clock: ManualClock;

beforeEach(() => {
  db = openSqlite(':memory:');
  clock = new ManualClock(Date.UTC(2026, 10, 22, 12));
  ledger = new SqliteLedger(db, { clock, idempotencyTtlMs: 86_400_000 });
});
afterEach(async () => {
  await ledger.close();
  db.close();
});

function call(
  accountId: string,
  micros: number,
  cap?: { limitMicros: number; scope?: string },
): Promise<{ kind: string; callId?: string }> {
  return ledger.begin({
    accountId,
    action: 'scraperC/scrape',
    priceMicros: micros,
    holdMicros: micros,
    paymentMethod: 'oauth',
    principal: 'oauth:c1',
    holdTtlMs: 60_000,
    caps: cap && [{ scope: cap.scope ?? '', window: 'day', limitMicros: cap.limitMicros }],
  }) as never;
}

describe('scoped daily caps', () => {
  it('[oauth:daily-limit] each scope counts separately from the others and from the account-wide cap', async () => {
    const a = await ledger.createAccount({ name: 't' });
    await ledger.credit(a.id, 1_000_000, 'test');
    const c1 = { limitMicros: 20_000, scope: 'oauth:c1' };
    const c2 = { limitMicros: 20_000, scope: 'oauth:c2' };
    for (const cap of [c1, c1]) {
      const r = await call(a.id, 10_000, cap);
      await ledger.capture(r.callId as string, { amountMicros: 10_000, provider: null, durationMs: 1 });
    }
    expect((await call(a.id, 10_000, c1)).kind).toBe('cap_reached');
    expect((await call(a.id, 10_000, c2)).kind).toBe('started');
    expect((await call(a.id, 10_000, { limitMicros: 20_000 })).kind).toBe('started');
    expect((await call(a.id, 10_000)).kind).toBe('started');
  });

  it('[oauth:daily-limit] void releases the whole hold, capture the unused part; the counter resets at 00:00 UTC', async () => {
    const a = await ledger.createAccount({ name: 't' });
    await ledger.credit(a.id, 1_000_000, 'test');
    const cap = { limitMicros: 30_000, scope: 'oauth:c1' };
    const failed = await call(a.id, 30_000, cap);
    expect((await call(a.id, 1, cap)).kind).toBe('cap_reached');
    await ledger.void(failed.callId as string, {
      errorCode: 'upstream_error',
      provider: null,
      durationMs: 1,
    });
    const partial = await call(a.id, 30_000, cap);
    await ledger.capture(partial.callId as string, { amountMicros: 10_000, provider: null, durationMs: 1 });
    const rest = await call(a.id, 20_000, cap);
    expect(rest.kind).toBe('started');
    const refused = (await call(a.id, 1, cap)) as unknown as {
      kind: string;
      spentMicros: number;
      resetsAt: number;
    };
    expect(refused).toMatchObject({
      kind: 'cap_reached',
      spentMicros: 30_000,
      resetsAt: Date.UTC(2026, 10, 23),
    });
    clock.set(Date.UTC(2026, 10, 23, 0, 0, 1));
    expect((await call(a.id, 30_000, cap)).kind).toBe('started');
  });
});
