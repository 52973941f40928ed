import type { ServerResponse } from 'node:http';
import { errorBody, GatewayError } from '../errors.js';

// Responses written on node's own ServerResponse (an express Response is one), so that the hot routes, served
// without express, and the express routes answer alike.

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers?: Record<string, string>,
): void {
  const text = JSON.stringify(body);
  if (headers) for (const k in headers) res.setHeader(k, headers[k] as string);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

export function sendError(res: ServerResponse, e: GatewayError): void {
  if (e.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(e.retryAfterSeconds));
  sendJson(res, e.status, errorBody(e));
}

/** A path with a malformed percent-escape (`%ff`, a lone `%`): the caller's mistake, refused alike everywhere. */
export const MALFORMED_PATH = new GatewayError(
  'invalid_input',
  'The request path has a malformed percent-escape (such as %ff or a lone %); nothing was charged.',
);
