import type { PaymentRequirements, SettleResponse } from '@x402/core/types';
import { BATCH_SETTLEMENT_ADDRESS, BATCH_SETTLEMENT_DOMAIN } from '@x402/evm';
import type { Channel, ChannelStorage } from '@x402/evm/batch-settlement/server';
import { recover } from 'tiny-secp256k1';
import {
  concat,
  domainSeparator,
  encodeAbiParameters,
  getAddress,
  hashTypedData,
  hexToBytes,
  keccak256,
  toHex,
} from 'viem';
import { sameAddress } from '../x402/local-check.js';

// The hot path of a session: a plain voucher on a channel whose on-chain state is fresh, checked and committed
// here with exactly the batch-settlement scheme's rules (@x402/evm's server hooks: cumulative amount = charged +
// price, the config's binding to the channel id and to our terms, the payer authorizer's EIP-712 signature,
// within the balance and above what was claimed; one reservation at a time; commit on success), on the same
// channel records, so the scheme's own code (deposits, refunds, stale state, corrective 402s, claims) carries on
// from them. What differs is only the cost: the signature is recovered by libsecp256k1 (WebAssembly,
// tiny-secp256k1) instead of JavaScript big integers (~0.3 ms instead of ~2 ms of CPU here), a channel's id and
// the check of its config against our terms are computed once per config, and reserving checks and writes in one
// transaction. Anything else (a deposit, a smart-wallet payer, state not fresh) goes to the scheme.

export const ERR = {
  mismatch: 'invalid_batch_settlement_evm_cumulative_amount_mismatch',
  busy: 'invalid_batch_settlement_evm_channel_busy',
  channelId: 'invalid_batch_settlement_evm_channel_id_mismatch',
  signature: 'invalid_batch_settlement_evm_voucher_signature',
  exceeds: 'invalid_batch_settlement_evm_cumulative_exceeds_balance',
  belowClaimed: 'invalid_batch_settlement_evm_cumulative_below_claimed',
  receiver: 'invalid_batch_settlement_evm_receiver_mismatch',
  authorizer: 'invalid_batch_settlement_evm_receiver_authorizer_mismatch',
  token: 'invalid_batch_settlement_evm_token_mismatch',
  withdrawDelay: 'invalid_batch_settlement_evm_withdraw_delay_mismatch',
  missing: 'invalid_batch_settlement_evm_missing_channel',
  capExceeded: 'invalid_batch_settlement_evm_charge_exceeds_signed_cumulative',
} as const;

const ZERO = '0x0000000000000000000000000000000000000000';
const VOUCHER_TYPEHASH = keccak256(toHex('Voucher(bytes32 channelId,uint128 maxClaimableAmount)'));
/** The scheme's bounds on a request's reservation (its maxTimeoutSeconds, within 5 s and 10 min). */
const PENDING_MIN_MS = 5_000;
const PENDING_MAX_MS = 600_000;

export interface VoucherPayload {
  channelConfig: Channel['channelConfig'];
  voucher: { channelId: string; maxClaimableAmount: string; signature: `0x${string}` };
}

export type Reservation =
  | { kind: 'reserved'; channelId: string; pendingId: string }
  | { kind: 'refused'; reason: string }
  | { kind: 'busy' }
  /** Not for the fast path: the scheme verifies it (with the facilitator when it must). */
  | { kind: 'scheme' };

export type Commit = { kind: 'committed'; response: SettleResponse } | { kind: 'refused'; reason: string };

export interface VoucherDesk {
  reserve(v: VoucherPayload, req: PaymentRequirements, now: number): Promise<Reservation>;
  commit(
    v: VoucherPayload,
    req: PaymentRequirements,
    r: { channelId: string; pendingId: string },
    now: number,
  ): Promise<Commit>;
  release(r: { channelId: string; pendingId: string }): Promise<void>;
}

/** At most this many channel configs are remembered (id and terms check); then the memory starts over. */
const CACHE = 10_000;

export function voucherDesk(
  storage: ChannelStorage,
  opts: { chainId: number; onchainStateTtlMs: number },
): VoucherDesk {
  const domain = {
    ...BATCH_SETTLEMENT_DOMAIN,
    chainId: opts.chainId,
    verifyingContract: getAddress(BATCH_SETTLEMENT_ADDRESS),
  };
  const separator = domainSeparator({ domain });
  const ids = new Map<string, string>();
  const channelIdOf = (c: VoucherPayload['channelConfig']): string => {
    const key = JSON.stringify(c);
    let id = ids.get(key);
    if (!id) {
      if (ids.size > CACHE) ids.clear();
      id = hashTypedData({
        domain,
        types: {
          ChannelConfig: [
            { name: 'payer', type: 'address' },
            { name: 'payerAuthorizer', type: 'address' },
            { name: 'receiver', type: 'address' },
            { name: 'receiverAuthorizer', type: 'address' },
            { name: 'token', type: 'address' },
            { name: 'withdrawDelay', type: 'uint40' },
            { name: 'salt', type: 'bytes32' },
          ],
        },
        primaryType: 'ChannelConfig',
        message: c,
      }).toLowerCase();
      ids.set(key, id);
    }
    return id;
  };
  const signerOf = (channelId: string, max: bigint, signature: `0x${string}`): string | undefined => {
    const digest = keccak256(
      concat([
        '0x1901',
        separator,
        keccak256(
          encodeAbiParameters(
            [{ type: 'bytes32' }, { type: 'bytes32' }, { type: 'uint128' }],
            [VOUCHER_TYPEHASH, channelId as `0x${string}`, max],
          ),
        ),
      ]),
      'bytes',
    );
    const sig = hexToBytes(signature);
    if (sig.length !== 65) return undefined;
    const v = sig[64] as number;
    const recId = v >= 27 ? v - 27 : v;
    if (recId !== 0 && recId !== 1) return undefined;
    try {
      const pub = recover(digest, sig.subarray(0, 64), recId, false);
      return pub ? `0x${keccak256(pub.subarray(1)).slice(-40)}` : undefined;
    } catch {
      return undefined;
    }
  };
  /** The scheme's validateChannelConfig, less the id (checked apart): receiver, authorizer, token, delay. */
  const termsError = (c: VoucherPayload['channelConfig'], req: PaymentRequirements): string | undefined => {
    const extra = req.extra as { receiverAuthorizer?: string; withdrawDelay?: number };
    if (!sameAddress(c.receiver, req.payTo)) return ERR.receiver;
    if (!extra.receiverAuthorizer || !sameAddress(c.receiverAuthorizer, extra.receiverAuthorizer))
      return ERR.authorizer;
    if (!sameAddress(c.token, req.asset)) return ERR.token;
    if (extra.withdrawDelay !== undefined && c.withdrawDelay !== Number(extra.withdrawDelay))
      return ERR.withdrawDelay;
    return undefined;
  };

  return {
    async reserve(v, req, now) {
      const c = v.channelConfig;
      // A smart-wallet payer (no authorizer EOA) needs an RPC check: the scheme does it.
      if (c.payerAuthorizer.toLowerCase() === ZERO) return { kind: 'scheme' };
      const channelId = channelIdOf(c);
      if (channelId !== v.voucher.channelId.toLowerCase()) return { kind: 'refused', reason: ERR.channelId };
      const terms = termsError(c, req);
      if (terms) return { kind: 'refused', reason: terms };
      const max = BigInt(v.voucher.maxClaimableAmount);
      if (signerOf(channelId, max, v.voucher.signature) !== c.payerAuthorizer.toLowerCase()) {
        return { kind: 'refused', reason: ERR.signature };
      }
      const pendingId = toHex(crypto.getRandomValues(new Uint8Array(16)));
      const ttl = Math.min(PENDING_MAX_MS, Math.max(PENDING_MIN_MS, req.maxTimeoutSeconds * 1000));
      let out: Reservation = { kind: 'scheme' };
      await storage.updateChannel(channelId, (cur) => {
        // Unknown here, or its mirrored on-chain state too old to trust: the scheme asks the facilitator.
        if (!cur || cur.onchainSyncedAt === undefined || now - cur.onchainSyncedAt > opts.onchainStateTtlMs)
          return cur;
        if (cur.pendingRequest && cur.pendingRequest.expiresAt > now) {
          out = { kind: 'busy' };
          return cur;
        }
        const refusal =
          max !== BigInt(cur.chargedCumulativeAmount) + BigInt(req.amount)
            ? ERR.mismatch
            : max > BigInt(cur.balance)
              ? ERR.exceeds
              : max <= BigInt(cur.totalClaimed)
                ? ERR.belowClaimed
                : undefined;
        if (refusal) {
          out = { kind: 'refused', reason: refusal };
          return cur;
        }
        out = { kind: 'reserved', channelId, pendingId };
        return {
          ...cur,
          signedMaxClaimable: v.voucher.maxClaimableAmount,
          signature: v.voucher.signature,
          lastRequestTimestamp: now,
          pendingRequest: {
            pendingId,
            signedMaxClaimable: v.voucher.maxClaimableAmount,
            expiresAt: now + ttl,
          },
        };
      });
      return out;
    },

    async commit(v, req, r, now) {
      let previous: Channel | undefined;
      let reason: string | undefined;
      const updated = await storage.updateChannel(r.channelId, (cur) => {
        if (!cur) {
          reason = ERR.missing;
          return cur;
        }
        if (cur.pendingRequest?.pendingId !== r.pendingId) {
          reason = ERR.busy;
          return cur;
        }
        const charged = BigInt(cur.chargedCumulativeAmount) + BigInt(req.amount);
        if (charged > BigInt(v.voucher.maxClaimableAmount)) {
          reason = ERR.capExceeded;
          return { ...cur, pendingRequest: undefined };
        }
        previous = cur;
        return {
          ...cur,
          chargedCumulativeAmount: charged.toString(),
          signedMaxClaimable: v.voucher.maxClaimableAmount,
          signature: v.voucher.signature,
          lastRequestTimestamp: now,
          pendingRequest: undefined,
        };
      });
      const p = previous;
      if (reason || !p || !updated.channel) return { kind: 'refused', reason: reason ?? ERR.busy };
      // The scheme's voucher settle response: no transaction, the charge and the channel's state.
      return {
        kind: 'committed',
        response: {
          success: true,
          payer: p.channelConfig.payer.toLowerCase(),
          transaction: '',
          network: req.network,
          amount: '',
          extra: {
            channelState: {
              channelId: p.channelId,
              balance: p.balance,
              totalClaimed: p.totalClaimed,
              withdrawRequestedAt: p.withdrawRequestedAt,
              refundNonce: String(p.refundNonce),
              chargedCumulativeAmount: updated.channel.chargedCumulativeAmount,
            },
            chargedAmount: req.amount,
          },
        } as SettleResponse,
      };
    },

    async release(r) {
      await storage.updateChannel(r.channelId, (cur) =>
        cur?.pendingRequest?.pendingId === r.pendingId ? { ...cur, pendingRequest: undefined } : cur,
      );
    },
  };
}
