import type { NextFunction, Request, Response } from 'express';
import { toGatewayError } from '../errors.js';
import { type JsonBodyOptions, readJsonBody } from '../lib/json-body.js';
import { DEFAULT_JSON_LIMITS } from '../lib/json-limits.js';
import { sendOpenAiError } from './openai-errors.js';

/** The router's JSON bodies through the one reader (src/lib/json-body.ts), refused as OpenAI-style errors. */
export function jsonBody(maxBodyBytes: number) {
  const opts: JsonBodyOptions = { maxBytes: maxBodyBytes, limits: DEFAULT_JSON_LIMITS, empty: 'refuse' };
  return (req: Request, res: Response, next: NextFunction): void => {
    readJsonBody(req, opts).then(
      (body) => {
        req.body = body;
        next();
      },
      (e: unknown) => sendOpenAiError(res, toGatewayError(e)),
    );
  };
}
