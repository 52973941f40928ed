import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

// The upstream connection pools are sized for the calls in flight (TOLLGATE_UPSTREAM_CONNECTIONS): calls
// against a slow page wait on the page, all at once, not in the gateway's queue behind a few connections.

const PAGE_MS = 400;
const CALLS = 120;

// With a barrier, the page answers no request until `barrier` are open at once (or BARRIER_LIMIT_MS passed): calls
// stuck in a gateway queue behind a smaller pool never reach it, so the count of requests open together tells the
// pool's size however slowly a loaded machine starts the calls.
const BARRIER_LIMIT_MS = 10_000;

let page: Server;
let pageUrl: string;
let open = 0;
let mostOpen = 0;
let barrier = 0;
let waiting: Array<() => void> = [];
let limit: NodeJS.Timeout | undefined;

beforeAll(async () => {
  page = createServer((_req, res) => {
    open++;
    mostOpen = Math.max(mostOpen, open);
    const answer = () => {
      open--;
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html><body><p>slow page</p></body></html>');
    };
    if (barrier === 0) {
      setTimeout(answer, PAGE_MS);
      return;
    }
    waiting.push(answer);
    if (open >= barrier) release();
    else
      limit ??= setTimeout(() => {
        barrier = 0; // given up: the rest are answered at the page's pace
        release();
      }, BARRIER_LIMIT_MS);
  });
  await new Promise<void>((r) => page.listen({ port: 0, host: '127.0.0.1', backlog: 1024 }, r));
  pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}/slow`;
});

function release(): void {
  clearTimeout(limit);
  limit = undefined;
  const answers = waiting;
  waiting = [];
  for (const answer of answers) answer();
}

afterAll(async () => {
  page.closeAllConnections();
  await new Promise((r) => page.close(r));
});

async function burst(t: TestGateway, key: string): Promise<{ ok: number; ms: number; most: number }> {
  mostOpen = 0;
  const started = performance.now();
  const replies = await Promise.all(
    Array.from({ length: CALLS }, () =>
      t.post('/api/run/scraperC/scrape', { url: pageUrl, browser: false }, { key }),
    ),
  );
  return {
    ok: replies.filter((r) => r.status === 200 && r.body.charged_cents === 1).length,
    ms: performance.now() - started,
    most: mostOpen,
  };
}

describe('[ops:upstream-pool] upstream connections sized for the calls in flight', () => {
  it('by default every call in flight has its own connection to a slow page: they finish at its pace', async () => {
    const t = await startGateway();
    try {
      const { key } = await t.account('10');
      barrier = CALLS;
      const r = await burst(t, key);
      expect(r.ok).toBe(CALLS);
      // All of them at the page at once, released together: the pool of 32 it replaced kept the rest queued in the
      // gateway, so the page would have seen 32 and answered only after BARRIER_LIMIT_MS.
      expect(r.most).toBe(CALLS);
      expect(r.ms).toBeLessThan(BARRIER_LIMIT_MS);
    } finally {
      barrier = 0;
      await t.close();
    }
  });

  it('TOLLGATE_UPSTREAM_CONNECTIONS bounds the connections to one host', async () => {
    const t = await startGateway({ env: { TOLLGATE_UPSTREAM_CONNECTIONS: '8' } });
    try {
      const { key } = await t.account('10');
      const r = await burst(t, key);
      expect(r.ok).toBe(CALLS);
      expect(r.most).toBeLessThanOrEqual(8);
      expect(r.ms).toBeGreaterThanOrEqual((CALLS / 8) * PAGE_MS * 0.9);
    } finally {
      await t.close();
    }
  });
});
