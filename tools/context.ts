import type { Logger } from 'pino';
import type { CueFrameClient } from '../src/upstreams/cueframe.js';
import type { FalClient } from '../src/upstreams/fal.js';
import type { FastcrwClient } from '../src/upstreams/fastcrw.js';
import type { FirecrawlClient } from '../src/upstreams/firecrawl.js';
import type { RealEstateApiClient } from '../src/upstreams/realestateapi.js';
import type { RentCastClient } from '../src/upstreams/rentcast.js';
import type { ScrapingAntClient } from '../src/upstreams/scrapingant.js';
import type { WebEngine } from './web-engine.js';

// The web engine's request and result types, for src/engine (which may import only this file from tools/).
export type * from './web-engine.js';
// What a handler is given. Handlers never see money or credentials: vendor clients carry their own keys,
// and the only account access is a read-only view of the caller's own account.

export interface HandlerContext {
  /** Aborted on client cancellation, timeout or shutdown; pass it to every upstream call. */
  signal: AbortSignal;
  now(): number;
  /** Opaque id of the account the call belongs to; binds server-minted handles (crawl ids, render ids). */
  owner: string;
  /** This call's transaction id (for evidence that cites it). */
  transactionId: string;
  log: Logger;
  /** Reports progress while a call blocks; the MCP door forwards it when the client asked for it. */
  progress(progress: number, total?: number, message?: string): void;
  account: AccountView;
  services: Services;
}

export interface AccountView {
  balance(): Promise<{ balance_micros: number; held_micros: number; available_micros: number }>;
  transactions(limit: number): Promise<TransactionView[]>;
}

export type TransactionView = {
  id: string;
  created_at: string;
  action: string;
  status: 'pending' | 'succeeded' | 'failed' | 'refunded';
  /** Refunded later because the work it started failed (a render, a job). */
  refunded_cents: number;
  price_cents: number;
  charged_cents: number;
  charged_micros: number;
  payment_method: string;
  provider: string | null;
  idempotency_key: string | null;
  duration_ms: number | null;
  error_code: string | null;
  meta: Record<string, unknown> | null;
};

/**
 * Infrastructure injected by the composition root (src/main.ts). Each member is optional where it depends on
 * operator configuration; handlers answer `not_configured` when what they need is absent.
 */
export interface Services {
  publicUrl: string;
  vendors: VendorClients;
  /** Server-side fetch of a caller's URL through the SSRF guard. */
  web: WebFetcher;
  /** Server-minted handles bound to an owner (crawl ids, render ids, …). */
  handles: HandleStore;
  /** The model router's upstream for internal use (extraction, summaries); absent without TOLLGATE_LLM_API_KEY. */
  llm?: LlmService;
  /** The built-in web engine (scrape, map, crawl, jobs) for scraperA/B/C when no vendor serves them. */
  engine?: WebEngine;
  /** The file library (files/*): local disk by default, owner-scoped, with signed links. */
  files: FileStore;
  /** Binary, size-limited download of a caller's URL through the SSRF guard (files/upload_from_url). */
  download: Downloader;
}

export type LlmTier = 'platform/cheap' | 'platform/mid' | 'platform/best';

export interface LlmMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/**
 * One-shot completions used inside actions (scraper extraction, summaries). Their cost is the gateway's own,
 * included in the action's flat price; the caller is not billed per token for them.
 */
export interface LlmService {
  complete(req: {
    tier: LlmTier;
    messages: LlmMessage[];
    /** When set, the answer must be JSON matching this schema; `json` holds it parsed and validated. */
    jsonSchema?: Record<string, unknown>;
    maxTokens?: number;
    signal: AbortSignal;
  }): Promise<{
    text: string;
    json?: unknown;
    model: string;
    usage: { prompt_tokens: number; completion_tokens: number };
    costMicros: number;
  }>;
}

// Each vendor adapter adds its (optional) client here as it lands.
export type VendorClients = {
  /** mediastage: fal.ai storage; absent without TOLLGATE_FAL_API_KEY. */
  fal?: FalClient;
  /** videoasm: CueFrame; absent without TOLLGATE_CUEFRAME_API_KEY. */
  cueframe?: CueFrameClient;
  /** propstats: RentCast; absent without TOLLGATE_RENTCAST_API_KEY. */
  rentcast?: RentCastClient;
  /** propdata: RealEstateAPI; absent without TOLLGATE_REALESTATEAPI_API_KEY. */
  realestateapi?: RealEstateApiClient;
  /** scraperA: Firecrawl v1; absent without TOLLGATE_FIRECRAWL_API_KEY (or with TOLLGATE_SCRAPERA_ENGINE=builtin). */
  firecrawl?: FirecrawlClient;
  /** scraperB: fastCRW; absent without TOLLGATE_FASTCRW_API_KEY (or with TOLLGATE_SCRAPERB_ENGINE=builtin). */
  fastcrw?: FastcrwClient;
  /** scraperC: ScrapingAnt v2; absent without TOLLGATE_SCRAPINGANT_API_KEY (or with TOLLGATE_SCRAPERC_ENGINE=builtin). */
  scrapingant?: ScrapingAntClient;
};

export interface FetchedPage {
  /** Final URL after redirects. */
  url: string;
  status: number;
  contentType: string;
  /** Decoded text body (charset from the header or the document). */
  body: string;
  bytes: number;
}

export interface WebFetchOptions {
  signal: AbortSignal;
  timeoutMs?: number;
  maxBytes?: number;
  headers?: Record<string, string>;
  cookies?: string;
}

export interface WebFetcher {
  fetchPage(url: string, opts: WebFetchOptions): Promise<FetchedPage>;
}

export interface HandleRecord {
  handle: string;
  owner: string;
  kind: string;
  ref: string;
  data: Record<string, unknown>;
  created_at: number;
}

export interface HandleStore {
  /** Mints a new handle for `owner` pointing at an upstream (or local) reference. */
  mint(owner: string, kind: string, ref: string, data?: Record<string, unknown>): Promise<string>;
  /** The handle's record if it exists *and belongs to owner*; another account's handle is not found. */
  resolve(owner: string, kind: string, handle: string): Promise<HandleRecord | undefined>;
  update(handle: string, data: Record<string, unknown>): Promise<void>;
  /** The newest handle of `owner` and `kind` pointing at `ref` (e.g. a validated composition's fingerprint). */
  findByRef(owner: string, kind: string, ref: string): Promise<HandleRecord | undefined>;
  /** The handle's record whoever owns it: for bearer polls of accountless (x402) callers and refund routing. */
  lookup(handle: string): Promise<HandleRecord | undefined>;
}

export interface StoredFile {
  file_id: string;
  filename: string;
  /** Declared size while pending; the stored size once the bytes arrived. */
  size_bytes: number;
  mime: string | null;
  tags: string[];
  note: string | null;
  /** pending: created by files/upload, bytes not PUT yet; stored: the bytes are on disk. */
  status: 'pending' | 'stored';
  created_at: number;
  source_url: string | null;
}

export interface NewFileMeta {
  filename: string;
  mime?: string | undefined;
  tags?: string[] | undefined;
  note?: string | undefined;
}

export interface SignedLink {
  url: string;
  expires_at: number;
}

/** Files belong to one owner (an account); another owner's file_id is simply not found. */
export interface FileStore {
  /** files/upload: a pending file of exactly `size_bytes`, whose bytes arrive through its PUT link. */
  create(owner: string, meta: NewFileMeta & { size_bytes: number }): Promise<StoredFile>;
  /** Streams bytes into a new stored file; more than `maxBytes` → payload_too_large and nothing is kept. */
  ingest(
    owner: string,
    meta: NewFileMeta & { source_url?: string },
    body: AsyncIterable<Uint8Array>,
    opts: { maxBytes: number; signal: AbortSignal },
  ): Promise<StoredFile>;
  get(owner: string, fileId: string): Promise<StoredFile | undefined>;
  list(
    owner: string,
    q: { tag?: string | undefined; filename?: string | undefined; limit: number; offset: number },
  ): Promise<{ files: StoredFile[]; total: number }>;
  /** A signed link on the public URL: GET downloads the bytes, PUT uploads them (pending files only). */
  link(fileId: string, method: 'GET' | 'PUT'): SignedLink;
}

export interface Download {
  /** Final URL after redirects. */
  url: string;
  contentType: string | undefined;
  /** Declared length, when the server sent one (already checked against maxBytes). */
  contentLength: number | undefined;
  contentDisposition: string | undefined;
  /** The body, streamed; reading past maxBytes throws payload_too_large. */
  body: AsyncIterable<Uint8Array>;
  /** Releases the connection when the body will not be read to the end. */
  cancel(): void;
}

export interface Downloader {
  open(url: string, opts: { signal: AbortSignal; maxBytes: number; timeoutMs?: number }): Promise<Download>;
}
