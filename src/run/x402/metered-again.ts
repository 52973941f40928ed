import type { SettleResponse } from '@x402/core/types';
import type { Logger } from 'pino';
import { GatewayError } from '../../errors.js';
import type { Clock } from '../../lib/clock.js';
import type { Lifecycle } from '../lifecycle.js';
import { RECEIPT_HEADER, type ReceiptSigner, signReceipt } from '../receipts.js';
import { x402AccountId } from './accounts.js';
import { encodeReceipt } from './codec.js';
import { settlementUnknown } from './gate.js';
import type { Refusal } from './local-check.js';
import {
  METERED_ACTION,
  type MeteredAnswer,
  type MeteredX402,
  refused,
  settledMeta,
  settleFailed,
} from './metered-answers.js';
import type { PaymentRow } from './payment-store.js';
import { decodeUpto, type UptoOffer } from './upto.js';

// A model-router payment presented again (./metered.ts): a metered answer is not replayed, so a payment that
// paid is refused; one whose settlement's outcome was unknown resumes it (the same authorization can move money
// at most once), records the late money as a call of its own, and delivers a stored non-streamed answer.

const USED: Refusal = {
  reason: 'payment_already_used',
  message: 'this signed payment already paid for a model call; sign a new one',
};

/** A payment seen before: a metered answer is not replayed; an unknown settlement resumes. */
export async function presentedAgain(
  deps: { log: Logger; money: Lifecycle; clock: Clock; receipts?: ReceiptSigner | undefined },
  m: MeteredX402,
  offer: UptoOffer,
  row: PaymentRow,
  fingerprint: string,
): Promise<MeteredAnswer> {
  if (row.fingerprint !== fingerprint || row.status === 'settled')
    return refused(m, offer, USED, row.receipt);
  if (row.status === 'failed') {
    return settleFailed(m, offer, row.receipt, 'this payment could not be settled; sign a new one');
  }
  if (row.status !== 'unknown') {
    return {
      error: new GatewayError(
        'idempotency_in_flight',
        'This payment is paying for a model call that is still running; nothing more can be done with it now.',
        { retryAfterSeconds: 1 },
      ),
    };
  }
  const stored = row.envelope as { micros: number; answer?: MeteredAnswer['delivered'] };
  const requirements = { ...row.requirements, amount: String(stored.micros) };
  if (!(await m.x402.payments.transition(row.key, 'unknown', 'settling'))) {
    return {
      error: new GatewayError('idempotency_in_flight', 'This payment is being settled; retry shortly.', {
        retryAfterSeconds: 1,
      }),
    };
  }
  const s = await m.x402.facilitator.settle(row.payload, requirements);
  if (s.kind === 'unknown') {
    await m.x402.payments.transition(row.key, 'settling', 'unknown');
    return { error: settlementUnknown(s.receipt?.transaction || undefined) };
  }
  await m.x402.payments.transition(row.key, 'settling', s.kind === 'settled' ? 'settled' : 'failed', {
    receipt: s.receipt,
  });
  if (s.kind === 'failed') return settleFailed(m, offer, s.receipt, 'not settled');
  // The money moved after the call's hold was voided: it is recorded now as a call of its own.
  const decoded = decodeUpto(Buffer.from(JSON.stringify(row.payload)).toString('base64'));
  const txn = await deps.money.recordSettledCall({
    principal: { kind: 'x402', accountId: x402AccountId(row.payer), payer: row.payer },
    action: METERED_ACTION,
    micros: stored.micros,
    memo: `x402 upto payment by ${row.payer} (settlement confirmed late)`,
    meta: decoded.ok
      ? settledMeta(decoded.payment, { ...offer, requirements }, s.receipt, stored.micros)
      : {},
  });
  if (stored.answer) {
    return {
      error: USED_ERROR,
      paymentResponse: s.receipt,
      delivered: {
        body: stored.answer.body,
        headers: withReceipt(deps, stored.answer.headers, txn, stored.micros, row, s.receipt),
      },
    };
  }
  return refused(
    m,
    offer,
    { ...USED, message: 'its streamed answer was delivered; its settlement is now confirmed' },
    s.receipt,
  );
}

const USED_ERROR = new GatewayError('payment_required', 'This payment already paid for a model call.');

/** The headers of a stored answer delivered late: its new transaction, the settlement and the receipt. */
function withReceipt(
  deps: { log: Logger; clock: Clock; receipts?: ReceiptSigner | undefined },
  headers: Record<string, string>,
  txn: string,
  micros: number,
  row: PaymentRow,
  settled: SettleResponse,
): Record<string, string> {
  const out: Record<string, string> = {
    ...headers,
    'x-tollgate-transaction-id': txn,
    'x-tollgate-charged-micros': String(micros),
    'PAYMENT-RESPONSE': encodeReceipt(settled),
  };
  const receipt = signReceipt(deps, {
    transactionId: txn,
    action: METERED_ACTION,
    chargedMicros: micros,
    principal: { kind: 'x402', accountId: x402AccountId(row.payer), payer: row.payer },
    x402: {
      scheme: 'upto',
      network: row.requirements.network,
      asset: row.requirements.asset,
      payer: row.payer,
      transaction: settled.transaction,
      amount: String(micros),
    },
  });
  if (receipt) out[RECEIPT_HEADER] = receipt;
  return out;
}
