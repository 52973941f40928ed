import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type CallToolRequest,
  type CallToolResult,
  type InputRequiredResult,
  ProtocolError,
  SERVER_INFO_META_KEY,
  SUPPORTED_PROTOCOL_VERSIONS,
  validateHostHeader,
} from '@modelcontextprotocol/server';
import type { Logger } from 'pino';
import type { Authenticator } from '../../auth/authenticator.js';
import type { Principal } from '../../auth/principal.js';
import { toGatewayError } from '../errors.js';
import { type JsonBodyOptions, readJsonBody } from '../lib/json-body.js';
import { stages } from '../lib/stage-timing.js';
import { type CallDeps, runToolCall, TEXT_IS_STRUCTURED } from './call.js';
import { MCP_PATH } from './paths.js';
import { actionForTool } from './tools.js';

// The hot path of the MCP door: a plain `tools/call` — the request an agent sends for every paid action —
// answered without the SDK's per-request machinery (web Request/Response conversion, era classification,
// a Server per request, zod validation of the envelope and the result). It answers exactly as the SDK does
// (test/integration/mcp-fast-path.test.ts compares the two byte for byte, modulo ids), through the same
// runToolCall as the SDK's handler, and only for requests the SDK would serve without objection:
//
//   POST /mcp, no query; a served protocol revision; Host allowed and no Origin (browsers go the slow way,
//   with CORS); JSON; an account principal with the door's scopes; a well-formed JSON-RPC tools/call of a
//   catalog tool; no progress token (progress needs a stream); for 2026-07-28, the full `_meta` envelope and
//   Mcp-Method / Mcp-Name headers that agree with the body; for 2025-era clients, an Accept that takes SSE.
//
// Anything else — initialize, tools/list, a bad token, a malformed envelope, an error the SDK words — is
// handed to the SDK path unchanged (with the body already read), which answers it as it always has.

const MODERN = '2026-07-28';
const LEGACY = new Set<string>(SUPPORTED_PROTOCOL_VERSIONS);
export const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;
const ENVELOPE = {
  version: 'io.modelcontextprotocol/protocolVersion',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  capabilities: 'io.modelcontextprotocol/clientCapabilities',
} as const;
/** Envelope keys the fast path knows it may pass over; any other `io.modelcontextprotocol/` key goes slow. */
const KNOWN_META = new Set<string>([
  ENVELOPE.version,
  ENVELOPE.clientInfo,
  ENVELOPE.capabilities,
  'io.modelcontextprotocol/traceparent',
  'io.modelcontextprotocol/tracestate',
  'io.modelcontextprotocol/baggage',
]);

export interface FastCallDeps {
  call: CallDeps;
  auth: Authenticator;
  log: Logger;
  body: JsonBodyOptions;
  /** Allowed Host hostnames (the guard's list). */
  hosts: () => readonly string[];
  /** Scopes an OAuth token must carry (API keys carry all). */
  requiredScopes: readonly string[];
  serverInfo: { name: string; title: string; version: string };
  /** Request ids and the log line, as every other route. */
  track: (req: IncomingMessage, res: ServerResponse) => void;
  /** Answers a body-reading failure as the SDK path's body reader does. */
  bodyError: (res: ServerResponse, e: unknown) => void;
}

interface PlainCall {
  id: string | number;
  params: CallToolRequest['params'];
  meta: Record<string, unknown> | undefined;
}

export interface FastToolsCall {
  (req: IncomingMessage, res: ServerResponse, slow: (body: unknown) => void): boolean;
  /** tools/calls answered here so far (for tests and health). */
  readonly served: number;
}

/** The hot route: returns false (nothing read) for requests that plainly are not a fast tools/call. */
export function fastToolsCall(deps: FastCallDeps): FastToolsCall {
  let served = 0;
  const hostAllowed = hostCheck(deps.hosts);
  const route = (req: IncomingMessage, res: ServerResponse, slow: (body: unknown) => void): boolean => {
    if (req.method !== 'POST' || req.url !== MCP_PATH) return false;
    const version = req.headers['mcp-protocol-version'];
    const modern = version === MODERN;
    if (modern) {
      if (req.headers['mcp-method'] !== 'tools/call') return false;
    } else if (typeof version !== 'string' || !LEGACY.has(version) || !acceptsSse(req.headers.accept)) {
      return false;
    }
    if (req.headers.origin !== undefined || !JSON_TYPE.test(req.headers['content-type'] ?? '')) return false;
    if (!hostAllowed(req.headers.host)) return false;
    serve(deps, req, res, modern, slow, () => served++).catch((err: unknown) => {
      deps.log.error({ err }, 'mcp fast path failed');
      if (!res.headersSent)
        send(res, modern, { jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null });
    });
    return true;
  };
  return Object.defineProperty(route, 'served', { get: () => served }) as FastToolsCall;
}

async function serve(
  deps: FastCallDeps,
  req: IncomingMessage,
  res: ServerResponse,
  modern: boolean,
  slow: (body: unknown) => void,
  count: () => void,
): Promise<void> {
  const timer = stages();
  timer?.start();
  let body: unknown;
  try {
    body = await readJsonBody(req, deps.body);
  } catch (e) {
    deps.track(req, res);
    return deps.bodyError(res, e);
  }
  timer?.mark('HTTP in, body');
  const call = plainToolsCall(body, modern, req);
  const principal = call && (await principalOf(deps, req.headers.authorization));
  if (!call || !principal) {
    timer?.abandon();
    return slow(body);
  }
  if (timer) {
    timer.mark('auth, JSON-RPC envelope');
    res.once('finish', () => timer.finish('response write'));
  }

  deps.track(req, res);
  count();
  const cancel = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) cancel.abort();
  });
  let result: CallToolResult | InputRequiredResult;
  try {
    result = await runToolCall(deps.call, {
      ...call,
      principal,
      signal: cancel.signal,
      controller: cancel,
      era: modern ? 'modern' : 'legacy',
      capabilities: modern ? call.meta?.[ENVELOPE.capabilities] : undefined,
    });
  } catch (e) {
    if (res.destroyed) return;
    // A ProtocolError as the SDK writes it: with its data when it has some (-32042 carries the elicitations).
    const error =
      e instanceof ProtocolError
        ? { code: e.code, message: e.message, ...(e.data === undefined ? {} : { data: e.data }) }
        : { code: -32603, message: 'Internal error' };
    if (!(e instanceof ProtocolError)) deps.log.error({ err: toGatewayError(e) }, 'mcp tools/call failed');
    return send(res, modern, { jsonrpc: '2.0', error, id: call.id });
  }
  timer?.mark('receipt, back to the door');
  if (res.destroyed) return;
  // What the SDK's 2026-07-28 encoder adds to every result: the result type and the server's identity. Only a
  // 2026-07-28 call is ever answered `input_required` (./top-up.ts), which carries its own result type.
  const meta = result._meta;
  const out = modern
    ? {
        ...result,
        resultType: result.resultType ?? 'complete',
        _meta: meta?.[SERVER_INFO_META_KEY] ? meta : { ...meta, [SERVER_INFO_META_KEY]: deps.serverInfo },
      }
    : result;
  // Only a tool result of ./call.ts toResult is marked; anything else (an `input_required` answer too) as is.
  const marked = (result as Marked)[TEXT_IS_STRUCTURED] === true;
  sendText(
    res,
    modern,
    marked
      ? resultMessage(out as CallToolResult, call.id, true)
      : JSON.stringify({ result: out, jsonrpc: '2.0', id: call.id }),
  );
}

type Marked = CallToolResult & { [TEXT_IS_STRUCTURED]?: true };

/**
 * The JSON-RPC message of a result, as JSON.stringify({ result, jsonrpc, id }) would write it. When the one text
 * content is the structured content's JSON (./call.ts toResult), that JSON is written as it is for
 * `structuredContent` and escaped for `text`: the data is serialised once, not twice.
 */
export function resultMessage(
  result: CallToolResult,
  id: string | number,
  textIsStructured: boolean,
): string {
  const { content, structuredContent, ...rest } = result;
  const text = content.length === 1 && content[0]?.type === 'text' ? content[0].text : undefined;
  if (!textIsStructured || text === undefined || structuredContent === undefined) {
    return JSON.stringify({ result, jsonrpc: '2.0', id });
  }
  const tail = JSON.stringify(rest);
  return (
    `{"result":{"content":[{"type":"text","text":${JSON.stringify(text)}}],"structuredContent":${text}` +
    `${tail === '{}' ? '' : `,${tail.slice(1, -1)}`}},"jsonrpc":"2.0","id":${JSON.stringify(id)}}`
  );
}

/** One JSON-RPC message: plain JSON (2026-07-28), or one SSE message as the SDK's stateless 2025 serving frames it. */
function send(res: ServerResponse, modern: boolean, message: unknown): void {
  sendText(res, modern, JSON.stringify(message));
}

function sendText(res: ServerResponse, modern: boolean, json: string): void {
  if (modern) {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) });
    res.end(json);
    return;
  }
  const text = `event: message\ndata: ${json}\n\n`;
  res.writeHead(200, {
    'cache-control': 'no-cache, no-transform',
    'content-type': 'text/event-stream',
    'x-accel-buffering': 'no',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** A tools/call the SDK would serve without objection, or undefined (the SDK path decides). */
function plainToolsCall(body: unknown, modern: boolean, req: IncomingMessage): PlainCall | undefined {
  if (!isObject(body) || body.jsonrpc !== '2.0' || body.method !== 'tools/call') return undefined;
  const id = body.id;
  if (!(typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id)))) return undefined;
  const params = body.params;
  if (!isObject(params) || typeof params.name !== 'string' || !actionForTool(params.name)) return undefined;
  if (params.arguments !== undefined && !isObject(params.arguments)) return undefined;
  // A 2026-07-28 retry with the answers to an `input_required` result (rare: a person was asked) goes the SDK way.
  if (params.inputResponses !== undefined || params.requestState !== undefined) return undefined;
  const meta = params._meta;
  if (meta !== undefined && !isObject(meta)) return undefined;
  if (meta?.progressToken !== undefined) return undefined;
  if (meta) {
    for (const k in meta)
      if (k.startsWith('io.modelcontextprotocol/') && !KNOWN_META.has(k)) return undefined;
  }
  if (modern) {
    if (req.headers['mcp-name'] !== params.name || meta?.[ENVELOPE.version] !== MODERN) return undefined;
    const info = meta[ENVELOPE.clientInfo];
    if (!isObject(info) || typeof info.name !== 'string' || typeof info.version !== 'string')
      return undefined;
    if (!isObject(meta[ENVELOPE.capabilities])) return undefined;
  } else if (meta?.[ENVELOPE.version] !== undefined) {
    return undefined;
  }
  return { id, params: params as CallToolRequest['params'], meta };
}

/** An account principal with the door's scopes; undefined sends the request to the SDK path (its 401/403). */
async function principalOf(
  deps: FastCallDeps,
  authorization: string | undefined,
): Promise<Principal | undefined> {
  let principal: Principal;
  try {
    principal = await deps.auth.fromAuthorization(authorization);
  } catch {
    return undefined;
  }
  if (principal.kind === 'anonymous') return undefined;
  if (principal.kind === 'oauth' && !deps.requiredScopes.every((s) => principal.scopes.includes(s))) {
    return undefined;
  }
  return principal;
}

/**
 * The SDK's Host validation, remembered per Host value (it parses a URL each time): an agent sends the same
 * Host on every call. Forgotten when the allowed list changes, and bounded (Host is the caller's to choose).
 */
function hostCheck(hosts: () => readonly string[]): (host: string | undefined) => boolean {
  let list: readonly string[] | undefined;
  const known = new Map<string, boolean>();
  return (host) => {
    const current = hosts();
    if (current !== list) {
      list = current;
      known.clear();
    }
    if (host === undefined) return false;
    let ok = known.get(host);
    if (ok === undefined) {
      ok = validateHostHeader(host, [...current]).ok;
      if (known.size >= 256) known.clear();
      known.set(host, ok);
    }
    return ok;
  };
}

function acceptsSse(accept: string | undefined): boolean {
  return accept?.includes('text/event-stream') === true && accept.includes('application/json');
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
