import { type FakeRequest, type FakeServer, type Reply, serveFake } from './rentcast.js';

// A fake ScrapingAnt API v2 on 127.0.0.1 speaking its wire format (docs/vendors.md §3): GET with query
// parameters, `x-api-key` header, /general answering raw HTML with `Ant-Page-Status-Code` and
// `Ant-credits-cost`, /markdown and /extract answering JSON, errors as `{ detail }` with its status codes (403
// bad key or no credit, 404 unreachable, 409 concurrency, 422 bad parameter, 423 anti-bot, 500). Magic words in
// the target URL pick an outcome: antbot-blocked, target-404, busy-409, bad-param, internal-500.

export const SCRAPINGANT_KEY = 'ant-test-key';
export const SCRAPINGANT_SECRET_TEXT = 'ANT-INTERNAL: proxy pool dc-7 degraded';

function credits(q: Record<string, string>): number {
  const browser = q.browser !== 'false';
  const residential = q.proxy_type === 'residential';
  if (residential) return browser ? 125 : 25;
  return browser ? 10 : 1;
}

export async function startScrapingAntFake(): Promise<FakeServer> {
  return serveFake((req: FakeRequest): Reply => {
    if (req.headers['x-api-key'] !== SCRAPINGANT_KEY) {
      return { status: 403, body: { detail: 'Wrong API key or API credits exhausted' } };
    }
    if (req.method !== 'GET') return { status: 405, body: { detail: 'Method not allowed' } };
    const q = req.query;
    const target = q.url ?? '';
    if (!target) return { status: 422, body: { detail: 'url: field required' } };
    if (target.includes('antbot-blocked')) return { status: 423, body: { detail: SCRAPINGANT_SECRET_TEXT } };
    if (target.includes('busy-409')) return { status: 409, body: { detail: 'Concurrency limit reached' } };
    if (target.includes('bad-param')) return { status: 422, body: { detail: SCRAPINGANT_SECRET_TEXT } };
    if (target.includes('internal-500')) return { status: 500, body: { detail: SCRAPINGANT_SECRET_TEXT } };
    const status = target.includes('target-404') ? 404 : 200;
    const headers = { 'ant-page-status-code': String(status), 'ant-credits-cost': String(credits(q)) };
    if (req.path === '/v2/general') {
      const proxy = q.proxy_type === 'residential' ? 'residential' : 'datacenter';
      const html = `<html><body><h1>Fake ${proxy}</h1><p>${target}</p></body></html>`;
      return { status: 200, body: html, headers: { ...headers, 'content-type': 'text/html; charset=utf-8' } };
    }
    if (req.path === '/v2/markdown') {
      return { status: 200, body: { url: target, markdown: `# Fake\n\n${target}` }, headers };
    }
    if (req.path === '/v2/extract') {
      if (!q.extract_properties)
        return { status: 422, body: { detail: 'extract_properties: field required' } };
      return { status: 200, body: { title: 'Fake title', price: 9.99 }, headers };
    }
    return { status: 404, body: { detail: 'Not Found' } };
  });
}
