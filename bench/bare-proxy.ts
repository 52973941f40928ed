import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';

// The baseline every gateway figure is measured against: a bare Node pass-through proxy doing the least a paid
// call must do — node:http in, read and parse the JSON body, fetch the URL it names with undici, answer JSON —
// with no ledger, no auth, no validation, no logging. Run as its own process, as the gateway is.

const agent = new Agent({ connections: 128, keepAliveTimeout: 60_000 });

const server = createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on('data', (c: Buffer) => parts.push(c));
  req.on('end', async () => {
    try {
      const { url } = JSON.parse(Buffer.concat(parts).toString('utf8')) as { url: string };
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
  process.stdout.write(
    `${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })}\n`,
  );
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
