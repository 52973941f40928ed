import type { NextFunction, Request, Response } from 'express';
import { GatewayError, toGatewayError } from '../errors.js';
import { type JsonBodyOptions, readJsonBody } from '../lib/json-body.js';
import { DEFAULT_JSON_LIMITS } from '../lib/json-limits.js';
import { sendError } from './respond.js';

/** JSON request bodies through the one reader (src/lib/json-body.ts); an empty body is `{}`. */
export function jsonBody(maxBodyBytes: number) {
  const opts: JsonBodyOptions = { maxBytes: maxBodyBytes, limits: DEFAULT_JSON_LIMITS, empty: 'object' };
  return (req: Request, res: Response, next: NextFunction): void => {
    readJsonBody(req, opts).then(
      (body) => {
        req.body = body;
        next();
      },
      (e: unknown) => sendError(res, toGatewayError(e)),
    );
  };
}

/** An error express itself raised while reading a request (the app's last-resort handler). */
export function bodyError(err: unknown, maxBodyBytes: number): GatewayError {
  const type = (err as { type?: string }).type;
  switch (type) {
    case 'entity.too.large':
      return new GatewayError('payload_too_large', `The request body is larger than ${maxBodyBytes} bytes.`, {
        details: { max_bytes: maxBodyBytes },
      });
    case 'entity.parse.failed':
      return new GatewayError('invalid_json', 'The request body is not valid JSON.');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new GatewayError('unsupported_media_type', 'Send the body as UTF-8 JSON.');
    case 'request.size.invalid':
    case 'request.aborted':
      return new GatewayError('invalid_json', 'The request body was incomplete.');
    default:
      return new GatewayError('invalid_json', 'The request body could not be read.', { cause: err });
  }
}
