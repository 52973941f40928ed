import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHttpServer } from '../http/server.js';
import { listenAdmin, metricsRoute } from '../ops/metrics-route.js';
import type { Doors } from './doors.js';
import type { Base } from './state.js';

// The last step: listening (the public server, and the admin listener for /metrics when it has a port of its
// own), and the graceful close: stop accepting, finish the calls in flight, then close every part, last opened
// first (src/gateway/state.ts Closers).

export interface Serving {
  readonly adminUrl: string | undefined;
  listen(): Promise<string>;
  close(): Promise<void>;
}

export function serving(b: Base, d: Doors): Serving {
  const { config, log, prom, inflight } = b;
  const { TOLLGATE_METRICS_TOKEN: token, TOLLGATE_METRICS_PORT: adminPort } = config.env;
  let server: Server | undefined;
  let admin: { server: Server; url: string } | undefined;
  let closed = false;
  return {
    get adminUrl() {
      return admin?.url;
    },
    async listen() {
      if (prom && adminPort !== undefined) {
        admin = await listenAdmin(metricsRoute(prom, token), config.env.TOLLGATE_METRICS_HOST, adminPort);
        log.info({ url: `${admin.url}/metrics` }, 'metrics listener');
      }
      const metrics = prom && token !== undefined ? [metricsRoute(prom, token)] : [];
      return new Promise((resolve, reject) => {
        server = createHttpServer(d.app, [...d.hot, ...metrics]);
        server.keepAliveTimeout = 65_000;
        // A 100 MB file PUT on a slow link outlives Node's 300 s default; headers still must arrive in 60 s.
        server.requestTimeout = 30 * 60_000;
        server.headersTimeout = 60_000;
        server.once('error', reject);
        server.listen(config.port, config.host, () => {
          const addr = server?.address() as AddressInfo;
          const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
          // A SQLite gateway tells the CLI beside it where to send refunds and adjustments (./operator.ts).
          d.operator.listening(`http://${host}:${addr.port}`);
          resolve(`http://${host}:${addr.port}`);
        });
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      d.operator.close();
      const stopped = server
        ? new Promise<void>((r) => {
            server?.close(() => r());
            server?.closeIdleConnections();
          })
        : Promise.resolve();
      await inflight.drain(config.shutdownGraceMs);
      // Let the doors write the responses of the calls that just finished before cutting connections.
      await new Promise((r) => setImmediate(r));
      server?.closeAllConnections();
      await stopped;
      if (admin) await new Promise((r) => admin?.server.close(r));
      await b.closers.close();
      log.flush();
    },
  };
}
