import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LlmService } from '../../tools/context.js';
import { html, type Route, startSite, type TestSite } from '../helpers/site.js';

// The local web site the web engine tests scrape, map and crawl: an article with boilerplate, a sitemap index,
// robots.txt, redirects, a huge page, a slow page, non-HTML content, a JavaScript-rendered page, and a
// breadth-first tree of linked pages. Plus a scripted stand-in for the internal LLM.

export const ARTICLE = html(
  '<header class="site-header"><a href="/">Home</a></header><nav><a href="/tree/0">Docs</a></nav>' +
    '<main><h1>Great Article</h1><p>The <b>first</b> paragraph with a <a href="/tree/1">link</a>.</p>' +
    '<ul><li>alpha</li><li>beta</li></ul></main><aside>Related stuff</aside>' +
    '<footer><a href="https://elsewhere.test/x">External</a></footer>',
  'Article title',
);

const send = (
  type: string,
  body: string | Buffer,
  status = 200,
  headers: Record<string, string> = {},
): Route => {
  return (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(status, { 'content-type': type, ...headers }).end(body);
  };
};

/** A page that has no content until its script runs (what `renderJs: null` must detect). */
export const SPA = `<!doctype html><html><head><title>SPA</title></head><body><div id="root"></div>
<script>
  setTimeout(() => {
    document.getElementById('root').innerHTML = '<h1>Rendered by JS</h1><p class="late">Late content ' + document.cookie + '</p>';
  }, 50);
</script></body></html>`;

/** A tree of pages: /tree/N links to /tree/2N+1 and /tree/2N+2 (while below `size`), depth = floor(log2(N+1)). */
export function treeRoute(size: number): Route {
  return (req, res) => {
    const n = Number((req.url ?? '').split('/').pop());
    const kids = [2 * n + 1, 2 * n + 2].filter((k) => k < size);
    const links = kids.map((k) => `<a href="/tree/${k}">child ${k}</a>`).join(' ');
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end(
        html(
          `<h1>Node ${n}</h1><p>${links} <a href="/tree/${n}">self</a> <a href="https://elsewhere.test/">out</a></p>`,
        ),
      );
  };
}

export async function startWebSite(opts: { treeSize?: number; slowMs?: number } = {}): Promise<TestSite> {
  const site = await startSite();
  const base = site.url;
  const routes: Record<string, Route> = {
    '/': send('text/html', html('<h1>Home</h1><a href="/article">Article</a>')),
    '/article': send('text/html; charset=utf-8', ARTICLE),
    '/redirect': send('text/html', '', 301, { location: '/article' }),
    '/redirect-loop': send('text/html', '', 302, { location: '/redirect-loop' }),
    '/huge': (_q, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      const chunk = `<p>${'x'.repeat(1023)}</p>`;
      for (let i = 0; i < 2048; i++) res.write(chunk);
      res.end();
    },
    '/slow': (_q, res) => {
      const t = setTimeout(
        () => res.writeHead(200, { 'content-type': 'text/html' }).end(html('late')),
        opts.slowMs ?? 3000,
      );
      res.on('close', () => clearTimeout(t));
    },
    '/data.json': send('application/json', JSON.stringify({ hello: 'world' })),
    '/notes.txt': send('text/plain; charset=utf-8', 'plain notes'),
    '/image.png': send('image/png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0])),
    '/gone': send('text/html', html('gone'), 404),
    '/latin1': send(
      'text/html; charset=iso-8859-1',
      Buffer.from(html('<p>caf\u00e9 cr\u00e8me</p>'), 'latin1'),
    ),
    '/spa': send('text/html', SPA),
    '/robots.txt': send(
      'text/plain',
      `User-agent: *\nDisallow: /private\nSitemap: ${base}/sitemap-extra.xml\n`,
    ),
    '/sitemap.xml': send(
      'application/xml',
      `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>${base}/sitemap-pages.xml</loc></sitemap></sitemapindex>`,
    ),
    '/sitemap-pages.xml': send(
      'application/xml',
      `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${base}/from-sitemap</loc></url><url><loc>${base}/article</loc></url><url><loc>https://elsewhere.test/sm</loc></url></urlset>`,
    ),
    '/sitemap-extra.xml': send(
      'application/xml',
      `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${base}/from-robots-sitemap</loc></url></urlset>`,
    ),
    '/private/secret': send('text/html', html('<h1>secret</h1>')),
  };
  for (const [p, r] of Object.entries(routes)) site.route(p, r);
  const size = opts.treeSize ?? 15;
  for (let i = 0; i < size; i++) site.route(`/tree/${i}`, treeRoute(size));
  return site;
}

type Complete = LlmService['complete'];

/** A scripted LlmService: answers JSON requests with `json` (or a function of the request), text with `text`. */
export class FakeLlm implements LlmService {
  calls: Array<Parameters<Complete>[0]> = [];
  json: unknown | ((req: Parameters<Complete>[0]) => unknown) = { title: 'Great Article' };
  text = 'A short summary of the page.';
  failWith: Error | undefined;

  complete: Complete = async (req) => {
    this.calls.push(req);
    if (this.failWith) throw this.failWith;
    const usage = { prompt_tokens: 10, completion_tokens: 5 };
    if (req.jsonSchema) {
      const json =
        typeof this.json === 'function' ? (this.json as (r: typeof req) => unknown)(req) : this.json;
      return { text: JSON.stringify(json), json, model: 'fake/model', usage, costMicros: 1 };
    }
    return { text: this.text, model: 'fake/model', usage, costMicros: 1 };
  };
}
