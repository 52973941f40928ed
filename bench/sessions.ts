import { loadavg } from 'node:os';
import { x402Client } from '@x402/core/client';
import type { PaymentRequirements } from '@x402/core/types';
import { BatchSettlementEvmScheme, computeChannelId, signVoucher } from '@x402/evm/batch-settlement/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { startChain } from '../test/helpers/anvil.js';
import { startGateway } from '../test/helpers/gateway.js';
import { challengeOf, encodePayment, newPayer, sessionsOf, x402Env } from '../test/helpers/x402.js';
import { fmt, interleave, summarize } from './stats.js';
import type { BenchModule } from './types.js';

// What an x402 session (the batch-settlement scheme) adds to a paid call, against the same call paid with an API
// key, in the same run: one scraperC/scrape call (1 cent; its handler answers at once, so the figures are the
// gateway's own work) over HTTP on loopback, the gateway on SQLite in this process. The session's channel is
// opened first (one deposit on anvil); then every session call carries a voucher signed beforehand (a payer
// signs its vouchers itself; that is not the gateway's time), so a session call costs the gateway the voucher's
// signature check, the channel reservation and commit (the database), and the ledger's hold and capture with the
// payment's provisional funding. Calls alternate key / session, one at a time, so both see the same machine.

const ACTION = 'scraperC/scrape';
const BODY = { url: 'https://example.com/', browser: false };
const CALLS = 400;
const PRICE = 10_000n;

const bench: BenchModule = async () => {
  const chain = await startChain();
  const merchant = newPayer().address;
  const t = await startGateway({
    env: {
      ...x402Env(chain, merchant),
      TOLLGATE_X402_SESSIONS: 'on',
      TOLLGATE_X402_SESSION_CLAIM_SECONDS: '3600',
    },
    handlers: { [ACTION]: async () => ({ raw: '<html>bench</html>' }) },
  });
  try {
    const payer = newPayer();
    await chain.mint(payer.address, 100_000_000n);
    const scheme = new BatchSettlementEvmScheme(payer, {
      depositPolicy: { depositMultiplier: 2 * CALLS + 100 },
    });
    const client = new x402Client().register('eip155:8453', scheme);
    const open = await wrapFetchWithPayment(fetch, client)(`${t.url}/api/run/${ACTION}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(BODY),
    });
    if (open.status !== 200) throw new Error(`opening the channel failed: ${open.status}`);

    // The vouchers of the next 2 × CALLS calls, signed ahead: cumulative = (1 + k) × price.
    const requirements = challengeOf(await t.post(`/api/run/${ACTION}`, BODY)).accepts.find(
      (a) => a.scheme === 'batch-settlement',
    ) as PaymentRequirements;
    const config = scheme.buildChannelConfig(requirements);
    const channelId = computeChannelId(config, 'eip155:8453');
    let charged = PRICE;
    const vouchers: string[] = [];
    for (let k = 0; k < 2 * CALLS + 20; k++) {
      charged += PRICE;
      const voucher = await signVoucher(payer, channelId, charged.toString(), 'eip155:8453');
      vouchers.push(
        encodePayment({
          x402Version: 2,
          accepted: requirements,
          payload: { type: 'voucher', channelConfig: config, voucher },
        }),
      );
    }
    let next = 0;
    const session = async () => {
      const r = await t.post(`/api/run/${ACTION}`, BODY, {
        headers: { 'payment-signature': vouchers[next++] as string },
      });
      if (r.status !== 200) throw new Error(`session call failed: ${r.status} ${r.text}`);
    };
    const { key } = await t.account('100');
    const keyed = async () => {
      const r = await t.post(`/api/run/${ACTION}`, BODY, { key });
      if (r.status !== 200) throw new Error(`keyed call failed: ${r.status}`);
    };
    // Warm-up: JIT, connection pools, prepared statements.
    for (let i = 0; i < 20; i++) {
      await keyed();
      await session();
    }
    const [k, s] = await interleave(CALLS, [keyed, session]);
    const ks = summarize(k?.latencies ?? []);
    const ss = summarize(s?.latencies ?? []);

    // CPU per call (this process: gateway and client; robust to other load on the machine).
    const cpuOf = async (task: () => Promise<void>, n: number) => {
      const before = process.cpuUsage();
      for (let i = 0; i < n; i++) await task();
      const used = process.cpuUsage(before);
      return (used.user + used.system) / n;
    };
    const keyCpu = await cpuOf(keyed, CALLS / 2);
    const sessionCpu = await cpuOf(session, CALLS / 2);

    // One batch: every voucher above claimed in one transaction and swept in one more.
    const before = await chain.balanceOf(merchant);
    const started = performance.now();
    const batch = await sessionsOf(t.gw)?.claimAndSettle();
    const batchMs = performance.now() - started;
    const swept = (await chain.balanceOf(merchant)) - before;
    const calls = 1 + 20 + CALLS + CALLS / 2;

    const delta = ss.p50 - ks.p50;
    const body = [
      `One ${ACTION} call (1 cent) over HTTP, the gateway on SQLite in this process, its handler answering at once.`,
      'A session call carries a voucher signed beforehand on a channel opened once (a deposit on anvil); calls',
      `alternate API key / session, one at a time, ${CALLS} each. Load average at the start: ${loadavg()[0]?.toFixed(1)}`,
      '(2 cores shared with other work: wall-clock figures move with it, the CPU figures much less).',
      '',
      '| payment | p50 | p99 | mean | CPU per call (µs, gateway + client) |',
      '|---|---|---|---|---|',
      `| API key (baseline) | ${fmt(ks.p50)} | ${fmt(ks.p99)} | ${fmt(ks.mean)} | ${keyCpu.toFixed(0)} |`,
      `| x402 session voucher | ${fmt(ss.p50)} | ${fmt(ss.p99)} | ${fmt(ss.mean)} | ${sessionCpu.toFixed(0)} |`,
      `| **added by the session** | **${fmt(delta)}** | | | **${(sessionCpu - keyCpu).toFixed(0)}** |`,
      '',
      `Target: within 1 ms at p50 of the API-key call. Measured: ${fmt(delta)} (${delta <= 1 ? 'met' : 'not met'}).`,
      'What a session call adds: the voucher decode, its EIP-712 signature recovery (libsecp256k1 in WebAssembly, the',
      'largest part), one channel read and two read-modify-write transactions (reserve, commit; on SQLite committed',
      "without their own fsync: they ride on the capture's), and the payer account's provisional funding with the hold.",
      '',
      `Then one claim and one sweep: ${batch?.claimed ?? 0} channel(s) claimed for ${calls} calls in ${fmt(batchMs, 0)}`,
      `(${batch?.transactions.length ?? 0} transactions); ${swept} atomic units (${Number(swept) / 10_000} cents) reached`,
      'the pay-to address, exactly the calls charged since the last claim.',
    ].join('\n');
    return {
      id: 'sessions',
      title: 'x402 sessions: the added latency of a voucher against an API key',
      body,
    };
  } finally {
    await t.close();
    await chain.close();
  }
};

export default bench;
