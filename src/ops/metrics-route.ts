import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PrometheusMetrics } from './prometheus.js';

// GET /metrics (docs/operator.md "Monitoring"): on the public port behind TOLLGATE_METRICS_TOKEN (a bearer
// token), and/or on an admin listener (TOLLGATE_METRICS_PORT, loopback by default) that a scraper reaches
// over a private network. Without either the path is not served at all and metrics are not even counted.

export const METRICS_PATH = '/metrics';

/** Compares a presented bearer token with the configured one in constant time (both hashed to 32 bytes). */
function tokenMatches(header: string | undefined, digest: Buffer): boolean {
  if (header === undefined) return false;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m) return false;
  return timingSafeEqual(
    createHash('sha256')
      .update(m[1] as string)
      .digest(),
    digest,
  );
}

function sendError(res: ServerResponse, status: number, code: string, message: string): void {
  const body = JSON.stringify({ ok: false, error: { code, message, retryable: false } });
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(body);
}

/**
 * The /metrics route for node:http: answers GET and HEAD of exactly /metrics (any query ignored) and returns
 * false for every other request. With a token, a request without `Authorization: Bearer <token>` gets 401.
 */
export function metricsRoute(
  m: PrometheusMetrics,
  token: string | undefined,
): (req: IncomingMessage, res: ServerResponse) => boolean {
  const digest = token === undefined ? undefined : createHash('sha256').update(token).digest();
  return (req, res) => {
    const url = req.url ?? '';
    if (url !== METRICS_PATH && !url.startsWith(`${METRICS_PATH}?`)) return false;
    req.resume();
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      sendError(res, 405, 'method_not_allowed', 'Use GET /metrics.');
      return true;
    }
    if (digest && !tokenMatches(req.headers.authorization, digest)) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="tollgate-metrics"');
      sendError(
        res,
        401,
        'unauthorized',
        'GET /metrics needs "Authorization: Bearer <TOLLGATE_METRICS_TOKEN>".',
      );
      return true;
    }
    m.render().then(
      (text) => {
        res.writeHead(200, { 'content-type': m.contentType, 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      () => sendError(res, 500, 'internal', 'The metrics could not be collected.'),
    );
    return true;
  };
}

/** The admin listener: /metrics only; everything else is 404. Resolves with its URL once listening. */
export function listenAdmin(
  route: (req: IncomingMessage, res: ServerResponse) => boolean,
  host: string,
  port: number,
): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    if (route(req, res)) return;
    req.resume();
    sendError(
      res,
      404,
      'not_found',
      `No route for ${req.method} ${req.url?.split('?')[0]}; this port serves GET /metrics.`,
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const a = server.address() as AddressInfo;
      const h = a.family === 'IPv6' ? `[${a.address}]` : a.address;
      resolve({ server, url: `http://${h}:${a.port}` });
    });
  });
}
