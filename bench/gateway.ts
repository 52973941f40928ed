import { Agent, request } from 'undici';
import { startBareProxy, startFakePage, startGatewayProcess } from './process.js';
import { fmt, interleave, load, type Summary, summarize } from './stats.js';
import { type BenchModule, verdict } from './types.js';

// The HTTP shim's overhead: a paid cheap action (scraperC/scrape, built-in plain fetch, 1 cent) through the
// gateway against a local fake upstream, versus the same upstream called directly and through a bare Node
// pass-through proxy (the baseline of the targets), by the same client in one run.

const bench: BenchModule = async () => {
  const upstream = await startFakePage();
  const gw = await startGatewayProcess();
  const bare = await startBareProxy();
  const client = new Agent({ connections: 64, keepAliveTimeout: 60_000 });
  const direct = async () => {
    const r = await request(upstream.url, { dispatcher: client });
    await r.body.text();
  };
  const body = JSON.stringify({ url: upstream.url, browser: false });
  const post = (url: string, headers: Record<string, string>) => async () => {
    const r = await request(url, {
      dispatcher: client,
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body,
    });
    const text = await r.body.text();
    if (r.statusCode !== 200) throw new Error(`${url} answered ${r.statusCode}: ${text}`);
  };
  const viaBare = post(bare.url, {});
  const viaGateway = post(`${gw.url}/api/run/scraperC/scrape`, { authorization: `Bearer ${gw.key}` });

  // Warm up every path (JIT, connection pools, SQLite page cache).
  for (const f of [direct, viaBare, viaGateway]) await load(500, 8, f);

  // Concurrency 1: the three paths interleaved call by call, so all see the same machine (a shared VM whose
  // speed drifts). Concurrency 32: each path alone, best of two rounds.
  const c1 = await interleave(3000, [direct, viaBare, viaGateway]);
  const [d1, b1, g1] = c1.map((r) => summarize(r.latencies)) as [Summary, Summary, Summary];
  const best = async (f: () => Promise<void>) => {
    const a = await load(6000, 32, f);
    const b = await load(6000, 32, f);
    return a.perSecond >= b.perSecond ? a : b;
  };
  const d32 = await best(direct);
  const b32 = await best(viaBare);
  const g32 = await best(viaGateway);
  await client.close();
  await gw.stop();
  await bare.stop();
  await upstream.close();

  const added = {
    bareP50: b1.p50 - d1.p50,
    bareP99: b1.p99 - d1.p99,
    p50: g1.p50 - d1.p50,
    p99: g1.p99 - d1.p99,
  };
  const ratio = g32.perSecond / b32.perSecond;
  const row = (name: string, s: Summary, base: Summary, c32: number) =>
    `| ${name} | ${fmt(s.p50)} / ${fmt(s.p99)} | **${fmt(s.p50 - base.p50)} / ${fmt(s.p99 - base.p99)}** | ${Math.round(c32)} |`;
  const p99Ceiling = added.bareP99 + 1.0;
  return {
    id: 'gateway',
    title: 'HTTP shim: a paid call against a bare Node proxy',
    body: [
      'A paid cheap action (`scraperC/scrape`, built-in plain fetch of a local fake page, 1 cent) through',
      '`POST /api/run`, against the same page fetched directly and through a bare Node pass-through proxy',
      '(`bench/bare-proxy.ts`: node:http in, the JSON body parsed, undici out, no ledger), all by the same undici',
      'client in one run. The gateway is a separate `tollgate serve` process (compiled), logging at `info`, with the',
      'real ledger: SQLite WAL, the hold a reservation in memory, the capture one commit made durable by an',
      'fdatasync off the event loop before the answer — API-key auth, validation and the SSRF-guarded fetch.',
      '',
      '| path | p50 / p99 at concurrency 1 | added over direct p50 / p99 | calls/s at concurrency 32 |',
      '|---|---|---|---|',
      `| direct | ${fmt(d1.p50)} / ${fmt(d1.p99)} | — | ${Math.round(d32.perSecond)} |`,
      row('bare Node proxy', b1, d1, b32.perSecond),
      row('HTTP shim', g1, d1, g32.perSecond),
      '',
      `Targets (issue 19): shim added p50 ≤ 0.6 ms — measured **${fmt(added.p50)}** (${verdict(added.p50 <= 0.6)});`,
      `added p99 ≤ the bare proxy's added p99 + 1.0 ms = ${fmt(p99Ceiling)} — **${fmt(added.p99)}**`,
      `(${verdict(added.p99 <= p99Ceiling)}); throughput at concurrency 32 ≥ 60 % of the bare proxy —`,
      `**${(ratio * 100).toFixed(0)} %** (${Math.round(g32.perSecond)} vs ${Math.round(b32.perSecond)} calls/s, ${verdict(ratio >= 0.6)}).`,
      'Where the time goes: the "Where the time of a paid call goes" section (`npm run bench -- stages`).',
    ].join('\n'),
    targets: [
      {
        target: '#19 HTTP shim added p50 at concurrency 1 ≤ 0.6 ms',
        measured: `${fmt(added.p50)} (the bare proxy adds ${fmt(added.bareP50)})`,
        verdict: verdict(added.p50 <= 0.6),
        why: 'the one durable commit: the capture waits for an fdatasync of the WAL (0.1–0.2 ms on this disk alone), the largest stage of the stage table ("Where the time of a paid call goes"); the rest is what the gateway does that a proxy does not (auth, validation, SSRF check, receipt, the record)',
      },
      {
        target: "#19 HTTP shim added p99 ≤ the bare proxy's added p99 + 1.0 ms",
        measured: `${fmt(added.p99)} against ${fmt(added.bareP99)} + 1.0 ms`,
        verdict: verdict(added.p99 <= p99Ceiling),
      },
      {
        target: "#19 HTTP shim at concurrency 32 ≥ 60 % of the bare proxy's calls/s",
        measured: `${Math.round(g32.perSecond)} vs ${Math.round(b32.perSecond)} calls/s = ${(ratio * 100).toFixed(0)} %`,
        verdict: verdict(ratio >= 0.6),
        why: "CPU: a paid call costs the gateway 2–3× the proxy's CPU per call (the stage table's last row, against the bare proxy's in the same run): auth, validation, the ledger's statements, the receipt's signature, the SSRF check, the log line, the garbage they leave; and the load generator shares the 2 cores",
      },
    ],
  };
};

export default bench;
