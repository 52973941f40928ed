import type { IncomingMessage } from 'node:http';
import { GatewayError, invalidInput } from '../errors.js';
import { checkJsonLimits, type JsonLimits } from './json-limits.js';

// The one JSON request-body reader of every door (the HTTP shim, MCP, the model router). Each door maps the
// GatewayError it throws to its own wire format (envelope, JSON-RPC error, OpenAI error). Refusals:
//   415 a content type that is not JSON, a charset other than UTF-8, a compressed body;
//   413 a body over the limit, declared (refused before reading) or actual;
//   400 malformed JSON, a body cut short, nesting or element counts over the limits.
// One buffer and one JSON.parse: leaner than body-parser on the hot path (JSON is UTF-8 by RFC 8259).

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]+)/i;

export interface JsonBodyOptions {
  maxBytes: number;
  limits: JsonLimits;
  /** What a request without a body is: `{}` (actions whose fields are all optional need none) or a refusal. */
  empty: 'object' | 'refuse';
}

export function readJsonBody(req: IncomingMessage, opts: JsonBodyOptions): Promise<unknown> {
  const length = req.headers['content-length'];
  const chunked = req.headers['transfer-encoding'] !== undefined;
  if (opts.empty === 'object' && !chunked && (length === undefined || length === '0')) {
    return Promise.resolve({});
  }
  const refusal = headerRefusal(req, opts.maxBytes);
  if (refusal) {
    req.resume(); // drained, so the connection can be reused
    return Promise.reject(refusal);
  }
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    let done = false;
    // Detached once the body is read: a call in flight keeps its request for seconds, and these would keep
    // their closures (and the body's chunks) alive with it.
    const finish = () => {
      done = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onBroken);
      req.off('aborted', onBroken);
      // A request refused mid-body is still drained, and may yet break: its error must not go unheard.
      req.on('error', ignore);
    };
    const fail = (e: GatewayError) => {
      if (done) return;
      finish();
      req.resume();
      reject(e);
    };
    const onData = (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > opts.maxBytes) fail(tooLarge(opts.maxBytes));
      else parts.push(chunk);
    };
    const onEnd = () => {
      if (done) return;
      finish();
      try {
        resolve(parse(parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, size), opts));
      } catch (e) {
        reject(e);
      }
    };
    const onBroken = () => fail(new GatewayError('invalid_json', 'The request body was incomplete.'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onBroken);
    req.on('aborted', onBroken);
  });
}

function ignore(): void {}

function headerRefusal(req: IncomingMessage, maxBytes: number): GatewayError | undefined {
  const type = req.headers['content-type'] ?? '';
  if (!JSON_TYPE.test(type)) {
    return new GatewayError(
      'unsupported_media_type',
      'Send the request body as JSON with "Content-Type: application/json".',
    );
  }
  const charset = CHARSET.exec(type)?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    return new GatewayError('unsupported_media_type', 'Send the body as UTF-8 JSON.');
  }
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding !== 'identity') {
    return new GatewayError('unsupported_media_type', 'Send the request body uncompressed.');
  }
  if (Number(req.headers['content-length'] ?? 0) > maxBytes) return tooLarge(maxBytes);
  return undefined;
}

function parse(buf: Buffer, opts: JsonBodyOptions): unknown {
  let body: unknown;
  try {
    body = JSON.parse(buf.toString('utf8'));
  } catch {
    throw new GatewayError('invalid_json', 'The request body is not valid JSON.');
  }
  const v = checkJsonLimits(body, opts.limits);
  if (v) {
    const message =
      v.kind === 'depth'
        ? `the body is nested deeper than ${v.limit} levels`
        : `the body has more than ${v.limit} elements`;
    throw invalidInput([{ path: '', message }]);
  }
  return body;
}

function tooLarge(maxBytes: number): GatewayError {
  return new GatewayError('payload_too_large', `The request body is larger than ${maxBytes} bytes.`, {
    details: { max_bytes: maxBytes },
  });
}
