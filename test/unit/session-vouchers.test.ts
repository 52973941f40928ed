import type { PaymentRequirements } from '@x402/core/types';
import { computeChannelId, signVoucher } from '@x402/evm/batch-settlement/client';
import type { Channel } from '@x402/evm/batch-settlement/server';
import { afterEach, describe, expect, it } from 'vitest';
import { openChannelStore } from '../../src/run/sessions/channel-store.js';
import { ERR, type VoucherPayload, voucherDesk } from '../../src/run/sessions/vouchers.js';
import { BACKENDS, type OpenedState } from '../helpers/backends.js';
import { newPayer } from '../helpers/x402.js';

// The session fast path holds vouchers to the scheme's rules: the signer is the channel's payer authorizer, the
// config hashes to the channel id and names our terms, the cumulative amount is the charged total plus the price,
// one reservation at a time, and a commit only for the reservation it made.

const NETWORK = 'eip155:8453';
const payer = newPayer();
const stranger = newPayer();
const req: PaymentRequirements = {
  scheme: 'batch-settlement',
  network: NETWORK,
  amount: '10000',
  asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
  payTo: '0x2222222222222222222222222222222222222222',
  maxTimeoutSeconds: 300,
  extra: { receiverAuthorizer: '0x3333333333333333333333333333333333333333', withdrawDelay: 86_400 },
};
const config = {
  payer: payer.address,
  payerAuthorizer: payer.address,
  receiver: req.payTo as `0x${string}`,
  receiverAuthorizer: '0x3333333333333333333333333333333333333333' as const,
  token: req.asset as `0x${string}`,
  withdrawDelay: 86_400,
  salt: `0x${'00'.repeat(32)}` as `0x${string}`,
};
const channelId = computeChannelId(config, NETWORK).toLowerCase();
const NOW = 1_000_000;

const [sqlite] = BACKENDS;
const opened: OpenedState[] = [];
afterEach(async () => {
  for (const o of opened.splice(0)) await o.close();
});

async function setup() {
  const state = await (sqlite as (typeof BACKENDS)[number]).open();
  opened.push(state);
  const store = openChannelStore(state.db, { now: () => NOW });
  const desk = voucherDesk(store, { chainId: 8453, onchainStateTtlMs: 300_000 });
  const seed: Channel = {
    channelId,
    channelConfig: config,
    chargedCumulativeAmount: '10000',
    signedMaxClaimable: '10000',
    signature: '0x',
    balance: '100000',
    totalClaimed: '0',
    withdrawRequestedAt: 0,
    refundNonce: 0,
    onchainSyncedAt: NOW,
    lastRequestTimestamp: NOW,
  };
  return { store, desk, seed };
}

async function voucher(max: string, signer = payer, cfg = config): Promise<VoucherPayload> {
  const v = await signVoucher(signer, computeChannelId(cfg, NETWORK), max, NETWORK);
  return { channelConfig: cfg, voucher: v };
}

describe('x402 session vouchers (fast path)', () => {
  it('[x402:session-pays] a good voucher is reserved, committed once, and its reservation holds the channel', async () => {
    const { store, desk, seed } = await setup();
    await store.updateChannel(channelId, () => seed);
    const v = await voucher('20000');
    const r = await desk.reserve(v, req, NOW);
    expect(r.kind).toBe('reserved');
    // A second request on the channel waits for the first.
    expect((await desk.reserve(await voucher('20000'), req, NOW)).kind).toBe('busy');
    const c = await desk.commit(v, req, r as { channelId: string; pendingId: string }, NOW);
    expect(c).toMatchObject({
      kind: 'committed',
      response: { success: true, transaction: '', extra: { chargedAmount: '10000' } },
    });
    expect((await store.get(channelId))?.chargedCumulativeAmount).toBe('20000');
    // The same voucher again: its amount is no longer the next one.
    expect(await desk.reserve(v, req, NOW)).toEqual({ kind: 'refused', reason: ERR.mismatch });
    // A commit for a reservation that is gone commits nothing.
    expect((await desk.commit(v, req, r as { channelId: string; pendingId: string }, NOW)).kind).toBe(
      'refused',
    );
    expect((await store.get(channelId))?.chargedCumulativeAmount).toBe('20000');
  });

  it('[x402:session-replay-pays-once] forged, foreign, overdrawn or stale vouchers are refused or handed to the scheme', async () => {
    const { store, desk, seed } = await setup();
    await store.updateChannel(channelId, () => seed);
    // Signed by someone else than the channel's payer authorizer.
    expect(await desk.reserve(await voucher('20000', stranger), req, NOW)).toEqual({
      kind: 'refused',
      reason: ERR.signature,
    });
    // A voucher whose config is not the channel's.
    const v = await voucher('20000');
    expect(
      await desk.reserve({ ...v, voucher: { ...v.voucher, channelId: `0x${'cd'.repeat(32)}` } }, req, NOW),
    ).toEqual({ kind: 'refused', reason: ERR.channelId });
    // A channel paying another receiver.
    const elsewhere = { ...config, receiver: '0x4444444444444444444444444444444444444444' as const };
    expect(await desk.reserve(await voucher('20000', payer, elsewhere), req, NOW)).toEqual({
      kind: 'refused',
      reason: ERR.receiver,
    });
    // More than the channel holds.
    await store.updateChannel(channelId, (c) => c && { ...c, chargedCumulativeAmount: '100000' });
    expect(await desk.reserve(await voucher('110000'), req, NOW)).toEqual({
      kind: 'refused',
      reason: ERR.exceeds,
    });
    // On-chain state older than the scheme trusts: the scheme (with the facilitator) decides.
    expect((await desk.reserve(await voucher('110000'), req, NOW + 400_000)).kind).toBe('scheme');
  });
});
