import type { Ledger } from '../ledger/types.js';
import type { RunDeps } from './execute.js';

// x402 payers in the ledger. Every payer address gets its own account of kind 'x402' (created on its first
// verified payment), so its calls are a transaction history like any account's. A payment flows through it
// in double entry: the verified amount is credited with the hold (topup from sys_funding, provisional), the
// capture charges it to sys_revenue once it settled on chain, and a call that collected nothing has its
// provisional credit reversed. The account's balance is therefore 0 except for refunds owed (a payment
// settled before an action that then failed).

/** The ledger account of an x402 payer: one per address, whatever the network. */
export function x402AccountId(payer: string): string {
  return `x402_${payer.toLowerCase()}`;
}

export async function ensureX402Account(ledger: Ledger, payer: string): Promise<string> {
  const id = x402AccountId(payer);
  if (await ledger.getAccount(id)) return id;
  try {
    await ledger.createAccount({ id, kind: 'x402', name: `x402 payer ${payer}` });
  } catch (e) {
    // Two first payments of one payer raced; the other created it.
    if (!(await ledger.getAccount(id))) throw e;
  }
  return id;
}

/**
 * Records a call whose settlement was confirmed only after its first attempt ended (a resumed "unknown"
 * outcome): that attempt was voided, so the money that did move gets its own succeeded call, funded and
 * captured at once. Returns the new transaction id.
 */
export async function recordLateSettlement(
  run: RunDeps,
  input: {
    action: string;
    payer: string;
    priceMicros: number;
    meta: Record<string, unknown>;
  },
): Promise<string> {
  const accountId = await ensureX402Account(run.ledger, input.payer);
  const begun = await run.ledger.begin({
    accountId,
    action: input.action,
    priceMicros: input.priceMicros,
    holdMicros: input.priceMicros,
    paymentMethod: 'x402',
    principal: `x402:${input.payer}`,
    holdTtlMs: run.holdTtlMs,
    funding: {
      micros: input.priceMicros,
      memo: `x402 payment by ${input.payer} (settlement confirmed late)`,
    },
  });
  if (begun.kind !== 'started') throw new Error(`could not record a late x402 settlement: ${begun.kind}`);
  await run.ledger.capture(begun.callId, {
    amountMicros: input.priceMicros,
    provider: null,
    durationMs: 0,
    meta: input.meta,
  });
  return begun.callId;
}
