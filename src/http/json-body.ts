import express, { type NextFunction, type Request, type Response } from 'express';
import { GatewayError, invalidInput } from '../errors.js';
import { checkJsonLimits, DEFAULT_JSON_LIMITS } from '../lib/json-limits.js';
import { sendError } from './respond.js';

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/**
 * JSON request bodies, hardened: a wrong content type is 415, a body over the limit is 413, malformed JSON is
 * 400 `invalid_json`, and deep nesting or huge arrays are 400 before any validator sees them. An empty body
 * is `{}` (actions whose fields are all optional need no body).
 */
export function jsonBody(maxBodyBytes: number) {
  const parse = express.json({
    limit: maxBodyBytes,
    strict: false, // primitives parse, and the run path says "must be a JSON object"
    type: (req) => JSON_TYPE.test(req.headers['content-type'] ?? ''),
  });
  return (req: Request, res: Response, next: NextFunction): void => {
    const length = req.headers['content-length'];
    const hasBody =
      (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
    if (!hasBody) {
      req.body = {};
      next();
      return;
    }
    const type = req.headers['content-type'];
    if (!type || !JSON_TYPE.test(type)) {
      // Drain so the connection can be reused, then refuse.
      req.resume();
      sendError(
        res,
        new GatewayError(
          'unsupported_media_type',
          'Send the request body as JSON with "Content-Type: application/json".',
        ),
      );
      return;
    }
    parse(req, res, (err?: unknown) => {
      if (err) return sendError(res, bodyError(err, maxBodyBytes));
      const violation = checkJsonLimits(req.body, DEFAULT_JSON_LIMITS);
      if (violation) {
        const message =
          violation.kind === 'depth'
            ? `the body is nested deeper than ${violation.limit} levels`
            : `the body has more than ${violation.limit} elements`;
        return sendError(res, invalidInput([{ path: '', message }]));
      }
      next();
    });
  };
}

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
