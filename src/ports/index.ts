import type { CueFrameClient } from '../upstreams/cueframe.js';
import type { FalClient } from '../upstreams/fal.js';
import type { FastcrwClient } from '../upstreams/fastcrw.js';
import type { FirecrawlClient } from '../upstreams/firecrawl.js';
import type { RealEstateApiClient } from '../upstreams/realestateapi.js';
import type { RentCastClient } from '../upstreams/rentcast.js';
import type { ScrapingAntClient } from '../upstreams/scrapingant.js';
import type { FileStore } from './files.js';
import type { HandleStore } from './handles.js';
import type { LlmService } from './llm.js';
import type { Downloader, WebFetcher } from './web.js';
import type { WebEngine } from './web-engine.js';

// The ports of the gateway: what handlers (tools/) are given, as interfaces that infrastructure (src/engine,
// src/storage, src/upstreams, src/llm) implements and the composition root (src/main.ts) wires together.
// Handlers never see money or credentials: vendor clients carry their own keys.

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

export type * from './files.js';
export type * from './handles.js';
export type * from './llm.js';
export type * from './web.js';
export type * from './web-engine.js';
