import { availableParallelism } from 'node:os';
import { Agent, request } from 'undici';
import { mainThreadCpuMs, procCpuMs, startBareProxy, startFakePage, startGatewayProcess } from './process.js';
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
  // Each round also reads the server process's CPU, and its main thread's (its event loop) alone: where a
  // server at concurrency 32 is held, its main thread is busy all the time while the machine has cores to spare.
  const best = async (f: () => Promise<void>, pid?: number) => {
    const round = async () => {
      const cpu0 = procCpuMs(pid) ?? 0;
      const main0 = mainThreadCpuMs(pid) ?? 0;
      const own0 = process.cpuUsage();
      const t0 = performance.now();
      const r = await load(6000, 32, f);
      const wall = performance.now() - t0;
      const cpu = (procCpuMs(pid) ?? 0) - cpu0;
      const main = (mainThreadCpuMs(pid) ?? 0) - main0;
      // This process: the load generator and the fake page.
      const own = process.cpuUsage(own0);
      const spare = 1 - (cpu + (own.user + own.system) / 1000) / (wall * cpus);
      return { ...r, cpuUs: (cpu * 1000) / 6000, mainUs: (main * 1000) / 6000, mainBusy: main / wall, spare };
    };
    const a = await round();
    const b = await round();
    return a.perSecond >= b.perSecond ? a : b;
  };
  const d32 = await best(direct);
  const b32 = await best(viaBare, bare.pid);
  const g32 = await best(viaGateway, gw.proc.pid);
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
      '(`bench/bare-proxy.mjs`: node:http in, the JSON body parsed, undici out, no ledger; plain `node` with the',
      "gateway's V8 flags), all by the same undici client in one run. The gateway is a separate `tollgate serve`",
      'process (compiled), logging at `info`, with the real ledger: SQLite WAL, the hold a reservation in memory, the',
      'capture one commit made durable by an fdatasync off the event loop before the answer — API-key auth,',
      'validation and the SSRF-guarded fetch.',
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
      '',
      'At concurrency 32 (the best round), CPU per call of the server process and of its main thread (the event',
      "loop) alone, and how busy that thread was (read from /proc; the rest of the process's CPU is libuv's pool",
      "— the fdatasync, the receipt's signature — and V8's threads), and the share of the machine's cores that",
      'neither the server nor this process (the load generator and the fake page) used:',
      '',
      '| server | CPU µs per call, process | main thread µs per call | main thread busy | the machine idle |',
      '|---|---|---|---|---|',
      threadRow('bare Node proxy', b32),
      threadRow('HTTP shim', g32),
      '',
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
        why: "the tail is the sum of small waits, not one stage: the stage table's \"slowest 1 %\" column puts it in the upstream fetch (the gateway's own scavenges and thread wake-ups land in that wait), the receipt's hop to libuv's pool and the capture's fdatasync; no WAL checkpoints, logging at warn, a single-threaded GC and other semi-space sizes did not move it beyond the run-to-run noise (docs/decisions.md \"Node's flags\")",
      },
      {
        target: "#19 HTTP shim at concurrency 32 ≥ 60 % of the bare proxy's calls/s",
        measured: `${Math.round(g32.perSecond)} vs ${Math.round(b32.perSecond)} calls/s = ${(ratio * 100).toFixed(0)} %`,
        verdict: verdict(ratio >= 0.6),
        why: `one event loop: the gateway's main thread is busy ${pct(g32.mainBusy)} of the time at 32 in flight and spends ${Math.round(g32.mainUs)} µs per paid call, where the bare proxy's spends ${Math.round(b32.mainUs)} µs (busy ${pct(b32.mainBusy)}): auth, validation, the ledger's statements, the SSRF check, the HTML to Markdown, the log line, the receipt's hand-off to the pool, the garbage they leave (the stage table), while ${pct(g32.spare)} of the machine's cores stayed idle`,
      },
    ],
  };
};

const cpus = availableParallelism();
const pct = (x: number) => `${Math.round(x * 100)} %`;

function threadRow(
  name: string,
  r: { cpuUs: number; mainUs: number; mainBusy: number; spare: number },
): string {
  return `| ${name} | ${Math.round(r.cpuUs)} | ${Math.round(r.mainUs)} | ${pct(r.mainBusy)} | ${pct(r.spare)} |`;
}

export default bench;
