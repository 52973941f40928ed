import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApiKey } from '../../auth/api-keys.js';
import { loadConfig } from '../../src/config/index.js';
import { createGateway } from '../../src/main.js';

// A gateway in its own process (test/integration/lazy-modules.test.ts), driven through steps given as
// arguments; after each step it prints one JSON line: the step, the HTTP status it got, and every package
// the process has resolved so far (test/helpers/module-trace.mjs records them). Only the gateway's own modules,
// node:http and the global fetch are used here, so every package listed is the gateway's doing.

const PAGE = `<!doctype html><html><head><title>probe</title></head><body><p>${'word '.repeat(40)}</p></body></html>`;

function loaded(): string[] {
  const file = process.env.MODULE_TRACE_FILE as string;
  const names = new Set<string>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(line);
    if (m) names.add(m[1] as string);
  }
  return [...names].sort();
}

const env = JSON.parse(process.env.PROBE_ENV ?? '{}') as Record<string, string>;
const steps = process.argv.slice(2);
const page = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
  res.end(PAGE);
});
await new Promise<void>((r) => page.listen(0, '127.0.0.1', r));
const pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}/page`;

const gw = await createGateway(
  loadConfig({
    TOLLGATE_PORT: '0',
    TOLLGATE_HOST: '127.0.0.1',
    TOLLGATE_DATA_DIR: process.env.PROBE_DATA_DIR as string,
    TOLLGATE_LOG_LEVEL: 'silent',
    TOLLGATE_FETCH_ALLOW: '127.0.0.1',
    TOLLGATE_RATE_LIMIT_PER_SECOND: '0',
    ...env,
  }),
);
const url = await gw.listen();
(gw.config as { publicUrl: string }).publicUrl = url;
gw.run.services.publicUrl = url;
const account = await gw.ledger.createAccount({ name: 'probe' });
await gw.ledger.credit(account.id, 10_000_000, 'probe');
const { key } = await createApiKey(gw.ledger, account.id);
const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
const scrape = (browser: boolean) =>
  fetch(`${url}/api/run/scraperC/scrape`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ url: pageUrl, browser }),
  });

const STEPS: Record<string, () => Promise<Response | undefined>> = {
  start: async () => undefined,
  health: () => fetch(`${url}/healthz`),
  shim: () => scrape(false),
  'mcp-401': () =>
    fetch(`${url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    }),
  'mcp-call': () =>
    fetch(`${url}/mcp`, {
      method: 'POST',
      headers: {
        ...auth,
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'scraperC_scrape',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'scraperC_scrape',
          arguments: { url: pageUrl, browser: false },
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientInfo': { name: 'probe', version: '1' },
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
    }),
  'oauth-discovery': () => fetch(`${url}/.well-known/oauth-authorization-server`),
  browser: () => scrape(true),
};

for (const step of steps) {
  const run = STEPS[step];
  if (!run) throw new Error(`unknown step ${step}`);
  const res = await run();
  const text = res ? await res.text() : '';
  const out = {
    step,
    status: res?.status,
    challenge: res?.headers.get('www-authenticate') ?? undefined,
    body: text.slice(0, 300),
    // A paid answer, as JSON or as MCP's text content (quoted once more).
    charged: /charged_cents\\?":1\b/.test(text),
    loaded: loaded(),
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}
await gw.close();
page.close();
