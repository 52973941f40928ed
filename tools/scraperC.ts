import { invalidInput } from '../src/errors.js';
import type { PageFormat } from '../src/ports/web-engine.js';
import type { ScrapingAntParams } from '../src/upstreams/scrapingant.js';
import type { HandlerContext, Services } from './context.js';
import type { InputOf, ServiceHandlers } from './types.js';
import {
  browserOff,
  builtin,
  checkSnippet,
  decodeSnippet,
  firstOf,
  groupOff,
  vendorOnly,
} from './web-common.js';
import { extractProperties, llmMissing, requireLlm } from './web-llm.js';

// scraperC: ScrapingAnt v2 when configured; otherwise the built-in engine — `browser: true` (the default)
// renders in headless Chromium, `browser: false` is a plain SSRF-guarded fetch. Residential proxies and
// proxy_country exist only at the vendor.

const G = 'scraperC';
type SharedInput = InputOf<'scraperC/scrape'>;

const BROWSER_ONLY = ['return_page_source', 'wait_for_selector', 'js_snippet', 'block_resource'] as const;

const provider = (_: unknown, s: Services) => (s.vendors.scrapingant ? 'scrapingant' : 'builtin');

function builtinPrecheck(input: SharedInput, s: Services) {
  if (s.vendors.scrapingant) return undefined;
  const engine = builtin(s, G);
  if (!engine) return groupOff(G);
  const browserOnly = BROWSER_ONLY.filter((f) => input[f] !== undefined);
  return firstOf(
    input.proxy_country !== undefined && vendorOnly(G, 'proxy_country (proxy exits by country)'),
    !input.browser &&
      browserOnly.length > 0 &&
      invalidInput(browserOnly.map((f) => ({ path: f, message: 'needs browser: true' }))),
    checkSnippet(input.js_snippet),
    input.browser && !engine.browserAvailable() && browserOff(),
  );
}

function vendorParams(input: SharedInput): ScrapingAntParams {
  return {
    url: input.url,
    browser: input.browser,
    return_page_source: input.return_page_source,
    wait_for_selector: input.wait_for_selector,
    js_snippet: input.js_snippet,
    block_resource: input.block_resource,
    proxy_country: input.proxy_country,
    timeout: input.timeout,
    cookies: input.cookies,
  };
}

async function scrapeBuiltin(input: SharedInput, ctx: HandlerContext, format: PageFormat) {
  const engine = builtin(ctx.services, G);
  if (!engine) throw groupOff(G);
  const block = input.block_resource;
  return engine.scrape({
    url: input.url,
    formats: [format],
    // ScrapingAnt's markdown is of the whole page; so is ours.
    onlyMainContent: false,
    render: input.browser,
    waitForSelector: input.wait_for_selector,
    jsSnippet: decodeSnippet(input.js_snippet),
    blockResources: block === undefined ? undefined : Array.isArray(block) ? block : [block],
    cookies: input.cookies,
    returnPageSource: input.return_page_source,
    // scraperC answers { raw } or { url, markdown }: no page metadata.
    skipMetadata: true,
    timeoutMs: (input.timeout ?? 30) * 1000,
    signal: ctx.signal,
  });
}

export const scraperCHandlers: ServiceHandlers<'scraperC'> = {
  'scraperC/scrape': {
    precheck: builtinPrecheck,
    provider,
    run: async (input, ctx) => {
      const sa = ctx.services.vendors.scrapingant;
      if (sa) return { raw: (await sa.general(vendorParams(input), ctx.signal)).html };
      return { raw: (await scrapeBuiltin(input, ctx, 'rawHtml')).rawHtml ?? '' };
    },
  },

  'scraperC/scrape_residential': {
    precheck: (_input, s) =>
      s.vendors.scrapingant ? undefined : vendorOnly(G, 'Residential proxies (scraperC/scrape_residential)'),
    provider: () => 'scrapingant',
    run: async (input, ctx) => {
      const sa = ctx.services.vendors.scrapingant;
      if (!sa) throw vendorOnly(G, 'Residential proxies');
      const res = await sa.general({ ...vendorParams(input), proxy_type: 'residential' }, ctx.signal);
      return { raw: res.html };
    },
  },

  'scraperC/markdown': {
    precheck: builtinPrecheck,
    provider,
    run: async (input, ctx) => {
      const sa = ctx.services.vendors.scrapingant;
      if (sa) return sa.markdown(vendorParams(input), ctx.signal);
      const page = await scrapeBuiltin(input, ctx, 'markdown');
      return { url: page.metadata.url, markdown: page.markdown ?? '' };
    },
  },

  'scraperC/extract': {
    precheck: (input, s) =>
      firstOf(
        builtinPrecheck(input, s),
        !s.vendors.scrapingant && !s.llm && llmMissing('AI extraction (scraperC/extract)'),
      ),
    provider,
    run: async (input, ctx) => {
      const sa = ctx.services.vendors.scrapingant;
      if (sa) {
        return sa.extract(
          { ...vendorParams(input), extract_properties: input.extract_properties },
          ctx.signal,
        );
      }
      const llm = requireLlm(ctx.services, 'AI extraction (scraperC/extract)');
      const page = await scrapeBuiltin(input, ctx, 'markdown');
      return extractProperties(
        llm,
        { url: page.metadata.url, markdown: page.markdown ?? '' },
        input.extract_properties,
        ctx.signal,
      );
    },
  },
};
