import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newEvent } from '../../src/alerts/events.js';
import { type AlertStore, openAlertStore } from '../../src/alerts/store.js';
import { BACKENDS, type OpenedState } from '../helpers/backends.js';

// The alerts' store on both backends, and across two handles on one database (two replicas; SQLite: two handles
// on the one file): a mark changes once however many look at it at once, and the alert goes with the change; an
// event reported twice is queued once; an attempt is claimed by exactly one replica, recorded only by it, and
// taken over once its lease runs out.

const T0 = Date.UTC(2026, 4, 1, 12);

describe.each(BACKENDS)('[alerts:once-per-crossing] the alert store ($name)', (backend) => {
  let a: OpenedState;
  let b: OpenedState;
  let one: AlertStore;
  let two: AlertStore;

  beforeEach(async () => {
    a = await backend.open({ replicaId: 'r_a' });
    b = await backend.share(a, { replicaId: 'r_b' });
    one = openAlertStore(a.db);
    two = openAlertStore(b.db);
  });
  afterEach(async () => {
    await b?.close();
    await a?.close();
  });

  /** The balance rule's decision: an alert only for above → below. */
  const crossing = (prev: string | undefined) =>
    prev === 'above' ? newEvent('balance.below_threshold', 'acct_1', { available_micros: 1 }, T0) : undefined;

  it('a mark seen first records its state; a change queues its alert once, whoever sees it at once', async () => {
    // The first look (a rule just saved): no alert.
    expect(await one.mark('acct_1', 'balance:5', 'above', ['webhook'], crossing, T0)).toBeUndefined();
    // Twenty evaluations on two replicas see the balance below at the same moment.
    const seen = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        (i % 2 ? two : one).mark('acct_1', 'balance:5', 'below', ['webhook', 'email'], crossing, T0),
      ),
    );
    expect(seen.filter(Boolean)).toHaveLength(1);
    expect((await one.recent('acct_1', 10)).map((r) => r.channel).sort()).toEqual(['email', 'webhook']);
    // Back above (a top-up): re-armed, no alert; below again: a second one.
    expect(await one.mark('acct_1', 'balance:5', 'above', ['webhook'], crossing, T0)).toBeUndefined();
    const again = await two.mark('acct_1', 'balance:5', 'below', ['webhook'], crossing, T0);
    expect(again?.type).toBe('balance.below_threshold');
    expect(await one.recent('acct_1', 10)).toHaveLength(3);
    // A threshold changed: its marks start afresh.
    await one.dropMarks('acct_1', 'balance:');
    expect(await one.mark('acct_1', 'balance:5', 'below', ['webhook'], crossing, T0)).toBeUndefined();
  });

  it('a cap fires once per window: the window is the mark', async () => {
    const reached = () => newEvent('cap.reached', 'acct_2', {}, T0);
    const day1 = await Promise.all(
      [one, two, one, two].map((s) => s.mark('acct_2', 'cap:app:c1:day:100', 'w1', ['webhook'], reached, T0)),
    );
    expect(day1.filter(Boolean)).toHaveLength(1);
    expect(await one.mark('acct_2', 'cap:app:c1:day:100', 'w1', ['webhook'], reached, T0)).toBeUndefined();
    expect(await two.mark('acct_2', 'cap:app:c1:day:100', 'w2', ['webhook'], reached, T0)).toBeDefined();
  });

  it('an event reported again (same id) is queued once', async () => {
    const e = newEvent('topup.succeeded', 'acct_3', { amount_micros: 5 }, T0, 'cs_123');
    const e2 = newEvent('topup.succeeded', 'acct_3', { amount_micros: 5 }, T0 + 5, 'cs_123');
    expect(e2.id).toBe(e.id);
    const added = await Promise.all([one.enqueue(e, ['webhook'], T0), two.enqueue(e2, ['webhook'], T0)]);
    expect(added.sort()).toEqual([0, 1]);
    expect(await one.recent('acct_3', 10)).toHaveLength(1);
  });

  it('[alerts:outbox] one replica claims each attempt; only it records the outcome; a dead lease is taken over', async () => {
    const e = newEvent('alert.test', 'acct_4', {}, T0);
    await one.enqueue(e, ['webhook'], T0);
    expect(await one.due(T0, 10)).toEqual([{ event_id: e.id, channel: 'webhook' }]);
    const claims = await Promise.all([
      one.claim(e.id, 'webhook', 'r_a', T0, 60_000),
      two.claim(e.id, 'webhook', 'r_b', T0, 60_000),
    ]);
    const won = claims.filter(Boolean);
    expect(won).toHaveLength(1);
    const row = won[0] as NonNullable<(typeof won)[0]>;
    expect(row.attempts).toBe(1);
    const owner = claims[0] ? 'r_a' : 'r_b';
    const other = owner === 'r_a' ? 'r_b' : 'r_a';
    // Leased: not due for anyone until it runs out.
    expect(await two.due(T0 + 1_000, 10)).toEqual([]);
    const failed = { delivered: false, target: 'https://x.example/', status: 500, error: 'answered 500' };
    expect(await one.finish(row, other, { ...failed, retryAt: T0 + 30_000 }, T0)).toBe(false);
    expect(await one.finish(row, owner, { ...failed, retryAt: T0 + 30_000 }, T0)).toBe(true);
    expect(await one.due(T0 + 29_999, 10)).toEqual([]);
    // The second attempt's replica dies mid-attempt: after its lease the other takes it over (attempt 3).
    const second = await two.claim(e.id, 'webhook', 'r_b', T0 + 30_000, 60_000);
    expect(second?.attempts).toBe(2);
    expect(await one.claim(e.id, 'webhook', 'r_a', T0 + 60_000, 60_000)).toBeUndefined();
    const third = await one.claim(e.id, 'webhook', 'r_a', T0 + 90_000, 60_000);
    expect(third?.attempts).toBe(3);
    // The dead attempt's outcome, arriving late, is not recorded over the live one.
    expect(await two.finish(second as never, 'r_b', { ...failed, delivered: true }, T0 + 91_000)).toBe(false);
    const ok = { delivered: true, target: 'https://x.example/', status: 204, error: null };
    expect(await one.finish(third as never, 'r_a', ok, T0 + 91_000)).toBe(true);
    const [done] = await one.recent('acct_4', 1);
    expect(done).toMatchObject({ status: 'delivered', attempts: 3, last_status: 204 });
    expect(await one.due(T0 + 10 ** 9, 10)).toEqual([]);
    // Finished rows go after their time; pending ones never.
    expect(await one.purge(T0 + 91_001)).toBe(1);
  });

  it('settings round-trip; only accounts with somewhere to deliver are watched', async () => {
    const base = {
      webhook_secret: null,
      balance_threshold_micros: 5_000_000,
      events: ['balance.below_threshold', 'cap.reached'],
      created_at: T0,
      updated_at: T0,
    };
    await one.putSettings({ ...base, account_id: 'acct_5', webhook_url: null, emails: [] });
    await one.putSettings({ ...base, account_id: 'acct_6', webhook_url: null, emails: ['a@example.com'] });
    await two.putSettings({
      ...base,
      account_id: 'acct_7',
      webhook_url: 'https://h.example/',
      webhook_secret: 's',
      emails: [],
    });
    expect((await two.watchedAccounts()).sort()).toEqual(['acct_6', 'acct_7']);
    expect(await one.settings('acct_6')).toMatchObject({
      emails: ['a@example.com'],
      events: ['balance.below_threshold', 'cap.reached'],
      balance_threshold_micros: 5_000_000,
    });
    await one.putSettings({
      ...base,
      account_id: 'acct_6',
      webhook_url: null,
      emails: [],
      updated_at: T0 + 1,
    });
    expect(await two.watchedAccounts()).toEqual(['acct_7']);
  });
});
