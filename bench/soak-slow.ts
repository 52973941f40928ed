import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { startBareProxy, startGatewayProcess } from './process.js';
import { rssOf, type SoakKind, soakKinds } from './soak-kinds.js';
import { summarize } from './stats.js';
import type { BenchSection } from './types.js';

// 1,000 paid calls in flight against a slow upstream (every page answers after 2 s), the HTTP shim and MCP
// tools/call of both eras mixed, no disconnects: every call should succeed at the upstream's pace (1,000 calls
// per 2 s) — none waiting in the gateway's connection queue until its deadline — and the gateway stay small.

const IN_FLIGHT = 1000;
const PAGE_MS = 2000;
const TOKEN = 'soak-metrics-token-0123456789abcdefghijklmn';

async function startSlowPage(): Promise<{ url: string; close(): Promise<void> }> {
  const page = `<!doctype html><html><head><title>slow</title></head><body>${'<p>payload</p>'.repeat(50)}</body></html>`;
  const server = createServer((_req, res) => {
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(page);
    }, PAGE_MS);
  });
  server.keepAliveTimeout = 60_000;
  server.maxConnections = IN_FLIGHT * 4;
  await new Promise<void>((r) => server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/page`,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const mib = (n: number) => `${n.toFixed(0)} MiB`;

export interface SlowSoak {
  section: BenchSection;
  peakMb: number;
  ok: number;
  calls: number;
}

interface Driven {
  ok: number;
  failures: Map<string, number>;
  latencies: number[];
  samples: number[];
  elapsed: number;
}

/**
 * Keeps IN_FLIGHT calls in flight for `seconds` against `base`, each drawn by `pick`, and samples `pid`'s RSS. A call
 * succeeds when it answers 200 with `charged_cents` equal to `cents`.
 */
async function drive(
  base: string,
  pick: () => SoakKind,
  cents: number,
  pid: number,
  seconds: number,
): Promise<Driven> {
  const charged = new RegExp(`"charged_cents\\\\?":${cents}\\b`);
  const agent = new Agent({ connections: IN_FLIGHT + 64, keepAliveTimeout: 60_000 });
  const latencies: number[] = [];
  const failures = new Map<string, number>();
  let ok = 0;
  const one = async () => {
    const kind = pick();
    const t = performance.now();
    try {
      const res = await request(`${base}${kind.path}`, {
        dispatcher: agent,
        method: 'POST',
        headers: kind.headers,
        body: kind.body,
        headersTimeout: 120_000,
        bodyTimeout: 120_000,
      });
      const text = await res.body.text();
      if (res.statusCode === 200 && charged.test(text) && !text.includes('"isError":true')) {
        ok++;
        latencies.push(performance.now() - t);
      } else {
        const code = /"code\\?":\\?"([a-z_]+)/.exec(text)?.[1] ?? 'other';
        const key = `${res.statusCode} ${code}`;
        failures.set(key, (failures.get(key) ?? 0) + 1);
      }
    } catch (e) {
      const key = `client ${(e as Error).name}`;
      failures.set(key, (failures.get(key) ?? 0) + 1);
    }
  };
  const began = performance.now();
  const stopAt = began + seconds * 1000;
  const worker = async () => {
    while (performance.now() < stopAt) await one();
  };
  const samples: number[] = [];
  const sampler = setInterval(() => samples.push(rssOf(pid).rss), 2000);
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  clearInterval(sampler);
  const elapsed = (performance.now() - began) / 1000;
  await agent.close();
  return { ok, failures, latencies, samples, elapsed };
}

export async function slowSoak(
  seconds = Number(process.env.TOLLGATE_SOAK_SLOW_SECONDS ?? 40),
): Promise<SlowSoak> {
  const page = await startSlowPage();
  const gw = await startGatewayProcess({ TOLLGATE_METRICS_TOKEN: TOKEN, TOLLGATE_LOG_LEVEL: 'warn' });
  const pid = gw.proc.pid as number;
  const kinds = soakKinds(gw.key, { url: page.url, browser: false });
  const idle = rssOf(pid);
  const pick = () => {
    const r = Math.random();
    return r < 0.5 ? kinds.http : r < 0.75 ? kinds.modern : kinds.legacy;
  };
  const { ok, failures, latencies, samples, elapsed } = await drive(gw.url, pick, 1, pid, seconds);
  const end = rssOf(pid);
  await gw.stop();

  // The floor: the bare Node proxy (bench/bare-proxy.mjs, the gateway's V8 flags, its pool sized for the load)
  // under the same 1,000 calls in flight, each the shim's body to its one route.
  const bare = await startBareProxy({ connections: IN_FLIGHT + 64 });
  const barePid = bare.pid as number;
  const bareIdle = rssOf(barePid);
  const bareKind: SoakKind = {
    path: '/',
    body: kinds.http.body,
    headers: { 'content-type': 'application/json' },
  };
  const bareRun = await drive(bare.url, () => bareKind, 0, barePid, seconds);
  const bareEnd = rssOf(barePid);
  await bare.stop();
  await page.close();

  const failed = [...failures.values()].reduce((a, b) => a + b, 0);
  const calls = ok + failed;
  const lat = summarize(latencies);
  const peakMb = end.peak * 1.048576;
  const maxSample = Math.max(...samples);
  const bareFailed = [...bareRun.failures.values()].reduce((a, b) => a + b, 0);
  const bareLat = summarize(bareRun.latencies);
  const barePeakMb = bareEnd.peak * 1.048576;
  const section: BenchSection = {
    id: 'soak-slow',
    title: 'Soak against a slow upstream: 1,000 calls in flight, every page taking 2 s',
    body: [
      `${seconds} s of paid \`scraperC/scrape\` calls kept ${IN_FLIGHT} in flight against a local page that answers every`,
      `request after ${PAGE_MS / 1000} s: half \`POST /api/run\`, a quarter MCP \`tools/call\` 2026-07-28, a quarter 2025`,
      '(stateless), no disconnects. One compiled gateway process (`/metrics` on, logging at `warn`, default',
      '`TOLLGATE_UPSTREAM_CONNECTIONS`), real ledger; the load generator and the slow page share the 2 cores.',
      '',
      'The floor beside it: the bare Node proxy (`bench/bare-proxy.mjs`, no ledger, the same V8 flags, its pool',
      "sized for the load) under the same 1,000 calls in flight, every call the shim's body.",
      '',
      '| | gateway | bare Node proxy |',
      '|---|---|---|',
      `| RSS idle, just started | ${mib(idle.rss)} | ${mib(bareIdle.rss)} |`,
      `| RSS peak (VmHWM) | **${mib(end.peak)}** | ${mib(bareEnd.peak)} |`,
      `| highest 2 s sample / at the end of the load | ${mib(maxSample)} / ${mib(end.rss)} | ${mib(Math.max(...bareRun.samples))} / ${mib(bareEnd.rss)} |`,
      `| calls | ${calls} in ${elapsed.toFixed(0)} s = ${Math.round(calls / elapsed)} calls/s (the upstream's pace: ${IN_FLIGHT / (PAGE_MS / 1000)}/s) | ${bareRun.ok + bareFailed} = ${Math.round((bareRun.ok + bareFailed) / bareRun.elapsed)} calls/s |`,
      `| succeeded | **${ok}** (paid, 1 cent) | ${bareRun.ok} |`,
      `| failed | ${failed}${failed > 0 ? ` (${[...failures].map(([k, n]) => `${k}: ${n}`).join(', ')})` : ''} | ${bareFailed} |`,
      `| latency of a successful call p50 / p99 | ${(lat.p50 / 1000).toFixed(2)} s / ${(lat.p99 / 1000).toFixed(2)} s | ${(bareLat.p50 / 1000).toFixed(2)} s / ${(bareLat.p99 / 1000).toFixed(2)} s |`,
      '',
      `Targets (issue 19): every call succeeds — ${failed === 0 ? 'met' : `not met (${failed} of ${calls} failed)`};`,
      `RSS ≤ 150 MB — peak ${peakMb.toFixed(0)} MB (${peakMb <= 150 ? 'met' : 'not met'}); the bare Node proxy's peak under the same load: ${barePeakMb.toFixed(0)} MB.`,
    ].join('\n'),
    targets: [
      {
        target: '#19 1,000 calls in flight against a 2 s upstream: every call succeeds',
        measured: `${ok} of ${calls} succeeded; ${Math.round(calls / elapsed)} calls/s, p50 ${(lat.p50 / 1000).toFixed(2)} s`,
        verdict: failed === 0 ? 'met' : 'not met',
      },
      {
        target: '#19 RSS ≤ 150 MB with 1,000 calls in flight against a 2 s upstream',
        measured: `peak ${mib(end.peak)} = ${peakMb.toFixed(0)} MB (the bare Node proxy: ${barePeakMb.toFixed(0)} MB)`,
        verdict: peakMb <= 150 ? 'met' : 'not met',
        why: `the bare Node proxy peaks at ${barePeakMb.toFixed(0)} MB under the same load. Heap snapshots (docs/decisions.md "The slow soak against its floor"): the gateway's live heap is 35 MiB at rest (the proxy's 9: module sources and compiled code are 14 MiB of the difference) and 61 MiB with ~1,000 calls in flight, 27 KB a call, of which 13.5 KB the proxy holds too (both sockets, parsers, stream states) and the rest is the call's own (9–11 suspended async frames, ~40 closures, its scope and abort signals); V8 collects at 1.5× the live set. With no per-call memory beyond the proxy's, the larger heap at rest alone would put the gateway ~40 MB above the proxy's peak`,
      },
    ],
  };
  return { section, peakMb, ok, calls };
}
