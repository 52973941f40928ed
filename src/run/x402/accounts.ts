import type { LedgerRecords } from '../../ledger/types.js';

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

export async function ensureX402Account(ledger: LedgerRecords, payer: string): Promise<string> {
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
