import { Writable } from 'node:stream';
import type { Logger } from 'pino';
import { createLogger } from '../../src/log.js';
import { CookieJar, formOf, hop } from './oauth-helpers.js';

// What the database fault tests of the doors share (db-faults-doors*.test.ts): the gateway's log as records, a
// browser's requests, raw MCP requests with their whole answer.

/** Every refusal says it in words. */
export const NOT_CHARGED = /nothing was charged/i;
export const SCRAPE = { url: 'https://example.com/', browser: false };
export const TOOL = 'scraperC_scrape';

/** A logger whose lines the test reads back as records (pino JSON). */
export function capturedLog(): { log: Logger; records(): Array<{ level: number; msg: string }> } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return {
    log: createLogger('info', sink),
    records: () => lines.flatMap((l) => l.split('\n').filter(Boolean)).map((l) => JSON.parse(l)),
  };
}

/** A request as a browser sends it (it asks for HTML), cookies from and into the jar. */
export function page(jar: CookieJar, url: string, init: Parameters<typeof hop>[2] = {}) {
  return hop(jar, url, {
    ...init,
    headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8', ...init.headers },
  });
}

/** Signs a browser in to the dashboard with an API key. */
export async function dashboardSession(base: string, key: string): Promise<CookieJar> {
  const jar = new CookieJar();
  const form = formOf((await page(jar, `${base}/account/signin`)).text, '/account/signin');
  const r = await page(jar, `${base}${form.action}`, { form: { csrf: form.csrf, api_key: key } });
  if (r.status !== 303) throw new Error(`dashboard sign-in answered ${r.status}`);
  return jar;
}

/** Raw JSON-RPC on /mcp as a 2025-era client sends it (no initialize needed first), with the whole answer. */
export async function mcpRaw(base: string, token: string, body: unknown) {
  const res = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
    },
    body: JSON.stringify(body),
  });
  return { status: res.status, res, text: await res.text() };
}

export const TOOLS_CALL = {
  jsonrpc: '2.0',
  id: 2,
  method: 'tools/call',
  params: { name: TOOL, arguments: SCRAPE },
};

/** The JSON-RPC message of a 2025-era answer (one SSE message) or a plain JSON one. */
// biome-ignore lint/suspicious/noExplicitAny: results are read loosely in assertions
export function rpc(text: string): { result?: any; error?: { code: number; message: string } } {
  const data = /^data: (.*)$/m.exec(text)?.[1];
  return JSON.parse(data ?? text);
}
