import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';

const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

declare global {
  namespace Express {
    interface Request {
      id: string;
      log: Logger;
    }
  }
}

/**
 * Gives every request an id (the caller's `x-request-id` when it is sane, else a new one), echoes it on the
 * response, and writes one structured log line when the response finishes.
 */
export function requestContext(log: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && SANE_ID.test(given) ? given : randomUUID();
    req.id = id;
    // The child logger is made only if something logs for this request (most requests log one line, below).
    let child: Logger | undefined;
    Object.defineProperty(req, 'log', {
      configurable: true,
      get: () => {
        child ??= log.child({ req_id: id });
        return child;
      },
    });
    res.setHeader('x-request-id', id);
    const start = performance.now();
    res.on('finish', () => {
      log.info(
        {
          req_id: id,
          method: req.method,
          path: req.path,
          status: res.statusCode,
          ms: Math.round((performance.now() - start) * 10) / 10,
        },
        'request',
      );
    });
    next();
  };
}
