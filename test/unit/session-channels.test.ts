import type { Channel } from '@x402/evm/batch-settlement/server';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openChannelStore, type SessionChannelStore } from '../../src/run/sessions/channel-store.js';
import { BACKENDS, type OpenedState } from '../helpers/backends.js';

// The x402 session channel store on both backends: the scheme's atomic read-modify-write (one writer at a time
// per channel, on every replica), and the release of reservations a dead process left behind.

const ID = `0x${'ab'.repeat(32)}`;
let now = 1_000_000;
const clock = { now: () => now };

function channel(charged: number, pending?: string): Channel {
  return {
    channelId: ID,
    channelConfig: {
      payer: `0x${'11'.repeat(20)}`,
      payerAuthorizer: `0x${'11'.repeat(20)}`,
      receiver: `0x${'22'.repeat(20)}`,
      receiverAuthorizer: `0x${'33'.repeat(20)}`,
      token: `0x${'44'.repeat(20)}`,
      withdrawDelay: 86_400,
      salt: `0x${'00'.repeat(32)}`,
    },
    chargedCumulativeAmount: String(charged),
    signedMaxClaimable: String(charged),
    signature: '0x',
    balance: '1000000',
    totalClaimed: '0',
    withdrawRequestedAt: 0,
    refundNonce: 0,
    lastRequestTimestamp: now,
    ...(pending
      ? { pendingRequest: { pendingId: pending, signedMaxClaimable: '0', expiresAt: now + 300_000 } }
      : {}),
  };
}

describe.each(BACKENDS)('x402 session channels ($name)', (backend) => {
  let a: OpenedState;
  let b: OpenedState;
  let store: SessionChannelStore;
  let other: SessionChannelStore;
  beforeEach(async () => {
    a = await backend.open({ replicaId: 'r_a' });
    b = await backend.share(a, { replicaId: 'r_b' });
    store = openChannelStore(a.db, clock);
    other = openChannelStore(b.db, clock);
  });
  afterEach(async () => {
    await b.close();
    await a.close();
  });

  it('[x402:session-survives-restart] created, updated, left unchanged and deleted as the callback says', async () => {
    expect(await store.get(ID)).toBeUndefined();
    const created = await store.updateChannel(ID, () => channel(10));
    expect(created.status).toBe('updated');
    // Another handle on the same state (another replica, or the process after a restart) reads it.
    expect(await other.get(ID.toUpperCase().replace('0X', '0x'))).toMatchObject({
      chargedCumulativeAmount: '10',
    });
    expect((await store.updateChannel(ID, (c) => c)).status).toBe('unchanged');
    expect((await other.updateChannel(ID, (c) => c && { ...c, chargedCumulativeAmount: '20' })).status).toBe(
      'updated',
    );
    expect((await store.list()).map((c) => c.chargedCumulativeAmount)).toEqual(['20']);
    expect((await store.updateChannel(ID, () => undefined)).status).toBe('deleted');
    expect(await other.get(ID)).toBeUndefined();
  });

  it('[x402:session-race-pays-once] concurrent read-modify-writes on two handles never lose an update', async () => {
    await store.updateChannel(ID, () => channel(0));
    const bump = (s: SessionChannelStore) =>
      s.updateChannel(
        ID,
        (c) => c && { ...c, chargedCumulativeAmount: String(Number(c.chargedCumulativeAmount) + 1) },
      );
    await Promise.all(Array.from({ length: 20 }, (_, i) => bump(i % 2 ? store : other)));
    expect((await store.get(ID))?.chargedCumulativeAmount).toBe('20');
    // One reservation at a time: of two concurrent reservers, one sees the other's.
    const outcomes: string[] = [];
    const reserve = (s: SessionChannelStore, id: string) =>
      s.updateChannel(ID, (c) => {
        if (c?.pendingRequest) {
          outcomes.push('busy');
          return c;
        }
        outcomes.push('reserved');
        return (
          c && { ...c, pendingRequest: { pendingId: id, signedMaxClaimable: '21', expiresAt: now + 1000 } }
        );
      });
    await Promise.all([reserve(store, 'p1'), reserve(other, 'p2')]);
    expect(outcomes.sort()).toEqual(['busy', 'reserved']);
  });

  it('[x402:session-survives-replica-death] a reservation left by a dead process is released, a live one kept', async () => {
    await store.updateChannel(ID, () => channel(5, 'left-behind'));
    if (backend.name === 'sqlite') {
      // One process owns the file: at start, whatever is reserved was left by the previous process.
      expect(await store.recover(true)).toBe(1);
      expect((await store.get(ID))?.pendingRequest).toBeUndefined();
      return;
    }
    const pool = a.db.kind === 'postgres' ? a.db.pool : undefined;
    await pool?.query('INSERT INTO replicas (id, started_at, lease_expires_at) VALUES ($1, 0, $2)', [
      'r_a',
      now + 30_000,
    ]);
    // r_a is alive: r_b leaves its reservation alone.
    expect(await other.recover(false)).toBe(0);
    expect((await other.get(ID))?.pendingRequest?.pendingId).toBe('left-behind');
    // r_a's lease runs out: r_b releases it; the charged total stays.
    now += 60_000;
    expect(await other.recover(false)).toBe(1);
    const after = await other.get(ID);
    expect(after?.pendingRequest).toBeUndefined();
    expect(after?.chargedCumulativeAmount).toBe('5');
  });
});
