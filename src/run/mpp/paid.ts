import type { Failed, Outcome, RunDeps } from '../execute.js';
import { NO_RAILS, type RailCall } from '../rails.js';
import { signReceipt } from '../receipts.js';
import { mppReceiptParts } from '../standard-receipts.js';
import { x402AccountId } from '../x402/accounts.js';
import type { MppRefusal, ParsedCredential } from './credential.js';

// How an MPP payment is answered, whatever its method: refused (the one 402, naming the problem), or paid (the
// Payment-Receipt beside the tollgate receipt).

/** How an MPP payment refused is answered: the one 402, naming the problem (paymentauth.org/problems/…). */
export function mppRefused(run: RunDeps, call: RailCall, r: MppRefusal): Failed {
  const problem = `https://paymentauth.org/problems/${r.problem}`;
  const refused = { rail: 'MPP', reason: r.problem, message: r.message, problem };
  return (run.rails ?? NO_RAILS).refusal(call.action, call.transport, refused);
}

/**
 * A paid outcome with MPP's receipts: `Payment-Receipt`, carrying the tollgate receipt of the same charge, signed
 * with the MPP claims (`sign`: a stored result delivered again; a call just paid has its receipt already).
 */
export function mppPaid(
  run: RunDeps,
  c: ParsedCredential,
  outcome: Extract<Outcome, { ok: true }>,
  p: { action: string; method: 'evm' | 'stripe'; reference: string; payer: string },
  sign: boolean,
): Outcome {
  const mpp = { method: p.method, reference: p.reference, challenge_id: c.challenge.id };
  const jws =
    sign && outcome.transactionId
      ? signReceipt(run, {
          transactionId: outcome.transactionId,
          action: p.action,
          chargedMicros: outcome.chargedMicros,
          principal: { kind: 'x402', accountId: x402AccountId(p.payer), payer: p.payer },
          paymentMethod: 'mpp',
          mpp,
          replayed: outcome.replayed,
        })
      : outcome.receipt;
  const receipt = {
    status: 'success' as const,
    method: p.method,
    reference: p.reference,
    timestamp: new Date(run.clock.now()).toISOString(),
    ...(jws ? { jws } : {}),
  };
  // Its own receipt only: an evm payment's x402 settlement receipt is not sent (the payer spoke MPP).
  return { ...outcome, receipt: jws, parts: mppReceiptParts(receipt, c.challenge.id) };
}
