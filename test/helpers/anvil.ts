import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { type Abi, type Address, createWalletClient, defineChain, type Hex, http, publicActions } from 'viem';
import { type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { createNonceManager, jsonRpc } from 'viem/nonce';

// A real EVM on 127.0.0.1 for x402 tests: anvil from the npm package @foundry-rs/anvil (the binary ships inside
// its platform package), chain id 8453 like Base, with a USDC look-alike (test/fakes/evm/MockUSDC.sol) placed
// at Base's real USDC address, so the gateway's production x402 defaults run unchanged. One chain per test file.

export const BASE_USDC: Address = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
export const MULTICALL3: Address = '0xcA11bde05977b3631167028862bE2a173976CA11';
/** Canonical addresses of Permit2 and x402's upto proxy (the `upto` scheme), as @x402/evm expects them. */
export const PERMIT2: Address = '0x000000000022D473030F116dDEE9F6B43aC78BA3';
export const UPTO_PROXY: Address = '0x4020A4f3b7b90ccA423B9fabCc0CE57C6C240002';
/** Canonical addresses of x402's batch-settlement contract and its ERC-3009 deposit collector (sessions). */
export const BATCH_SETTLEMENT: Address = '0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003';
export const ERC3009_COLLECTOR: Address = '0x4020806089470a89826cB9fB1f4059150b550004';
/** anvil's well-known dev account #0 (10 000 ETH): the facilitator's gas payer in tests. Not a secret. */
export const DEV_KEY: Hex = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
/**
 * anvil's dev account #1: the helper's own (it mints), so that its transactions never race the facilitator's for
 * a nonce of the same account. Not a secret.
 */
const HELPER_KEY: Hex = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';

interface Artifact {
  abi: Abi;
  runtime: Hex;
}
const ARTIFACTS = JSON.parse(
  readFileSync(join(import.meta.dirname, '..', 'fakes', 'evm', 'artifacts.json'), 'utf8'),
) as {
  contracts: {
    MockUSDC: Artifact;
    MiniMulticall3: Artifact;
    MiniPermit2: Artifact;
    MiniUptoProxy: Artifact;
    MiniBatchSettlement: Artifact;
    MiniErc3009Collector: Artifact;
  };
};
export const USDC_ABI = ARTIFACTS.contracts.MockUSDC.abi;

export interface TestChain {
  rpcUrl: string;
  chainId: number;
  usdc: Address;
  /** Mints test USDC (atomic units) to an address and waits for the receipt. */
  mint(to: Address, amount: bigint): Promise<void>;
  balanceOf(address: Address): Promise<bigint>;
  /** Gives an address ETH for gas (anvil_setBalance). */
  setEthBalance(address: Address, wei: bigint): Promise<void>;
  /** Number of Transfer events of the token from `from` so far (counts on-chain payments). */
  transfersFrom(from: Address): Promise<number>;
  /** A token transfer sent by `from` itself (needs ETH for gas: setEthBalance). */
  transferAs(from: PrivateKeyAccount, to: Address, amount: bigint): Promise<void>;
  /** The payer's one-time approval of Permit2 for the token (x402 `upto`), as a wallet does it (pays its gas). */
  approvePermit2(owner: PrivateKeyAccount): Promise<void>;
  /** Automine on/off: off, transactions wait in the mempool until mine() (settlement outcomes go unknown). */
  setAutomine(on: boolean): Promise<void>;
  mine(): Promise<void>;
  close(): Promise<void>;
}

function anvilBinary(): string {
  const arch = process.arch === 'x64' ? 'amd64' : process.arch;
  return createRequire(import.meta.url).resolve(`@foundry-rs/anvil-${process.platform}-${arch}/bin/anvil`);
}

function waitForListening(proc: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      const m = /Listening on (\S+)/.exec(seen);
      if (m) {
        proc.stdout?.off('data', onData);
        // Keep draining: anvil logs every RPC method, and a full pipe would block it.
        proc.stdout?.resume();
        resolve(`http://${m[1]}`);
      }
    };
    proc.stdout?.on('data', onData);
    proc.once('exit', (code) => reject(new Error(`anvil exited with ${code} before listening: ${seen}`)));
    proc.once('error', reject);
  });
}

export async function startChain(chainId = 8453): Promise<TestChain> {
  const proc = spawn(
    anvilBinary(),
    ['--host', '127.0.0.1', '--port', '0', '--chain-id', String(chainId), '--accounts', '2'],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const rpcUrl = await waitForListening(proc);
  const chain = defineChain({
    id: chainId,
    name: `anvil-${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  const client = createWalletClient({
    // Its own nonce manager: viem's shared one remembers the last nonce per address and chain id across chains,
    // and the next chain of a process (the bench runs several) would then be sent a nonce with a gap.
    account: privateKeyToAccount(HELPER_KEY, { nonceManager: createNonceManager({ source: jsonRpc() }) }),
    chain,
    // Expected reverts must not be retried (viem's default retries turn each into seconds).
    transport: http(rpcUrl, { retryCount: 0 }),
    pollingInterval: 50,
  }).extend(publicActions);
  // The helper's account mints (MockUSDC lets anyone).
  await client.request({
    method: 'anvil_setCode' as never,
    params: [BASE_USDC, ARTIFACTS.contracts.MockUSDC.runtime] as never,
  });
  await client.request({
    method: 'anvil_setCode' as never,
    params: [MULTICALL3, ARTIFACTS.contracts.MiniMulticall3.runtime] as never,
  });
  // The `upto` scheme's contracts (test/fakes/evm/MiniPermit2.sol, MiniUptoProxy.sol) and the `batch-settlement`
  // scheme's (MiniBatchSettlement.sol) at their canonical addresses.
  for (const [address, artifact] of [
    [PERMIT2, ARTIFACTS.contracts.MiniPermit2],
    [UPTO_PROXY, ARTIFACTS.contracts.MiniUptoProxy],
    [BATCH_SETTLEMENT, ARTIFACTS.contracts.MiniBatchSettlement],
    [ERC3009_COLLECTOR, ARTIFACTS.contracts.MiniErc3009Collector],
  ] as const) {
    await client.request({ method: 'anvil_setCode' as never, params: [address, artifact.runtime] as never });
  }

  return {
    rpcUrl,
    chainId,
    usdc: BASE_USDC,
    async mint(to, amount) {
      const hash = await client.writeContract({
        address: BASE_USDC,
        abi: USDC_ABI,
        functionName: 'mint',
        args: [to, amount],
      });
      await client.waitForTransactionReceipt({ hash });
    },
    async balanceOf(address) {
      return (await client.readContract({
        address: BASE_USDC,
        abi: USDC_ABI,
        functionName: 'balanceOf',
        args: [address],
      })) as bigint;
    },
    async setEthBalance(address, wei) {
      await client.request({
        method: 'anvil_setBalance' as never,
        params: [address, `0x${wei.toString(16)}`] as never,
      });
    },
    async transfersFrom(from) {
      const logs = await client.getContractEvents({
        address: BASE_USDC,
        abi: USDC_ABI,
        eventName: 'Transfer',
        args: { from },
        fromBlock: 0n,
      });
      return logs.length;
    },
    async transferAs(from, to, amount) {
      const own = createWalletClient({ account: from, chain, transport: http(rpcUrl, { retryCount: 0 }) });
      const hash = await own.writeContract({
        address: BASE_USDC,
        abi: USDC_ABI,
        functionName: 'transfer',
        args: [to, amount],
      });
      await client.waitForTransactionReceipt({ hash });
    },
    async approvePermit2(owner) {
      await client.request({
        method: 'anvil_setBalance' as never,
        params: [owner.address, `0x${(10n ** 17n).toString(16)}`] as never,
      });
      const own = createWalletClient({ account: owner, chain, transport: http(rpcUrl, { retryCount: 0 }) });
      const hash = await own.writeContract({
        address: BASE_USDC,
        abi: USDC_ABI,
        functionName: 'approve',
        args: [PERMIT2, 2n ** 256n - 1n],
      });
      await client.waitForTransactionReceipt({ hash });
    },
    async setAutomine(on) {
      await client.request({ method: 'evm_setAutomine' as never, params: [on] as never });
    },
    async mine() {
      await client.request({ method: 'evm_mine' as never, params: [] as never });
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null) return resolve();
        proc.once('exit', () => resolve());
        proc.kill('SIGTERM');
      }),
  };
}
