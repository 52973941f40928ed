import { type Request, type Response, Router } from 'express';
import { sha256Hex } from '../lib/hash.js';
import { SERVER_CARD_PATH, WELL_KNOWN_SERVER_CARD_PATH } from './paths.js';
import { type CardSource, SERVER_CARD_MEDIA_TYPE, serverCard } from './server-card.js';

// The server card over HTTP, as the experimental extension asks: its media type, public and cacheable for an
// hour, an ETag with If-None-Match → 304, CORS for browser clients (public, read-only metadata). Built once per
// public URL and availability (fixed in production; tests learn the URL once listening), served from memory.

export interface ServerCardRouteDeps extends Omit<CardSource, 'publicUrl' | 'tools' | 'unavailable'> {
  publicUrl: () => string;
  /** The tools the gateway lists now, and a key that changes with them (its availability). */
  tools: () => { key: string; names: ReadonlySet<string>; unavailable?: Record<string, string> | undefined };
}

export function serverCardRoutes(deps: ServerCardRouteDeps): Router {
  let built: { key: string; body: string; etag: string } | undefined;
  const current = () => {
    const publicUrl = deps.publicUrl();
    const tools = deps.tools();
    const key = `${publicUrl}|${tools.key}`;
    if (built?.key !== key) {
      const body = JSON.stringify(
        serverCard({ ...deps, publicUrl, tools: tools.names, unavailable: tools.unavailable }),
      );
      built = { key, body, etag: `"${sha256Hex(body).slice(0, 32)}"` };
    }
    return built;
  };

  const send = (req: Request, res: Response) => {
    const card = current();
    res.set({
      'Access-Control-Allow-Origin': '*',
      'Access-Control-Expose-Headers': 'ETag',
      'Cache-Control': 'public, max-age=3600',
      ETag: card.etag,
      'X-Content-Type-Options': 'nosniff',
    });
    if (matches(req.headers['if-none-match'], card.etag)) {
      res.status(304).end();
      return;
    }
    res.status(200).type(SERVER_CARD_MEDIA_TYPE).send(card.body);
  };
  const preflight = (_req: Request, res: Response) => {
    res.set({
      'Access-Control-Allow-Origin': '*',
      'Access-Control-Allow-Methods': 'GET',
      'Access-Control-Allow-Headers': 'Content-Type, If-None-Match',
      'Access-Control-Max-Age': '86400',
    });
    res.status(204).end();
  };

  const r = Router();
  for (const path of [SERVER_CARD_PATH, WELL_KNOWN_SERVER_CARD_PATH]) {
    r.get(path, send);
    r.options(path, preflight);
  }
  return r;
}

/** If-None-Match: `*`, or a list of entity tags compared weakly (RFC 9110 §13.1.2). */
function matches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header
    .split(',')
    .map((t) => t.trim().replace(/^W\//, ''))
    .some((t) => t === '*' || t === etag);
}
