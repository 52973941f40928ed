import { GatewayError, invalidInput } from '../src/errors.js';
import type { WebEngine } from '../src/ports/web-engine.js';
import type { FastcrwExtractResult } from '../src/upstreams/fastcrw.js';
import type { HandlerContext, Services } from './context.js';
import { pollState } from './poll.js';
import type { InputOf, ServiceHandlers } from './types.js';
import {
  browserOff,
  builtin,
  expired,
  firstOf,
  formatIssue,
  groupOff,
  mintHandle,
  ownHandle,
  pageFormats,
  scrubPage,
  vendorOnly,
  withoutUndefined,
} from './web-common.js';
import { basisFor, compileSchema, extractJson, llmMissing, requireLlm, summarize } from './web-llm.js';

// scraperB: fastCRW when configured (bodies pass through: our parameters are fastCRW's), else the built-in
// engine. Crawl and extraction ids are our handles, bound to the caller's account.

const G = 'scraperB';
const CRAWL = 'crawl_b';
const EXTRACT = 'extract_b';
const CRAWL_FORMATS = ['markdown', 'html', 'rawHtml', 'plainText', 'links'];
/** Link levels the built-in map follows at most: each level can multiply the pages fetched. */
const MAX_MAP_DEPTH = 5;

type ExtractIn = InputOf<'scraperB/extract'>;
type Entry = {
  url: string;
  status: 'processing' | 'completed' | 'failed' | 'cancelled';
  data?: unknown;
  error?: string;
  basis?: Array<Record<string, unknown>>;
};

const provider = (_: unknown, s: Services) => (s.vendors.fastcrw ? 'fastcrw' : 'builtin');
const routed = (_: unknown, s: Services) => (s.vendors.fastcrw || builtin(s, G) ? undefined : groupOff(G));

function schemaIssue(schema: Record<string, unknown> | undefined, field: string): GatewayError | undefined {
  if (schema === undefined) return undefined;
  try {
    compileSchema(schema, field);
    return undefined;
  } catch (e) {
    return e as GatewayError;
  }
}

/** fastCRW's per-URL error text is the vendor's: callers get ours, the log gets theirs. */
function scrubEntry(ctx: HandlerContext, r: FastcrwExtractResult): Entry {
  const status =
    r.status === 'completed' || r.status === 'failed' || r.status === 'cancelled' ? r.status : 'processing';
  const out: Entry = { ...(r as Record<string, unknown>), url: r.url, status };
  delete (out as Record<string, unknown>).llmUsage;
  if (r.error !== undefined) {
    ctx.log.info({ vendor: 'fastCRW', url: r.url, error: r.error }, 'extraction failed for a URL');
    out.error = 'The extraction failed for this URL.';
  }
  return out;
}

function allFailed(results: Entry[]): boolean {
  return results.length > 0 && results.every((r) => r.status === 'failed' || r.status === 'cancelled');
}

function extractFailed(): GatewayError {
  return new GatewayError('upstream_rejected', 'The extraction failed for every URL; nothing was charged.');
}

async function extractOne(
  engine: WebEngine,
  ctx: HandlerContext,
  input: ExtractIn,
  url: string,
  signal: AbortSignal,
): Promise<Entry> {
  try {
    const page = await engine.scrape({
      url,
      formats: ['markdown'],
      onlyMainContent: true,
      render: null,
      signal,
    });
    const llm = requireLlm(ctx.services, 'AI extraction (scraperB/extract)');
    const doc = { url: page.metadata.url, markdown: page.markdown ?? '' };
    const data = await extractJson(llm, {
      pages: [doc],
      prompt: input.prompt,
      schema: input.schema,
      schemaField: 'schema',
      signal,
    });
    const entry: Entry = { url, status: 'completed', data };
    if (input.basis) entry.basis = await basisFor(llm, doc, data, signal);
    return entry;
  } catch (e) {
    if (signal.aborted) throw e;
    const msg = e instanceof GatewayError ? e.message : 'The extraction failed for this URL.';
    if (!(e instanceof GatewayError)) ctx.log.warn({ err: e, url }, 'builtin extraction failed');
    return { url, status: 'failed', error: msg };
  }
}

async function extractBuiltin(input: ExtractIn, ctx: HandlerContext) {
  const engine = builtin(ctx.services, G);
  if (!engine) throw groupOff(G);
  const job = await engine.startJob(
    EXTRACT,
    async (signal, progress) => {
      const results: Entry[] = input.urls.map((url) => ({ url, status: 'processing' }));
      await Promise.all(
        input.urls.map(async (url, i) => {
          results[i] = await extractOne(engine, ctx, input, url, signal);
          progress({ results });
        }),
      );
      return { results };
    },
    engine.inlineJobMs,
  );
  if (!job.done) {
    const id = await mintHandle(ctx, EXTRACT, job.id, { vendor: 'builtin', urls: input.urls });
    return { id, status: 'processing' as const };
  }
  const { results } = job.result as { results: Entry[] };
  if (allFailed(results)) throw extractFailed();
  return { results };
}

export const scraperBHandlers: ServiceHandlers<'scraperB'> = {
  'scraperB/scrape': {
    precheck: (input, s) => {
      if (s.vendors.fastcrw) return undefined;
      const engine = builtin(s, G);
      if (!engine) return groupOff(G);
      const needsModel = input.formats.includes('json') || input.formats.includes('summary');
      const shot = input.formats.indexOf('screenshot');
      return firstOf(
        (input.stealth === true || input.country !== undefined) &&
          vendorOnly(G, 'Stealth and proxy countries'),
        needsModel && !s.llm && llmMissing('The json and summary formats'),
        input.formats.includes('json') && schemaIssue(input.jsonSchema, 'jsonSchema'),
        shot >= 0 &&
          input.renderJs === false &&
          invalidInput([{ path: `formats.${shot}`, message: 'a screenshot needs renderJs true or null' }]),
        (shot >= 0 || input.renderJs === true) && !engine.browserAvailable() && browserOff(),
      );
    },
    provider,
    run: async (input, ctx) => {
      const crw = ctx.services.vendors.fastcrw;
      if (crw) return scrubPage(await crw.scrape(withoutUndefined(input), ctx.signal));
      const engine = builtin(ctx.services, G);
      if (!engine) throw groupOff(G);
      const wantJson = input.formats.includes('json');
      const wantSummary = input.formats.includes('summary');
      const page = await engine.scrape({
        url: input.url,
        formats: pageFormats(input.formats, wantJson || wantSummary),
        onlyMainContent: input.onlyMainContent,
        render: input.renderJs,
        waitForMs: input.waitFor === undefined ? undefined : Math.min(input.waitFor, 60_000),
        signal: ctx.signal,
      });
      const out: Record<string, unknown> = { ...page };
      const doc = { url: page.metadata.url, markdown: page.markdown ?? '' };
      if (wantSummary)
        out.summary = await summarize(requireLlm(ctx.services, 'summary'), doc.markdown, doc.url, ctx.signal);
      if (wantJson) {
        out.json = await extractJson(requireLlm(ctx.services, 'json'), {
          pages: [doc],
          schema: input.jsonSchema,
          schemaField: 'jsonSchema',
          signal: ctx.signal,
        });
      }
      if (!input.formats.includes('markdown')) delete out.markdown;
      return out;
    },
  },

  'scraperB/search': {
    precheck: (_input, s) => (s.vendors.fastcrw ? undefined : vendorOnly(G, 'Web search')),
    provider: () => 'fastcrw',
    run: async (input, ctx) => {
      const crw = ctx.services.vendors.fastcrw;
      if (!crw) throw vendorOnly(G, 'Web search');
      const data = await crw.search(withoutUndefined(input), ctx.signal);
      const scrub = (v: unknown) =>
        Array.isArray(v)
          ? v.map((x) => (x && typeof x === 'object' ? scrubPage(x as Record<string, unknown>) : x))
          : v;
      if (Array.isArray(data)) return { results: scrub(data) };
      const grouped = Object.fromEntries(
        Object.entries((data ?? {}) as Record<string, unknown>).map(([k, v]) => [k, scrub(v)]),
      );
      return { results: grouped };
    },
  },

  'scraperB/map': {
    precheck: routed,
    provider,
    run: async (input, ctx) => {
      const crw = ctx.services.vendors.fastcrw;
      if (crw) return { links: await crw.map(withoutUndefined(input), ctx.signal) };
      const engine = builtin(ctx.services, G);
      if (!engine) throw groupOff(G);
      const links = await engine.map({
        url: input.url,
        useSitemap: input.useSitemap,
        maxDepth: Math.min(input.maxDepth ?? 0, MAX_MAP_DEPTH),
        limit: 5_000,
        timeoutMs: Math.min(input.timeout, 120) * 1000,
        signal: ctx.signal,
      });
      return { links };
    },
  },

  'scraperB/crawl': {
    precheck: (input, s) => {
      if (s.vendors.fastcrw) return undefined;
      const engine = builtin(s, G);
      if (!engine) return groupOff(G);
      return firstOf(
        input.formats !== undefined &&
          formatIssue(input.formats, CRAWL_FORMATS, `a built-in crawl keeps ${CRAWL_FORMATS.join(', ')}`),
        input.renderJs === true && !engine.browserAvailable() && browserOff(),
      );
    },
    provider,
    run: async (input, ctx) => {
      const crw = ctx.services.vendors.fastcrw;
      if (crw) {
        const ref = await crw.crawlStart(withoutUndefined(input), ctx.signal);
        return { id: await mintHandle(ctx, CRAWL, ref, { vendor: 'fastcrw' }) };
      }
      const engine = builtin(ctx.services, G);
      if (!engine) throw groupOff(G);
      const ref = await engine.startCrawl({
        url: input.url,
        maxPages: input.maxPages,
        maxDepth: input.maxDepth,
        formats: pageFormats(input.formats ?? ['markdown'], false),
        onlyMainContent: input.onlyMainContent ?? true,
        render: input.renderJs,
        signal: ctx.signal,
      });
      return { id: await mintHandle(ctx, CRAWL, ref, { vendor: 'builtin' }) };
    },
  },

  'scraperB/crawl_status': {
    provider,
    run: async (input, ctx) => {
      const rec = await ownHandle(ctx, CRAWL, input.id, 'crawl');
      if (rec.data.vendor === 'fastcrw') {
        const crw = ctx.services.vendors.fastcrw;
        if (!crw) throw groupOff(G);
        const s = await crw.crawlStatus(rec.ref, ctx.signal);
        const out = { status: s.status, completed: s.completed, total: s.total, data: s.data.map(scrubPage) };
        return pollState(out, ['scraping']);
      }
      const engine = ctx.services.engine;
      if (!engine) throw groupOff(G);
      const s = await engine.crawlStatus(rec.ref, 0);
      if (!s) throw expired('crawl');
      const { next_skip, ...rest } = s;
      return pollState(next_skip === undefined ? rest : { ...rest, truncated: true }, ['scraping']);
    },
  },

  'scraperB/extract': {
    precheck: (input, s) => {
      if (input.prompt === undefined && input.schema === undefined) {
        return invalidInput([{ path: 'prompt', message: 'give a prompt, a schema, or both' }]);
      }
      if (s.vendors.fastcrw) return undefined;
      if (!builtin(s, G)) return groupOff(G);
      return firstOf(
        !s.llm && llmMissing('AI extraction (scraperB/extract)'),
        schemaIssue(input.schema, 'schema'),
      );
    },
    provider,
    run: async (input, ctx) => {
      const crw = ctx.services.vendors.fastcrw;
      if (!crw) return extractBuiltin(input, ctx);
      const r = await crw.extract(withoutUndefined(input), ctx.signal);
      if ('id' in r) {
        const id = await mintHandle(ctx, EXTRACT, r.id, { vendor: 'fastcrw', urls: input.urls });
        return { id, status: 'processing' as const };
      }
      const results = r.results.map((e) => scrubEntry(ctx, e));
      if (allFailed(results)) throw extractFailed();
      return { results };
    },
  },

  'scraperB/extract_status': {
    provider,
    run: async (input, ctx) => {
      const rec = await ownHandle(ctx, EXTRACT, input.id, 'extraction');
      if (rec.data.vendor === 'fastcrw') {
        const crw = ctx.services.vendors.fastcrw;
        if (!crw) throw groupOff(G);
        const s = await crw.extractStatus(rec.ref, ctx.signal);
        // `cancelling` is fastCRW's non-terminal step towards `cancelled`: still processing for the caller.
        const status = s.status === 'cancelling' ? 'processing' : s.status;
        return pollState({ status, results: s.results.map((e) => scrubEntry(ctx, e)) }, ['processing']);
      }
      const engine = ctx.services.engine;
      if (!engine) throw groupOff(G);
      const job = await engine.jobStatus(rec.ref);
      if (!job) throw expired('extraction');
      const urls = (rec.data.urls as string[] | undefined) ?? [];
      const partial = (job.result as { results?: Entry[] } | undefined)?.results;
      const results: Entry[] = partial ?? urls.map((url) => ({ url, status: 'processing' }));
      // A job that failed as a whole (e.g. a restart) leaves no URL still "processing".
      const final =
        job.status === 'failed'
          ? results.map(
              (r): Entry =>
                r.status === 'processing'
                  ? { url: r.url, status: 'failed', error: job.error ?? 'The job failed.' }
                  : r,
            )
          : results;
      return pollState({ status: job.status, results: final }, ['processing']);
    },
  },
};
