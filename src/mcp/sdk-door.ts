import type { ServerResponse } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import {
  type AuthInfo,
  bearerAuthChallengeResponse,
  createMcpHandler,
  getOAuthProtectedResourceMetadataUrl,
  OAuthError,
  OAuthErrorCode,
  type OAuthTokenVerifier,
  verifyBearerToken,
} from '@modelcontextprotocol/server';
import { type NextFunction, type Request, type Response, Router } from 'express';
import { bearerToken } from '../../auth/bearer.js';
import { createMcpTokenVerifier, principalFromAuthInfo } from '../../auth/mcp-verifier.js';
import { actions } from '../../catalog/index.js';
import { databaseUnavailable, isDatabaseUnavailable, publicMessage, toGatewayError } from '../errors.js';
import { type JsonBodyOptions, readJsonBody } from '../lib/json-body.js';
import { DEFAULT_JSON_LIMITS } from '../lib/json-limits.js';
import { trackRequest } from '../lib/request-log.js';
import { availability, availabilityKey, listed } from '../run/availability.js';
import { callerKey } from './call.js';
import type { CallRegistry } from './cancellations.js';
import { LegacyElicitation } from './client-elicitation.js';
import type { McpDoorDeps } from './door.js';
import { type FastToolsCall, fastToolsCall, JSON_TYPE } from './fast-call.js';
import { allowedNames, mcpGuard } from './guard.js';
import { MCP_PATH, MCP_X402_PATH, RESOURCE_METADATA_PATH } from './paths.js';
import { SERVER_INFO, SERVER_NAME, serverFactory } from './server.js';
import { serverCardRoutes } from './server-card-routes.js';

// The MCP door's SDK half, loaded on the first request to /mcp or its metadata (./door.ts): POST /mcp for both
// protocol eras (2026-07-28 natively, 2025 clients served statelessly per request), behind Host/Origin
// validation and bearer auth, plus the RFC 9728 protected-resource metadata the 401 challenge points at and the
// public server card (server-card-routes.ts). Middleware order: guard → bearer → body → SDK handler.

/**
 * A coarse guard on the whole JSON-RPC body, before the SDK parses it: the tool arguments sit three levels
 * down (`params.arguments`), and callTool checks them with the HTTP door's exact limits.
 */
const ENVELOPE_LIMITS = {
  maxDepth: DEFAULT_JSON_LIMITS.maxDepth + 3,
  maxElements: DEFAULT_JSON_LIMITS.maxElements + 64,
};

export interface SdkDoor {
  /** Every route of the door (./door.ts sends its paths here). */
  router: Router;
  /** The hot route (./fast-call.ts). */
  hot: FastToolsCall;
  close(): Promise<void>;
}

export function createSdkDoor(deps: McpDoorDeps, calls: CallRegistry): SdkDoor {
  // What 2025-era handshakes declared (they come on requests of their own: ./client-elicitation.ts).
  const legacy = new LegacyElicitation();
  const topUp = deps.topUp && { ...deps.topUp, legacy, waiting: new Set<string>() };
  const handler = createMcpHandler(
    serverFactory({
      run: deps.run,
      calls,
      version: deps.version,
      unavailable: deps.unavailable,
      topUp,
    }),
    {
      onerror: (err) => deps.log.debug({ err }, 'mcp request refused'),
      maxRequestBodySize: deps.maxBodyBytes,
    },
  );
  const node = toNodeHandler(handler, {
    onerror: (err) => deps.log.error({ err }, 'mcp handler failed'),
    maxRequestBodySize: deps.maxBodyBytes,
  });
  const resourceUrl = () => new URL(`${deps.publicUrl()}${MCP_PATH}`);
  const requiredScopes = deps.requiredScopes ?? [];
  const verifier = createMcpTokenVerifier(deps.auth, { resource: resourceUrl, keyScopes: requiredScopes });
  const guardLists = {
    allowedHosts: deps.allowedHosts,
    allowedOrigins: deps.allowedOrigins,
    publicUrl: deps.publicUrl,
  };
  const names = allowedNames(guardLists);
  const hot = fastToolsCall({
    call: { run: deps.run, calls, topUp },
    auth: deps.auth,
    log: deps.log,
    body: { maxBytes: deps.maxBodyBytes, limits: ENVELOPE_LIMITS, empty: 'refuse' },
    hosts: () => names().hosts,
    requiredScopes,
    serverInfo: SERVER_INFO(deps.version),
    track: (req, res) => trackRequest(deps.log, req, res, MCP_PATH),
    bodyError: bodyRpcError,
  });

  const router = Router();
  router.use(
    serverCardRoutes({
      publicUrl: deps.publicUrl,
      name: deps.serverName,
      version: deps.version,
      x402: deps.run.rails?.has('x402') ?? false,
      rails: ['x402-session', 'mpp'].filter((r) => deps.run.rails?.has(r)),
      // The one listing rule (src/run/availability.ts `listed`), as tools/list and GET /api/run apply it.
      tools: () => {
        const avail = availability(deps.run.services);
        const mode = deps.unavailable ?? 'hide';
        const names = new Set(actions.filter((a) => listed(a.id, avail, mode)).map((a) => a.toolName));
        const unavailable =
          mode === 'mark'
            ? Object.fromEntries(
                actions.flatMap((a) => {
                  const s = avail.get(a.id);
                  return s && !s.available ? [[a.toolName, s.reason ?? 'not configured']] : [];
                }),
              )
            : undefined;
        return { key: availabilityKey(avail), names, unavailable };
      },
    }),
  );
  router.get(RESOURCE_METADATA_PATH, (_req, res) => {
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.json(protectedResourceMetadata(resourceUrl(), deps.authorizationServers?.() ?? [], requiredScopes));
  });
  router.all(
    MCP_PATH,
    mcpGuard(guardLists),
    bearer(verifier, () => getOAuthProtectedResourceMetadataUrl(resourceUrl()), requiredScopes),
    jsonBody(deps.maxBodyBytes),
    (req: Request, res: Response) => {
      noteHandshake(legacy, req);
      void node(req, res, req.body);
    },
  );
  router.all(
    MCP_X402_PATH,
    mcpGuard(guardLists),
    jsonBody(deps.maxBodyBytes),
    (req: Request, res: Response) => {
      // Credentials sent here are ignored on purpose: this endpoint is for wallets, /mcp for accounts.
      delete (req as { auth?: unknown }).auth;
      void node(req, res, req.body);
    },
  );

  return { router, hot, close: () => handler.close() };
}

/** A 2025-era `initialize`: what its client declares is remembered for its caller's later calls. */
function noteHandshake(legacy: LegacyElicitation, req: Request): void {
  const body = req.body as { method?: unknown; params?: { capabilities?: unknown } } | undefined;
  if (body?.method !== 'initialize') return;
  const principal = principalFromAuthInfo((req as Request & { auth?: AuthInfo }).auth);
  if (principal && principal.kind !== 'anonymous')
    legacy.note(callerKey(principal), body.params?.capabilities);
}

/** RFC 9728 metadata for /mcp. `authorization_servers` appears once the OAuth module provides an issuer. */
export function protectedResourceMetadata(
  resource: URL,
  issuers: readonly string[],
  scopes: readonly string[] = [],
): Record<string, unknown> {
  const doc: Record<string, unknown> = {
    resource: resource.href,
    bearer_methods_supported: ['header'],
    resource_name: SERVER_NAME,
  };
  if (issuers.length > 0) doc.authorization_servers = [...issuers];
  if (issuers.length > 0 && scopes.length > 0) doc.scopes_supported = [...scopes];
  return doc;
}

/**
 * Bearer auth with the SDK's verification and 401/403 challenge, but the header read by the parser every door
 * shares (auth/bearer.ts): the SDK's own split keeps the first word after the token and refuses repeated
 * spaces, so `/mcp` and `/api/run` would disagree about the same header.
 */
function bearer(verifier: OAuthTokenVerifier, metadataUrl: () => string, requiredScopes: readonly string[]) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const options = { verifier, requiredScopes: [...requiredScopes], resourceMetadataUrl: metadataUrl() };
    try {
      const header = req.headers.authorization;
      const token = bearerToken(header);
      if (!token) {
        throw new OAuthError(
          OAuthErrorCode.InvalidToken,
          header
            ? 'Send credentials as "Authorization: Bearer <API key or token>".'
            : 'Missing Authorization header',
        );
      }
      (req as Request & { auth?: AuthInfo }).auth = await verifyBearerToken(`Bearer ${token}`, options);
    } catch (error) {
      // A credential that could not be checked because the database does not answer (an API key not seen
      // lately, an OAuth token): the outage's retryable 503, not a refusal of the credential nor a 500.
      if (!(error instanceof OAuthError) && isDatabaseUnavailable(error)) {
        const e = databaseUnavailable(error);
        res.setHeader('Retry-After', String(e.retryAfterSeconds));
        return rpcError(res, e.status, -32000, publicMessage(e));
      }
      const answer = bearerAuthChallengeResponse(error, options);
      const challenge = answer.headers.get('WWW-Authenticate');
      if (challenge !== null) res.setHeader('WWW-Authenticate', challenge);
      const body =
        error instanceof OAuthError
          ? error
          : new OAuthError(OAuthErrorCode.ServerError, 'Internal Server Error');
      const refusal = body.toResponseObject();
      res
        .status(answer.status)
        .json({ ...refusal, error_description: notCharged(refusal.error_description) });
      return;
    }
    next();
  };
}

/**
 * Parses JSON bodies here (not in the SDK), through the one reader (src/lib/json-body.ts), so that size, syntax
 * and nesting limits answer as JSON-RPC errors with our wording, and so the SDK receives the parsed body instead
 * of reading the stream again. A body with another content type is left alone; the SDK answers it 415.
 */
function jsonBody(maxBodyBytes: number) {
  const opts: JsonBodyOptions = { maxBytes: maxBodyBytes, limits: ENVELOPE_LIMITS, empty: 'refuse' };
  return (req: Request, res: Response, next: NextFunction) => {
    // Read already by the fast path (./fast-call.ts), which handed this request on.
    if (req.body !== undefined) return next();
    if (req.method !== 'POST' || !JSON_TYPE.test(req.headers['content-type'] ?? '')) return next();
    readJsonBody(req, opts).then(
      (body) => {
        req.body = body;
        next();
      },
      (e: unknown) => bodyRpcError(res, e),
    );
  };
}

/** A body-reading failure as a JSON-RPC error, with our wording. */
function bodyRpcError(res: ServerResponse, e: unknown): void {
  const error = toGatewayError(e);
  const [status, code, message] = BODY_ERRORS[error.code]?.(error.message) ?? [
    400,
    -32700,
    'Parse error: the body is not valid JSON.',
  ];
  rpcError(res, status, code, notCharged(message));
}

/** A refusal of a paid path says so in words (docs/decisions.md "Refusals say nothing was charged"). */
function notCharged(message: string | undefined): string {
  const m = message ?? 'Refused';
  return /nothing was charged/i.test(m) ? m : `${m}${/[.!?]$/.test(m) ? '' : '.'} Nothing was charged.`;
}

const BODY_ERRORS: Partial<Record<string, (message: string) => [number, number, string]>> = {
  payload_too_large: (m) => [413, -32000, m],
  invalid_input: (m) => [400, -32600, `Invalid request: ${m}`],
  unsupported_media_type: (m) => [415, -32000, m],
};

function rpcError(res: ServerResponse, status: number, code: number, message: string): void {
  const text = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}
