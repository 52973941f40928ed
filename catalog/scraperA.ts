import { z } from 'zod';
import { defineAction, inputObject, outputObject } from './define.js';
import { group } from './group.js';
import { httpUrl } from './shared.js';
import {
  crawlId,
  crawlStatusOutput,
  scrapeAnnotations,
  scrapedPage,
  startAnnotations,
} from './web-shared.js';

// scraperA (docs/spec.md §4.7): additional properties allowed (passed on to the vendor). Firecrawl v1 when configured,
// else the built-in web engine; search is vendor-only.

const LOOSE = false;

export const SCRAPER_A_FORMATS = [
  'markdown',
  'html',
  'rawHtml',
  'links',
  'screenshot',
  'screenshot@fullPage',
  'json',
  'changeTracking',
] as const;

export const scrape = defineAction({
  service: 'scraperA',
  action: 'scrape',
  title: 'Scrape a page to Markdown or HTML (scraperA)',
  summary:
    'Fetches one web page and returns clean Markdown (default) and/or HTML, links or a screenshot, with page ' +
    'metadata. onlyMainContent drops navigation, headers, footers and ads. json needs jsonOptions {schema, prompt}.',
  whenToUse:
    'Use it to read an article or documentation page as clean Markdown of its main content ' +
    '(navigation and ads dropped) or to take a screenshot; for the raw HTML use scraperC/scrape, for ' +
    'plain text, a summary or stealth use scraperB/scrape.',
  priceCents: 1,
  strict: LOOSE,
  input: inputObject(LOOSE, {
    url: httpUrl('Page to scrape.'),
    formats: z
      .array(z.enum(SCRAPER_A_FORMATS))
      .min(1)
      .optional()
      .describe('What to return (default ["markdown"]).'),
    onlyMainContent: z
      .boolean()
      .optional()
      .describe('Only the main content, without navigation, headers, footers or ads (default true).'),
    waitFor: z
      .number()
      .int()
      .positive()
      .optional()
      .describe('Milliseconds to wait after the page loaded, in a browser (at most 60000 used).'),
  }),
  output: scrapedPage,
  annotations: scrapeAnnotations,
  example: { url: 'https://example.com/', formats: ['markdown'] },
  keywords: [
    'scrape',
    'markdown',
    'html',
    'page',
    'web',
    'read',
    'article',
    'screenshot',
    'main content',
    'clean',
  ],
});

export const crawl = defineAction({
  service: 'scraperA',
  action: 'crawl',
  title: 'Crawl a website (scraperA)',
  summary:
    'Starts crawling a site from url: same-site pages, breadth-first, within limit pages and maxDepth link ' +
    'levels, robots.txt respected. Returns { id } at once; poll scraperA/crawl_status every few seconds.',
  whenToUse:
    "Use it to collect the content of many pages of one site at a flat low price; to list a site's " +
    'URLs without their content use scraperA/map, and for a crawl with per-page formats or ' +
    'JavaScript control use scraperB/crawl.',
  priceCents: 1,
  strict: LOOSE,
  input: inputObject(LOOSE, {
    url: httpUrl('Where the crawl starts.'),
    limit: z.number().int().positive().optional().describe('Most pages to crawl (the gateway caps it).'),
    maxDepth: z.number().int().positive().optional().describe('Most link levels below the start page.'),
  }),
  output: outputObject({ id: crawlId }),
  annotations: startAnnotations,
  pollWith: 'scraperA/crawl_status',
  jobHandle: 'id',
  example: { url: 'https://example.com/', limit: 10, maxDepth: 2 },
  keywords: ['crawl', 'spider', 'site', 'pages', 'website', 'whole site', 'collect content'],
});

export const crawlStatus = defineAction({
  service: 'scraperA',
  action: 'crawl_status',
  title: 'Status and pages of a crawl (scraperA)',
  summary:
    'Reports a scraperA crawl: status (scraping, completed, failed, cancelled), finished, completed and total ' +
    'counts, and the pages so far in data. While it runs, wait next_poll_seconds between polls. A big crawl ' +
    'comes in parts: pass next_skip back as skip. Free (not priced by the spec), rate-limited.',
  whenToUse:
    'Use it after scraperA/crawl, with its id; it is free, and once finished is true the crawl is ' + 'over.',
  // Not in the spec's price list: free, as polls the spec does not price are (docs/decisions.md, "Polls"). Public:
  // an accountless (x402) payer polls its crawl with the id alone; an account's ids need its credential.
  priceCents: 0,
  access: 'public',
  // Not in the spec's list; like every scraperA action it accepts additional properties (docs/spec.md §4.7).
  strict: LOOSE,
  input: inputObject(LOOSE, {
    id: crawlId,
    skip: z.number().int().nonnegative().optional().describe('Pages to skip (from next_skip).'),
  }),
  output: outputObject({
    ...crawlStatusOutput,
    next_skip: z.number().int().optional().describe('More pages remain: call again with skip = next_skip.'),
  }),
  annotations: scrapeAnnotations,
  timeoutMs: 30_000,
  // A crawl that failed without a single page is refunded.
  refundsStart: {
    start: 'scraperA/crawl',
    handleField: 'id',
    failed: (o) => o.status === 'failed' && o.completed === 0,
  },
  example: { id: 'crawl_a_0mdx3k2a1b2c3d4e5f6g7h8i9j' },
  keywords: ['crawl', 'status', 'poll', 'progress', 'check on', 'finished', 'done'],
});

export const map = defineAction({
  service: 'scraperA',
  action: 'map',
  title: 'List the URLs of a website (scraperA)',
  summary:
    "Lists a site's URLs without scraping them: from its sitemaps and the links of the start page. Use it to " +
    'pick pages before scraping.',
  whenToUse:
    'Use it to find which pages a site has before scraping a few of them: far cheaper than a crawl. ' +
    'To follow links several levels deep use scraperB/map.',
  priceCents: 1,
  strict: LOOSE,
  input: inputObject(LOOSE, {
    url: httpUrl('The site (or page) to map.'),
    limit: z.number().int().min(1).max(30_000).optional().describe('Most URLs to return (default 5000).'),
    ignoreSitemap: z.boolean().optional().describe('Do not read sitemap.xml (default false).'),
  }),
  output: outputObject({ links: z.array(z.string()).describe('URLs of the site, same site only.') }),
  annotations: scrapeAnnotations,
  example: { url: 'https://example.com/' },
  keywords: ['map', 'sitemap', 'urls', 'links', 'site', 'list urls', 'all urls', 'without scraping'],
});

export const search = defineAction({
  service: 'scraperA',
  action: 'search',
  title: 'Search the web and scrape the results (scraperA)',
  summary:
    'Web search: returns the top results (title, description, url), with page content when scrapeOptions ' +
    'asks for it.',
  whenToUse:
    'Use it for a quick web search of one query with optional page content per hit; for news, images ' +
    'or a recency window use scraperB/search, for several source kinds with cited evidence ' +
    'platform/supersearch.',
  priceCents: 1,
  strict: LOOSE,
  input: inputObject(LOOSE, {
    query: z.string().min(1).describe('What to search for.'),
    limit: z.number().int().positive().optional().describe('Results to return (default 5).'),
  }),
  output: outputObject({
    results: z.array(z.looseObject({})).describe('Results: title, description, url (and content if asked).'),
  }),
  annotations: scrapeAnnotations,
  example: { query: 'open source web crawler', limit: 5 },
  keywords: ['search', 'web search', 'google', 'results', 'query', 'search the web', 'look up'],
});

export const extract = defineAction({
  service: 'scraperA',
  action: 'extract',
  title: 'Extract structured data from pages (scraperA)',
  summary:
    'AI extraction: reads the pages at urls and returns data answering prompt, shaped by the JSON Schema in ' +
    'schema (give prompt, schema or both). Validated against the schema before it is returned.',
  whenToUse:
    'Use it for structured data from up to 10 pages at the lowest price; for per-field source ' +
    'evidence use scraperB/extract, for a few fields of one page without a schema scraperC/extract.',
  priceCents: 1,
  strict: LOOSE,
  input: inputObject(LOOSE, {
    urls: z.array(httpUrl('A page to read.')).min(1).max(10).describe('Pages to extract from (1-10).'),
    prompt: z.string().min(1).max(10_000).optional().describe('What to extract, in words.'),
    schema: z.record(z.string(), z.unknown()).optional().describe('JSON Schema of the result.'),
  }),
  output: outputObject({ data: z.unknown().describe('The extracted data (matches schema when given).') }),
  annotations: scrapeAnnotations,
  timeoutMs: 180_000,
  example: {
    urls: ['https://example.com/'],
    prompt: 'The page title and its first paragraph',
    schema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
  },
  keywords: ['extract', 'structured', 'json', 'schema', 'ai', 'llm', 'data from pages'],
});

export const scraperA = group(scrape, crawl, crawlStatus, map, search, extract);
