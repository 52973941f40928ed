import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// A tiny local web site for scraping tests: routes are functions of the request.

export type Route = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

export interface TestSite {
  url: string;
  server: Server;
  hits: Map<string, number>;
  route(path: string, handler: Route): void;
  close(): Promise<void>;
}

export async function startSite(routes: Record<string, Route> = {}): Promise<TestSite> {
  const table = new Map(Object.entries(routes));
  const hits = new Map<string, number>();
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const h = table.get(path);
    if (!h) {
      res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>not found</h1>');
      return;
    }
    Promise.resolve(h(req, res)).catch(() => res.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    hits,
    route: (p, h) => table.set(p, h),
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export const html = (body: string, title = 'Test page') =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body>${body}</body></html>`;
