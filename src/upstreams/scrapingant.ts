import type { Logger } from 'pino';
import { z } from 'zod';
import { GatewayError } from '../errors.js';
import type { UpstreamPool } from '../lib/upstream-pool.js';
import { classifyStatus, parseJson, retryAfterSeconds, sendRequest, type UpstreamResponse } from './http.js';
import { badShape, logFailure } from './scraper-common.js';

// scraperC → ScrapingAnt API v2 (docs/vendors.md §3). Options travel as GET query parameters (the HTTP
// method itself is proxied to the target), the key in `x-api-key`. /general answers with the page's HTML and
// the target's status in `Ant-Page-Status-Code`; a target 4xx/5xx is a failed scrape by our policy.

const VENDOR = 'ScrapingAnt';

export interface ScrapingAntParams {
  url: string;
  browser?: boolean | undefined;
  return_page_source?: boolean | undefined;
  wait_for_selector?: string | undefined;
  js_snippet?: string | undefined;
  block_resource?: string | string[] | undefined;
  proxy_type?: 'datacenter' | 'residential' | undefined;
  proxy_country?: string | undefined;
  timeout?: number | undefined;
  cookies?: string | undefined;
  extract_properties?: string | undefined;
}

export interface ScrapingAntClient {
  general(p: ScrapingAntParams, signal: AbortSignal): Promise<{ html: string; credits: number | undefined }>;
  markdown(p: ScrapingAntParams, signal: AbortSignal): Promise<{ url: string; markdown: string }>;
  extract(p: ScrapingAntParams, signal: AbortSignal): Promise<Record<string, unknown>>;
}

export interface ScrapingAntOptions {
  baseUrl: string;
  apiKey: string;
  pool: UpstreamPool;
  log: Logger;
}

const markdownRes = z.looseObject({ url: z.string(), markdown: z.string() });

function header(res: UpstreamResponse, name: string): string | undefined {
  const v = res.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** 409 is ScrapingAnt's concurrency limit (retry later); 423 its anti-bot detection (the target refused). */
function classify(res: UpstreamResponse): GatewayError {
  if (res.status === 409) {
    return new GatewayError(
      'upstream_busy',
      `${VENDOR} is at its concurrency limit; retry later. Nothing was charged.`,
      {
        cause: { vendor: VENDOR, status: 409 },
        retryAfterSeconds: retryAfterSeconds(res.headers) ?? 5,
      },
    );
  }
  if (res.status === 423) {
    return new GatewayError(
      'upstream_rejected',
      'The page blocked the scraper (anti-bot); try scraperC/scrape_residential. Nothing was charged.',
      { cause: { vendor: VENDOR, status: 423 }, details: { upstream_status: 423 } },
    );
  }
  return classifyStatus(VENDOR, res);
}

export function createScrapingAntClient(opts: ScrapingAntOptions): ScrapingAntClient {
  const base = opts.baseUrl.replace(/\/+$/, '');

  async function get(path: string, p: ScrapingAntParams, signal: AbortSignal): Promise<UpstreamResponse> {
    const res = await sendRequest(opts.pool, VENDOR, {
      method: 'GET',
      url: `${base}${path}`,
      headers: { 'x-api-key': opts.apiKey, accept: '*/*' },
      query: {
        url: p.url,
        browser: p.browser,
        return_page_source: p.return_page_source,
        wait_for_selector: p.wait_for_selector,
        js_snippet: p.js_snippet,
        block_resource: p.block_resource,
        proxy_type: p.proxy_type,
        proxy_country: p.proxy_country?.toLowerCase(),
        timeout: p.timeout,
        cookies: p.cookies,
        extract_properties: p.extract_properties,
      },
      signal,
      // ScrapingAnt's own timeout is at most 60 s; leave room for the answer to arrive.
      timeoutMs: ((p.timeout ?? 60) + 10) * 1000,
    });
    if (res.status !== 200) {
      const err = classify(res);
      logFailure(opts.log, VENDOR, path, res, err);
      throw err;
    }
    const target = Number(header(res, 'ant-page-status-code'));
    if (Number.isFinite(target) && target >= 400) {
      opts.log.info({ vendor: VENDOR, path, target }, 'target page answered an error status');
      throw new GatewayError('upstream_rejected', `The page answered HTTP ${target}; nothing was charged.`, {
        details: { target_status: target },
      });
    }
    return res;
  }

  function json(path: string, res: UpstreamResponse): unknown {
    try {
      return parseJson(VENDOR, res);
    } catch {
      throw badShape(VENDOR, opts.log, path, res.text);
    }
  }

  return {
    async general(p, signal) {
      const res = await get('/v2/general', p, signal);
      const credits = Number(header(res, 'ant-credits-cost'));
      return { html: res.text, credits: Number.isFinite(credits) ? credits : undefined };
    },
    async markdown(p, signal) {
      const res = await get('/v2/markdown', p, signal);
      const r = markdownRes.safeParse(json('/v2/markdown', res));
      if (!r.success) throw badShape(VENDOR, opts.log, '/v2/markdown', res.text);
      return { url: r.data.url, markdown: r.data.markdown };
    },
    async extract(p, signal) {
      const res = await get('/v2/extract', p, signal);
      const body = json('/v2/extract', res);
      if (body === null || typeof body !== 'object' || Array.isArray(body)) {
        throw badShape(VENDOR, opts.log, '/v2/extract', res.text);
      }
      return body as Record<string, unknown>;
    },
  };
}
