import type { DecodedPayment } from './codec.js';
import type { Quote, X402Deps } from './gate.js';
import type { Refusal } from './local-check.js';
import type { PaymentRow } from './payment-store.js';

// The x402 `payment-identifier` extension (./discovery.ts) on the catalog's calls: the payer's own idempotency
// key, scoped to the payer. A retry that re-signs (a new nonce) but keeps the id is the same call.

export type EarlierPayment =
  | { kind: 'none' }
  | { kind: 'row'; row: PaymentRow }
  | { kind: 'refused'; refusal: Refusal };

/**
 * payment-identifier: a payer that retries with the id of an earlier payment gets that payment's call (its
 * result, or its settlement resumed), and the new signed payment is never used. An earlier payment that
 * collected nothing (released, or its settlement failed) leaves the id free for this one. Before a stored
 * result is handed over, the payer must be proven: by the local signature check (65-byte EOA signatures), or
 * else by the facilitator's verify.
 */
export async function earlierPaymentNamed(
  x402: X402Deps,
  quote: Quote,
  payment: DecodedPayment,
  payer: string,
  id: string,
  key: string,
): Promise<EarlierPayment> {
  const row = await x402.payments.byPaymentId(payer, id);
  if (!row || row.key === key || row.status === 'released' || row.status === 'failed')
    return { kind: 'none' };
  if (payment.signature.length !== 132) {
    const v = await x402.facilitator.verify(payment.wire, quote.offer.requirements);
    if (v.kind !== 'valid') {
      return {
        kind: 'refused',
        refusal: {
          reason: v.kind === 'invalid' ? v.reason : 'unexpected_verify_error',
          message: 'the payment could not be verified, so the earlier call it names is not disclosed',
        },
      };
    }
  }
  return { kind: 'row', row };
}
