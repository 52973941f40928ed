import { x402ResourceServer } from '@x402/core/server';
import type { Network, PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/server';
import type { Logger } from 'pino';
import { getAddress } from 'viem';
import type { Action } from '../../../catalog/index.js';
import type { StateDb } from '../../backend.js';
import type { X402SessionConfig } from '../../config/index.js';
import { exclusively } from '../../db/open.js';
import type { Clock } from '../../lib/clock.js';
import { centsToMicros } from '../../lib/money.js';
import type { Outcome, RunDeps } from '../execute.js';
import { withParts } from '../rails.js';
import type { BuiltinFacilitatorCore } from '../x402/facilitator-builtin.js';
import { type Quote, refused, type X402Deps } from '../x402/gate.js';
import { sameAddress } from '../x402/local-check.js';
import { type SessionScheme, x402Terms } from '../x402/rail.js';
import { offerFor } from '../x402/requirements.js';
import { openChannelStore } from './channel-store.js';
import { SessionGate, type SessionServer } from './gate.js';
import { decodeSessionPayment } from './payload.js';
import { voucherDesk } from './vouchers.js';

// x402 sessions, offered by the x402 rail (../x402/rail.ts): the `batch-settlement` scheme of @x402/evm. A payer deposits once
// into an on-chain channel (with its first call) and pays every call with a signed cumulative voucher, checked
// locally; the gateway claims the vouchers on chain in batches and sweeps the claimed funds to its pay-to address
// (claimAndSettle, on a timer, one replica at a time). Offered beside `exact` in the same x402 challenge; loaded by
// main.ts only when TOLLGATE_X402_SESSIONS=on. The official code does the protocol: the server scheme (driven by
// x402ResourceServer) and, with the built-in facilitator, the facilitator scheme, which also signs claims as the
// channels' receiver authorizer.

export interface SessionRailDeps {
  config: X402SessionConfig;
  x402: X402Deps;
  state: StateDb;
  clock: Clock;
  log: Logger;
}

/** An arbitrary constant: the advisory lock that lets one replica at a time claim and settle. */
const CLAIM_LOCK = 0x7011_5e55;

export async function createSessionRail(d: SessionRailDeps): Promise<SessionScheme> {
  const cfg = d.x402.config;
  const network = cfg.network as Network;
  const store = openChannelStore(d.state, d.clock);
  const recovered = await store.recover(true);
  if (recovered > 0)
    d.log.warn({ recovered }, 'x402 sessions: released reservations left by a previous process');
  const f = d.x402.facilitator;
  const core = (f as { core?: BuiltinFacilitatorCore }).core;
  if (core) {
    // The built-in facilitator learns the scheme (a remote facilitator must support it itself).
    const { BatchSettlementEvmScheme: Facilitator } = await import('@x402/evm/batch-settlement/facilitator');
    core.facilitator.register(network, new Facilitator(core.signer, core.account));
  }
  const scheme = new BatchSettlementEvmScheme(cfg.payTo, {
    storage: store,
    withdrawDelay: d.config.withdrawDelaySeconds,
  });
  const rs = new x402ResourceServer(f.client).register(network, scheme);
  const server: SessionServer = {
    rs,
    scheme,
    desk: voucherDesk(store, { chainId: cfg.chainId, onchainStateTtlMs: scheme.getOnchainStateTtlMs() }),
    accounts: new Set(),
  };
  const manager = scheme.createChannelManager(f.client, network, cfg.asset);

  // Who authorizes claims and refunds: the facilitator's receiver authorizer, from its /supported (asked until known).
  let authorizer: `0x${string}` | undefined;
  let asked = 0;
  const learn = async () => {
    asked = d.clock.now();
    try {
      const kind = (await f.client.getSupported()).kinds.find(
        (k) => k.x402Version === 2 && k.scheme === 'batch-settlement' && k.network === network,
      );
      const a = kind?.extra?.receiverAuthorizer;
      if (typeof a === 'string') authorizer = getAddress(a);
      else d.log.warn('x402 sessions: the facilitator does not offer batch-settlement on this network');
      await rs.initialize();
    } catch (err) {
      d.log.warn({ err }, 'x402 sessions: the facilitator could not be asked for batch-settlement');
    }
  };
  await learn();

  const cache = new Map<string, PaymentRequirements>();
  const requirements = (action: Action): PaymentRequirements | undefined => {
    if (action.access !== 'paid') return undefined;
    if (!authorizer) {
      if (d.clock.now() - asked > 30_000) void learn();
      return undefined;
    }
    let r = cache.get(action.id);
    if (!r) {
      r = {
        scheme: 'batch-settlement',
        network,
        amount: String(centsToMicros(action.priceCents)),
        asset: cfg.asset,
        payTo: cfg.payTo,
        maxTimeoutSeconds: offerFor(cfg, action).requirements.maxTimeoutSeconds,
        extra: {
          name: cfg.assetName,
          version: cfg.assetVersion,
          receiverAuthorizer: authorizer,
          withdrawDelay: d.config.withdrawDelaySeconds,
        },
      };
      cache.set(action.id, r);
    }
    return r;
  };

  /**
   * A cooperative refund (the payer's `refund`): what is left in its channel goes back to it, after the charged
   * vouchers are claimed; no action runs and nothing is charged. The scheme and the facilitator do it on chain.
   */
  const refund = async (
    run: RunDeps,
    payload: PaymentPayload,
    req: PaymentRequirements,
    quote: Quote,
  ): Promise<Outcome> => {
    const v = await rs.verifyPayment(payload, req).catch(() => undefined);
    if (!v?.isValid) {
      return refused(run, quote, {
        reason: v?.invalidReason ?? 'refund_unavailable',
        message: 'the refund could not be verified',
      });
    }
    let s: Awaited<ReturnType<typeof rs.settlePayment>> | undefined;
    try {
      s = await rs.settlePayment(payload, req);
    } catch (err) {
      d.log.error({ err }, 'x402 sessions: refund failed');
    }
    if (!s?.success) {
      await scheme.clearPendingRequest(payload);
      return refused(run, quote, {
        reason: s?.errorReason ?? 'refund_failed',
        message: 'the refund could not be made; the channel is unchanged',
      });
    }
    const data = { refunded: s.amount, transaction: s.transaction };
    const o = { ok: true as const, data, chargedCents: 0, chargedMicros: 0, transactionId: undefined };
    return withParts({ ...o, replayed: false }, { paymentResponse: s });
  };

  let claiming: Promise<{ claimed: number; transactions: string[] }> | undefined;
  const claimAndSettle = () => {
    // One replica at a time; another that is claiming already makes this round a no-op.
    const claimedNow = async () => {
      const claims = await manager.claim();
      const transactions = claims.map((c) => c.transaction);
      try {
        // Always: a sweep that a dead replica did not get to is done by the next run.
        transactions.push((await manager.settle()).transaction);
      } catch (err) {
        if (!/nothing_to_settle/.test(String(err))) throw err;
      }
      const claimed = claims.reduce((n, c) => n + c.vouchers, 0);
      if (claimed > 0) d.log.info({ claimed, transactions }, 'x402 sessions: vouchers claimed and settled');
      return { claimed, transactions };
    };
    claiming ??= exclusively(d.state.stores, CLAIM_LOCK, claimedNow)
      .then((r) => r ?? { claimed: 0, transactions: [] })
      .finally(() => {
        claiming = undefined;
      });
    return claiming;
  };
  const timer = setInterval(() => {
    // A dead replica's reservations are released once its lease expired (PostgreSQL); then the batch is claimed.
    void store
      .recover(false)
      .then(() => claimAndSettle())
      .catch((err) => d.log.error({ err }, 'x402 sessions: claim and settle failed'));
  }, d.config.claimIntervalMs);
  timer.unref();

  return {
    requirements,
    accepts: (payment) => decodeSessionPayment(payment) !== undefined,
    async open(run, quote, payment) {
      const decoded = decodeSessionPayment(payment);
      const wanted = requirements(quote.action);
      if (!decoded || !wanted) {
        return refused(run, quote, {
          reason: 'invalid_payload',
          message: 'sessions are not available right now',
        });
      }
      const a = decoded.payload.accepted;
      if (a.network !== wanted.network || a.amount !== wanted.amount || !sameAddress(a.asset, wanted.asset)) {
        return refused(run, quote, {
          reason: 'invalid_payload',
          message: `the session payment does not accept this action's terms (${wanted.amount} of ${wanted.asset})`,
        });
      }
      if (decoded.type === 'refund')
        return refund(run, { ...decoded.payload } as PaymentPayload, wanted, quote);
      // The voucher's cumulative amount is the call's idempotency.
      return new SessionGate(
        run,
        server,
        quote,
        // A copy per call: the scheme keys its per-request state by the payload object, and one header decodes to
        // one (memoized) object however many calls present it at once.
        { ...decoded.payload } as PaymentPayload,
        wanted,
        getAddress(decoded.payer),
        decoded.channelId,
        decoded.type,
      );
    },
    terms(action) {
      const r = requirements(action);
      if (!r) return undefined;
      const own = { receiver_authorizer: authorizer, withdraw_delay_seconds: d.config.withdrawDelaySeconds };
      return x402Terms(r, own);
    },
    claimAndSettle,
    async close() {
      clearInterval(timer);
      await claiming?.catch(() => {});
    },
  };
}
