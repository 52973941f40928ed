import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequired, PaymentRequirements, SettleResponse } from '@x402/core/types';
import { authorizationTypes } from '@x402/evm';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import pino, { type Logger } from 'pino';
import { type Address, getAddress, type Hex, toHex } from 'viem';
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import type { Rails } from '../../src/run/rails.js';
import type { SessionScheme, X402Rail } from '../../src/run/x402/rail.js';
import { DEV_KEY, type TestChain } from './anvil.js';
import type { Reply } from './gateway.js';

// x402 payers for tests: the official client (@x402/fetch, @x402/core x402Client + @x402/evm ExactEvmScheme)
// and a hand signer for payments the official client would never produce (expired, wrong amount, …).

export function newPayer(): PrivateKeyAccount {
  return privateKeyToAccount(generatePrivateKey());
}

/** Gateway env for x402 with the built-in facilitator on the test chain (gas paid by anvil's dev account). */
export function x402Env(chain: TestChain, payTo: Address, extra: Record<string, string> = {}) {
  return {
    TOLLGATE_X402_PAY_TO: payTo,
    TOLLGATE_X402_RPC_URL: chain.rpcUrl,
    TOLLGATE_X402_SIGNER_KEY: DEV_KEY,
    ...extra,
  };
}

/** The official client: registers the payer for eip155:8453 (and another network when asked). */
export function officialClient(payer: PrivateKeyAccount, networks: string[] = ['eip155:8453']): x402Client {
  const client = new x402Client();
  for (const n of networks) client.register(n as `${string}:${string}`, new ExactEvmScheme(payer));
  // Base's USDC on another network is not a default asset: tests that pay elsewhere lift the allowlist.
  if (networks.some((n) => n !== 'eip155:8453')) client.setSpendControls(false);
  return client;
}

export function paidFetch(payer: PrivateKeyAccount): typeof fetch {
  return wrapFetchWithPayment(fetch, officialClient(payer));
}

export function challengeOf(reply: Reply): PaymentRequired {
  return decodePaymentRequiredHeader(String(reply.headers['payment-required']));
}

export function receiptOf(reply: Reply): SettleResponse {
  return decodePaymentResponseHeader(String(reply.headers['payment-response']));
}

/** A payment made by the official client for a challenge (possibly doctored by the test). */
export async function officialPayment(
  payer: PrivateKeyAccount,
  challenge: PaymentRequired,
  networks?: string[],
): Promise<PaymentPayload> {
  return officialClient(payer, networks).createPaymentPayload(challenge);
}

export function encodePayment(p: unknown): string {
  return Buffer.from(JSON.stringify(p)).toString('base64');
}

export interface SignOptions {
  /** Signs with this account while claiming `from` = payer (a forged signature). */
  signer?: PrivateKeyAccount;
  to?: Address;
  value?: string;
  validAfter?: bigint;
  validBefore?: bigint;
  chainId?: number;
  nonce?: Hex;
}

/** A v2 `exact` payment signed by hand against `req` (accepted = req verbatim), with fields overridable. */
export async function signPayment(
  payer: PrivateKeyAccount,
  req: PaymentRequirements,
  o: SignOptions = {},
): Promise<PaymentPayload> {
  const now = BigInt(Math.floor(Date.now() / 1000));
  const authorization = {
    from: payer.address,
    to: o.to ?? getAddress(req.payTo),
    value: BigInt(o.value ?? req.amount),
    validAfter: o.validAfter ?? 0n,
    validBefore: o.validBefore ?? now + BigInt(req.maxTimeoutSeconds),
    nonce: o.nonce ?? toHex(randomBytes(32)),
  };
  const signature = await (o.signer ?? payer).signTypedData({
    domain: {
      name: String(req.extra.name),
      version: String(req.extra.version),
      chainId: o.chainId ?? Number(req.network.split(':')[1]),
      verifyingContract: getAddress(req.asset),
    },
    types: authorizationTypes,
    primaryType: 'TransferWithAuthorization',
    message: authorization,
  });
  return {
    x402Version: 2,
    accepted: req,
    payload: {
      signature,
      authorization: {
        ...authorization,
        value: authorization.value.toString(),
        validAfter: authorization.validAfter.toString(),
        validBefore: authorization.validBefore.toString(),
      },
    },
  };
}

export interface FacilitatorProcess {
  url: string;
  stats(): Promise<{ verify: number; settle: number; supported: number; unauthorized: number }>;
  close(): Promise<void>;
}

/** Starts test/fakes/evm/facilitator-process.ts (official x402 facilitator code) as a child on loopback. */
export async function startFacilitatorProcess(chain: TestChain, token: string): Promise<FacilitatorProcess> {
  const script = join(import.meta.dirname, '..', 'fakes', 'evm', 'facilitator-process.ts');
  const proc = spawn(process.execPath, ['--import', 'tsx', script], {
    env: {
      ...process.env,
      RPC_URL: chain.rpcUrl,
      KEY: DEV_KEY,
      TOKEN: token,
      CHAIN_ID: String(chain.chainId),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let seen = '';
    proc.stdout.on('data', (c: Buffer) => {
      seen += c.toString();
      const m = /listening on (\S+)/.exec(seen);
      if (m) resolve(m[1] as string);
    });
    proc.once('exit', (code) => reject(new Error(`facilitator exited with ${code}: ${seen}`)));
  });
  return {
    url,
    stats: async () => (await fetch(`${url}/stats`)).json() as never,
    close: () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null) return resolve();
        proc.once('exit', () => resolve());
        proc.kill('SIGTERM');
      }),
  };
}

/** A debug-level logger whose output the test can read (to prove secrets never reach the logs). */
export function capturingLogger(): { log: Logger; text(): string } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { log: pino({ level: 'debug' }, sink), text: () => lines.join('') };
}

/** The x402 rail's session scheme of a gateway (TOLLGATE_X402_SESSIONS=on), for claiming by hand. */
export function sessionsOf(gw: { run: { rails?: Rails | undefined } }): SessionScheme | undefined {
  return (gw.run.rails?.list.find((r) => r.names.includes('x402-session')) as X402Rail | undefined)?.sessions;
}
