import type { NextFunction, Request, Response } from 'express';
import { GatewayError, invalidInput } from '../errors.js';
import { checkJsonLimits, DEFAULT_JSON_LIMITS } from '../lib/json-limits.js';
import { sendOpenAiError } from './openai-errors.js';

// The router's JSON body reader, with OpenAI-style refusals: 415 for a wrong type or a compressed body, 413 over
// the limit (declared or actual), 400 for malformed, empty or too deeply nested JSON. Leaner than express.json
// on the time-to-first-byte path: one buffer, one JSON.parse (JSON is UTF-8 by RFC 8259).

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

export function jsonBody(maxBodyBytes: number) {
  const tooLarge = () =>
    new GatewayError('payload_too_large', `The request body is larger than ${maxBodyBytes} bytes.`);
  return (req: Request, res: Response, next: NextFunction): void => {
    const refuse = (e: GatewayError) => {
      req.resume(); // drain, so the connection can be reused
      sendOpenAiError(res, e);
    };
    if (!JSON_TYPE.test(req.headers['content-type'] ?? '')) {
      refuse(
        new GatewayError(
          'unsupported_media_type',
          'Send the body as JSON: "Content-Type: application/json".',
        ),
      );
      return;
    }
    const encoding = req.headers['content-encoding'];
    if (encoding !== undefined && encoding !== 'identity') {
      refuse(new GatewayError('unsupported_media_type', 'Send the request body uncompressed.'));
      return;
    }
    if (Number(req.headers['content-length'] ?? 0) > maxBodyBytes) {
      refuse(tooLarge());
      return;
    }

    const parts: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (e?: GatewayError): void => {
      if (settled) return;
      settled = true;
      if (e) {
        refuse(e);
        return;
      }
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(parts, size).toString('utf8'));
      } catch {
        sendOpenAiError(res, new GatewayError('invalid_json', 'The request body is not valid JSON.'));
        return;
      }
      const v = checkJsonLimits(body, DEFAULT_JSON_LIMITS);
      if (v) {
        const message =
          v.kind === 'depth'
            ? `the body is nested deeper than ${v.limit} levels`
            : `the body has more than ${v.limit} elements`;
        sendOpenAiError(res, invalidInput([{ path: '', message }]));
        return;
      }
      req.body = body;
      next();
    };
    req.on('data', (c: Buffer) => {
      if (settled) return;
      size += c.length;
      if (size > maxBodyBytes) settle(tooLarge());
      else parts.push(c);
    });
    req.on('end', () => settle());
    req.on('error', () => settle(new GatewayError('invalid_json', 'The request body was incomplete.')));
  };
}
