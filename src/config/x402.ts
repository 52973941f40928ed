import type { Env } from './index.js';

// The x402 section of the configuration (TOLLGATE_X402_*), checked as a whole once the schema parsed.

export interface X402Config {
  payTo: `0x${string}`;
  network: `eip155:${string}`;
  chainId: number;
  asset: `0x${string}`;
  /** The token's EIP-712 domain: the challenge's `extra`, and what signatures are checked against locally. */
  assetName: string;
  assetVersion: string;
  maxTimeoutSeconds: number;
  settleFirstCents: number | undefined;
  facilitatorTimeoutMs: number;
  facilitator:
    | { kind: 'remote'; url: string; authHeader: { name: string; value: string } | undefined }
    | { kind: 'builtin'; rpcUrl: string; signerKey: `0x${string}` };
}

/** USDC per network with its EIP-712 domain, whose name differs between Base and Base Sepolia. */
const KNOWN_USDC: Record<string, [`0x${string}`, string, string]> = {
  'eip155:8453': ['0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', 'USD Coin', '2'],
  'eip155:84532': ['0x036CbD53842c5426634e7929541eC2318f3dCF7e', 'USDC', '2'],
};

export function x402Config(env: Env, problems: string[]): X402Config | undefined {
  const url = env.TOLLGATE_X402_FACILITATOR_URL;
  const auth = env.TOLLGATE_X402_FACILITATOR_AUTH_HEADER;
  const rpcUrl = env.TOLLGATE_X402_RPC_URL;
  const signerKey = env.TOLLGATE_X402_SIGNER_KEY as `0x${string}` | undefined;
  if (auth && !url) problems.push('TOLLGATE_X402_FACILITATOR_AUTH_HEADER: only used with a facilitator URL');
  const payTo = env.TOLLGATE_X402_PAY_TO;
  if (!payTo) return undefined;
  const network = env.TOLLGATE_X402_NETWORK as `eip155:${string}`;
  // A custom asset needs its own domain: a copied one signs fine and then fails on chain.
  const known = env.TOLLGATE_X402_ASSET ? undefined : KNOWN_USDC[network];
  const asset = env.TOLLGATE_X402_ASSET ?? known?.[0];
  const assetName = env.TOLLGATE_X402_ASSET_NAME ?? known?.[1];
  const assetVersion = env.TOLLGATE_X402_ASSET_VERSION ?? known?.[2];
  if (!asset || !assetName || !assetVersion) {
    problems.push(
      `TOLLGATE_X402_ASSET, TOLLGATE_X402_ASSET_NAME, TOLLGATE_X402_ASSET_VERSION: needed for ${network}`,
    );
  }
  if (url && (rpcUrl || signerKey)) {
    problems.push(
      'TOLLGATE_X402_FACILITATOR_URL: a remote facilitator or the built-in one (RPC_URL), not both',
    );
  } else if (!url && !(rpcUrl && signerKey)) {
    problems.push(
      'TOLLGATE_X402_PAY_TO: x402 needs a facilitator: FACILITATOR_URL, or RPC_URL and SIGNER_KEY',
    );
  }
  if (problems.length > 0 || !asset || !assetName || !assetVersion) return undefined;
  const colon = auth?.indexOf(':') ?? -1;
  const authHeader = auth && { name: auth.slice(0, colon).trim(), value: auth.slice(colon + 1).trim() };
  return {
    ...{ payTo, network, asset, assetName, assetVersion, chainId: Number(network.slice('eip155:'.length)) },
    maxTimeoutSeconds: env.TOLLGATE_X402_MAX_TIMEOUT_SECONDS,
    settleFirstCents: env.TOLLGATE_X402_SETTLE_FIRST_CENTS,
    facilitatorTimeoutMs: env.TOLLGATE_X402_FACILITATOR_TIMEOUT_SECONDS * 1000,
    facilitator: url
      ? { kind: 'remote', url, authHeader: authHeader || undefined }
      : { kind: 'builtin', rpcUrl: rpcUrl as string, signerKey: signerKey as `0x${string}` },
  };
}
