import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApiKey, hashApiKey } from '../../auth/api-keys.js';
import { openStateLedger } from '../../src/ledger/index.js';
import type { Ledger } from '../../src/ledger/types.js';
import { BACKENDS, type OpenedState } from '../helpers/backends.js';
import { ManualClock } from '../helpers/clock.js';

// API keys are cached for TOLLGATE_KEY_CACHE_SECONDS (docs/decisions.md "API keys are cached"): a revocation is
// immediate in the process that revokes, within the cache's lifetime in every other one (another replica, or
// the CLI beside a running SQLite gateway), and a key never seen is read every time.
describe.each(BACKENDS)('[auth:key-cache] API-key look-ups ($name)', (backend) => {
  let state: OpenedState;
  let other: OpenedState;
  let a: Ledger;
  let b: Ledger;
  const clock = new ManualClock(Date.UTC(2026, 10, 25, 12));

  beforeEach(async () => {
    state = await backend.open();
    other = await backend.share(state);
    a = await openStateLedger(state.db, { clock, idempotencyTtlMs: 86_400_000, keyCacheTtlMs: 5_000 });
    b = await openStateLedger(other.db, { clock, idempotencyTtlMs: 86_400_000, keyCacheTtlMs: 5_000 });
  });
  afterEach(async () => {
    await a.close();
    await b.close();
    await other.close();
    await state.close();
  });

  it('a key revoked by this process is refused at once; by another, once the cached entry is older than the TTL', async () => {
    const acct = await a.createAccount({ name: 'k' });
    const one = await createApiKey(a, acct.id);
    const two = await createApiKey(a, acct.id);
    const h1 = hashApiKey(one.key);
    const h2 = hashApiKey(two.key);
    expect((await a.findApiKeyByHash(h1))?.revoked_at).toBeNull();
    expect((await a.findApiKeyByHash(h2))?.revoked_at).toBeNull();

    // Revoked here: the next look-up here reads it afresh.
    await a.revokeApiKey(one.row.id);
    expect((await a.findApiKeyByHash(h1))?.revoked_at).not.toBeNull();

    // Revoked by another process: this one trusts its cached row until the TTL passes, then sees it.
    await b.revokeApiKey(two.row.id);
    expect((await a.findApiKeyByHash(h2))?.revoked_at).toBeNull();
    clock.advance(5_001);
    expect((await a.findApiKeyByHash(h2))?.revoked_at).not.toBeNull();
  });

  it('an unknown key is not cached: one created elsewhere works at once', async () => {
    const acct = await a.createAccount({ name: 'k' });
    const hash = hashApiKey('tg_sk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
    expect(await a.findApiKeyByHash(hash)).toBeUndefined();
    await b.insertApiKey({ accountId: acct.id, hash, prefix: 'tg_sk_AAAA…' });
    expect((await a.findApiKeyByHash(hash))?.account_id).toBe(acct.id);
  });
});
