import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Route } from './site.js';

// An https site on 127.0.0.1 for documents the gateway fetches over TLS (OAuth client ID metadata documents).
// Its certificate (127.0.0.1, ::1, localhost) is signed by a test CA that the gateway trusts only when given
// TEST_CA (GatewayOptions.metadataFetchCa); `untrusted: true` serves a self-signed one nobody trusts.
// The fixtures were made with openssl, valid for 100 years (test/fixtures/tls/README.md).

const TLS = join(import.meta.dirname, '..', 'fixtures', 'tls');
export const TEST_CA = readFileSync(join(TLS, 'ca.crt'), 'utf8');

export interface TlsSite {
  url: string;
  server: Server;
  hits: Map<string, number>;
  route(path: string, handler: Route): void;
  close(): Promise<void>;
}

export async function startTlsSite(o: { untrusted?: boolean } = {}): Promise<TlsSite> {
  const name = o.untrusted ? 'untrusted' : 'loopback';
  const table = new Map<string, Route>();
  const hits = new Map<string, number>();
  const server = createServer(
    { key: readFileSync(join(TLS, `${name}.key`)), cert: readFileSync(join(TLS, `${name}.crt`)) },
    (req, res) => {
      const path = new URL(req.url ?? '/', 'https://x').pathname;
      hits.set(path, (hits.get(path) ?? 0) + 1);
      const h = table.get(path);
      if (!h) {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
        return;
      }
      Promise.resolve(h(req, res)).catch(() => res.destroy());
    },
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    server,
    hits,
    route: (p, h) => table.set(p, h),
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
