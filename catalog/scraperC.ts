import { z } from 'zod';
import { defineAction, inputObject, outputObject } from './define.js';
import { group } from './group.js';
import { httpUrl } from './shared.js';

// scraperC (docs/spec.md §4.7): strict, unknown fields rejected. Backed by ScrapingAnt v2 when configured, else by the
// built-in web engine (residential proxies and proxy_country are vendor-only).

const STRICT = true;

const shared = {
  url: httpUrl('Page to fetch.'),
  browser: z
    .boolean()
    .default(true)
    .describe(
      'Render in a headless browser (default true). false = plain HTTP fetch: faster and cheaper upstream.',
    ),
  return_page_source: z
    .boolean()
    .optional()
    .describe('Return the HTML as the server sent it, before JavaScript changed it (needs browser: true).'),
  wait_for_selector: z
    .string()
    .min(1)
    .optional()
    .describe('CSS selector to wait for before the page is captured (browser only).'),
  js_snippet: z
    .string()
    .min(1)
    .optional()
    .describe('Base64-encoded JavaScript run in the page after load (browser only).'),
  block_resource: z
    .union([z.string().min(1), z.array(z.string().min(1)).min(1)])
    .optional()
    .describe(
      'Resource type(s) the browser should not load, e.g. "image", ["image","font","media","stylesheet"].',
    ),
  proxy_country: z
    .string()
    .length(2)
    .optional()
    .describe('Two-letter country code of the proxy exit (vendor only).'),
  timeout: z.number().int().min(5).max(60).optional().describe('Give up after this many seconds (5-60).'),
  cookies: z.string().min(1).optional().describe('Cookies to send, as "name1=value1;name2=value2".'),
};

const annotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true };
/** `timeout` may be 60 s at the vendor; the action outlives it so the vendor's own answer arrives. */
const TIMEOUT_MS = 75_000;
const example = { url: 'https://example.com/', browser: false };

export const scrape = defineAction({
  service: 'scraperC',
  action: 'scrape',
  title: 'Fetch a page as HTML (scraperC)',
  summary:
    'Fetches one web page and returns its HTML as { raw }. Use browser: false for static pages; the default ' +
    'browser rendering runs JavaScript.',
  whenToUse:
    "Use it when you need a page's raw HTML (to parse it yourself), or must run your own JavaScript, " +
    'wait for a selector or send cookies; if the page blocks it, retry with ' +
    'scraperC/scrape_residential.',
  priceCents: 1,
  strict: STRICT,
  input: inputObject(STRICT, shared),
  output: outputObject({ raw: z.string().describe('The page HTML.') }),
  annotations,
  timeoutMs: TIMEOUT_MS,
  example,
  keywords: [
    'html',
    'raw html',
    'fetch',
    'page',
    'website',
    'scrape',
    'download',
    'page source',
    'selector',
    'wait for',
    'javascript snippet',
    'cookies',
  ],
});

export const scrapeResidential = defineAction({
  service: 'scraperC',
  action: 'scrape_residential',
  title: 'Fetch a page through residential proxies (scraperC)',
  summary:
    'Like scraperC/scrape but through a residential proxy pool, for anti-bot walled, geo-fenced or ' +
    'datacenter-blocking pages. Returns { raw }.',
  whenToUse:
    'Use it only after a plain scrape failed or returned a block page: anti-bot walls, geo-fenced or ' +
    'datacenter-blocking sites. It costs four times scraperC/scrape.',
  priceCents: 4,
  strict: STRICT,
  input: inputObject(STRICT, shared),
  output: outputObject({ raw: z.string().describe('The page HTML.') }),
  annotations,
  timeoutMs: TIMEOUT_MS,
  example: { url: 'https://example.com/' },
  keywords: [
    'residential',
    'proxy',
    'blocked',
    'blocks',
    'anti-bot',
    'bot protection',
    'captcha',
    'cloudflare',
    'geo',
    'geo-fenced',
    'denied',
    'access denied',
    'forbidden',
    '403',
    'repeatedly blocked',
  ],
});

export const markdown = defineAction({
  service: 'scraperC',
  action: 'markdown',
  title: 'Fetch a page as Markdown (scraperC)',
  summary:
    'Fetches one web page and returns it converted to Markdown as { url, markdown }: the cheapest way to read ' +
    'a page into a model context.',
  whenToUse:
    'Use it to read a whole page (not just its main content) as Markdown, with browser controls such ' +
    'as wait_for_selector and cookies; for main content only use scraperA/scrape.',
  priceCents: 1,
  strict: STRICT,
  input: inputObject(STRICT, shared),
  output: outputObject({
    url: z.string().describe('The URL that was fetched (after redirects).'),
    markdown: z.string().describe('The page as Markdown.'),
  }),
  annotations,
  timeoutMs: TIMEOUT_MS,
  example,
  keywords: ['markdown', 'read', 'text', 'article', 'page', 'convert', 'to markdown', 'whole page'],
});

export const extract = defineAction({
  service: 'scraperC',
  action: 'extract',
  title: 'Extract named properties from a page (scraperC)',
  summary:
    'Schema-less AI extraction: fetches a page and returns a JSON object with the properties you list, e.g. ' +
    '"title, price(number), reviews(list: title, content)". Output keys are camelCase.',
  whenToUse:
    'Use it to pull a few named fields from one page without writing a JSON Schema; for several ' +
    'pages or a strict schema use scraperA/extract or scraperB/extract.',
  priceCents: 5,
  strict: STRICT,
  input: inputObject(STRICT, {
    ...shared,
    extract_properties: z
      .string()
      .min(1)
      .max(2000)
      .describe('Comma-separated list of properties to extract, optionally typed: "title, price(number)".'),
  }),
  output: outputObject({}),
  annotations,
  timeoutMs: 120_000,
  example: { url: 'https://example.com/', extract_properties: 'title, description' },
  keywords: ['extract', 'structured', 'fields', 'json', 'ai', 'named fields', 'properties', 'pull fields'],
});

export const scraperC = group(scrape, scrapeResidential, markdown, extract);
