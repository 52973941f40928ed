import type { Request, Response } from 'express';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AttemptLimiter, Csrf, clientIp } from '../../auth/oauth/guard.js';
import { loadSecrets } from '../../auth/oauth/keys.js';
import { type OAuthStore, openOAuthStore } from '../../auth/oauth/store.js';
import type { StateDb } from '../../src/backend.js';
import { sha256Hex } from '../../src/lib/hash.js';
import { BACKENDS, type OpenedState } from '../helpers/backends.js';

// The authorization server's store (oidc-provider's Adapter contract) on both backends, its kept secrets, and
// the small guards of the sign-in forms.

/** The stored rows as they are at rest (to check that no bearer value is kept). */
async function storedRows(state: StateDb): Promise<Array<{ id_hash: string; payload: string }>> {
  const sql = 'SELECT id_hash, payload FROM oauth_store';
  if (state.kind === 'sqlite')
    return state.db.prepare(sql).all() as Array<{ id_hash: string; payload: string }>;
  return (await state.pool.query<{ id_hash: string; payload: string }>(sql)).rows;
}

describe.each(BACKENDS)('the OAuth store ($name)', (backend) => {
  let opened: OpenedState;
  let store: OAuthStore;
  beforeEach(async () => {
    opened = await backend.open();
    store = openOAuthStore(opened.db);
  });
  afterEach(() => opened.close());

  describe('the adapter', () => {
    it('[oauth:state-persists] stores, finds, consumes, destroys and revokes by grant, per model', async () => {
      const at = store.adapter('AccessToken');
      const rt = store.adapter('RefreshToken');
      await at.upsert('tok1', { jti: 'tok1', grantId: 'g1', accountId: 'a' }, 60);
      await at.upsert('tok2', { jti: 'tok2', grantId: 'g2', accountId: 'a' }, 60);
      await rt.upsert('ref1', { jti: 'ref1', grantId: 'g1' }, 60);
      expect(await at.find('tok1')).toMatchObject({ jti: 'tok1', grantId: 'g1', accountId: 'a' });
      expect(await rt.find('tok1')).toBeUndefined();
      await rt.consume('ref1');
      expect((await rt.find('ref1'))?.consumed).toEqual(expect.any(Number));
      await at.revokeByGrantId('g1');
      expect(await at.find('tok1')).toBeUndefined();
      expect(await at.find('tok2')).toBeDefined();
      expect(await rt.find('ref1')).toBeDefined();
      await at.destroy('tok2');
      expect(await at.find('tok2')).toBeUndefined();
      // A second store on the same database (a restart) reads what the first wrote.
      expect(await openOAuthStore(opened.db).adapter('RefreshToken').find('ref1')).toBeDefined();
    });

    it('[oauth:state-persists] finds sessions by uid, forgets what expired, and purges it', async () => {
      const sessions = store.adapter('Session');
      await sessions.upsert('cookie-value', { jti: 'cookie-value', uid: 'u1', accountId: 'a' }, 60);
      expect(await sessions.findByUid('u1')).toMatchObject({ accountId: 'a', jti: 'cookie-value' });
      await sessions.upsert('gone', { jti: 'gone', uid: 'u2' }, 0);
      expect(await sessions.find('gone')).toBeUndefined();
      expect(await sessions.findByUid('u2')).toBeUndefined();
      expect(await store.purgeExpired(Date.now() + 1)).toBe(1);
    });

    it('[oauth:tokens-hashed-at-rest] keeps only hashes of ids, and no bearer value in token payloads', async () => {
      await store
        .adapter('AccessToken')
        .upsert('secret-token-value', { jti: 'secret-token-value', grantId: 'g' }, 60);
      await store
        .adapter('AuthorizationCode')
        .upsert('secret-code', { jti: 'secret-code', grantId: 'g' }, 60);
      const rows = await storedRows(opened.db);
      expect(rows.map((r) => r.id_hash).sort()).toEqual(
        [sha256Hex('secret-code'), sha256Hex('secret-token-value')].sort(),
      );
      for (const r of rows) expect(r.payload).not.toMatch(/secret-(token-value|code)/);
      expect((await store.adapter('AccessToken').find('secret-token-value'))?.jti).toBe('secret-token-value');
    });
  });

  describe('secrets, limits and identities', () => {
    it('[oauth:state-persists] generates the JWKS and cookie keys once and reads them back', async () => {
      const first = await loadSecrets(store, undefined);
      expect(first.jwks.keys.map((k) => k.alg)).toEqual(['RS256', 'ES256']);
      expect(first.jwks.keys.every((k) => typeof k.d === 'string')).toBe(true);
      const again = await loadSecrets(openOAuthStore(opened.db), undefined);
      expect(again).toEqual(first);
      const operator = await loadSecrets(store, 'x'.repeat(32));
      expect(operator.cookieKeys).toEqual(['x'.repeat(32), first.cookieKeys[0]]);
    });

    it('[oauth:daily-limit] keeps one limit per (account, client), "no limit" included', async () => {
      expect(await store.dailyLimit('a', 'c')).toBeUndefined();
      await store.setDailyLimit('a', 'c', 5_000_000);
      await store.setDailyLimit('a', 'd', undefined);
      expect(await store.dailyLimit('a', 'c')).toBe(5_000_000);
      expect(await store.dailyLimit('a', 'd')).toBeUndefined();
      await store.setDailyLimit('a', 'c', 1_000_000);
      expect(await store.dailyLimit('a', 'c')).toBe(1_000_000);
    });

    it('[oauth:federated-sign-in] links an upstream identity to one account only', async () => {
      expect(await store.linkIdentity('https://idp', 'sub1', 'acct_1')).toBe(true);
      expect(await store.linkIdentity('https://idp', 'sub1', 'acct_2')).toBe(false);
      expect(await store.accountForIdentity('https://idp', 'sub1')).toBe('acct_1');
      expect(await store.accountForIdentity('https://other', 'sub1')).toBeUndefined();
    });
  });
});

describe('form guards', () => {
  const policy = { secure: true, basePath: '' };
  const fakeReq = (cookie: string | undefined, body: Record<string, string> = {}) =>
    ({
      headers: cookie ? { cookie } : {},
      body,
      socket: { remoteAddress: '10.0.0.9' },
    }) as unknown as Request;
  const fakeRes = () => {
    const set: string[] = [];
    return { set, res: { append: (_: string, v: string) => set.push(v) } as unknown as Response };
  };

  it('[oauth:csrf] a token is good only for its interaction, with its browser cookie', () => {
    const csrf = new Csrf(() => Buffer.alloc(32, 7), policy);
    const { set, res } = fakeRes();
    const token = csrf.issue(fakeReq(undefined), res, 'uid1');
    expect(set[0]).toMatch(
      /^tg_oauth_csrf=[\w-]{43}; Path=\/oauth\/interaction; Max-Age=3600; HttpOnly; SameSite=Lax; Secure$/,
    );
    const cookie = (set[0] as string).split(';')[0] as string;
    expect(csrf.verify(fakeReq(cookie, { csrf: token }), 'uid1')).toBe(true);
    expect(csrf.verify(fakeReq(cookie, { csrf: token }), 'uid2')).toBe(false);
    expect(csrf.verify(fakeReq(undefined, { csrf: token }), 'uid1')).toBe(false);
    expect(csrf.verify(fakeReq(cookie, {}), 'uid1')).toBe(false);
    expect(csrf.verify(fakeReq(`tg_oauth_csrf=${'A'.repeat(43)}`, { csrf: token }), 'uid1')).toBe(false);
  });

  it('[oauth:sign-in-rate-limit] counts attempts per key in one-minute windows', () => {
    let now = 0;
    const limiter = new AttemptLimiter(2, () => now);
    expect(limiter.take('ip1')).toBeUndefined();
    expect(limiter.take('ip1')).toBeUndefined();
    expect(limiter.take('ip1')).toBe(60);
    expect(limiter.take('ip2')).toBeUndefined();
    now = 45_000;
    expect(limiter.take('ip1')).toBe(15);
    now = 60_000;
    expect(limiter.take('ip1')).toBeUndefined();
  });

  it('[oauth:sign-in-rate-limit] trusts X-Forwarded-For only behind the TLS proxy, and only its last entry', () => {
    const req = {
      headers: { 'x-forwarded-for': '1.2.3.4, 203.0.113.7' },
      socket: { remoteAddress: '10.0.0.1' },
    };
    expect(clientIp(req as unknown as Request, false)).toBe('10.0.0.1');
    expect(clientIp(req as unknown as Request, true)).toBe('203.0.113.7');
  });
});
