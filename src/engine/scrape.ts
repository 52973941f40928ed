import { GatewayError } from '../errors.js';
import type { PageFormat, PageRequest, PageResult } from '../ports/index.js';
import type { GuardedFetcher } from '../upstreams/web-fetch.js';
import { type BrowserPool, browserMissing, type RenderResult } from './browser.js';

// One page: plain fetch or headless render (or fetch, then render if the page needs JavaScript), then one scan
// of the HTML for every format asked for.

export interface ScrapeDeps {
  fetcher: GuardedFetcher;
  browser: BrowserPool;
  defaultTimeoutMs: number;
}

/** A page as loaded: `html` is the document to convert (after scripts ran when rendered). */
interface Loaded extends RenderResult {
  rendered: boolean;
  warnings: string[];
}

const HTML_TYPE = /^\s*(text\/html|application\/xhtml\+xml)|^\s*$/i;

// The HTML scanner (htmlparser2, the entity tables, the markdown writer) is ~1.5 MiB of heap: it loads with the
// first page this gateway reads, not at start (issue 19, idle RSS).
let scanner: typeof import('./scan.js') | undefined;
const loadScanner = async () => {
  scanner ??= await import('./scan.js');
  return scanner;
};

export async function scrapePage(deps: ScrapeDeps, req: PageRequest): Promise<PageResult> {
  const loaded = await load(deps, req);
  // A target answering 4xx/5xx is a failed scrape (as ScrapingAnt reports it): not charged (docs/decisions.md).
  if (loaded.status >= 400) {
    throw new GatewayError(
      'upstream_rejected',
      `The page answered HTTP ${loaded.status}; nothing was charged.`,
      {
        details: { target_status: loaded.status },
      },
    );
  }
  return convert(loaded, req);
}

export async function convert(
  loaded: Loaded,
  req: Pick<PageRequest, 'url' | 'formats' | 'onlyMainContent' | 'returnPageSource' | 'skipMetadata'>,
): Promise<PageResult> {
  const want = new Set<PageFormat>(req.formats);
  const isHtml = HTML_TYPE.test(loaded.contentType);
  const metadata: PageResult['metadata'] = {
    title: null,
    description: null,
    language: null,
    sourceURL: req.url,
    url: loaded.url,
    statusCode: loaded.status,
    contentType: loaded.contentType.split(';')[0]?.trim() || 'text/html',
    rendered: loaded.rendered,
  };
  const out: PageResult = { metadata };
  if (loaded.warnings.length > 0) out.warnings = loaded.warnings;
  if (want.has('rawHtml')) out.rawHtml = req.returnPageSource ? loaded.source : loaded.html;
  if (loaded.screenshot) out.screenshot = `data:image/png;base64,${loaded.screenshot}`;
  if (!isHtml) {
    // Text that is not HTML (JSON, XML, plain text) is its own content.
    const lang = /json/i.test(loaded.contentType) ? 'json' : /xml/i.test(loaded.contentType) ? 'xml' : '';
    if (want.has('markdown'))
      out.markdown = lang ? `\`\`\`${lang}\n${loaded.html.trim()}\n\`\`\`` : loaded.html;
    if (want.has('plainText')) out.plainText = loaded.html;
    if (want.has('html')) out.html = loaded.html;
    if (want.has('links')) out.links = [];
    return out;
  }
  const textual = want.has('markdown') || want.has('plainText') || want.has('html') || want.has('links');
  if (!textual && req.skipMetadata) return out;
  const { scanHtml } = scanner ?? (await loadScanner());
  const scan = scanHtml(loaded.html, {
    baseUrl: loaded.url,
    mainContent: req.onlyMainContent,
    markdown: want.has('markdown'),
    text: want.has('plainText'),
    html: want.has('html'),
  });
  metadata.title = scan.title;
  metadata.description = scan.description;
  metadata.language = scan.language;
  if (scan.markdown !== undefined) out.markdown = scan.markdown;
  if (scan.plainText !== undefined) out.plainText = scan.plainText;
  if (scan.html !== undefined) out.html = scan.html;
  if (want.has('links')) out.links = scan.links;
  return out;
}

/** Fetches (and renders when needed) without judging the status; crawls record failed pages instead. */
export async function load(deps: ScrapeDeps, req: PageRequest): Promise<Loaded> {
  const timeoutMs = req.timeoutMs ?? deps.defaultTimeoutMs;
  const screenshot = req.formats.includes('screenshot@fullPage')
    ? 'fullPage'
    : req.formats.includes('screenshot')
      ? 'viewport'
      : undefined;
  const browserOnly =
    screenshot !== undefined ||
    req.waitForSelector !== undefined ||
    req.jsSnippet !== undefined ||
    (req.blockResources?.length ?? 0) > 0;
  const render = req.render === true || (req.render === null && browserOnly);
  if (render) return renderPage(deps, req, timeoutMs, screenshot);

  const started = Date.now();
  const page = await deps.fetcher.fetchPage(req.url, {
    signal: req.signal,
    timeoutMs,
    textOnly: true,
    cookies: req.cookies,
  });
  const fetched: Loaded = {
    url: page.url,
    status: page.status,
    contentType: page.contentType,
    html: page.body,
    source: page.body,
    rendered: false,
    warnings: [],
  };
  if (req.render === false || page.status >= 400 || !HTML_TYPE.test(page.contentType)) return fetched;
  const { scanHtml, needsBrowser } = scanner ?? (await loadScanner());
  const scan = scanHtml(page.body, { baseUrl: page.url });
  if (!needsBrowser(scan.hints)) return fetched;
  if (!deps.browser.available()) {
    fetched.warnings.push(
      'The page seems to need JavaScript, but this gateway has no browser; the HTML as served is returned.',
    );
    return fetched;
  }
  const left = timeoutMs - (Date.now() - started);
  if (left < 1_000) return fetched;
  return renderPage(deps, { ...req, url: page.url }, left, screenshot, page.body);
}

async function renderPage(
  deps: ScrapeDeps,
  req: PageRequest,
  timeoutMs: number,
  screenshot: 'viewport' | 'fullPage' | undefined,
  knownSource?: string,
): Promise<Loaded> {
  if (!deps.browser.available()) throw browserMissing();
  const r = await deps.browser.render({
    url: req.url,
    signal: req.signal,
    timeoutMs,
    waitForMs: req.waitForMs,
    waitForSelector: req.waitForSelector,
    jsSnippet: req.jsSnippet,
    blockResources: req.blockResources,
    cookies: req.cookies,
    screenshot,
  });
  return { ...r, source: knownSource ?? r.source, rendered: true, warnings: [] };
}
