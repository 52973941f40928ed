import { z } from 'zod';
import { pollFields } from './shared.js';

// Shapes shared by the scraping services (scraperA, scraperB): one scraped page, a crawl status.

export const scrapeAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: true,
} as const;

/** Starting a job is not idempotent: each call starts (and pays for) a new one. */
export const startAnnotations = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: true,
} as const;

export const pageMetadata = z
  .looseObject({
    title: z.string().nullish().describe('The page title.'),
    description: z.string().nullish().describe('The meta description.'),
    language: z.string().nullish().describe('The document language.'),
    sourceURL: z.string().optional().describe('The URL asked for.'),
    url: z.string().optional().describe('The URL after redirects.'),
    statusCode: z.number().int().optional().describe('HTTP status the page answered with.'),
    error: z.string().nullish().describe('Why this page has no content (crawl pages).'),
  })
  .describe('About the page.');

export const scrapedPage = z
  .looseObject({
    markdown: z.string().optional().describe('The page as Markdown.'),
    html: z.string().optional().describe('Cleaned HTML: no scripts, styles or hidden elements.'),
    rawHtml: z.string().optional().describe('The HTML as loaded.'),
    plainText: z.string().optional().describe('The text of the page, without markup.'),
    links: z.array(z.string()).optional().describe('Absolute links found on the page.'),
    screenshot: z.string().optional().describe('A PNG screenshot (data: URL or link).'),
    json: z.unknown().optional().describe('Structured data extracted with jsonSchema / jsonOptions.'),
    summary: z.string().optional().describe('A short summary of the page.'),
    metadata: pageMetadata.optional(),
  })
  .describe('One scraped page.');

export const crawlStatusOutput = {
  status: z
    .enum(['scraping', 'completed', 'failed', 'cancelled'])
    .describe('scraping: still running (poll again after next_poll_seconds); the others are final.'),
  completed: z.number().int().nonnegative().describe('Pages done so far.'),
  total: z.number().int().nonnegative().describe('Pages found to crawl so far.'),
  data: z.array(scrapedPage).describe('The scraped pages (so far).'),
  error: z.string().optional().describe('Why the crawl failed.'),
  ...pollFields,
};

export const crawlId = z.string().min(1).max(200).describe('The crawl id returned by the crawl action.');
