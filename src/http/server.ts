import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Express } from 'express';

/**
 * A route served from node:http directly; returns false when the request is not its own. One that took the
 * request may still hand it to the express app (`slow`), with the body it has read.
 */
export type HotRoute = (req: IncomingMessage, res: ServerResponse, slow: (body: unknown) => void) => boolean;

/**
 * The gateway's HTTP server. The paid-call routes, where every microsecond is a caller's, are tried first and
 * answer without express (routing, middleware and response helpers they do not need); everything else — the
 * free routes, OAuth, files, pages — goes through the express app.
 */
export function createHttpServer(app: Express, hot: readonly HotRoute[]): Server {
  return createServer((req, res) => {
    const slow = (body: unknown) => {
      (req as IncomingMessage & { body?: unknown }).body = body;
      app(req, res);
    };
    for (const route of hot) if (route(req, res, slow)) return;
    app(req, res);
  });
}
