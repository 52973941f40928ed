import { createServer } from 'node:http';
import { Agent, request } from 'undici';

// The baseline every gateway figure is measured against: a bare Node pass-through proxy doing the least a paid
// call must do — node:http in, read and parse the JSON body, fetch the URL it names with undici, answer JSON —
// with no ledger, no auth, no validation, no logging. Run as its own process, as the gateway is, by plain `node`
// (no TypeScript loader: its RSS is Node's own floor). BARE_PROXY_CONNECTIONS sizes its upstream pool (the slow
// soak keeps 1,000 calls in flight).

const agent = new Agent({
  connections: Number(process.env.BARE_PROXY_CONNECTIONS ?? 128),
  keepAliveTimeout: 60_000,
});

const server = createServer((req, res) => {
  /** @type {Buffer[]} */
  const parts = [];
  req.on('data', (c) => parts.push(c));
  req.on('end', async () => {
    try {
      const { url } = JSON.parse(Buffer.concat(parts).toString('utf8'));
      const r = await request(url, { dispatcher: agent });
      const raw = await r.body.text();
      const text = JSON.stringify({ ok: true, data: { raw }, charged_cents: 0 });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    } catch {
      res.writeHead(502).end();
    }
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}` })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
