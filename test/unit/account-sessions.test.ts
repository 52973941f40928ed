import type { Request, Response } from 'express';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openAccountSessions, SESSION_COOKIE, SESSION_TTL_MS } from '../../src/account/sessions.js';
import { BACKENDS, type OpenedState } from '../helpers/backends.js';

// Dashboard sessions on both backends: started, found, ended and expired, and a session (and its CSRF token)
// made through one replica honoured by another.

const cookies = { secure: () => true, basePath: () => '' };

/** A response that records its Set-Cookie headers; the request that sends the session cookie back. */
function cookieJar() {
  const set: string[] = [];
  const res = { append: (_: string, v: string) => set.push(v) } as unknown as Response;
  const token = () => {
    const found = set.map((c) => c.split(';')[0] as string).find((c) => c.startsWith(`${SESSION_COOKIE}=`));
    return found?.slice(SESSION_COOKIE.length + 1);
  };
  const req = (body: Record<string, string> = {}) =>
    ({ headers: { cookie: `${SESSION_COOKIE}=${token() ?? ''}` }, body }) as unknown as Request;
  return { set, res, token, req };
}

describe.each(BACKENDS)('account sessions ($name)', (backend) => {
  let a: OpenedState;
  let b: OpenedState;
  let now = Date.UTC(2026, 10, 23, 12);
  beforeEach(async () => {
    now = Date.UTC(2026, 10, 23, 12);
    a = await backend.open({ replicaId: 'r_a' });
    b = await backend.share(a, { replicaId: 'r_b' });
  });
  afterEach(async () => {
    await b.close();
    await a.close();
  });

  it('[account:session-cookies] starts, finds, ends and expires a session', async () => {
    const sessions = await openAccountSessions(a.db, cookies, () => now);
    const jar = cookieJar();
    const s = await sessions.start(jar.res, 'acct_1', 'key_1', 'mbr_1');
    expect(jar.set[0]).toMatch(
      /^tg_session=[\w-]{43}; Path=\/account; Max-Age=43200; HttpOnly; SameSite=Lax; Secure$/,
    );
    expect(await sessions.find(jar.req())).toEqual({
      id: s.id,
      accountId: 'acct_1',
      keyId: 'key_1',
      memberId: 'mbr_1',
    });
    // A forged or unknown cookie finds nothing.
    expect(
      await sessions.find({ headers: { cookie: `${SESSION_COOKIE}=${'A'.repeat(43)}` } } as never),
    ).toBeUndefined();
    expect(await sessions.find({ headers: {} } as never)).toBeUndefined();
    now += SESSION_TTL_MS;
    expect(await sessions.find(jar.req())).toBeUndefined();

    now = Date.UTC(2026, 10, 23, 12);
    const other = cookieJar();
    await sessions.start(other.res, 'acct_2', null, 'mbr_2');
    expect((await sessions.find(other.req()))?.accountId).toBe('acct_2');
    const out = cookieJar();
    await sessions.end(other.req(), out.res);
    expect(out.set[0]).toMatch(/^tg_session=; Path=\/account; Max-Age=0/);
    expect(await sessions.find(other.req())).toBeUndefined();
  });

  it('[account:session-cookies] a session made through one replica is found, and ended, through another', async () => {
    const one = await openAccountSessions(a.db, cookies, () => now);
    const two = await openAccountSessions(b.db, cookies, () => now);
    const jar = cookieJar();
    const s = await one.start(jar.res, 'acct_1', null, 'mbr_1');
    expect(await two.find(jar.req())).toEqual(s);
    // The form key is shared too: a CSRF token issued by one replica verifies on the other.
    expect(two.verify(jar.req({ csrf: one.csrfFor(s) }), s)).toBe(true);
    expect(two.verify(jar.req({ csrf: 'x'.repeat(43) }), s)).toBe(false);
    await two.drop(s);
    expect(await one.find(jar.req())).toBeUndefined();
  });

  it('[account:csrf] replicas opening at once agree on one form key', async () => {
    const [one, two] = await Promise.all([
      openAccountSessions(a.db, cookies, () => now),
      openAccountSessions(b.db, cookies, () => now),
    ]);
    const jar = cookieJar();
    const s = await one.start(jar.res, 'acct_1', null, 'mbr_1');
    expect(two.csrfFor(s)).toBe(one.csrfFor(s));
  });

  it('[account:signup-rate-limit] counts sign-ups per key in one-hour windows, across replicas', async () => {
    const one = (await openAccountSessions(a.db, cookies, () => now)).windowLimiter(3, 3_600_000);
    const two = (await openAccountSessions(b.db, cookies, () => now)).windowLimiter(3, 3_600_000);
    // Six attempts at once, spread over two replicas: three pass, three wait out the hour.
    const waits = await Promise.all(
      Array.from({ length: 6 }, (_, i) => (i % 2 ? two : one).take('signup:ip1')),
    );
    expect(waits.filter((w) => w === undefined)).toHaveLength(3);
    expect(waits.filter((w) => w === 3600)).toHaveLength(3);
    expect(await one.take('signup:ip2')).toBeUndefined();
    now += 45 * 60_000;
    expect(await two.take('signup:ip1')).toBe(15 * 60);
    now += 15 * 60_000;
    expect(await one.take('signup:ip1')).toBeUndefined();
    expect(await two.take('signup:ip1')).toBeUndefined();
    expect(await one.take('signup:ip1')).toBeUndefined();
    expect(await two.take('signup:ip1')).toBe(3600);
  });
});
