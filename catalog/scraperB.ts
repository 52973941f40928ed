import { z } from 'zod';
import { defineAction, inputObject, outputObject } from './define.js';
import { group } from './group.js';
import { httpUrl, pollFields } from './shared.js';
import {
  crawlId,
  crawlStatusOutput,
  scrapeAnnotations,
  scrapedPage,
  startAnnotations,
} from './web-shared.js';

// scraperB (docs/spec.md §4.7): additional properties allowed except crawl_status, extract and extract_status (strict).
// fastCRW when configured, else the built-in web engine; search, stealth and country are vendor-only.

const LOOSE = false;
const STRICT = true;

export const SCRAPER_B_FORMATS = [
  'markdown',
  'html',
  'rawHtml',
  'plainText',
  'links',
  'json',
  'summary',
  'screenshot',
] as const;

const formats = z.array(z.enum(SCRAPER_B_FORMATS)).min(1);
const renderJs = z
  .boolean()
  .nullable()
  .default(null)
  .describe('true: render JavaScript in a browser; false: plain HTTP fetch; null (default): auto-detect.');

export const scrape = defineAction({
  service: 'scraperB',
  action: 'scrape',
  title: 'Scrape a page, synchronously (scraperB)',
  summary:
    'Fetches one page and returns it in the formats asked for: markdown (default), html, rawHtml, plainText, ' +
    'links, screenshot, summary, or json (with jsonSchema). JavaScript pages are rendered when needed.',
  whenToUse:
    'Use it when you need several formats in one call (plain text, links, a summary, JSON by ' +
    'jsonSchema), JavaScript auto-detection, stealth or a proxy country; for clean Markdown of an ' +
    'article scraperA/scrape is enough.',
  priceCents: 1,
  strict: LOOSE,
  input: inputObject(LOOSE, {
    url: httpUrl('Page to scrape.'),
    formats: formats.default(['markdown']).describe('What to return (default ["markdown"]).'),
    onlyMainContent: z.boolean().default(true).describe('Only the main content (default true).'),
    renderJs,
    waitFor: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe('Milliseconds to wait after JavaScript ran (at most 60000 used).'),
    stealth: z.boolean().optional().describe('Anti-bot evasion (vendor only).'),
    country: z.string().length(2).optional().describe('Two-letter country of the proxy exit (vendor only).'),
    jsonSchema: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('JSON Schema for the json format: the page is read by a model into this shape.'),
  }),
  output: scrapedPage,
  annotations: scrapeAnnotations,
  example: { url: 'https://example.com/', formats: ['markdown', 'links'] },
  keywords: [
    'scrape',
    'markdown',
    'plain text',
    'text',
    'html',
    'render',
    'javascript',
    'page',
    'links',
    'summary',
    'summarize',
    'screenshot',
    'stealth',
  ],
});

export const search = defineAction({
  service: 'scraperB',
  action: 'search',
  title: 'Search the web (scraperB)',
  summary:
    'Web search with optional full page content per hit (scrapeOptions). tbs limits recency (qdr:h/d/w/m/y); ' +
    'sources picks web, news and/or images. Returns { results }.',
  whenToUse:
    'Use it for news or image results, or results from the last hour, day, week, month or year ' +
    '(tbs); for a plain web search scraperA/search is enough.',
  priceCents: 1,
  strict: LOOSE,
  input: inputObject(LOOSE, {
    query: z.string().min(1).max(2000).describe('What to search for (1-2000 characters).'),
    limit: z.number().int().min(1).max(20).default(5).describe('Results (1-20, default 5).'),
    tbs: z.enum(['qdr:h', 'qdr:d', 'qdr:w', 'qdr:m', 'qdr:y']).optional().describe('Recency: hour … year.'),
    sources: z
      .array(z.enum(['web', 'news', 'images']))
      .min(1)
      .optional()
      .describe('Result kinds.'),
    lang: z.string().min(2).max(5).optional().describe('Language code, e.g. en or pt-BR.'),
    scrapeOptions: z
      .looseObject({
        formats: z.array(z.string()).optional().describe('Formats of the page content per hit.'),
        onlyMainContent: z.boolean().optional().describe('Main content only.'),
      })
      .optional()
      .describe('Scrape each hit: full page content per result.'),
  }),
  output: outputObject({
    results: z.unknown().describe('The hits (a list, or grouped by source when sources is given).'),
  }),
  annotations: scrapeAnnotations,
  example: { query: 'rust web crawler', limit: 5 },
  keywords: [
    'search',
    'web search',
    'news',
    'images',
    'pictures',
    'photos',
    'query',
    'recent',
    'past week',
    'headlines',
  ],
});

export const map = defineAction({
  service: 'scraperB',
  action: 'map',
  title: 'List the URLs of a website (scraperB)',
  summary:
    "Lists a site's URLs without scraping them: sitemaps (useSitemap, default true) plus links followed " +
    'maxDepth levels from the start page. timeout is in seconds (default 120).',
  whenToUse:
    "Use it to list a site's URLs when links must be followed several levels deep (maxDepth); for a " +
    'sitemap-level list scraperA/map is enough.',
  priceCents: 1,
  strict: LOOSE,
  input: inputObject(LOOSE, {
    url: httpUrl('The site (or page) to map.'),
    maxDepth: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe('Link levels followed from the start page (default 0: its links only; at most 5 used).'),
    useSitemap: z.boolean().default(true).describe('Read sitemap.xml (default true).'),
    timeout: z
      .number()
      .int()
      .positive()
      .default(120)
      .describe('Give up after this many seconds (default and most 120).'),
  }),
  output: outputObject({ links: z.array(z.string()).describe('URLs of the site, same site only.') }),
  annotations: scrapeAnnotations,
  timeoutMs: 130_000,
  example: { url: 'https://example.com/' },
  keywords: ['map', 'sitemap', 'urls', 'links', 'discover', 'deep links', 'list urls'],
});

export const crawl = defineAction({
  service: 'scraperB',
  action: 'crawl',
  title: 'Crawl a website, asynchronously (scraperB)',
  summary:
    'Starts a crawl from url (same site, breadth-first, robots.txt respected) and returns { id } at once; ' +
    'poll scraperB/crawl_status every few seconds. One price covers the whole job (up to maxPages pages); a ' +
    'crawl that fails without a single page is refunded.',
  whenToUse:
    'Use it for a crawl of up to 100 pages with per-page formats (plain text, HTML, links) or ' +
    'JavaScript rendering control; for a cheaper crawl use scraperA/crawl.',
  priceCents: 10,
  strict: LOOSE,
  input: inputObject(LOOSE, {
    url: httpUrl('Where the crawl starts.'),
    maxPages: z.number().int().min(1).max(100).default(100).describe('Most pages (1-100, default 100).'),
    maxDepth: z
      .number()
      .int()
      .min(0)
      .default(2)
      .describe('Most link levels below the start page (default 2).'),
    formats: formats.optional().describe('What to keep per page (default ["markdown"]).'),
    onlyMainContent: z.boolean().optional().describe('Only the main content of each page (default true).'),
    renderJs,
  }),
  output: outputObject({ id: crawlId }),
  annotations: startAnnotations,
  pollWith: 'scraperB/crawl_status',
  jobHandle: 'id',
  example: { url: 'https://example.com/', maxPages: 10 },
  keywords: ['crawl', 'spider', 'site', 'async', 'pages', 'javascript', 'render', 'plain text'],
});

export const crawlStatus = defineAction({
  service: 'scraperB',
  action: 'crawl_status',
  title: 'Status and pages of a crawl (scraperB)',
  summary:
    'Reports a scraperB crawl: status (scraping, completed, failed, cancelled), finished, completed and total ' +
    'counts, and the scraped pages in data. While it runs, wait next_poll_seconds between polls.',
  whenToUse:
    'Use it after scraperB/crawl, with its id, until finished is true; it is priced per poll, so ' +
    'wait a few seconds between polls.',
  priceCents: 1,
  strict: STRICT,
  input: inputObject(STRICT, { id: crawlId }),
  output: outputObject(crawlStatusOutput),
  annotations: scrapeAnnotations,
  timeoutMs: 30_000,
  // A crawl that failed without a single page is refunded.
  refundsStart: {
    start: 'scraperB/crawl',
    handleField: 'id',
    failed: (o) => o.status === 'failed' && o.completed === 0,
  },
  example: { id: 'crawl_b_0mdx3k2a1b2c3d4e5f6g7h8i9j' },
  keywords: ['crawl', 'status', 'poll', 'progress', 'finished', 'done'],
});

const extractEntry = z.looseObject({
  url: z.string().describe('The page.'),
  status: z.enum(['processing', 'completed', 'failed', 'cancelled']).describe('This URL’s state.'),
  data: z.unknown().optional().describe('What was extracted from it.'),
  error: z.string().optional().describe('Why it failed.'),
  basis: z.array(z.looseObject({})).optional().describe('Per-field source evidence (basis: true).'),
});

export const extract = defineAction({
  service: 'scraperB',
  action: 'extract',
  title: 'Extract structured data from pages (scraperB)',
  summary:
    'AI extraction from 1-10 pages with a prompt and/or JSON Schema; basis adds per-field source evidence. ' +
    'Usually answers inline { results: [{ url, status, data }] }; a slow job answers { id, status: ' +
    '"processing" }: then poll scraperB/extract_status.',
  whenToUse:
    'Use it when extracted data must come with per-field source evidence (basis); otherwise ' +
    'scraperA/extract is cheaper.',
  priceCents: 5,
  strict: STRICT,
  input: inputObject(STRICT, {
    urls: z.array(httpUrl('A page to read.')).min(1).max(10).describe('Pages (1-10).'),
    prompt: z.string().min(1).max(10_000).optional().describe('What to extract, in words.'),
    schema: z.record(z.string(), z.unknown()).optional().describe('JSON Schema of each result.'),
    basis: z.boolean().optional().describe('Add per-field source evidence (quotes from the page).'),
  }),
  output: outputObject({
    results: z.array(extractEntry).optional().describe('Per-URL results (inline answer).'),
    id: z.string().optional().describe('Job id to poll with scraperB/extract_status (async answer).'),
    status: z.enum(['processing', 'completed']).optional().describe('processing: poll extract_status.'),
  }),
  annotations: startAnnotations,
  pollWith: 'scraperB/extract_status',
  jobHandle: 'id',
  timeoutMs: 120_000,
  example: { urls: ['https://example.com/'], prompt: 'The page title' },
  keywords: [
    'extract',
    'structured',
    'json',
    'schema',
    'ai',
    'evidence',
    'source quote',
    'basis',
    'citations',
  ],
});

export const extractStatus = defineAction({
  service: 'scraperB',
  action: 'extract_status',
  title: 'Status and results of an extraction (scraperB)',
  summary:
    'Reports an asynchronous scraperB extraction: status (processing, completed, failed, cancelled), finished ' +
    'and per-URL results { url, status, data, error }. While it runs, wait next_poll_seconds between polls.',
  whenToUse:
    'Use it only when scraperB/extract answered status processing, with its id, until finished is ' +
    'true; it is priced per poll.',
  priceCents: 1,
  strict: STRICT,
  input: inputObject(STRICT, { id: z.string().min(1).max(200).describe('The id from scraperB/extract.') }),
  output: outputObject({
    status: z.enum(['processing', 'completed', 'failed', 'cancelled']).describe('The job state.'),
    results: z.array(extractEntry).describe('Per-URL results, in the order asked.'),
    ...pollFields,
  }),
  annotations: scrapeAnnotations,
  timeoutMs: 30_000,
  // An extraction job that failed (every URL failed) is refunded.
  refundsStart: { start: 'scraperB/extract', handleField: 'id', failed: (o) => o.status === 'failed' },
  example: { id: 'extract_b_0mdx3k2a1b2c3d4e5f6g7h8i9j' },
  keywords: ['extract', 'extraction', 'status', 'poll', 'job', 'done', 'finished'],
});

export const scraperB = group(scrape, search, map, crawl, crawlStatus, extract, extractStatus);
