// The built-in web engine as handlers see it (implemented in src/engine, wired by src/main.ts). Handlers map
// each group's parameters onto these requests; the engine never sees money, accounts or vendor keys.

export type WebGroup = 'scraperA' | 'scraperB' | 'scraperC';

export type PageFormat =
  | 'markdown'
  | 'html'
  | 'rawHtml'
  | 'plainText'
  | 'links'
  | 'screenshot'
  | 'screenshot@fullPage';

export interface PageRequest {
  url: string;
  formats: readonly PageFormat[];
  /** Keep only the main content (no navigation, headers, footers, asides, ads). */
  onlyMainContent: boolean;
  /** true: always render in the browser; false: never; null: render when the page needs JavaScript. */
  render: boolean | null;
  waitForMs?: number | undefined;
  waitForSelector?: string | undefined;
  /** JavaScript source (decoded) run in the page after load. */
  jsSnippet?: string | undefined;
  blockResources?: readonly string[] | undefined;
  cookies?: string | undefined;
  /** rawHtml is the HTML the server sent rather than the DOM after scripts ran. */
  returnPageSource?: boolean | undefined;
  /** Skip title/description/language when nobody reads them (a raw-HTML fetch): saves a parse of the page. */
  skipMetadata?: boolean | undefined;
  timeoutMs?: number | undefined;
  signal: AbortSignal;
}

export interface PageMetadata {
  title: string | null;
  description: string | null;
  language: string | null;
  /** The URL asked for. */
  sourceURL: string;
  /** The URL after redirects. */
  url: string;
  statusCode: number;
  contentType: string;
  /** Whether the page was rendered in the browser. */
  rendered: boolean;
  /** Why this page has no content (crawl pages only; a failed scrape is an error instead). */
  error?: string;
  [key: string]: unknown;
}

export interface PageResult {
  markdown?: string;
  html?: string;
  rawHtml?: string;
  plainText?: string;
  links?: string[];
  /** data:image/png;base64,… */
  screenshot?: string;
  metadata: PageMetadata;
  warnings?: string[];
  [key: string]: unknown;
}

export interface MapRequest {
  url: string;
  useSitemap: boolean;
  /** Link levels followed from the start page (0: the start page's links only are not fetched further). */
  maxDepth: number;
  limit: number;
  timeoutMs: number;
  signal: AbortSignal;
}

export interface CrawlRequest {
  url: string;
  maxPages: number;
  maxDepth: number;
  formats: readonly PageFormat[];
  onlyMainContent: boolean;
  render: boolean | null;
  signal: AbortSignal;
}

export type CrawlState = 'scraping' | 'completed' | 'failed' | 'cancelled';

export interface CrawlStatus {
  status: CrawlState;
  completed: number;
  total: number;
  data: PageResult[];
  /** More pages than fit in one answer: poll again with this `skip`. */
  next_skip?: number;
  error?: string;
}

export type JobState = 'processing' | 'completed' | 'failed' | 'cancelled';

export interface JobView {
  status: JobState;
  /** The latest (partial while processing) result. */
  result: unknown;
  error?: string;
}

/** Work run as a background job; `progress` records a partial result readable while it runs. */
export type JobWork = (signal: AbortSignal, progress: (partial: unknown) => void) => Promise<unknown>;

export interface WebEngine {
  /** Whether the operator lets the built-in engine serve this group (TOLLGATE_<GROUP>_ENGINE). */
  serves(group: WebGroup): boolean;
  /** Whether a headless browser is installed. */
  browserAvailable(): boolean;
  /** Largest crawl this gateway runs (TOLLGATE_CRAWL_MAX_PAGES). */
  readonly maxCrawlPages: number;
  /** How long a job may run before its call answers "processing" instead (TOLLGATE_EXTRACT_INLINE_SECONDS). */
  readonly inlineJobMs: number;
  scrape(req: PageRequest): Promise<PageResult>;
  map(req: MapRequest): Promise<string[]>;
  /** Fetches the first page (so a crawl that cannot start fails uncharged), then runs in the background. */
  startCrawl(req: CrawlRequest): Promise<string>;
  crawlStatus(id: string, skip: number): Promise<CrawlStatus | undefined>;
  /**
   * Runs `work` as a job kept in the database. Resolves with its result if it finishes within `inlineMs`
   * (and rejects if it fails within that time); otherwise with `{ done: false }` while it goes on.
   */
  startJob(
    kind: string,
    work: JobWork,
    inlineMs: number,
  ): Promise<{ id: string; done: true; result: unknown } | { id: string; done: false }>;
  jobStatus(id: string): Promise<JobView | undefined>;
}
