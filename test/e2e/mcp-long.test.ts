import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HandlerContext } from '../../tools/context.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { mcp2025Headers } from '../helpers/mcp-raw.js';
import { CLIENT_KINDS, connectClient } from './mcp-clients.js';

// Calls that block on their upstream: progress notifications while they run, and cancellation that aborts the
// upstream and voids the hold, in every client era. scraperC/scrape (1 cent) stands in for a slow upstream.

type Behaviour = (ctx: HandlerContext) => Promise<{ raw: string }>;
let behaviour: Behaviour = async () => ({ raw: 'ok' });
const upstreamAborted: string[] = [];

let t: TestGateway;
beforeAll(async () => {
  t = await startGateway({
    handlers: { 'scraperC/scrape': async (_input, ctx) => behaviour(ctx) },
  });
});
afterAll(() => t.close());

const ARGS = { url: 'https://example.com/', browser: false };

/** A handler that runs until its call is aborted (then notes `marker` as an upstream aborted); `started` first. */
function untilAborted(marker: string, started: (ctx: HandlerContext) => void): Behaviour {
  return (ctx) =>
    new Promise((resolve, reject) => {
      started(ctx);
      const timer = setTimeout(() => resolve({ raw: 'too late' }), 10_000);
      ctx.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        upstreamAborted.push(marker);
        reject(ctx.signal.reason);
      });
    });
}

/** Waits (bounded) until the account's latest transaction is no longer pending. */
async function settled(accountId: string) {
  for (let i = 0; i < 200; i++) {
    const [tx] = await t.gw.ledger.transactions(accountId, 1);
    if (tx && tx.status !== 'pending') return tx;
    await sleep(10);
  }
  throw new Error('the call never settled');
}

describe.each(CLIENT_KINDS)('long calls with the %s client', (kind) => {
  it('[mcp:progress] progress reported by the handler reaches a client that asked for it', async () => {
    behaviour = async (ctx) => {
      ctx.progress(1, 3, 'fetching');
      await sleep(5);
      ctx.progress(1, 3, 'not increasing: dropped');
      ctx.progress(2, 3, 'parsing');
      await sleep(5);
      ctx.progress(3, 3, 'done');
      return { raw: 'finished' };
    };
    const { key } = await t.account('1');
    const c = await connectClient(kind, t.url, key);
    const seen: Array<{ progress: number; total?: number; message?: string }> = [];
    const r = await c.callTool('scraperC_scrape', ARGS, { onprogress: (p) => seen.push(p) });
    const quiet = await c.callTool('scraperC_scrape', ARGS);
    await c.close();
    expect(r.structuredContent).toMatchObject({ raw: 'finished', charged_cents: 1 });
    expect(quiet.structuredContent).toMatchObject({ raw: 'finished' });
    expect(seen.map((p) => [p.progress, p.total, p.message])).toEqual([
      [1, 3, 'fetching'],
      [2, 3, 'parsing'],
      [3, 3, 'done'],
    ]);
  });

  it('[mcp:cancel-uncharged] [billing:charge-only-on-success] cancelling aborts the upstream and voids the hold', async () => {
    const marker = `${kind}-${Math.random()}`;
    behaviour = untilAborted(marker, (ctx) => ctx.progress(1, 2, 'started'));
    const { accountId, key } = await t.account('1');
    const c = await connectClient(kind, t.url, key);
    const abort = new AbortController();
    const call = c.callTool('scraperC_scrape', ARGS, {
      signal: abort.signal,
      onprogress: () => abort.abort(),
    });
    await expect(call).rejects.toThrow();
    const tx = await settled(accountId);
    await c.close();
    expect(upstreamAborted).toContain(marker);
    expect(tx).toMatchObject({ status: 'failed', error_code: 'cancelled', charged_micros: 0 });
    expect(await t.gw.ledger.balance(accountId)).toEqual({
      balance_micros: 1_000_000,
      held_micros: 0,
      available_micros: 1_000_000,
    });
  });
});

describe('cancellation is scoped to the caller', () => {
  it('[mcp:cancel-uncharged] another account cannot cancel a call by guessing its request id', async () => {
    let release: (() => void) | undefined;
    behaviour = (ctx) =>
      new Promise((resolve, reject) => {
        ctx.progress(1);
        release = () => resolve({ raw: 'survived' });
        ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason));
      });
    const a = await t.account('1');
    const b = await t.account('1');
    const ca = await connectClient('v2-legacy', t.url, a.key);
    let started!: () => void;
    const progressed = new Promise<void>((r) => {
      started = r;
    });
    const call = ca.callTool('scraperC_scrape', ARGS, { onprogress: () => started() });
    await progressed;
    // B sends the cancellation A's client would send, for every id A's client can have used so far.
    for (let id = 0; id < 5; id++) {
      const res = await post2025(b.key, {
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: id },
      });
      expect(res.status).toBe(202);
    }
    await sleep(20);
    release?.();
    const r = await call;
    await ca.close();
    expect(r.structuredContent).toMatchObject({ raw: 'survived', charged_cents: 1 });
    expect((await t.gw.ledger.balance(a.accountId)).balance_micros).toBe(990_000);
  });
});

/** A raw JSON-RPC POST to /mcp in the 2025 era, as a client that speaks it by hand would send it. */
function post2025(key: string, body: unknown): Promise<Response> {
  return fetch(`${t.url}/mcp`, {
    method: 'POST',
    headers: mcp2025Headers(key),
    body: JSON.stringify(body),
  });
}

describe('cancellation of a plain call (the fast path)', () => {
  it('[mcp:cancel-uncharged] a 2025-era notifications/cancelled from the same caller aborts a plain tools/call; nothing charged', async () => {
    const marker = `plain-${Math.random()}`;
    let started!: () => void;
    const running = new Promise<void>((r) => {
      started = r;
    });
    behaviour = untilAborted(marker, () => started());
    const { accountId, key } = await t.account('1');
    const post = (body: unknown) => post2025(key, body);
    // No progress token, no envelope: the door's fast path serves it (test/integration/mcp-fast-path.test.ts).
    const call = post({
      jsonrpc: '2.0',
      id: 41,
      method: 'tools/call',
      params: { name: 'scraperC_scrape', arguments: ARGS },
    }).then((r) => r.text());
    await running;
    const cancel = await post({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 41, reason: 'the person changed their mind' },
    });
    expect(cancel.status).toBe(202);
    const answer = await call;
    expect(upstreamAborted).toContain(marker);
    expect(answer).toContain('"isError":true');
    expect(answer).toContain('cancelled');
    const tx = await settled(accountId);
    expect(tx).toMatchObject({ status: 'failed', error_code: 'cancelled', charged_micros: 0 });
    expect((await t.gw.ledger.balance(accountId)).balance_micros).toBe(1_000_000);
  });
});
