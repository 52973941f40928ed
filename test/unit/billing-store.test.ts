import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type BillingStore, openBillingStore } from '../../src/billing/store.js';
import { BACKENDS, type OpenedState } from '../helpers/backends.js';

// Billing's own records on both backends: webhook event claims (exactly once, also under concurrency and
// across replicas), customers, cards, Checkout sessions, settlement charges, payments and state.

describe.each(BACKENDS)('the billing store ($name)', (backend) => {
  let a: OpenedState;
  let b: OpenedState;
  let store: BillingStore;
  let other: BillingStore;
  beforeEach(async () => {
    a = await backend.open({ replicaId: 'r_a' });
    b = await backend.share(a, { replicaId: 'r_b' });
    store = openBillingStore(a.db);
    other = openBillingStore(b.db);
  });
  afterEach(async () => {
    await b.close();
    await a.close();
  });

  it('[billing:webhook-verified] an event is handled once; a claim left by a crash is taken over after a minute', async () => {
    expect(await store.claimEvent('evt_1', 'x', 1_000)).toBe('claimed');
    expect(await store.claimEvent('evt_1', 'x', 2_000)).toBe('busy');
    await store.eventHandled('evt_1', 2_500);
    expect(await store.claimEvent('evt_1', 'x', 3_000)).toBe('handled');
    // A failed handler releases its claim: the next delivery handles it.
    expect(await store.claimEvent('evt_2', 'x', 1_000)).toBe('claimed');
    await store.releaseEvent('evt_2');
    expect(await store.claimEvent('evt_2', 'x', 1_500)).toBe('claimed');
    // Left unmarked (a crash): busy for a minute, then taken over once.
    expect(await store.claimEvent('evt_2', 'x', 30_000)).toBe('busy');
    expect(await store.claimEvent('evt_2', 'x', 62_000)).toBe('claimed');
    expect(await store.claimEvent('evt_2', 'x', 62_001)).toBe('busy');
  });

  it('[billing:topup-once] of concurrent deliveries of one event, exactly one is claimed', async () => {
    for (let round = 0; round < 5; round++) {
      const id = `evt_c${round}`;
      const claims = await Promise.all(Array.from({ length: 16 }, () => store.claimEvent(id, 'x', 1_000)));
      expect(claims.filter((c) => c === 'claimed')).toHaveLength(1);
      expect(claims.filter((c) => c === 'busy')).toHaveLength(15);
    }
  });

  it('[billing:topup-once] two replicas receiving one event at once: one handles it', async () => {
    for (let round = 0; round < 5; round++) {
      const id = `evt_r${round}`;
      const claims = await Promise.all(
        Array.from({ length: 12 }, (_, i) => (i % 2 ? other : store).claimEvent(id, 'x', 1_000)),
      );
      expect(claims.filter((c) => c === 'claimed')).toHaveLength(1);
    }
    // Handled by one replica: a duplicate to the other.
    await store.eventHandled('evt_r0', 1_100);
    expect(await other.claimEvent('evt_r0', 'x', 1_200)).toBe('handled');
    // A stale claim is taken over by exactly one of the replicas racing for it.
    const takeovers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => (i % 2 ? other : store).claimEvent('evt_r1', 'x', 70_000)),
    );
    expect(takeovers.filter((c) => c === 'claimed')).toHaveLength(1);
  });

  it('[billing:credit-line] customers link once, cards are replaced, sessions finish once', async () => {
    expect(await store.customerOf('acct')).toBeUndefined();
    const linked = await Promise.all([
      store.linkCustomer('acct', 'cus_a', 1),
      other.linkCustomer('acct', 'cus_b', 2),
    ]);
    expect(linked[0]).toBe(linked[1]);
    expect(await other.accountOfCustomer(linked[0])).toBe('acct');
    const card = {
      account_id: 'acct',
      payment_method: 'pm_1',
      fingerprint: 'fp',
      brand: 'visa',
      last4: '4242',
      exp_month: 12,
      exp_year: 2030,
      updated_at: 5,
    };
    await store.putCard(card);
    await other.putCard({ ...card, payment_method: 'pm_2', last4: '1111', updated_at: 6 });
    expect(await store.card('acct')).toEqual({
      ...card,
      payment_method: 'pm_2',
      last4: '1111',
      updated_at: 6,
    });
    await store.addSession('cs_1', 'acct', 'topup', 20_000_000, 10);
    await store.addSession('cs_2', 'acct', 'card', null, 20);
    await other.finishSession('cs_1', 'complete', 30);
    await store.finishSession('cs_1', 'failed', 40); // finished already: stays complete
    expect(await store.session('cs_1')).toEqual({
      id: 'cs_1',
      account_id: 'acct',
      purpose: 'topup',
      amount_micros: 20_000_000,
      status: 'complete',
      created_at: 10,
      finished_at: 30,
    });
    expect((await other.sessions('acct', 10)).map((s) => s.id)).toEqual(['cs_2', 'cs_1']);
    expect(await other.sessions('acct', 1)).toHaveLength(1);
  });

  it('[billing:settle-actual-usage] a settlement charge is fixed at its first attempt, whoever retries', async () => {
    const first = {
      movement_id: 'mv_1',
      account_id: 'acct',
      customer_id: 'cus',
      payment_method: 'pm_1',
      card_label: 'visa card ending 4242',
      amount_cents: 1234,
      created_at: 100,
    };
    expect(await store.fixSettlementCharge(first)).toEqual({ ...first, attempts: 0 });
    expect(await other.fixSettlementCharge({ ...first, amount_cents: 9999, created_at: 200 })).toEqual({
      ...first,
      attempts: 0,
    });
    await Promise.all([store.countAttempt('mv_1'), other.countAttempt('mv_1')]);
    expect((await store.settlementCharge('mv_1'))?.attempts).toBe(2);
    await store.addPayment('pi_1', 'acct', 'settlement', 1);
    await other.addPayment('pi_1', 'someone-else', 'topup', 2);
    expect(await other.paymentAccount('pi_1')).toBe('acct');
    expect(await other.paymentAccount('pi_2')).toBeUndefined();
  });

  it('[billing:settle-actual-usage] state is set, and swapped by one replica only', async () => {
    expect(await store.state('period')).toBeUndefined();
    const inits = await Promise.all([
      store.swapState('period', undefined, '1'),
      other.swapState('period', undefined, '2'),
    ]);
    expect(inits.filter(Boolean)).toHaveLength(1);
    const current = (await other.state('period')) as string;
    const swaps = await Promise.all([
      store.swapState('period', current, '3'),
      other.swapState('period', current, '4'),
    ]);
    expect(swaps.filter(Boolean)).toHaveLength(1);
    await store.setState('period', '9');
    expect(await other.state('period')).toBe('9');
  });
});
