import type { SettleResponse } from '@x402/core/types';
import { GatewayError } from '../../errors.js';
import { type Envelope, type Outcome, type RunDeps, replayed } from '../execute.js';
import type { ReceiptFacts } from '../receipts.js';
import { x402AccountId } from './accounts.js';
import type { PaymentRow, PaymentStore } from './payment-store.js';

// A payment the payment table already knows, presented again (an x402 authorization by its nonce or
// payment-identifier id, an MPP Stripe token by its key): one payment pays for at most one call, so the same call
// gets its stored result again, another call is refused, a call still running is waited for, and a settlement
// whose outcome was unknown is resumed. The rails say what each of these means for them.

export interface KnownPayment<R = never> {
  /** How the caller calls what it presented: `payment`, `MPP credential`. */
  what: string;
  /** The payment already paid for another action or body. */
  mismatch(): Outcome;
  /** It can no longer pay (its settlement failed, or it paid already). */
  failed(): Outcome;
  /** Settled: the stored result, with the rail's receipt. */
  settled(envelope: Envelope): Outcome;
  /** Its settlement's outcome is unknown: try again, once. */
  resume(): Promise<Outcome | R>;
}

export function presentedAgain<R = never>(
  row: PaymentRow,
  fp: string,
  k: KnownPayment<R>,
): Outcome | Promise<Outcome | R> {
  if (row.fingerprint !== fp) return k.mismatch();
  switch (row.status) {
    case 'reserved':
    case 'settling':
    case 'released': // released and re-claimed between our two reads
      return {
        ok: false,
        error: new GatewayError(
          'idempotency_in_flight',
          `This ${k.what} is paying for a call that is still running; retry shortly with the same ${k.what} to ` +
            'get its result.',
          { retryAfterSeconds: 1 },
        ),
      };
    case 'settled':
      // Without a stored result (settled before running, never delivered) it cannot pay for the call again.
      return row.envelope === undefined ? k.failed() : k.settled(row.envelope as Envelope);
    case 'failed':
      return k.failed();
    case 'unknown':
      return k.resume();
  }
}

/**
 * A settlement confirmed on a retry, after its call was voided as unknown: the money that did move is recorded
 * as a call of its own, and the stored result is delivered with it (its first delivery: not marked replayed).
 */
export async function deliverLate(
  run: RunDeps,
  payments: PaymentStore,
  row: PaymentRow,
  p: {
    micros: number;
    memo: string;
    meta: Record<string, unknown>;
    receipt: SettleResponse;
    facts: Omit<ReceiptFacts, 'transactionId' | 'chargedMicros' | 'principal' | 'action'>;
  },
): Promise<Outcome> {
  const envelope = row.envelope as Envelope;
  const principal = { kind: 'x402' as const, accountId: x402AccountId(row.payer), payer: row.payer };
  let delivered = envelope;
  try {
    const txn = await run.money.recordSettledCall({
      principal,
      action: row.action,
      micros: p.micros,
      memo: p.memo,
      meta: { ...p.meta, resumed_from: envelope.transaction_id },
    });
    delivered = { ...envelope, transaction_id: txn };
  } catch (err) {
    run.log.error({ err, key: row.key }, 'a settlement confirmed late was not recorded in the ledger');
  }
  await payments.transition(row.key, 'settling', 'settled', { envelope: delivered, receipt: p.receipt });
  return replayed(run, delivered, { ...p.facts, action: row.action, principal }, false);
}
