import {
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  validateHostHeader,
  validateOriginHeader,
} from '@modelcontextprotocol/server';
import type { NextFunction, Request, Response } from 'express';

// DNS-rebinding and cross-site protection for /mcp (MCP transports spec: servers MUST validate Origin). A page
// on evil.example that rebinds its name to this gateway's address sends `Host: evil.example` and
// `Origin: https://evil.example`; both are refused with 403 before authentication or parsing. Lists are
// port-agnostic hostnames, the SDK's convention.

export interface GuardLists {
  /** Extra Host values (TOLLGATE_ALLOWED_HOSTS); loopback names and the public URL's host are always allowed. */
  allowedHosts: readonly string[];
  /** Extra browser origins (TOLLGATE_ALLOWED_ORIGINS), e.g. `http://localhost:6274` for MCP Inspector. */
  allowedOrigins: readonly string[];
  publicUrl: () => string;
}

const CORS_ALLOW_HEADERS =
  'authorization, content-type, accept, mcp-protocol-version, mcp-session-id, last-event-id, x-request-id';
const CORS_EXPOSE_HEADERS = 'www-authenticate, mcp-session-id, mcp-protocol-version, x-request-id';

/** Host `x`, `x:1234`, `[::1]:80` or an origin URL → the bare hostname the SDK validators compare. */
export function hostnameOf(entry: string): string {
  if (entry.endsWith('://*')) return entry.toLowerCase();
  try {
    return new URL(entry.includes('://') ? entry : `http://${entry}`).hostname;
  } catch {
    return entry.toLowerCase();
  }
}

/** The allowed Host and Origin hostnames, rebuilt only when the public URL changes (tests learn it late). */
export function allowedNames(lists: GuardLists): () => { hosts: string[]; origins: string[] } {
  let cachedFor: string | undefined;
  let names = { hosts: [] as string[], origins: [] as string[] };
  return () => {
    const publicUrl = lists.publicUrl();
    if (publicUrl !== cachedFor) {
      cachedFor = publicUrl;
      const own = hostnameOf(publicUrl);
      names = {
        hosts: [...new Set([...localhostAllowedHostnames(), own, ...lists.allowedHosts.map(hostnameOf)])],
        origins: [...new Set([...localhostAllowedOrigins(), own, ...lists.allowedOrigins.map(hostnameOf)])],
      };
    }
    return names;
  };
}

export function mcpGuard(lists: GuardLists) {
  const names = allowedNames(lists);
  return (req: Request, res: Response, next: NextFunction): void => {
    const { hosts, origins } = names();
    const host = validateHostHeader(req.headers.host, hosts);
    if (!host.ok) return void refuse(res, host.message);
    const origin = validateOriginHeader(req.headers.origin, origins);
    if (!origin.ok) return void refuse(res, origin.message);
    if (origin.origin !== undefined) {
      // An allowed browser client (MCP Inspector's web UI) needs CORS, including for the 401 challenge.
      res.setHeader('Access-Control-Allow-Origin', origin.origin);
      res.setHeader('Vary', 'Origin');
      res.setHeader('Access-Control-Expose-Headers', CORS_EXPOSE_HEADERS);
      if (req.method === 'OPTIONS') {
        res.setHeader('Access-Control-Allow-Methods', 'GET, POST, DELETE, OPTIONS');
        res.setHeader('Access-Control-Allow-Headers', CORS_ALLOW_HEADERS);
        res.setHeader('Access-Control-Max-Age', '600');
        res.status(204).end();
        return;
      }
    }
    next();
  };
}

function refuse(res: Response, message: string): void {
  res
    .status(403)
    .json({ jsonrpc: '2.0', error: { code: -32000, message: `Forbidden: ${message}` }, id: null });
}
