import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type { Logger } from 'pino';
import { GatewayError, publicMessage, toGatewayError } from '../errors.js';
import { bodyError } from './json-body.js';
import { requestContext } from './request-context.js';
import { MALFORMED_PATH, sendError } from './respond.js';

/** Mounts a door's routes on the shared app. */
export type Door = (app: Express) => void;

export interface AppOptions {
  log: Logger;
  doors: Door[];
  maxBodyBytes: number;
  health: () => Record<string, unknown>;
  /** GET /readyz (src/http/readiness.ts); absent, readiness is liveness. */
  ready?: ((req: Request, res: Response) => Promise<void>) | undefined;
  /** Told of every error a route did not handle (the gateway's database health counts outages). */
  onError?: ((err: unknown) => void) | undefined;
  /**
   * Renders an error for a person (a browser that asked for HTML: the dashboard, the OAuth pages) as a page of
   * the people-facing frame; without it, or for programs, errors are the JSON error body.
   */
  errorPage?: ((res: Response, status: number, heading: string, message: string) => void) | undefined;
}

const PAGE_HEADINGS: Partial<Record<string, string>> = {
  database_unavailable: 'Temporarily unavailable',
  shutting_down: 'Temporarily unavailable',
};

/**
 * The routers decode path parameters and throw on a malformed escape, which would surface as a 500. It is the
 * caller's mistake, so it is refused here, before any express door: one check for every route, present and
 * future. (The hot POST /api/run path, served without express, answers the same in run-routes.ts.)
 */
function malformedPath(req: Request, res: Response, next: NextFunction): void {
  if (req.path.includes('%')) {
    try {
      decodeURIComponent(req.path);
    } catch {
      // Refused unread: a large upload to such a path is not drained.
      res.setHeader('Connection', 'close');
      sendError(res, MALFORMED_PATH);
      return;
    }
  }
  next();
}

/** One express app for every door: request ids and logs first, then the doors, then 404 and errors. */
export function createApp(opts: AppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.use(requestContext(opts.log));
  app.use(malformedPath);
  app.get('/healthz', (_req, res) => {
    res.json({ ok: true, ...opts.health() });
  });
  const ready = opts.ready;
  app.get('/readyz', (req, res, next) => {
    if (!ready) return void res.json({ ok: true });
    ready(req, res).catch(next);
  });
  for (const door of opts.doors) door(app);
  app.use((req: Request, res: Response) => {
    sendError(res, new GatewayError('not_found', `No route for ${req.method} ${req.path}.`));
  });
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    if ((err as { type?: string }).type) return sendError(res, bodyError(err, opts.maxBodyBytes));
    // A database that does not answer is a retryable 503 (logged once per outage by the gateway's health);
    // anything else is a bug.
    const e = toGatewayError(err);
    opts.onError?.(err);
    if (e.code === 'internal') req.log.error({ err }, 'unhandled error');
    if (res.headersSent) return;
    if (opts.errorPage && req.accepts(['json', 'html']) === 'html') {
      if (e.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(e.retryAfterSeconds));
      const heading = PAGE_HEADINGS[e.code] ?? (e.status >= 500 ? 'Something went wrong' : 'Request refused');
      return opts.errorPage(res, e.status, heading, publicMessage(e));
    }
    sendError(res, e);
  });
  return app;
}
