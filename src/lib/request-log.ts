import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { logRequest } from '../log.js';

const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Gives a request an id (the caller's `x-request-id` when it is sane, else a new one), echoes it on the
 * response, and writes one structured log line when the response finishes. Returns the id. Used by the hot
 * routes directly and by every express route through `requestContext`.
 */
export function trackRequest(log: Logger, req: IncomingMessage, res: ServerResponse, path: string): string {
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && SANE_ID.test(given) ? given : randomUUID();
  res.setHeader('x-request-id', id);
  const start = performance.now();
  res.on('finish', () => {
    logRequest(log, {
      req_id: id,
      method: req.method ?? '',
      path,
      status: res.statusCode,
      ms: Math.round((performance.now() - start) * 10) / 10,
    });
  });
  return id;
}
