import { describe, expect, it } from 'vitest';
import { builtinFacilitator } from '../../src/run/x402/facilitator-builtin.js';
import { DEV_KEY, startChain } from '../helpers/anvil.js';

// The built-in facilitator's nonces come from its own chain. viem's shared nonce manager remembers the last nonce
// per address and chain id for the whole process, so a facilitator on a second chain with the same id (a node
// reset, a test chain started after another) was handed the first chain's last nonce plus one: a gap, and a
// settlement that waited for its receipt until it timed out (the sessions bench did, after the x402 bench).

const SINK = '0x000000000000000000000000000000000000dEaD';

function facilitatorOn(rpcUrl: string) {
  return builtinFacilitator({
    network: 'eip155:8453',
    chainId: 8453,
    rpcUrl,
    signerKey: DEV_KEY,
    confirmationTimeoutMs: 5_000,
  }).core.signer;
}

async function send(signer: ReturnType<typeof facilitatorOn>) {
  const hash = await signer.sendTransaction({ to: SINK, data: '0x' });
  return signer.waitForTransactionReceipt({ hash, timeout: 5_000 });
}

describe('[x402:nonce-per-chain] the facilitator takes its nonces from the chain it sends to', () => {
  it('a second chain with the same id, after three transactions on the first, mines the first one sent', async () => {
    const first = await startChain();
    try {
      const signer = facilitatorOn(first.rpcUrl);
      for (let i = 0; i < 3; i++) expect((await send(signer)).status).toBe('success');
    } finally {
      await first.close();
    }
    const second = await startChain();
    try {
      expect((await send(facilitatorOn(second.rpcUrl))).status).toBe('success');
    } finally {
      await second.close();
    }
  }, 30_000);
});
