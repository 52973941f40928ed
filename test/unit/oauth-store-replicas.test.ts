import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OAuthGrants } from '../../auth/oauth/grants.js';
import { type OAuthStore, openOAuthStore } from '../../auth/oauth/store.js';
import { BACKENDS, type OpenedState } from '../helpers/backends.js';

// The OAuth store as several replicas see it: what one writes (tokens, grants, sessions, secrets, key links),
// every other reads, on SQLite (two handles on one file) and PostgreSQL (two pools on one database) alike.

describe.each(BACKENDS)('the OAuth store across replicas ($name)', (backend) => {
  let a: OpenedState;
  let b: OpenedState;
  let one: OAuthStore;
  let two: OAuthStore;
  beforeEach(async () => {
    a = await backend.open({ replicaId: 'r_a' });
    b = await backend.share(a, { replicaId: 'r_b' });
    one = openOAuthStore(a.db);
    two = openOAuthStore(b.db);
  });
  afterEach(async () => {
    await b.close();
    await a.close();
  });

  it('[oauth:state-persists] a token stored by one replica is found, consumed and revoked by the other', async () => {
    await one.adapter('AccessToken').upsert('tok1', { jti: 'tok1', grantId: 'g1', accountId: 'acct' }, 60);
    await one.adapter('RefreshToken').upsert('ref1', { jti: 'ref1', grantId: 'g1' }, 60);
    expect(await two.adapter('AccessToken').find('tok1')).toMatchObject({ jti: 'tok1', accountId: 'acct' });
    await two.adapter('RefreshToken').consume('ref1');
    expect((await one.adapter('RefreshToken').find('ref1'))?.consumed).toEqual(expect.any(Number));
    await two.adapter('AccessToken').revokeByGrantId('g1');
    expect(await one.adapter('AccessToken').find('tok1')).toBeUndefined();
    expect(await one.adapter('RefreshToken').find('ref1')).toBeDefined();
  });

  it('[oauth:state-persists] upsert replaces, destroy removes, expiry hides, user codes find', async () => {
    const dc = one.adapter('DeviceCode');
    await dc.upsert('d1', { jti: 'd1', userCode: 'ABCD-EFGH', accountId: 'x' }, 60);
    await dc.upsert('d1', { jti: 'd1', userCode: 'ABCD-EFGH', accountId: 'y' }, 60);
    expect(await two.adapter('DeviceCode').findByUserCode('ABCD-EFGH')).toMatchObject({ accountId: 'y' });
    await two.adapter('DeviceCode').destroy('d1');
    expect(await dc.find('d1')).toBeUndefined();
    await dc.upsert('d2', { jti: 'd2', userCode: 'GONE' }, 0);
    expect(await dc.findByUserCode('GONE')).toBeUndefined();
    // A payload without an expiry (a registered client) stays.
    await one.adapter('Client').upsert('c1', { client_id: 'c1', client_name: 'Host' });
    expect(await two.adapter('Client').find('c1')).toMatchObject({ client_name: 'Host' });
    expect(await two.purgeExpired(Date.now() + 1)).toBe(1);
    expect(await one.adapter('Client').find('c1')).toBeDefined();
  });

  it('[oauth:state-persists] a session made by one replica is found by uid on the other', async () => {
    await one.adapter('Session').upsert('cookie', { jti: 'cookie', uid: 'u1', accountId: 'acct' }, 60);
    await one.setSessionKey('u1', 'key_1');
    expect(await two.adapter('Session').findByUid('u1')).toMatchObject({ accountId: 'acct' });
    expect(await two.sessionKey('u1')).toBe('key_1');
    await two.setSessionKey('u2', null);
    expect(await one.sessionKey('u2')).toBeNull();
    expect(await one.sessionKey('u3')).toBeUndefined();
  });

  it('[oauth:state-persists] a secret is generated once when replicas race for it', async () => {
    let generated = 0;
    const gen = (v: string) => () => {
      generated += 1;
      return v;
    };
    const values = await Promise.all([
      one.secret('cookie_key', gen('from-a')),
      two.secret('cookie_key', gen('from-b')),
      one.secret('cookie_key', gen('from-a2')),
      two.secret('cookie_key', gen('from-b2')),
    ]);
    expect(new Set(values).size).toBe(1);
    expect(['from-a', 'from-b', 'from-a2', 'from-b2']).toContain(values[0]);
    expect(generated).toBeGreaterThanOrEqual(1);
    // Later reads never generate again.
    expect(await two.secret('cookie_key', gen('late'))).toBe(values[0]);
    expect(await openOAuthStore(a.db).secret('cookie_key', gen('late'))).toBe(values[0]);
  });

  it('[oauth:federated-sign-in] an upstream identity links to one account when replicas race', async () => {
    const linked = await Promise.all([
      one.linkIdentity('https://idp', 'sub', 'acct_a'),
      two.linkIdentity('https://idp', 'sub', 'acct_b'),
    ]);
    expect(linked.filter(Boolean)).toHaveLength(1);
    const winner = linked[0] ? 'acct_a' : 'acct_b';
    expect(await one.accountForIdentity('https://idp', 'sub')).toBe(winner);
    expect(await two.accountForIdentity('https://idp', 'sub')).toBe(winner);
  });

  it('[oauth:operator-revoke] grants, their keys and limits: listed and revoked from any replica', async () => {
    await one.adapter('Client').upsert('client-1', { client_id: 'client-1', client_name: 'Inspector' });
    const iat = Math.floor(Date.now() / 1000);
    await one
      .adapter('Grant')
      .upsert('grant-1', { jti: 'grant-1', accountId: 'acct', clientId: 'client-1', iat }, 60);
    await one
      .adapter('Grant')
      .upsert('grant-x', { jti: 'grant-x', accountId: 'other', clientId: 'client-1' }, 60);
    await one.adapter('AccessToken').upsert('tok', { jti: 'tok', grantId: 'grant-1', accountId: 'acct' }, 60);
    await one.setGrantKey('grant-1', 'key_1');
    await one.setDailyLimit('acct', 'client-1', 2_000_000);
    expect(await two.grantKey('grant-1')).toBe('key_1');
    const grants = new OAuthGrants(two);
    expect(await grants.of('acct')).toEqual([
      {
        grant_id: 'grant-1',
        client_id: 'client-1',
        client_name: 'Inspector',
        granted_at: new Date(iat * 1000).toISOString(),
        daily_limit_micros: 2_000_000,
      },
    ]);
    expect(await grants.revoke('acct', 'client-2')).toBe(0);
    expect(await grants.revoke('acct', 'client-1')).toBe(1);
    expect(await one.adapter('AccessToken').find('tok')).toBeUndefined();
    expect(await new OAuthGrants(one).of('acct')).toEqual([]);
    expect(await new OAuthGrants(one).of('other')).toHaveLength(1);
    // The key link of a grant that is gone goes at the next purge; null unlinks at once.
    await one.purgeExpired();
    expect(await two.grantKey('grant-1')).toBeUndefined();
    await one.setGrantKey('grant-x', 'key_2');
    await two.setGrantKey('grant-x', null);
    expect(await one.grantKey('grant-x')).toBeUndefined();
  });
});
