import { readFileSync } from 'node:fs';

// What both soaks send: the same paid call as `POST /api/run` and as MCP tools/call of both eras.

const MODERN = '2026-07-28';
const LEGACY = '2025-11-25';

export interface SoakKind {
  path: string;
  body: string;
  headers: Record<string, string>;
}

export function soakKinds(
  key: string,
  args: Record<string, unknown>,
): { http: SoakKind; modern: SoakKind; legacy: SoakKind } {
  const auth = `Bearer ${key}`;
  const rpcBody = (era: 'modern' | 'legacy') =>
    JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: 'scraperC_scrape',
        arguments: args,
        ...(era === 'modern'
          ? {
              _meta: {
                'io.modelcontextprotocol/protocolVersion': MODERN,
                'io.modelcontextprotocol/clientInfo': { name: 'soak', version: '1' },
                'io.modelcontextprotocol/clientCapabilities': {},
              },
            }
          : {}),
      },
    });
  return {
    http: {
      path: '/api/run/scraperC/scrape',
      body: JSON.stringify(args),
      headers: { authorization: auth, 'content-type': 'application/json' },
    },
    modern: {
      path: '/mcp',
      body: rpcBody('modern'),
      headers: {
        authorization: auth,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': MODERN,
        'mcp-method': 'tools/call',
        'mcp-name': 'scraperC_scrape',
      },
    },
    legacy: {
      path: '/mcp',
      body: rpcBody('legacy'),
      headers: {
        authorization: auth,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': LEGACY,
      },
    },
  };
}

/** VmRSS and VmHWM of a process, MiB. */
export function rssOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}
