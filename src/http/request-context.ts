import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { trackRequest } from '../lib/request-log.js';

declare global {
  namespace Express {
    interface Request {
      id: string;
      log: Logger;
    }
  }
}

/** The express form: `req.id`, and `req.log`, a child logger made only if something logs for the request. */
export function requestContext(log: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const id = trackRequest(log, req, res, req.path);
    req.id = id;
    let child: Logger | undefined;
    Object.defineProperty(req, 'log', {
      configurable: true,
      get: () => {
        child ??= log.child({ req_id: id });
        return child;
      },
    });
    next();
  };
}
