import { Agent, request } from 'undici';
import { type StageReport, stageRowLine, stageTableHead } from '../src/ops/timing.js';
import { startFakeOpenRouter } from '../test/fakes/openrouter.js';
import { startBareProxy, startFakePage, startGatewayProcess } from './process.js';
import { load, summarize } from './stats.js';
import type { BenchModule } from './types.js';

// Where the time of a paid call goes: the bench's paid call (`scraperC/scrape` of a local page through
// `POST /api/run`, and the same as MCP `tools/call`) sent one at a time to a gateway started with
// TOLLGATE_TIMING=1, which marks each stage of each call (src/ops/timing.ts) and prints the table when it
// stops. Reproduce by hand: `TOLLGATE_TIMING=1 tollgate serve`, send calls one at a time, stop it (SIGTERM).

const CALLS = 3000;
const LLM_CALLS = 1500;
const WARMUP = 500;

export async function timed(kind: 'http' | 'mcp') {
  const page = await startFakePage();
  const gw = await startGatewayProcess({ TOLLGATE_TIMING: '1' }, [], { captureStderr: true });
  const client = new Agent({ connections: 64, keepAliveTimeout: 60_000 });
  const args = { url: page.url, browser: false };
  const send =
    kind === 'http'
      ? { path: '/api/run/scraperC/scrape', body: JSON.stringify(args), headers: {} }
      : {
          path: '/mcp',
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/call',
            params: {
              name: 'scraperC_scrape',
              arguments: args,
              _meta: {
                'io.modelcontextprotocol/protocolVersion': '2026-07-28',
                'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' },
                'io.modelcontextprotocol/clientCapabilities': {},
              },
            },
          }),
          headers: {
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2026-07-28',
            'mcp-method': 'tools/call',
            'mcp-name': 'scraperC_scrape',
          },
        };
  const one = async () => {
    const r = await request(`${gw.url}${send.path}`, {
      dispatcher: client,
      method: 'POST',
      headers: { ...send.headers, authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
      body: send.body,
    });
    const text = await r.body.text();
    if (r.statusCode !== 200 || !/charged_cents\\?":1\b/.test(text))
      throw new Error(`${r.statusCode}: ${text}`);
  };
  await load(WARMUP, 1, one);
  const seq = await load(CALLS, 1, one);
  // CPU per call with 32 in flight (no stage split: calls overlap), the gateway process as a whole.
  const cpu0 = gw.cpuMs() ?? 0;
  const c32 = await load(CALLS, 32, one);
  const cpuPerCall = (((gw.cpuMs() ?? 0) - cpu0) * 1000) / CALLS;
  await client.close();
  await gw.stop();
  await page.close();
  const line = /^TOLLGATE_TIMING (.*)$/m.exec(gw.stderr())?.[1];
  if (!line) throw new Error(`no stage table on the gateway's stderr: ${gw.stderr().slice(-2000)}`);
  return {
    report: JSON.parse(line) as StageReport,
    endToEnd: summarize(seq.latencies),
    cpuPerCall,
    perSecond32: c32.perSecond,
  };
}

/** The model router's streaming call, one at a time: where its time to first byte goes. */
export async function timedLlm() {
  const MODEL = 'bench/model';
  const fake = await startFakeOpenRouter([{ id: MODEL, prompt: '0', completion: '0.0000001' }]);
  fake.scenario(MODEL, { chunks: 8 });
  const gw = await startGatewayProcess(
    {
      TOLLGATE_TIMING: '1',
      TOLLGATE_LLM_API_KEY: fake.apiKey,
      TOLLGATE_LLM_BASE_URL: fake.url,
      TOLLGATE_LLM_DAILY_CAP_USD: '1000',
    },
    [],
    { captureStderr: true },
  );
  const client = new Agent({ connections: 8, keepAliveTimeout: 60_000 });
  const body = JSON.stringify({
    model: MODEL,
    messages: [{ role: 'user', content: 'Say something.' }],
    stream: true,
  });
  const one = async () => {
    const r = await request(`${gw.url}/api/llm/v1/chat/completions`, {
      dispatcher: client,
      method: 'POST',
      headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
      body,
    });
    const text = await r.body.text();
    if (r.statusCode !== 200 || !text.includes('[DONE]')) throw new Error(`${r.statusCode}: ${text}`);
    // Spaced, as the router's bench spaces its calls: the next call meets an idle gateway.
    await new Promise((res) => setTimeout(res, 2));
  };
  await load(WARMUP, 1, one);
  const seq = await load(LLM_CALLS, 1, one);
  await client.close();
  await gw.stop();
  await fake.close();
  const line = /^TOLLGATE_TIMING (.*)$/m.exec(gw.stderr())?.[1];
  if (!line) throw new Error(`no stage table on the gateway's stderr: ${gw.stderr().slice(-2000)}`);
  return { report: JSON.parse(line) as StageReport, endToEnd: summarize(seq.latencies) };
}

/** The bare proxy's CPU per call at 32 in flight: the floor of the last row. */
async function bareCpu(): Promise<number> {
  const page = await startFakePage();
  const bare = await startBareProxy();
  const client = new Agent({ connections: 64, keepAliveTimeout: 60_000 });
  const one = async () => {
    const r = await request(bare.url, {
      dispatcher: client,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: page.url, browser: false }),
    });
    await r.body.text();
  };
  await load(WARMUP, 8, one);
  const cpu0 = bare.cpuMs() ?? 0;
  await load(CALLS, 32, one);
  const us = (((bare.cpuMs() ?? 0) - cpu0) * 1000) / CALLS;
  await client.close();
  await bare.stop();
  await page.close();
  return us;
}

const table = (r: Awaited<ReturnType<typeof timed>>) => [
  ...stageTableHead(),
  ...r.report.rows.map(stageRowLine),
  `| **total, door to response written** | **${r.report.total.wallP50.toFixed(3)}** | ${r.report.total.wallMean.toFixed(3)} | ${r.report.total.wallTail.toFixed(3)} | **${Math.round(r.report.total.cpuMean)}** |`,
  `| end to end at the client (p50) | ${r.endToEnd.p50.toFixed(3)} | ${r.endToEnd.mean.toFixed(3)} | | |`,
  `| CPU per call at 32 in flight (the process, all threads) | | | | ${Math.round(r.cpuPerCall)} |`,
];

const bench: BenchModule = async () => {
  const http = await timed('http');
  const mcp = await timed('mcp');
  const llm = await timedLlm();
  const bare = await bareCpu();
  const ttfbStages = llm.report.rows.slice(
    0,
    llm.report.rows.findIndex((r) => r.stage === 'first byte written') + 1,
  );
  const ttfb = ttfbStages.reduce((s, r) => s + r.wallP50, 0);
  return {
    id: 'stages',
    title: 'Where the time of a paid call goes',
    body: [
      `The HTTP shim's paid call (\`scraperC/scrape\` of a local 2 KB page, 1 cent), ${CALLS} calls sent one at a time`,
      `after ${WARMUP} of warm-up, to a compiled gateway started with \`TOLLGATE_TIMING=1\`: each door, the execution`,
      "path's trace steps and the web fetcher mark the stages of each call (src/ops/timing.ts); wall time is the",
      'median per stage (and the mean over the slowest 1 % of calls by total: what the p99 is made of), CPU is the',
      "whole process's (every thread) while the stage ran, averaged. The stages are",
      'cut where the code can mark them: `dispatch` is the door handing over to `execute` (x402 dispatch, call',
      'tracking); `admission` the rate limit and precheck; `scope + SSRF check` the engine from the handler to the',
      'request (call scope, abort signals, the guard); `receipt, back to the door` the receipt signature and the',
      'return through `execute`. Reproduce: `TOLLGATE_TIMING=1 node bin/tollgate.js serve`, send calls one at a',
      'time, stop it with SIGTERM: the table is printed on stderr.',
      '',
      '**HTTP shim (`POST /api/run/scraperC/scrape`)**',
      '',
      ...table(http),
      '',
      '**MCP `tools/call` (2026-07-28, the fast path)**',
      '',
      ...table(mcp),
      '',
      `The bare Node proxy spends ${Math.round(bare)} µs of CPU per call at 32 in flight in the same run.`,
      '',
      `**Model router (\`POST /api/llm/v1/chat/completions\`, streaming, 8 chunks from the fake OpenRouter; ${LLM_CALLS} calls, 2 ms apart)**`,
      '',
      ...stageTableHead(),
      ...llm.report.rows.map(stageRowLine),
      `| **to the first byte (the stages above it, p50s summed)** | **${ttfb.toFixed(3)}** | | | ${Math.round(ttfbStages.reduce((s, r) => s + r.cpuMean, 0))} |`,
      `| end to end at the client, whole stream (p50) | ${llm.endToEnd.p50.toFixed(3)} | ${llm.endToEnd.mean.toFixed(3)} | | |`,
    ].join('\n'),
    targets: [
      {
        target: '#19 see where the time of a paid call goes (TOLLGATE_TIMING=1)',
        measured: `shim ${http.report.total.wallP50.toFixed(2)} ms p50 door to response, ${Math.round(http.report.total.cpuMean)} µs CPU one at a time, ${Math.round(http.cpuPerCall)} µs at 32 in flight (bare proxy ${Math.round(bare)} µs)`,
        verdict: 'reported',
      },
    ],
  };
};

export default bench;
