import type { Response } from 'express';
import { errorBody, type GatewayError } from '../errors.js';

export function sendError(res: Response, e: GatewayError): void {
  if (e.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(e.retryAfterSeconds));
  res.status(e.status).json(errorBody(e));
}
