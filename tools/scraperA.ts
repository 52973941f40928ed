import { GatewayError, invalidInput } from '../src/errors.js';
import type { HandlerContext, Services } from './context.js';
import { pollState } from './poll.js';
import type { InputOf, ServiceHandlers } from './types.js';
import {
  browserOff,
  builtin,
  expired,
  firstOf,
  groupOff,
  mintHandle,
  ownHandle,
  pageFormats,
  scrubPage,
  sleepMs,
  vendorOnly,
  withoutUndefined,
} from './web-common.js';
import { compileSchema, extractJson, llmMissing, requireLlm } from './web-llm.js';

// scraperA: Firecrawl v1 when configured (bodies pass through: our parameters are Firecrawl's), else the
// built-in engine. Crawl ids are our handles, bound to the caller's account, mapped to Firecrawl's id or ours.

const G = 'scraperA';
const CRAWL = 'crawl_a';
/** Crawl states that are not final. */
const RUNNING = ['scraping'];
/** Built-in crawl size when `limit` is not given (Firecrawl's own default, 10000, is far above our cap). */
const DEFAULT_CRAWL_PAGES = 100;
/** Firecrawl's default maxDepth. */
const DEFAULT_DEPTH = 10;

type ScrapeIn = InputOf<'scraperA/scrape'>;

const provider = (_: unknown, s: Services) => (s.vendors.firecrawl ? 'firecrawl' : 'builtin');

function jsonOptions(input: ScrapeIn): { schema?: Record<string, unknown>; prompt?: string } | undefined {
  const o = (input as Record<string, unknown>).jsonOptions;
  return o && typeof o === 'object' && !Array.isArray(o)
    ? (o as { schema?: Record<string, unknown>; prompt?: string })
    : undefined;
}

function scrapePrecheck(input: ScrapeIn, s: Services) {
  if (s.vendors.firecrawl) return undefined;
  const engine = builtin(s, G);
  if (!engine) return groupOff(G);
  const formats = input.formats ?? ['markdown'];
  const extra = input as Record<string, unknown>;
  const opts = jsonOptions(input);
  return firstOf(
    formats.includes('changeTracking') && vendorOnly(G, 'changeTracking'),
    (extra.proxy === 'stealth' || extra.location !== undefined) &&
      vendorOnly(G, 'Stealth proxies and locations'),
    formats.includes('json') && !s.llm && llmMissing('The json format'),
    formats.includes('json') && opts?.schema !== undefined && schemaIssue(opts.schema, 'jsonOptions.schema'),
    (formats.some((f) => f.startsWith('screenshot')) || input.waitFor !== undefined) &&
      !engine.browserAvailable() &&
      browserOff(),
  );
}

function schemaIssue(schema: unknown, field: string): GatewayError | undefined {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) {
    return invalidInput([{ path: field, message: 'must be a JSON Schema object' }]);
  }
  try {
    compileSchema(schema as Record<string, unknown>, field);
    return undefined;
  } catch (e) {
    return e as GatewayError;
  }
}

async function scrapeBuiltin(input: ScrapeIn, ctx: HandlerContext) {
  const engine = builtin(ctx.services, G);
  if (!engine) throw groupOff(G);
  const formats = input.formats ?? ['markdown'];
  const wantJson = formats.includes('json');
  const timeout = (input as Record<string, unknown>).timeout;
  const page = await engine.scrape({
    url: input.url,
    formats: pageFormats(formats, wantJson),
    onlyMainContent: input.onlyMainContent ?? true,
    render: input.waitFor !== undefined ? true : null,
    waitForMs: input.waitFor === undefined ? undefined : Math.min(input.waitFor, 60_000),
    timeoutMs: typeof timeout === 'number' && timeout > 0 ? Math.min(timeout, 60_000) : undefined,
    signal: ctx.signal,
  });
  const out: Record<string, unknown> = { ...page };
  if (wantJson) {
    const opts = jsonOptions(input);
    out.json = await extractJson(requireLlm(ctx.services, 'The json format'), {
      pages: [{ url: page.metadata.url, markdown: page.markdown ?? '' }],
      prompt: opts?.prompt,
      schema: opts?.schema,
      schemaField: 'jsonOptions.schema',
      signal: ctx.signal,
    });
    if (!formats.includes('markdown')) delete out.markdown;
  }
  return out;
}

async function pollExtract(ctx: HandlerContext, id: string): Promise<unknown> {
  const fc = ctx.services.vendors.firecrawl;
  if (!fc) throw groupOff(G);
  // Firecrawl's extract is a job; the action answers when it ends (or times out, uncharged).
  for (let wait = 500; ; wait = Math.min(wait * 2, 2_000)) {
    const s = await fc.extractStatus(id, ctx.signal);
    if (s.status === 'completed') return s.data;
    if (s.status !== 'processing') {
      throw new GatewayError(
        'upstream_rejected',
        `The extraction ${s.status === 'failed' ? 'failed' : 'was cancelled'} at the vendor; nothing was charged.`,
      );
    }
    await sleepMs(wait, ctx.signal);
  }
}

export const scraperAHandlers: ServiceHandlers<'scraperA'> = {
  'scraperA/scrape': {
    precheck: scrapePrecheck,
    provider,
    run: async (input, ctx) => {
      const fc = ctx.services.vendors.firecrawl;
      if (fc) return scrubPage(await fc.scrape(withoutUndefined(input), ctx.signal));
      return scrapeBuiltin(input, ctx);
    },
  },

  'scraperA/crawl': {
    precheck: (_input, s) => (s.vendors.firecrawl || builtin(s, G) ? undefined : groupOff(G)),
    provider,
    run: async (input, ctx) => {
      const cap = ctx.services.engine?.maxCrawlPages ?? 1_000;
      const fc = ctx.services.vendors.firecrawl;
      if (fc) {
        // Our price is flat, Firecrawl's is per page: the page cap bounds what one call can cost the operator.
        const body = withoutUndefined({ ...input, limit: Math.min(input.limit ?? cap, cap) });
        const ref = await fc.crawlStart(body, ctx.signal);
        return { id: await mintHandle(ctx, CRAWL, ref, { vendor: 'firecrawl' }) };
      }
      const engine = builtin(ctx.services, G);
      if (!engine) throw groupOff(G);
      const scrapeOptions = (input as Record<string, unknown>).scrapeOptions as
        | { formats?: unknown; onlyMainContent?: unknown }
        | undefined;
      const formats = Array.isArray(scrapeOptions?.formats)
        ? scrapeOptions.formats.filter((f): f is 'markdown' | 'html' | 'rawHtml' | 'links' =>
            ['markdown', 'html', 'rawHtml', 'links'].includes(f as string),
          )
        : [];
      const ref = await engine.startCrawl({
        url: input.url,
        maxPages: Math.min(input.limit ?? DEFAULT_CRAWL_PAGES, cap),
        maxDepth: input.maxDepth ?? DEFAULT_DEPTH,
        formats: formats.length > 0 ? formats : ['markdown'],
        onlyMainContent: scrapeOptions?.onlyMainContent !== false,
        render: null,
        signal: ctx.signal,
      });
      return { id: await mintHandle(ctx, CRAWL, ref, { vendor: 'builtin' }) };
    },
  },

  'scraperA/crawl_status': {
    provider,
    run: async (input, ctx) => {
      const rec = await ownHandle(ctx, CRAWL, input.id, 'crawl');
      if (rec.data.vendor === 'firecrawl') {
        const fc = ctx.services.vendors.firecrawl;
        if (!fc) throw groupOff(G);
        const s = await fc.crawlStatus(rec.ref, input.skip, ctx.signal);
        const out: Record<string, unknown> = {
          status: s.status,
          completed: s.completed,
          total: s.total,
          data: s.data.map(scrubPage),
        };
        if (s.nextSkip !== undefined) out.next_skip = s.nextSkip;
        return pollState(out as { status: string }, RUNNING) as never;
      }
      const engine = ctx.services.engine;
      if (!engine) throw groupOff(G);
      const s = await engine.crawlStatus(rec.ref, input.skip ?? 0);
      if (!s) throw expired('crawl');
      return pollState(s, RUNNING) as never;
    },
  },

  'scraperA/map': {
    precheck: (_input, s) => (s.vendors.firecrawl || builtin(s, G) ? undefined : groupOff(G)),
    provider,
    run: async (input, ctx) => {
      const fc = ctx.services.vendors.firecrawl;
      if (fc) return { links: await fc.map(withoutUndefined(input), ctx.signal) };
      const engine = builtin(ctx.services, G);
      if (!engine) throw groupOff(G);
      const links = await engine.map({
        url: input.url,
        useSitemap: input.ignoreSitemap !== true,
        maxDepth: 0,
        limit: input.limit ?? 5_000,
        timeoutMs: 50_000,
        signal: ctx.signal,
      });
      return { links };
    },
  },

  'scraperA/search': {
    precheck: (_input, s) => (s.vendors.firecrawl ? undefined : vendorOnly(G, 'Web search')),
    provider: () => 'firecrawl',
    run: async (input, ctx) => {
      const fc = ctx.services.vendors.firecrawl;
      if (!fc) throw vendorOnly(G, 'Web search');
      const results = await fc.search(withoutUndefined(input), ctx.signal);
      return { results: results.map(scrubPage) };
    },
  },

  'scraperA/extract': {
    precheck: (input, s) => {
      if (input.prompt === undefined && input.schema === undefined) {
        return invalidInput([{ path: 'prompt', message: 'give a prompt, a schema, or both' }]);
      }
      if (s.vendors.firecrawl) return undefined;
      if (!builtin(s, G)) return groupOff(G);
      const wildcard = input.urls.findIndex((u) => u.includes('*'));
      return firstOf(
        wildcard >= 0 &&
          invalidInput([
            { path: `urls.${wildcard}`, message: 'wildcards need the Firecrawl vendor; list pages' },
          ]),
        !s.llm && llmMissing('AI extraction (scraperA/extract)'),
        input.schema !== undefined && schemaIssue(input.schema, 'schema'),
      );
    },
    provider,
    run: async (input, ctx) => {
      const fc = ctx.services.vendors.firecrawl;
      if (fc) {
        const id = await fc.extractStart(withoutUndefined(input), ctx.signal);
        return { data: await pollExtract(ctx, id) };
      }
      const engine = builtin(ctx.services, G);
      if (!engine) throw groupOff(G);
      const llm = requireLlm(ctx.services, 'AI extraction (scraperA/extract)');
      const settled = await Promise.allSettled(
        input.urls.map((url) =>
          engine.scrape({
            url,
            formats: ['markdown'],
            onlyMainContent: true,
            render: null,
            signal: ctx.signal,
          }),
        ),
      );
      const pages = settled.flatMap((r) =>
        r.status === 'fulfilled' ? [{ url: r.value.metadata.url, markdown: r.value.markdown ?? '' }] : [],
      );
      if (pages.length === 0) throw (settled[0] as PromiseRejectedResult).reason;
      const data = await extractJson(llm, {
        pages,
        prompt: input.prompt,
        schema: input.schema,
        schemaField: 'schema',
        signal: ctx.signal,
      });
      return { data };
    },
  },
};
