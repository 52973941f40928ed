import type { x402ResourceServer } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements, SettleResponse } from '@x402/core/types';
import type { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/server';
import { GatewayError } from '../../errors.js';
import { centsToMicros } from '../../lib/money.js';
import type { Envelope, Failed, Outcome, RunDeps } from '../execute.js';
import { type RailPayment, withParts } from '../rails.js';
import { withOfferReceipt } from '../standard-receipts.js';
import { ensureX402Account, x402AccountId } from '../x402/accounts.js';
import { type Quote, refused, settlementUnknown } from '../x402/gate.js';
import { ERR, type VoucherDesk, type VoucherPayload } from './vouchers.js';

// One session payment (a voucher, or the deposit that opens a channel with the first voucher) paying for one call:
// the RailPayment execute drives, on the official batch-settlement scheme run by x402ResourceServer (its
// hooks do the work: the channel record is the scheme's, kept by ./channel-store.ts).
//
//   authorize = verifyPayment: the voucher's cumulative amount must be the channel's charged total plus this price;
//               its signature is checked locally (a deposit is verified by the facilitator); the channel is then
//               reserved for this request (one request at a time per channel, on every replica).
//   collect   = settlePayment, after the action succeeded: a voucher's charge is committed to the channel record
//               (no transaction; claimed later in batches), a deposit is made on chain first.
//   finish    = a reservation that collected nothing is released; a refused payment gets a corrective challenge.

export interface SessionServer {
  rs: x402ResourceServer;
  scheme: BatchSettlementEvmScheme;
  /** The fast path of plain vouchers (./vouchers.ts). */
  desk: VoucherDesk;
  /** Payer accounts known to exist (created once, never removed): no ledger read per call. */
  accounts: Set<string>;
}

type State =
  | 'reserved'
  | 'refused'
  | 'busy'
  | 'unavailable'
  | 'verified'
  | 'settled'
  | 'settle_failed'
  | 'unknown';

export class SessionGate implements RailPayment {
  private state: State = 'reserved';
  private refusal: Failed | undefined;
  readonly principal: RailPayment['principal'];
  private receipt: SettleResponse | undefined;
  /** Set when the voucher went through the fast path: its reservation on the channel. */
  private reservation: { channelId: string; pendingId: string } | undefined;

  constructor(
    private readonly run: RunDeps,
    private readonly server: SessionServer,
    private readonly quote: Quote,
    private readonly payload: PaymentPayload,
    private readonly requirements: PaymentRequirements,
    readonly payer: string,
    readonly channelId: string,
    /** `voucher` for the fast path; a deposit (or a voucher the fast path hands over) goes to the scheme. */
    private readonly type: 'deposit' | 'voucher' | 'refund',
  ) {
    this.principal = { kind: 'x402', accountId: x402AccountId(payer), payer };
  }

  private refuse(reason: string, message: string): GatewayError {
    this.refusal = refused(this.run, this.quote, { reason, message });
    return this.refusal.error;
  }

  async authorize(): Promise<{ micros: number; memo: string }> {
    if (this.type === 'voucher') {
      const r = await this.server.desk.reserve(
        this.payload.payload as unknown as VoucherPayload,
        this.requirements,
        this.run.clock.now(),
      );
      if (r.kind === 'reserved') {
        this.reservation = r;
        return this.verified();
      }
      if (r.kind === 'busy') return this.busy();
      if (r.kind === 'refused') {
        this.state = 'refused';
        throw this.refuse(r.reason, 'the session voucher was refused');
      }
    }
    let v: Awaited<ReturnType<x402ResourceServer['verifyPayment']>>;
    try {
      v = await this.server.rs.verifyPayment(this.payload, this.requirements);
    } catch (cause) {
      this.state = 'unavailable';
      this.run.log.warn({ err: cause, channel: this.channelId }, 'x402 session: verification failed');
      throw new GatewayError(
        'upstream_unavailable',
        'The session payment could not be verified right now. Nothing was charged; retry with the same payment.',
        { retryAfterSeconds: 2 },
      );
    }
    if (!v.isValid) {
      const reason = v.invalidReason ?? 'invalid_payment';
      if (reason === ERR.busy) return this.busy();
      this.state = 'refused';
      throw this.refuse(reason, v.invalidMessage ?? 'the session payment was refused');
    }
    return this.verified();
  }

  private busy(): never {
    this.state = 'busy';
    throw new GatewayError(
      'idempotency_in_flight',
      'Another call is being paid from this session channel; retry when it has finished. Nothing was charged.',
      { retryAfterSeconds: 1 },
    );
  }

  private async verified(): Promise<{ micros: number; memo: string }> {
    if (!this.server.accounts.has(this.principal.accountId)) {
      await ensureX402Account(this.run.ledger, this.payer);
      this.server.accounts.add(this.principal.accountId);
    }
    this.state = 'verified';
    return {
      micros: centsToMicros(this.quote.action.priceCents),
      memo: `x402 session payment on channel ${this.channelId} by ${this.payer} (verified; committed on success)`,
    };
  }

  async collect(_envelope: Envelope): Promise<Record<string, unknown>> {
    let s: SettleResponse;
    if (this.reservation) {
      const c = await this.server.desk.commit(
        this.payload.payload as unknown as VoucherPayload,
        this.requirements,
        this.reservation,
        this.run.clock.now(),
      );
      if (c.kind === 'refused') {
        this.state = 'settle_failed';
        throw this.refuse(c.reason, 'the session payment could not be committed, so the result is withheld');
      }
      s = c.response;
    } else {
      try {
        s = await this.server.rs.settlePayment(this.payload, this.requirements);
      } catch (e) {
        const reason = (e as { errorReason?: unknown }).errorReason;
        if (typeof reason === 'string') {
          this.state = 'settle_failed';
          throw this.refuse(reason, 'the session payment could not be committed, so the result is withheld');
        }
        // A deposit whose transaction may have gone out: its escrow is the payer's (refundable), not ours.
        this.state = 'unknown';
        this.run.log.error({ err: e, channel: this.channelId }, 'x402 session: settlement outcome unknown');
        throw settlementUnknown(undefined);
      }
    }
    this.receipt = s;
    if (!s.success) {
      this.state = 'settle_failed';
      throw this.refuse(s.errorReason ?? 'settlement_failed', 'the session payment could not be committed');
    }
    this.state = 'settled';
    return this.meta(s);
  }

  private meta(s: SettleResponse): Record<string, unknown> {
    const channel = (s.extra?.channelState ?? {}) as { chargedCumulativeAmount?: string };
    return {
      x402: {
        payer: this.payer,
        network: this.requirements.network,
        asset: this.requirements.asset,
        amount: this.requirements.amount,
        transaction: s.transaction,
        scheme: 'batch-settlement',
        channel: this.channelId,
        charged_cumulative: channel.chargedCumulativeAmount,
      },
    };
  }

  /** After execute: release what was not collected; a refusal carries the (corrective) challenge. */
  async finish(outcome: Outcome): Promise<Outcome> {
    if (this.state === 'verified' || this.state === 'settle_failed') {
      // Only this request's reservation, never a newer one.
      if (this.reservation) await this.server.desk.release(this.reservation);
      else await this.server.scheme.clearPendingRequest(this.payload);
    }
    if (this.state === 'settled' && this.receipt) {
      // The x402 offer-and-receipt extension's signed receipt (../standard-receipts.ts).
      const paymentResponse = withOfferReceipt(this.run, this.receipt, this.quote.resource.url);
      return withParts(outcome, { paymentResponse });
    }
    if (!this.refusal || (this.state !== 'refused' && this.state !== 'settle_failed')) return outcome;
    return withParts(withParts(outcome, this.refusal.parts), {
      paymentRequired: await this.correctiveChallenge(),
    });
  }

  /**
   * The challenge again, with the channel's state when the payer's cumulative amount was not the gateway's (the
   * scheme's corrective 402: the payer checks the last voucher it signed and resynchronizes).
   */
  private async correctiveChallenge() {
    const reason = this.refusal?.error.details?.reason;
    const base = this.quote.challenge(String(reason ?? 'invalid_payment'));
    // Copies: the enrichment writes into the accepts, which are the cached requirements of every challenge.
    const pr = { ...base, accepts: base.accepts.map((a) => ({ ...a, extra: { ...a.extra } })) };
    if (reason === ERR.mismatch) {
      await this.server.scheme.enrichPaymentRequiredResponse({
        error: reason,
        paymentPayload: this.payload,
        requirements: pr.accepts,
      } as never);
    }
    return pr;
  }
}
