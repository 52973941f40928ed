import pino from 'pino';
import { Agent, request } from 'undici';
import { createLogger, logRequest } from '../src/log.js';
import { startFakePage, startGatewayProcess } from './process.js';
import { load } from './stats.js';
import type { BenchModule } from './types.js';

// What request logging costs. End to end: the HTTP shim's paid call through two gateway processes, one logging
// at `info` (a line per request, the default) and one at `warn` (no request lines), the same calls interleaved,
// gateway CPU per call (robust to the machine's other work where wall time is not). In process: the CPU of one
// request line, as the gateway writes it and as pino's `log.info` with the gateway's redaction would.

const ROUNDS = 10;
const PER_ROUND = 2000;

function perLineUs(fn: () => void): number {
  for (let i = 0; i < 20_000; i++) fn();
  const rounds: number[] = [];
  for (let r = 0; r < 5; r++) {
    const c0 = process.cpuUsage();
    for (let i = 0; i < 100_000; i++) fn();
    const c = process.cpuUsage(c0);
    rounds.push((c.user + c.system) / 100_000);
  }
  return rounds.sort((a, b) => a - b)[2] as number;
}

const bench: BenchModule = async () => {
  const sink = { write: () => true } as unknown as pino.DestinationStream;
  const log = createLogger('info', sink);
  const line = {
    req_id: 'b7c0e4a2-5d1f-4c3a-9e8b-2f6a1d0c9e7f',
    method: 'POST',
    path: '/api/run/scraperC/scrape',
    status: 200,
    ms: 1.7,
  };
  const ours = perLineUs(() => logRequest(log, line));
  const viaPino = perLineUs(() => log.info(line, 'request'));
  const plainPino = pino({ level: 'info', base: { svc: 'tollgate' } }, sink);
  const unredacted = perLineUs(() => plainPino.info(line, 'request'));

  const page = await startFakePage();
  const info = await startGatewayProcess({ TOLLGATE_LOG_LEVEL: 'info' });
  const warn = await startGatewayProcess({ TOLLGATE_LOG_LEVEL: 'warn' });
  const agent = new Agent({ connections: 64, keepAliveTimeout: 60_000 });
  const body = JSON.stringify({ url: page.url, browser: false });
  const call = (gw: typeof info) => async () => {
    const r = await request(`${gw.url}/api/run/scraperC/scrape`, {
      dispatcher: agent,
      method: 'POST',
      headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
      body,
    });
    await r.body.text();
    if (r.statusCode !== 200) throw new Error(`answered ${r.statusCode}`);
  };
  for (const gw of [info, warn]) await load(500, 16, call(gw));
  const cpu = { info: 0, warn: 0 };
  const rate = { info: 0, warn: 0 };
  for (let r = 0; r < ROUNDS; r++) {
    // Alternating which goes first, so a drift of the machine within a round hits both alike.
    const pair = [
      ['info', info],
      ['warn', warn],
    ] as const;
    for (const [name, gw] of r % 2 === 0 ? pair : [...pair].reverse()) {
      const c0 = gw.cpuMs() ?? 0;
      const res = await load(PER_ROUND, 32, call(gw));
      cpu[name] += (gw.cpuMs() ?? 0) - c0;
      rate[name] += res.perSecond / ROUNDS;
    }
  }
  await agent.close();
  await info.stop();
  await warn.stop();
  await page.close();
  const perCall = (ms: number) => (ms * 1000) / (ROUNDS * PER_ROUND);
  const added = perCall(cpu.info) - perCall(cpu.warn);
  const share = (added / perCall(cpu.info)) * 100;
  return {
    id: 'logging',
    title: 'Request logging: what a line per request costs',
    body: [
      'One JSON line per request at `info` (the default): request id, method, path, status, duration. Since',
      'issue 19 the gateway writes that line itself (src/log.ts `logRequest`: the same fields pino would write, in',
      'the same order, to the same asynchronous stdout) instead of through `log.info`, whose redaction pass',
      '(the gateway redacts credentials wherever they appear in a log object) is most of its cost; the line holds',
      'nothing to redact. Every other log line still goes through pino with redaction. stdout is written 4 KiB at',
      'a time (or within 100 ms of a line), so under load one write carries a few dozen lines.',
      '',
      '| one request line, in process (CPU, median of 5 × 100,000) | µs |',
      '|---|---|',
      `| \`logRequest\` (what the gateway does) | **${ours.toFixed(2)}** |`,
      `| pino \`log.info\` with the gateway's redaction (before) | ${viaPino.toFixed(2)} |`,
      `| pino \`log.info\` without redaction | ${unredacted.toFixed(2)} |`,
      '',
      `End to end, the HTTP shim's paid call at 32 in flight, ${ROUNDS} interleaved rounds of ${PER_ROUND} calls per gateway:`,
      '',
      '| gateway | CPU per call | calls/s (mean of rounds) |',
      '|---|---|---|',
      `| logging at \`info\` (a line per request) | ${Math.round(perCall(cpu.info))} µs | ${Math.round(rate.info)} |`,
      `| logging at \`warn\` (no request lines) | ${Math.round(perCall(cpu.warn))} µs | ${Math.round(rate.warn)} |`,
      '',
      `Logging adds **${Math.round(added)} µs** of gateway CPU per call (${share.toFixed(1)} % of it), the write included; the`,
      'difference is within the noise of this shared machine when it is a few µs (CPU time is read from /proc',
      'in 10 ms ticks over several seconds per round).',
    ].join('\n'),
    targets: [
      {
        target: '#19 keep request logging, at a measured cost (was 25–37 µs CPU per call)',
        measured: `a line ${ours.toFixed(2)} µs of CPU (pino with the redaction: ${viaPino.toFixed(2)} µs); end to end ${added >= 0 ? '+' : ''}${Math.round(added)} µs per paid call (${share.toFixed(1)} %), the write to stdout included`,
        verdict: 'reported',
      },
    ],
  };
};

export default bench;
