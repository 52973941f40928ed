import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Express, NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import type { Authenticator } from '../../auth/authenticator.js';
import type { UnavailableListing } from '../run/availability.js';
import type { RunDeps } from '../run/execute.js';
import type { McpTopUp } from '../run/top-up.js';
import { CallRegistry } from './cancellations.js';
import * as paths from './paths.js';
import { MCP_PATH } from './paths.js';
import type { SdkDoor } from './sdk-door.js';

// The MCP door, as the composition root mounts it. The MCP SDK (and everything built on it: the tool list, the
// per-request server, the fast path) is loaded on the first request to one of the door's paths, not at start:
// a gateway that never serves MCP never pays its memory (docs/decisions.md "Modules loaded when used"). After
// that first request every route goes straight to the loaded half (./sdk-door.ts) with no extra tick.

export { MCP_PATH } from './paths.js';

/** The door's express paths (every one ./paths.ts names); anything else never loads the SDK. */
const PATHS = Object.values(paths);

export interface McpDoorDeps {
  run: RunDeps;
  auth: Authenticator;
  log: Logger;
  version: string;
  /** Read on use: the public URL is only known once the server listens (port 0 in tests). */
  publicUrl: () => string;
  allowedHosts: readonly string[];
  allowedOrigins: readonly string[];
  maxBodyBytes: number;
  /** Issuers listed in the protected-resource metadata; the OAuth module supplies them. */
  authorizationServers?: () => readonly string[];
  /** Scopes every token must carry (else 403 insufficient_scope, the scope named in the challenge). */
  requiredScopes?: readonly string[];
  /** TOLLGATE_MCP_SERVER_NAME: the server card's name (default: the public URL's host reversed). */
  serverName?: string | undefined;
  /** Actions this gateway cannot run: left out of tools/list (hide, the default) or listed and marked. */
  unavailable?: UnavailableListing | undefined;
  /** Lets a person top up from inside the host when a call cannot be paid (src/mcp/top-up.ts). */
  topUp?: McpTopUp | undefined;
}

/** A route served from node:http directly (src/http/server.ts's HotRoute), with its count of fast calls. */
export interface McpHotRoute {
  (req: IncomingMessage, res: ServerResponse, slow: (body: unknown) => void): boolean;
  /** tools/calls answered by the fast path so far (for tests and health). */
  readonly served: number;
}

export interface McpDoor {
  /** Mounts /mcp and its metadata on the shared app (the composition root's `Door` shape). */
  mount: (app: Express) => void;
  /**
   * The hot route (src/http/server.ts): plain tools/call served without the SDK's per-request machinery
   * (./fast-call.ts); anything else it hands to `slow` (the express app) with the body it may have read.
   */
  hot: McpHotRoute;
  /** Calls in flight through MCP (exposed for tests and health). */
  calls: CallRegistry;
  /** Whether the SDK half has been loaded (tests of the lazy-loading rule). */
  readonly loaded: boolean;
  /** Releases the SDK handler; call after in-flight calls have drained. */
  close(): Promise<void>;
}

export function createMcpDoor(deps: McpDoorDeps): McpDoor {
  const calls = new CallRegistry();
  let sdk: SdkDoor | undefined;
  let loading: Promise<SdkDoor> | undefined;
  const load = (): Promise<SdkDoor> => {
    loading ??= import('./sdk-door.js').then(
      (m) => {
        sdk = m.createSdkDoor(deps, calls);
        return sdk;
      },
      (err: unknown) => {
        loading = undefined; // retried by the next request
        throw err;
      },
    );
    return loading;
  };

  const route = (req: IncomingMessage, res: ServerResponse, slow: (body: unknown) => void): boolean => {
    if (req.method !== 'POST' || req.url !== MCP_PATH) return false;
    if (sdk) return sdk.hot(req, res, slow);
    // The first POST /mcp: the request waits (its body unread) while the SDK half loads.
    load().then(
      (door) => {
        if (!door.hot(req, res, slow)) slow(undefined);
      },
      (err: unknown) => failed(deps.log, res, err),
    );
    return true;
  };
  const hot = Object.defineProperty(route, 'served', {
    get: () => sdk?.hot.served ?? 0,
  }) as McpHotRoute;

  const lazy = (req: Request, res: Response, next: NextFunction): void => {
    if (sdk) return void sdk.router(req, res, next);
    load().then(
      (door) => void door.router(req, res, next),
      (err: unknown) => next(err),
    );
  };

  return {
    mount: (app) => {
      for (const path of PATHS) app.all(path, lazy);
    },
    hot,
    calls,
    get loaded() {
      return sdk !== undefined;
    },
    close: async () => {
      const door = await loading?.catch(() => undefined);
      await door?.close();
    },
  };
}

function failed(log: Logger, res: ServerResponse, err: unknown): void {
  log.error({ err }, 'mcp door failed to load');
  if (res.headersSent) return;
  const text = JSON.stringify({
    jsonrpc: '2.0',
    error: { code: -32603, message: 'Internal error' },
    id: null,
  });
  res.writeHead(500, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
