import type { SettleResponse } from '@x402/core/types';
import { getAddress } from 'viem';
import { GatewayError } from '../../errors.js';
import { fingerprint } from '../../lib/hash.js';
import { type Outcome, type RunDeps, replayed } from '../execute.js';
import type { RailCall, RailPayment } from '../rails.js';
import { withParts } from '../rails.js';
import { x402AccountId } from './accounts.js';
import { decodePayment } from './codec.js';
import { paymentIdOf } from './discovery.js';
import {
  type Quote,
  receiptMeta,
  refused,
  settlementUnknown,
  settlePayment,
  type X402Deps,
  X402Gate,
} from './gate.js';
import { deliverLate, presentedAgain } from './known-payment.js';
import { checkPayment, checkWindow, paymentKey, type Refusal } from './local-check.js';
import { earlierPaymentNamed } from './payment-id.js';
import type { PaymentRow } from './payment-store.js';

// An x402 `exact` payment presented with a call (./rail.ts): decode → local checks → reserve the nonce (atomic),
// then execute drives the X402Gate (verify → hold → run → settle → capture); or a payment presented again (replay,
// resume, refuse). Its own module, loaded by ./rail.ts on the first x402 payment, because it needs viem and the
// x402 libraries: a gateway that takes no x402 payment never loads them.

export async function openExact(
  run: RunDeps,
  x402: X402Deps,
  quote: Quote,
  call: RailCall,
): Promise<RailPayment | Outcome> {
  const { action, offer } = quote;
  const decoded = decodePayment(call.payment);
  if (!decoded.ok) return refused(run, quote, { reason: 'invalid_payload', message: decoded.message });
  const payment = decoded.payment;
  const bad = await checkPayment(payment, offer.requirements, x402.config.chainId);
  if (bad) return refused(run, quote, bad);

  const key = paymentKey(payment, offer.requirements);
  const fp = fingerprint({ action: action.id, body: call.body });
  const named = paymentIdOf(payment.wire.extensions);
  if (!named.ok) return refused(run, quote, { reason: 'invalid_payload', message: named.message });
  const payer = getAddress(payment.authorization.from);
  if (named.id !== undefined) {
    const earlier = await earlierPaymentNamed(x402, quote, payment, payer, named.id, key);
    if (earlier.kind === 'refused') return refused(run, quote, earlier.refusal);
    if (earlier.kind === 'row') return again(run, x402, quote, earlier.row, fp, 'payment_id');
  }
  const existing = await x402.payments.get(key);
  if (existing && existing.status !== 'released') return again(run, x402, quote, existing, fp);
  // The window is checked only for a first presentation: a known payment is replayed or resumed even after
  // it expired, because its money may already have moved.
  const late = checkWindow(payment, offer, run.clock.now());
  if (late) return refused(run, quote, late);
  const claim = await x402.payments.reserve({
    key,
    payer,
    action: action.id,
    fingerprint: fp,
    payload: payment.wire,
    requirements: offer.requirements,
    expiresAt: Number(payment.authorization.validBefore) * 1000,
    paymentId: named.id,
  });
  if (claim.kind === 'taken') {
    return again(run, x402, quote, claim.row, fp, claim.row.key === key ? 'nonce' : 'payment_id');
  }
  return new X402Gate(run, x402, quote, key, payment);
}

const ALREADY_USED: Refusal = {
  reason: 'payment_already_used',
  message: 'this signed payment already paid for a different call; sign a new one',
};

/** A payment we have seen before (by its nonce, or by its payment-identifier id): replay, resume or refuse. */
function again(
  run: RunDeps,
  x402: X402Deps,
  quote: Quote,
  row: PaymentRow,
  fp: string,
  via: 'nonce' | 'payment_id' = 'nonce',
): Outcome | Promise<RailPayment | Outcome> {
  const r = row.receipt;
  return presentedAgain(row, fp, {
    what: 'payment',
    mismatch: () =>
      via === 'nonce'
        ? refused(run, quote, ALREADY_USED)
        : {
            ok: false,
            error: new GatewayError(
              'idempotency_mismatch',
              'This payment-identifier id already paid for a different action or body; use a new id for a new ' +
                'call. Nothing was charged.',
            ),
          },
    // Settled before an action that then failed: the money is on the payer's account as a refund owed.
    failed: () =>
      r?.success
        ? refused(run, quote, ALREADY_USED, r)
        : settleFailed(run, quote, r, 'this payment could not be settled; sign a new one'),
    settled: (env) => {
      const principal = { kind: 'x402' as const, accountId: x402AccountId(row.payer), payer: row.payer };
      const x402Facts = r?.success ? settlementFacts(row, r.transaction) : undefined;
      const o = replayed(run, env, { action: quote.action.id, principal, x402: x402Facts });
      return withParts(o, r && { paymentResponse: r });
    },
    resume: () => resume(run, x402, quote, row, fp),
  });
}

/** Refused for a settlement that failed: its reason, with its receipt. */
function settleFailed(run: RunDeps, quote: Quote, receipt: SettleResponse | undefined, message: string) {
  return refused(run, quote, { reason: receipt?.errorReason ?? 'settlement_failed', message }, receipt);
}

function settlementFacts(row: PaymentRow, transaction: string) {
  const { network, asset, amount } = row.requirements;
  return { network, asset, payer: row.payer, transaction, amount, scheme: 'exact' as const };
}

/** Retries a settlement whose outcome was unknown; the same authorization can move money at most once. */
async function resume(
  run: RunDeps,
  x402: X402Deps,
  quote: Quote,
  row: PaymentRow,
  fp: string,
): Promise<RailPayment | Outcome> {
  const decoded = decodePayment(row.payload);
  if (!decoded.ok) throw new Error(`stored x402 payload ${row.key} does not decode`);
  const s = await settlePayment(run, x402, {
    key: row.key,
    from: 'unknown',
    payload: row.payload,
    requirements: row.requirements,
    resourceUrl: quote.resource.url,
  });
  switch (s.kind) {
    case 'changed':
      return again(run, x402, quote, (await x402.payments.get(row.key)) as PaymentRow, fp);
    case 'unknown':
      return { ok: false, error: settlementUnknown(s.receipt?.transaction || undefined) };
    case 'failed':
      return settleFailed(run, quote, s.receipt, 'the payment could not be settled');
    case 'settled':
      break;
  }
  // Settled before running (upfront): now run the action it paid for.
  if (row.envelope === undefined) return new X402Gate(run, x402, quote, row.key, decoded.payment, s.receipt);
  const delivered = await deliverLate(run, x402.payments, row, {
    micros: quote.offer.priceMicros,
    memo: `x402 payment by ${row.payer} (settlement confirmed late)`,
    meta: receiptMeta(decoded.payment, quote.offer, s.receipt),
    receipt: s.receipt,
    facts: { x402: s.receipt.success ? settlementFacts(row, s.receipt.transaction) : undefined },
  });
  return withParts(delivered, { paymentResponse: s.receipt });
}
