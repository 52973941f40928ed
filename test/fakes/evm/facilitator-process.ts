import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { x402Facilitator } from '@x402/core/facilitator';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { ExactEvmScheme } from '@x402/evm/exact/facilitator';
import { createWalletClient, defineChain, type Hex, http, nonceManager, publicActions } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

// A stand-alone x402 facilitator process for the remote-facilitator tests: the official x402Facilitator and
// `exact` EVM scheme (as examples/typescript/facilitator/basic in the x402 repo) behind POST /verify,
// POST /settle and GET /supported on 127.0.0.1, settling on the test chain. It requires a bearer token, like
// hosted facilitators, and counts requests (GET /stats) so tests can see what the gateway asked.
//
//   RPC_URL=… KEY=0x… TOKEN=… [CHAIN_ID=8453] node --import tsx test/fakes/evm/facilitator-process.ts
// prints "facilitator listening on http://127.0.0.1:PORT".

const rpcUrl = process.env.RPC_URL as string;
const chainId = Number(process.env.CHAIN_ID ?? 8453);
const network = `eip155:${chainId}` as const;
const token = process.env.TOKEN as string;

const chain = defineChain({
  id: chainId,
  name: network,
  nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
  rpcUrls: { default: { http: [rpcUrl] } },
});
const account = privateKeyToAccount(process.env.KEY as Hex, { nonceManager });
const wallet = createWalletClient({
  account,
  chain,
  transport: http(rpcUrl, { retryCount: 0 }),
  pollingInterval: 50,
}).extend(publicActions);
const signer = toFacilitatorEvmSigner({
  address: account.address,
  getCode: (a) => wallet.getCode(a),
  readContract: (a) => wallet.readContract(a as Parameters<typeof wallet.readContract>[0]),
  verifyTypedData: (a) => wallet.verifyTypedData(a as Parameters<typeof wallet.verifyTypedData>[0]),
  writeContract: (a) => wallet.writeContract(a as Parameters<typeof wallet.writeContract>[0]),
  sendTransaction: (a) => wallet.sendTransaction(a),
  waitForTransactionReceipt: (a) => wallet.waitForTransactionReceipt(a),
});
const facilitator = new x402Facilitator().register(network, new ExactEvmScheme(signer));
const stats = { verify: 0, settle: 0, supported: 0, unauthorized: 0 };

async function readJson(req: IncomingMessage): Promise<{
  paymentPayload: PaymentPayload;
  paymentRequirements: PaymentRequirements;
}> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

function send(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

const server = createServer(async (req, res) => {
  try {
    if (req.url === '/stats') return send(res, 200, stats);
    if (req.headers.authorization !== `Bearer ${token}`) {
      stats.unauthorized++;
      return send(res, 401, { error: 'unauthorized' });
    }
    if (req.method === 'GET' && req.url === '/supported') {
      stats.supported++;
      return send(res, 200, facilitator.getSupported());
    }
    if (req.method === 'POST' && (req.url === '/verify' || req.url === '/settle')) {
      const body = await readJson(req);
      if (req.url === '/verify') {
        stats.verify++;
        return send(res, 200, await facilitator.verify(body.paymentPayload, body.paymentRequirements));
      }
      stats.settle++;
      return send(res, 200, await facilitator.settle(body.paymentPayload, body.paymentRequirements));
    }
    send(res, 404, { error: 'not found' });
  } catch (e) {
    send(res, 500, { error: (e as Error).message });
  }
});
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`facilitator listening on http://127.0.0.1:${port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
