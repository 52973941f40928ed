import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { inTransaction } from '../../src/db/open.js';
import { prepare } from '../../src/db/prepared.js';
import { BACKENDS, type OpenedState } from '../helpers/backends.js';

// The store layer's own rules (src/db): a query compiled once takes its values per call, and on SQLite, where a
// compiled statement runs straight on the connection, it never slips into a transaction another caller has open.

describe.each(BACKENDS)('the store layer ($name)', (backend) => {
  let state: OpenedState;
  beforeEach(async () => {
    state = await backend.open();
  });
  afterEach(() => state.close());

  it('a query compiled once takes each call’s values, in their places', async () => {
    const db = state.db.stores;
    const put = prepare(db, (p: { name: string; value: string }) =>
      db.insertInto('billing_state').values({ name: p.name, value: p.value }),
    );
    const get = prepare(db, (p: { name: string }) =>
      db.selectFrom('billing_state').select('value').where('name', '=', p.name),
    );
    expect(await put.run({ value: 'one', name: 'a' })).toBe(1);
    expect(await put.run({ name: 'b', value: 'two' })).toBe(1);
    expect(await get.first({ name: 'b' })).toEqual({ value: 'two' });
    expect(await get.all({ name: 'a' })).toEqual([{ value: 'one' }]);
    expect(await get.first({ name: 'none' })).toBeUndefined();
    // Placeholders only stand for values: spread into a row, they would compile to nothing.
    expect(() =>
      prepare(db, (p: { name: string; value: string }) => db.insertInto('billing_state').values({ ...p })),
    ).toThrow(/name each placeholder/);
  });

  it('[scale:one-schema] a statement compiled once never joins another caller’s open transaction', async () => {
    const db = state.db.stores;
    const put = prepare(db, (p: { name: string }) =>
      db.insertInto('billing_state').values({ name: p.name, value: 'x' }),
    );
    let outside: Promise<number> | undefined;
    await expect(
      inTransaction(db, async (trx) => {
        await put.run({ name: 'inside' }, trx);
        // Another caller writes while the transaction is open: its write must not be rolled back with it.
        outside = put.run({ name: 'outside' });
        await trx.selectFrom('billing_state').select('name').execute();
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await outside).toBe(1);
    const names = await db.selectFrom('billing_state').select('name').execute();
    expect(names.map((r) => r.name)).toEqual(['outside']);
  });

  it('a transaction committed without its own flush leaves the connection as durable as before, rollback too', async () => {
    const db = state.db.stores;
    const sync = async () => {
      if (backend.name !== 'sqlite') return 'n/a';
      const r = await sql<{ synchronous: number }>`pragma synchronous`.execute(db);
      return r.rows[0]?.synchronous;
    };
    const before = await sync();
    await inTransaction(
      db,
      async (trx) => {
        if (backend.name === 'sqlite')
          expect(
            (await sql<{ synchronous: number }>`pragma synchronous`.execute(trx)).rows[0]?.synchronous,
          ).toBe(0);
        await trx.insertInto('billing_state').values({ name: 'unflushed', value: 'x' }).execute();
      },
      { flush: false },
    );
    await expect(
      inTransaction(
        db,
        async () => {
          throw new Error('roll back');
        },
        { flush: false },
      ),
    ).rejects.toThrow('roll back');
    expect(await sync()).toBe(before);
    if (backend.name === 'sqlite') expect(before).toBe(2); // FULL
    expect(await db.selectFrom('billing_state').select('name').execute()).toEqual([{ name: 'unflushed' }]);
  });
});
