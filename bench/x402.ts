import { findAction } from '../catalog/index.js';
import { decodePayment } from '../src/run/x402/codec.js';
import { checkPayment, checkWindow, paymentKey } from '../src/run/x402/local-check.js';
import { offerFor } from '../src/run/x402/requirements.js';
import { startChain } from '../test/helpers/anvil.js';
import { startGateway } from '../test/helpers/gateway.js';
import { challengeOf, encodePayment, newPayer, officialPayment, x402Env } from '../test/helpers/x402.js';
import { platformHandlers } from '../tools/platform.js';
import { fmt, load, summarize } from './stats.js';
import type { BenchModule } from './types.js';

// An x402-paid call on a real local chain: anvil (chain id 8453, automine) with the test USDC at Base's
// address, the gateway's built-in facilitator (official @x402/core + @x402/evm code) verifying and settling on
// it, payments signed beforehand by the official client. The gateway runs in this process so its facilitator
// and handler can be timed: the split is local checks / verify / action / settle, and the rest (HTTP, ledger,
// payment store) is what remains of the end-to-end time. Then paid calls/s with parallel settlements from one
// facilitator key, against the same action paid with an API key.

const ACTION = 'platform/consult';
const BODY = { intent: 'fetch https://example.com as markdown' };

const bench: BenchModule = async () => {
  const chain = await startChain();
  const merchant = newPayer().address;
  const splits = { verify: [] as number[], settle: [] as number[], action: [] as number[] };
  const consult = platformHandlers['platform/consult'] as (i: never, c: never) => Promise<unknown>;
  const t = await startGateway({
    env: x402Env(chain, merchant),
    handlers: {
      [ACTION]: async (input: never, ctx: never) => {
        const s = performance.now();
        try {
          return await consult(input, ctx);
        } finally {
          splits.action.push(performance.now() - s);
        }
      },
    } as never,
  });
  try {
    const x402 = t.gw.x402;
    if (!x402) throw new Error('x402 not configured');
    const f = x402.facilitator;
    const verify = f.verify.bind(f);
    const settle = f.settle.bind(f);
    f.verify = async (p, r) => {
      const s = performance.now();
      try {
        return await verify(p, r);
      } finally {
        splits.verify.push(performance.now() - s);
      }
    };
    f.settle = async (p, r) => {
      const s = performance.now();
      try {
        return await settle(p, r);
      } finally {
        splits.settle.push(performance.now() - s);
      }
    };

    const payer = newPayer();
    await chain.mint(payer.address, 1_000_000_000n);
    const challenge = challengeOf(await t.post(`/api/run/${ACTION}`, BODY));
    const sign = async (n: number) => {
      const out: string[] = [];
      for (let i = 0; i < n; i++) out.push(encodePayment(await officialPayment(payer, challenge)));
      return out;
    };
    const pay = async (header: string) => {
      const r = await t.post(`/api/run/${ACTION}`, BODY, { headers: { 'payment-signature': header } });
      if (r.status !== 200) throw new Error(`paid call failed: ${r.status} ${r.text}`);
    };

    // Local checks alone: decode, requirements, EIP-712 signature recovery, window, nonce key.
    const action = findAction(ACTION);
    if (!action) throw new Error('no action');
    const offer = offerFor(x402.config, action);
    const sample = (await sign(1))[0] as string;
    const local: number[] = [];
    for (let i = 0; i < 300; i++) {
      const s = performance.now();
      const d = decodePayment(sample);
      if (!d.ok) throw new Error(d.message);
      if (await checkPayment(d.payment, offer.requirements, x402.config.chainId)) throw new Error('refused');
      if (checkWindow(d.payment, offer, Date.now())) throw new Error('window');
      paymentKey(d.payment, offer.requirements);
      local.push(performance.now() - s);
    }

    // Sequential paid calls, split.
    const warm = await sign(5);
    for (const h of warm) await pay(h);
    for (const k of Object.keys(splits)) splits[k as keyof typeof splits].length = 0;
    const seqHeaders = await sign(40);
    const e2e: number[] = [];
    for (const h of seqHeaders) {
      const s = performance.now();
      await pay(h);
      e2e.push(performance.now() - s);
    }
    const sv = summarize(splits.verify);
    const ss = summarize(splits.settle);
    const sa = summarize(splits.action);
    const sl = summarize(local);
    const se = summarize(e2e);

    // Throughput with parallel settlements (one facilitator key, viem nonce manager).
    const rows: string[] = [];
    const transfersBefore = await chain.transfersFrom(payer.address);
    let paid = 0;
    for (const concurrency of [1, 4, 8, 16]) {
      const headers = await sign(64);
      const r = await load(headers.length, concurrency, (i) => pay(headers[i] as string));
      paid += headers.length;
      const s = summarize(r.latencies);
      rows.push(
        `| x402, ${concurrency} in parallel | ${r.perSecond.toFixed(1)} | ${fmt(s.p50, 1)} | ${fmt(s.p99, 1)} |`,
      );
    }
    const settled = (await chain.transfersFrom(payer.address)) - transfersBefore;
    const { key } = await t.account('100');
    const keyed = await load(400, 8, async () => {
      const r = await t.post(`/api/run/${ACTION}`, BODY, { key });
      if (r.status !== 200) throw new Error(`keyed call failed: ${r.status}`);
    });
    const sk = summarize(keyed.latencies);
    rows.push(
      `| API key (baseline), 8 in parallel | ${keyed.perSecond.toFixed(1)} | ${fmt(sk.p50, 1)} | ${fmt(sk.p99, 1)} |`,
    );

    const rest = se.p50 - sl.p50 - sv.p50 - sa.p50 - ss.p50;
    const body = [
      `One ${ACTION} call (1 cent) paid with x402 over HTTP, on anvil (chain id 8453, automine: a settlement is`,
      'mined at once; on Base it waits for a ~2 s block instead). The gateway, its built-in facilitator (official',
      'x402 code), anvil and the load generator share the machine; the gateway runs in the bench process.',
      '',
      '**Latency of one paid call, sequential (40 calls)**',
      '',
      '| part | p50 | p99 |',
      '|---|---|---|',
      `| local checks (decode, requirements, EIP-712 recovery, window) | ${fmt(sl.p50)} | ${fmt(sl.p99)} |`,
      `| verify (facilitator: eth_calls incl. transfer simulation) | ${fmt(sv.p50, 1)} | ${fmt(sv.p99, 1)} |`,
      `| action (platform/consult handler) | ${fmt(sa.p50)} | ${fmt(sa.p99)} |`,
      `| settle (facilitator: transferWithAuthorization tx + receipt) | ${fmt(ss.p50, 1)} | ${fmt(ss.p99, 1)} |`,
      `| rest (HTTP, ledger hold/capture, payment-store writes) | ${fmt(Math.max(0, rest), 1)} | |`,
      `| **end to end** | **${fmt(se.p50, 1)}** | **${fmt(se.p99, 1)}** |`,
      '',
      '**Paid calls per second** (64 pre-signed payments per row, each settled on chain)',
      '',
      '| payment | calls/s | p50 | p99 |',
      '|---|---|---|---|',
      ...rows,
      '',
      `All ${paid} parallel x402 calls returned 200 and ${settled} transfers were mined: parallel settlements`,
      'from one facilitator key do not collide (viem nonce manager). The chain round trips (verify and settle,',
      'several JSON-RPC calls each) dominate; on a real network settlement adds a block time per call, which is',
      'why the default flow settles after the action and only expensive actions are configured to settle first.',
    ].join('\n');
    return {
      id: 'x402',
      title: 'x402: paid calls on a local chain',
      body,
      targets: [
        {
          target: 'x402: latency split and paid calls/s',
          measured: `${fmt(se.p50, 1)} end to end (verify ${fmt(sv.p50, 1)}, settle ${fmt(ss.p50, 1)} on anvil); ${paid} parallel payments, ${settled} settled`,
          verdict: 'reported',
        },
      ],
    };
  } finally {
    await t.close();
    await chain.close();
  }
};

export default bench;
