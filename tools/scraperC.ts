import { GatewayError, invalidInput, notConfigured } from '../src/errors.js';
import { htmlToMarkdown } from '../src/lib/markdown.js';
import type { FetchedPage, HandlerContext } from './context.js';
import type { InputOf, ServiceHandlers } from './types.js';

// scraperC: ScrapingAnt when configured; otherwise the built-in engine. The built-in engine serves
// `browser: false` with a plain, SSRF-guarded HTTP fetch.

type SharedInput = InputOf<'scraperC/scrape'>;

const BROWSER_ONLY = ['return_page_source', 'wait_for_selector', 'js_snippet', 'block_resource'] as const;

function builtinPrecheck(input: SharedInput): GatewayError | undefined {
  if (input.proxy_country !== undefined) {
    return notConfigured('proxy_country (proxy exits by country)', ['TOLLGATE_SCRAPINGANT_API_KEY']);
  }
  if (input.browser) {
    return notConfigured('Browser rendering for scraperC (send browser: false for a plain fetch)', [
      'TOLLGATE_SCRAPINGANT_API_KEY',
    ]);
  }
  const browserOnly = BROWSER_ONLY.filter((f) => input[f] !== undefined);
  if (browserOnly.length > 0) {
    return invalidInput(browserOnly.map((f) => ({ path: f, message: 'needs browser: true' })));
  }
  return undefined;
}

async function fetchTarget(input: SharedInput, ctx: HandlerContext): Promise<FetchedPage> {
  const page = await ctx.services.web.fetchPage(input.url, {
    signal: ctx.signal,
    timeoutMs: (input.timeout ?? 30) * 1000,
    cookies: input.cookies,
  });
  // A target that answers 4xx/5xx is a failed scrape (as ScrapingAnt reports it): not charged.
  if (page.status >= 400) {
    throw new GatewayError(
      'upstream_rejected',
      `The page answered HTTP ${page.status}; nothing was charged.`,
      { details: { target_status: page.status } },
    );
  }
  return page;
}

export const scraperCHandlers: ServiceHandlers<'scraperC'> = {
  'scraperC/scrape': {
    precheck: builtinPrecheck,
    provider: () => 'builtin',
    run: async (input, ctx) => ({ raw: (await fetchTarget(input, ctx)).body }),
  },
  'scraperC/scrape_residential': {
    precheck: () =>
      notConfigured('Residential proxies (scraperC/scrape_residential)', ['TOLLGATE_SCRAPINGANT_API_KEY']),
    run: async () => {
      throw notConfigured('Residential proxies', ['TOLLGATE_SCRAPINGANT_API_KEY']);
    },
  },
  'scraperC/markdown': {
    precheck: builtinPrecheck,
    provider: () => 'builtin',
    run: async (input, ctx) => {
      const page = await fetchTarget(input, ctx);
      return { url: page.url, markdown: htmlToMarkdown(page.body).markdown };
    },
  },
  'scraperC/extract': {
    precheck: () => notConfigured('AI extraction (scraperC/extract)', ['TOLLGATE_SCRAPINGANT_API_KEY']),
    run: async () => {
      throw notConfigured('AI extraction', ['TOLLGATE_SCRAPINGANT_API_KEY']);
    },
  },
};
