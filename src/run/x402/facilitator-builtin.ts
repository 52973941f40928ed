import { x402Facilitator } from '@x402/core/facilitator';
import type { FacilitatorClient } from '@x402/core/server';
import type { Network, SupportedResponse } from '@x402/core/types';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { ExactEvmScheme } from '@x402/evm/exact/facilitator';
import { UptoEvmScheme } from '@x402/evm/upto/facilitator';
import { createWalletClient, defineChain, http, publicActions } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { createNonceManager, jsonRpc } from 'viem/nonce';
import { classifyingFacilitator, type Facilitator } from './facilitator.js';

// The built-in facilitator: the gateway verifies and settles payments itself with the official x402 code
// (`x402Facilitator` + the `exact` and `upto` EVM schemes of @x402/evm) against a chain RPC, paying gas from its
// own key.
//
// Parallel settlements send transactions from one account, so they would race for the account nonce (the
// reference saw 6 of 8 fail). viem's nonce manager hands out nonces locally and in order.

export interface BuiltinFacilitatorOptions {
  network: Network;
  chainId: number;
  rpcUrl: string;
  /** Pays the gas of settlements. A secret: it stays inside the viem account and is never logged. */
  signerKey: `0x${string}`;
  /** How long a settlement waits for its receipt; past it the outcome is unknown (and resumable). */
  confirmationTimeoutMs: number;
}

/** The built-in facilitator's parts, for a scheme registered later (x402 sessions, ../sessions). */
export interface BuiltinFacilitatorCore {
  facilitator: x402Facilitator;
  signer: ReturnType<typeof toFacilitatorEvmSigner>;
  /** Signs as the receiver authorizer of session channels (EIP-712), the gas payer's key. */
  account: ReturnType<typeof privateKeyToAccount>;
}

export function builtinFacilitator(
  opts: BuiltinFacilitatorOptions,
): Facilitator & { address: string; core: BuiltinFacilitatorCore } {
  // A nonce manager of this facilitator's own: viem's shared one keys its memory by address and chain id only, so
  // a second chain with the same id (a test chain started after another, a node reset) would get the last nonce
  // of the first plus one: a gap, and a settlement that is never mined.
  const account = privateKeyToAccount(opts.signerKey, {
    nonceManager: createNonceManager({ source: jsonRpc() }),
  });
  const chain = defineChain({
    id: opts.chainId,
    name: opts.network,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [opts.rpcUrl] } },
  });
  const wallet = createWalletClient({
    account,
    chain,
    // One retry for a dropped connection; expected reverts are answers, not errors, and are not retried.
    transport: http(opts.rpcUrl, { retryCount: 1, retryDelay: 100, timeout: opts.confirmationTimeoutMs }),
    pollingInterval: 250,
  }).extend(publicActions);

  // Explicit delegation: viem's client types are wider than the signer's, and spreading the client into
  // toFacilitatorEvmSigner does not type-check (its signer type is narrower than viem's wallet client).
  const signer = toFacilitatorEvmSigner(
    {
      address: account.address,
      getCode: (a) => wallet.getCode(a),
      readContract: (a) => wallet.readContract(a as Parameters<typeof wallet.readContract>[0]),
      verifyTypedData: (a) => wallet.verifyTypedData(a as Parameters<typeof wallet.verifyTypedData>[0]),
      writeContract: (a) => wallet.writeContract(a as Parameters<typeof wallet.writeContract>[0]),
      sendTransaction: (a) => wallet.sendTransaction(a),
      waitForTransactionReceipt: (a) => wallet.waitForTransactionReceipt(a),
    },
    { confirmationTimeoutMs: opts.confirmationTimeoutMs },
  );
  // `exact` for the catalog's fixed prices; `upto` (Permit2) for the model router's metered calls.
  const facilitator = new x402Facilitator()
    .register(opts.network, new ExactEvmScheme(signer))
    .register(opts.network, new UptoEvmScheme(signer));
  const client: FacilitatorClient = {
    verify: (p, r) => facilitator.verify(p, r),
    settle: (p, r) => facilitator.settle(p, r),
    getSupported: async () => facilitator.getSupported() as SupportedResponse,
  };
  return {
    ...classifyingFacilitator(client),
    address: account.address,
    core: { facilitator, signer, account },
  };
}
