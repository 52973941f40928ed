import { rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Agent, request } from 'undici';
import { startGatewayProcess } from './process.js';
import { rssOf, soakKinds } from './soak-kinds.js';
import { slowSoak } from './soak-slow.js';
import { type BenchModule, type BenchSection, verdict } from './types.js';

// The soak: a few minutes of mixed paid calls — HTTP shim and MCP tools/call in both protocol eras — with 1,000
// in flight and random client disconnects, against one compiled gateway process and a local fake page that
// answers after 0–50 ms. It reports the gateway's RSS and heap at the start and the end (and along the way),
// calls/s, and then stops the gateway and checks that the ledger balances to the cent. Loopback only, bounded
// in time (TOLLGATE_SOAK_SECONDS, default 150), so it stops by itself; `npm run bench -- soak` runs it alone.

const IN_FLIGHT = 1000;
const DISCONNECT_SHARE = 0.1;
const PRICE_MICROS = 10_000; // scraperC/scrape: 1 cent
const TOKEN = 'soak-metrics-token-0123456789abcdefghijklmn';

async function startSlowPage(): Promise<{ url: string; close(): Promise<void> }> {
  const page = `<!doctype html><html><head><title>soak</title></head><body>${'<p>payload</p>'.repeat(50)}</body></html>`;
  const server = createServer((_req, res) => {
    setTimeout(
      () => {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(page);
      },
      Math.floor(Math.random() * 50),
    );
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
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

/**
 * A gateway with nothing optional configured, idle: RSS just after it started listening and once idle 30 s
 * (V8's memory reducer gives back what start-up used after ~10–20 s without work).
 */
async function idleRss(): Promise<{ started: number; settled: number }> {
  const gw = await startGatewayProcess({ TOLLGATE_LOG_LEVEL: 'warn' });
  await new Promise((r) => setTimeout(r, 2000));
  const started = rssOf(gw.proc.pid as number).rss;
  await new Promise((r) => setTimeout(r, 28_000));
  const settled = rssOf(gw.proc.pid as number).rss;
  await gw.stop();
  return { started, settled };
}

const bench: BenchModule = async () => {
  const idleGw = await idleRss();
  const fast = await fastSoak();
  const slow = await slowSoak();
  const idleMb = idleGw.settled * 1.048576;
  fast.body += [
    '',
    '',
    `**Idle, nothing optional configured** (no /metrics, no x402, OAuth, Stripe, S3 or tracing; a fresh data dir):`,
    `${mib(idleGw.started)} RSS 2 s after the gateway listens, ${mib(idleGw.settled)} after 30 s idle. Optional`,
    'modules load only when configured or first used (docs/decisions.md "Modules loaded when used").',
  ].join('\n');
  fast.targets = [
    {
      target: '#19 RSS at idle ≤ 90 MB with nothing optional configured',
      measured: `${mib(idleGw.settled)} after 30 s idle (${mib(idleGw.started)} just started)`,
      verdict: idleMb <= 90 ? 'met' : 'not met',
      why: "Node's own code pages are ~46 MiB of it (file-backed); the rest is the heap of what every gateway loads (express, zod and the catalog's schemas, kysely, pino, better-sqlite3's page caches; undici and the HTML parser wait for the first upstream call); the checkpointer thread leaves when idle and a collection gives back start-up's garbage (src/lib/idle-trim.ts)",
    },
    ...(fast.targets ?? []),
  ];
  return [fast, slow.section];
};

async function fastSoak(): Promise<BenchSection> {
  const seconds = Number(process.env.TOLLGATE_SOAK_SECONDS ?? 150);
  const page = await startSlowPage();
  const gw = await startGatewayProcess({ TOLLGATE_METRICS_TOKEN: TOKEN, TOLLGATE_LOG_LEVEL: 'warn' });
  const pid = gw.proc.pid as number;
  const agent = new Agent({ connections: IN_FLIGHT + 64, keepAliveTimeout: 60_000 });
  const args = { url: page.url, browser: false };

  const metric = async (): Promise<{ heap: number; inflight: number; pending: number }> => {
    const r = await request(`${gw.url}/metrics`, {
      dispatcher: agent,
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    const text = await r.body.text();
    const v = (name: string) => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? Number.NaN);
    return {
      heap: v('nodejs_heap_size_used_bytes') / 2 ** 20,
      inflight: v('tollgate_calls_in_flight'),
      pending: v('tollgate_holds_pending'),
    };
  };

  const kinds = soakKinds(gw.key, args);

  const tally = { ok: 0, failed: 0, disconnected: 0, http: 0, mcp: 0 };
  const paidTxns = new Set<string>();
  let stopAt = 0;
  const one = async () => {
    const r = Math.random();
    const kind = r < 0.5 ? kinds.http : r < 0.75 ? kinds.modern : kinds.legacy;
    if (kind === kinds.http) tally.http++;
    else tally.mcp++;
    const ac = new AbortController();
    const timer =
      Math.random() < DISCONNECT_SHARE
        ? setTimeout(() => ac.abort(), Math.floor(Math.random() * 1500))
        : undefined;
    try {
      const res = await request(`${gw.url}${kind.path}`, {
        dispatcher: agent,
        method: 'POST',
        headers: kind.headers,
        body: kind.body,
        signal: ac.signal,
      });
      const text = await res.body.text();
      const txn = /"transaction_id":"(txn_[^"]+)"/.exec(text)?.[1];
      if (
        res.statusCode === 200 &&
        txn &&
        /"charged_cents":1\b/.test(text) &&
        !text.includes('"isError":true')
      ) {
        tally.ok++;
        paidTxns.add(txn);
      } else tally.failed++;
    } catch {
      tally.disconnected++;
    } finally {
      clearTimeout(timer);
    }
  };
  const worker = async () => {
    while (performance.now() < stopAt) await one();
  };

  // Idle, freshly started; then a ramp at full concurrency (JIT, pools, sockets, page cache) before the start sample.
  const idle = { ...rssOf(pid), ...(await metric()) };
  stopAt = performance.now() + 15_000;
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  const warm = { ...tally };
  const start = { ...rssOf(pid), ...(await metric()) };

  const samples: string[] = [];
  const rssAt: Array<{ t: number; rss: number; heap: number }> = [];
  let maxInflight = 0;
  const began = performance.now();
  stopAt = began + seconds * 1000;
  const sampler = setInterval(() => {
    metric().then(
      (m) => {
        maxInflight = Math.max(maxInflight, m.inflight);
        const r = rssOf(pid);
        const t = Math.round((performance.now() - began) / 1000);
        samples.push(`| ${t} s | ${mib(r.rss)} | ${mib(m.heap)} | ${m.inflight} | ${m.pending} |`);
        rssAt.push({ t, rss: r.rss, heap: m.heap });
      },
      () => undefined,
    );
  }, 15_000);
  const before = { ...tally };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  const elapsed = (performance.now() - began) / 1000;
  clearInterval(sampler);
  const done =
    tally.ok + tally.failed + tally.disconnected - (before.ok + before.failed + before.disconnected);
  const loadEnd = rssOf(pid);
  // Let disconnected calls finish their voids, then the end sample.
  await new Promise((r) => setTimeout(r, 3000));
  const end = { ...rssOf(pid), ...(await metric()) };
  await agent.close();

  // Stop the gateway (graceful: every hold resolved) and check the books.
  gw.proc.kill('SIGTERM');
  await new Promise((r) => gw.proc.once('exit', r));
  const db = new Database(join(gw.dataDir, 'tollgate.db'), { readonly: true });
  const one1 = <T>(sql: string, ...p: unknown[]) =>
    db
      .prepare(sql)
      .pluck()
      .get(...p) as T;
  const pendingHolds = one1<number>("SELECT count(*) FROM holds WHERE status = 'pending'");
  const pendingCalls = one1<number>("SELECT count(*) FROM calls WHERE status = 'pending'");
  const entriesSum = one1<number>('SELECT coalesce(sum(amount_micros), 0) FROM entries');
  const succeeded = one1<number>(
    "SELECT count(*) FROM calls WHERE account_id = ? AND status = 'succeeded'",
    gw.accountId,
  );
  const failedRows = one1<number>(
    "SELECT count(*) FROM calls WHERE account_id = ? AND status = 'failed'",
    gw.accountId,
  );
  const charged = one1<number>(
    'SELECT coalesce(sum(charged_micros), 0) FROM calls WHERE account_id = ?',
    gw.accountId,
  );
  const wrongCharge = one1<number>(
    "SELECT count(*) FROM calls WHERE account_id = ? AND ((status = 'succeeded' AND charged_micros <> ?) OR (status = 'failed' AND charged_micros <> 0))",
    gw.accountId,
    PRICE_MICROS,
  );
  const acct = db
    .prepare('SELECT balance_micros, held_micros FROM accounts WHERE id = ?')
    .get(gw.accountId) as {
    balance_micros: number;
    held_micros: number;
  };
  const entriesOfAccount = one1<number>(
    'SELECT sum(amount_micros) FROM entries WHERE account_id = ?',
    gw.accountId,
  );
  const isPaid = db.prepare("SELECT charged_micros FROM calls WHERE id = ? AND status = 'succeeded'").pluck();
  let paidSeen = 0;
  for (const txn of paidTxns) if (isPaid.get(txn) === PRICE_MICROS) paidSeen++;
  db.close();
  rmSync(gw.dataDir, { recursive: true, force: true });
  await page.close();

  const balances =
    pendingHolds === 0 &&
    pendingCalls === 0 &&
    entriesSum === 0 &&
    wrongCharge === 0 &&
    acct.held_micros === 0 &&
    charged === succeeded * PRICE_MICROS &&
    acct.balance_micros === entriesOfAccount &&
    acct.balance_micros === 100_000_000_000 - charged &&
    paidSeen === paidTxns.size;
  // Flat: over the second half of the load the resident set grows by at most 10 % (+ 8 MiB). The first half is
  // V8 sizing its heap to the load; a leak keeps growing after that.
  const half = rssAt.find((x) => x.t >= seconds / 2) ?? { t: 0, rss: start.rss, heap: start.heap };
  const flat = loadEnd.rss <= half.rss * 1.1 + 8;
  const heapLows = (from: number, to: number) =>
    Math.min(...rssAt.filter((x) => x.t >= from && x.t < to).map((x) => x.heap));
  return {
    id: 'soak',
    title: 'Soak: mixed paid calls, 1,000 in flight, random disconnects',
    body: [
      `${seconds} s of paid \`scraperC/scrape\` calls (1 cent; built-in fetch of a local page answering in 0–50 ms) kept`,
      `${IN_FLIGHT} in flight from one load generator: half \`POST /api/run\`, a quarter MCP \`tools/call\` 2026-07-28, a`,
      `quarter 2025 (stateless); ${DISCONNECT_SHARE * 100} % of calls are cut by the client at a random moment in their`,
      'first 1.5 s. One compiled gateway process (`/metrics` on, logging at `warn`), real ledger; the load',
      'generator shares the 2 cores. RSS from /proc, heap from `/metrics` (`nodejs_heap_size_used_bytes`).',
      '',
      '| | RSS | heap used | calls in flight | holds pending |',
      '|---|---|---|---|---|',
      `| idle, just started | ${mib(idle.rss)} | ${mib(idle.heap)} | ${idle.inflight} | ${idle.pending} |`,
      `| start (after a 15 s ramp at 1,000 in flight: ${warm.ok + warm.failed + warm.disconnected} calls) | ${mib(start.rss)} | ${mib(start.heap)} | ${start.inflight} | ${start.pending} |`,
      ...samples,
      `| end of the load | ${mib(loadEnd.rss)} | | | |`,
      `| end (3 s after the load) | ${mib(end.rss)} | ${mib(end.heap)} | ${end.inflight} | ${end.pending} |`,
      '',
      `Peak RSS (VmHWM) ${mib(end.peak)}; most calls in flight seen by a scrape: ${maxInflight}.`,
      `Calls: ${done} in ${elapsed.toFixed(0)} s = **${Math.round(done / elapsed)} calls/s** (${tally.http} HTTP, ${tally.mcp} MCP in`,
      `all); ${tally.ok} answered paid, ${tally.failed} answered unpaid (errors), ${tally.disconnected} cut by the client.`,
      '',
      `Ledger after a graceful stop: ${succeeded} calls succeeded and were charged ${charged} micro-USD`,
      `(= ${succeeded} × 1 cent: ${charged === succeeded * PRICE_MICROS ? 'exact' : 'MISMATCH'}), ${failedRows} failed and charged`,
      `nothing; ${pendingHolds} holds and ${pendingCalls} calls pending; entries sum to ${entriesSum}; the account's balance`,
      `equals its entries and the credit minus the charges; every one of the ${paidTxns.size} paid answers the client`,
      `received is a succeeded call charged 1 cent (${paidSeen}/${paidTxns.size}); ${succeeded - paidTxns.size} calls`,
      'succeeded after their client had gone (charged: the work was done and the result stored, as for any call',
      `whose client leaves after it finished). **The ledger ${balances ? 'balances to the cent' : 'DOES NOT BALANCE'}.**`,
      '',
      `Target (issue 19) ≤ 250 MB peak RSS with 1,000 calls in flight: peak ${mib(end.peak)} (${end.peak * 1.048576 <= 250 ? 'met' : 'not met'};`,
      `the gateway idles at ${mib(idle.rss)}). Memory ${flat ? 'stays flat' : 'GREW'} over the second half of the load: RSS`,
      `${mib(half.rss)} at ${half.t} s, ${mib(loadEnd.rss)} at the end (${mib(start.rss)} after the ramp, while V8 sized its heap to`,
      `the load); the lowest heap sample of each half, ${mib(heapLows(0, seconds / 2))} then ${mib(heapLows(seconds / 2, Infinity))},`,
      'is where garbage collection brings the heap back: what the calls in flight keep alive.',
    ].join('\n'),
    targets: [
      {
        target: '#19 ≤ 250 MB peak RSS in the 1,000-in-flight soak (fast upstream)',
        measured: `peak ${mib(end.peak)} = ${(end.peak * 1.048576).toFixed(0)} MB; ${Math.round(done / elapsed)} calls/s`,
        verdict: verdict(end.peak * 1.048576 <= 250),
        why: 'V8 lets the old generation grow to a multiple of the live set (what the calls in flight hold) before collecting',
      },
      {
        target: '#15 soak: memory flat, the ledger balances to the cent',
        measured: `RSS ${mib(half.rss)} at ${half.t} s → ${mib(loadEnd.rss)} at the end; ${succeeded} calls charged exactly 1 cent each, ${pendingHolds} holds pending`,
        verdict: verdict(flat && balances),
      },
    ],
  };
}

export default bench;
