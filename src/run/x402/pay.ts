import { getAddress } from 'viem';
import type { Principal } from '../../../auth/principal.js';
import type { Action } from '../../../catalog/index.js';
import { databaseUnavailable, GatewayError } from '../../errors.js';
import { fingerprint } from '../../lib/hash.js';
import { centsToMicros } from '../../lib/money.js';
import { type Envelope, type ExecuteOptions, execute, type RunDeps } from '../execute.js';
import { signReceipt } from '../receipts.js';
import { x402AccountId } from './accounts.js';
import type { CallRequest } from './call.js';
import { decodePayment } from './codec.js';
import { paymentIdOf } from './discovery.js';
import {
  type CallResult,
  type Quote,
  receiptMeta,
  refusedResult,
  settlementUnknown,
  settlePayment,
  type X402Deps,
  X402Gate,
} from './gate.js';
import { checkPayment, checkWindow, paymentKey, type Refusal } from './local-check.js';
import { earlierPaymentNamed } from './payment-id.js';
import type { PaymentRow } from './payment-store.js';

// A paid x402 call's whole life after its quote (./call.ts): decode → local checks → reserve the nonce (atomic)
// → [execute: verify → hold → run → settle → capture], and a payment presented again (replay, resume, refuse).
// Its own module, loaded by ./call.ts on the first x402 payment, because it needs viem and the x402 libraries:
// a gateway that takes no x402 payment never loads them.

export async function pay(
  run: RunDeps,
  x402: X402Deps,
  quote: Quote,
  req: CallRequest,
  opts: ExecuteOptions,
): Promise<CallResult> {
  const { action, offer } = quote;
  // While the database does not answer, a payment is not looked at: it could be neither reserved nor recorded.
  // Nothing is reserved or settled, so the same signed payment can be presented again once it answers.
  if (run.health?.down) return { outcome: { ok: false, error: databaseUnavailable() } };
  // A session voucher or deposit (x402 batch-settlement: ../rails.ts) is paid by the session rail.
  const sessions = run.rails?.sessions;
  if (sessions?.accepts(req.payment)) {
    const call = { input: req.input, transport: req.transport, opts };
    return sessions.pay({ run, x402, quote, payment: req.payment, call });
  }
  const decoded = decodePayment(req.payment);
  if (!decoded.ok) return refusedResult(quote, { reason: 'invalid_payload', message: decoded.message });
  const payment = decoded.payment;
  const bad = await checkPayment(payment, offer.requirements, x402.config.chainId);
  if (bad) return refusedResult(quote, bad);

  const key = paymentKey(payment, offer.requirements);
  const fp = fingerprint({ action: action.id, body: req.input });
  const again = { input: req.input, fp, opts };
  const named = paymentIdOf(payment.wire.extensions);
  if (!named.ok) return refusedResult(quote, { reason: 'invalid_payload', message: named.message });
  const payer = getAddress(payment.authorization.from);
  if (named.id !== undefined) {
    const earlier = await earlierPaymentNamed(x402, quote, payment, payer, named.id, key);
    if (earlier.kind === 'refused') return refusedResult(quote, earlier.refusal);
    if (earlier.kind === 'row') return presentedAgain(run, x402, quote, earlier.row, again, 'payment_id');
  }
  const existing = await x402.payments.get(key);
  if (existing && existing.status !== 'released') return presentedAgain(run, x402, quote, existing, again);
  // The window is checked only for a first presentation: a known payment is replayed or resumed even after
  // it expired, because its money may already have moved.
  const late = checkWindow(payment, offer, run.clock.now());
  if (late) return refusedResult(quote, late);
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
    return presentedAgain(run, x402, quote, claim.row, again, claim.row.key === key ? 'nonce' : 'payment_id');
  }

  const gate = new X402Gate(run, x402, quote, key, payment);
  return runWithGate(run, gate, action, req.input, opts);
}

async function runWithGate(
  run: RunDeps,
  gate: X402Gate,
  action: Action,
  input: unknown,
  opts: ExecuteOptions,
): Promise<CallResult> {
  const principal: Principal = { kind: 'x402', accountId: gate.accountId, payer: gate.payer };
  // The payment's nonce is the idempotency key of an x402 call; an Idempotency-Key header is not used.
  const outcome = await execute(run, action.id, input, principal, {
    ...opts,
    idempotencyKey: undefined,
    payment: gate,
  });
  return gate.finish(outcome);
}

const ALREADY_USED: Refusal = {
  reason: 'payment_already_used',
  message: 'this signed payment already paid for a different call; sign a new one',
};

/** The call presenting a known payment: its body (and the fingerprint of action + body). */
interface Presentation {
  input: unknown;
  fp: string;
  opts: ExecuteOptions;
}

/** A payment we have seen before (by its nonce, or by its payment-identifier id): replay, resume or refuse. */
async function presentedAgain(
  run: RunDeps,
  x402: X402Deps,
  quote: Quote,
  row: PaymentRow,
  call: Presentation,
  via: 'nonce' | 'payment_id' = 'nonce',
): Promise<CallResult> {
  if (row.fingerprint !== call.fp) {
    if (via === 'nonce') return refusedResult(quote, ALREADY_USED);
    return {
      outcome: {
        ok: false,
        error: new GatewayError(
          'idempotency_mismatch',
          'This payment-identifier id already paid for a different action or body; use a new id for a new call. ' +
            'Nothing was charged.',
        ),
      },
    };
  }
  switch (row.status) {
    case 'reserved':
    case 'settling':
    case 'released': // released and re-claimed between our two reads
      return {
        outcome: {
          ok: false,
          error: new GatewayError(
            'idempotency_in_flight',
            'This payment is paying for a call that is still running; retry shortly with the same payment to ' +
              'get its result.',
            { retryAfterSeconds: 1 },
          ),
        },
      };
    case 'settled':
      if (row.envelope === undefined) return refusedResult(quote, ALREADY_USED);
      return { outcome: replayed(run, row, quote, row.envelope as Envelope, true), ...receiptOf(row) };
    case 'failed':
      // Settled before an action that then failed: the money is on the payer's account as a refund owed.
      if (row.receipt?.success) return refusedResult(quote, ALREADY_USED, row.receipt);
      return refusedResult(
        quote,
        {
          reason: row.receipt?.errorReason ?? 'settlement_failed',
          message: 'this payment could not be settled; sign a new one',
        },
        row.receipt,
      );
    case 'unknown':
      return resume(run, x402, quote, row, call);
  }
}

/** Retries a settlement whose outcome was unknown; the same authorization can move money at most once. */
async function resume(
  run: RunDeps,
  x402: X402Deps,
  quote: Quote,
  row: PaymentRow,
  call: Presentation,
): Promise<CallResult> {
  const decoded = decodePayment(row.payload);
  if (!decoded.ok) throw new Error(`stored x402 payload ${row.key} does not decode`);
  const s = await settlePayment(run, x402, {
    key: row.key,
    from: 'unknown',
    payload: row.payload,
    requirements: row.requirements,
    markSettled: false,
    resourceUrl: quote.resource.url,
  });
  switch (s.kind) {
    case 'changed':
      return presentedAgain(run, x402, quote, (await x402.payments.get(row.key)) as PaymentRow, call);
    case 'unknown':
      return { outcome: { ok: false, error: settlementUnknown(s.receipt?.transaction || undefined) } };
    case 'failed':
      return refusedResult(
        quote,
        { reason: s.receipt.errorReason ?? 'settlement_failed', message: 'the payment could not be settled' },
        s.receipt,
      );
    case 'settled':
      break;
  }
  if (row.envelope === undefined) {
    // Settled before running (upfront): now run the action it paid for.
    const gate = new X402Gate(run, x402, quote, row.key, decoded.payment, s.receipt);
    return runWithGate(run, gate, quote.action, call.input, call.opts);
  }
  const envelope = row.envelope as Envelope;
  let delivered = envelope;
  try {
    // The first attempt was voided when its settlement was unknown; the money that did move gets its own call.
    const txn = await run.money.recordSettledCall({
      principal: { kind: 'x402', accountId: x402AccountId(row.payer), payer: row.payer },
      action: quote.action.id,
      micros: quote.offer.priceMicros,
      memo: `x402 payment by ${row.payer} (settlement confirmed late)`,
      meta: {
        ...receiptMeta(decoded.payment, quote.offer, s.receipt),
        resumed_from: envelope.transaction_id,
      },
    });
    delivered = { ...envelope, transaction_id: txn };
  } catch (err) {
    run.log.error({ err, key: row.key }, 'x402 settlement confirmed but not recorded in the ledger');
  }
  await x402.payments.transition(row.key, 'settling', 'settled', { envelope: delivered, receipt: s.receipt });
  const outcome = replayed(run, { ...row, receipt: s.receipt }, quote, delivered, false);
  return { outcome: { ...outcome, replayed: false }, paymentResponse: s.receipt };
}

/** The stored result of a paid payment, delivered again (or late), with its receipt. */
function replayed(run: RunDeps, row: PaymentRow, quote: Quote, env: Envelope, again: boolean) {
  const chargedMicros = centsToMicros(env.charged_cents);
  const r = row.receipt;
  return {
    ok: true as const,
    data: env.data,
    chargedCents: env.charged_cents,
    chargedMicros,
    transactionId: env.transaction_id,
    replayed: true,
    receipt: env.transaction_id
      ? signReceipt(run, {
          transactionId: env.transaction_id,
          action: quote.action.id,
          chargedMicros,
          principal: { kind: 'x402', accountId: x402AccountId(row.payer), payer: row.payer },
          x402: r?.success
            ? {
                network: row.requirements.network,
                asset: row.requirements.asset,
                payer: row.payer,
                transaction: r.transaction,
                amount: row.requirements.amount,
                scheme: 'exact',
              }
            : undefined,
          replayed: again,
        })
      : undefined,
  };
}

function receiptOf(row: PaymentRow): Pick<CallResult, 'paymentResponse'> {
  return row.receipt ? { paymentResponse: row.receipt } : {};
}
