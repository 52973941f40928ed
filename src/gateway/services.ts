import type { VendorName } from '../config/index.js';
import { createWebStack } from '../engine/setup.js';
import { instrumentClient } from '../ops/instrument.js';
import type { FileMetaStore, Services } from '../ports/index.js';
import { openFileMetaStore } from '../storage/file-meta.js';
import { openHandleStore } from '../storage/handles.js';
import { type FileStorage, openFileStorage } from '../storage/index.js';
import { createCueFrameClient } from '../upstreams/cueframe.js';
import { createFalClient } from '../upstreams/fal.js';
import { createPool } from '../upstreams/http.js';
import { createRealEstateApiClient } from '../upstreams/realestateapi.js';
import { createRentCastClient } from '../upstreams/rentcast.js';
import { createDownloader } from '../upstreams/safe-download.js';
import { createWebFetcher } from '../upstreams/web-fetch.js';
import type { Books } from './ledger.js';
import type { Base } from './state.js';

// Step 3: the stores and clients the handlers are given (src/ports): the web engine or the scraping vendors, the
// property and media vendors, the file library, handles, downloads, and the model router for internal use.

type Keyed = { baseUrl: string; apiKey: string };

export type ModelRouter = ReturnType<typeof import('../llm/index.js').createModelRouter>;

export interface Opened {
  services: Services;
  /** Local storage serves its signed links itself (then mounted as a door); S3's go straight to the bucket. */
  files: FileStorage;
  /** The model router, loaded only with an upstream key (TOLLGATE_LLM_API_KEY). */
  llm: ModelRouter | undefined;
}

export async function openServices(
  b: Base,
  books: Pick<Books, 'health'>,
  o: { fileMeta?: FileMetaStore | undefined },
): Promise<Opened> {
  const { config, clock, log, state, telemetry } = b;
  const measured = <T extends object>(vendor: string, client: T | undefined): T | undefined =>
    client && telemetry ? instrumentClient(vendor, client, telemetry) : client;
  const { upstreamConnections: connections, fetchAllow: allow } = config;
  const web = createWebFetcher({ allow, maxBytes: config.env.TOLLGATE_FETCH_MAX_BYTES, connections });
  b.closers.add(() => web.close());
  // scraperA/B/C: vendor clients where configured, the built-in web engine elsewhere (src/engine/setup.ts).
  const onDatabaseError = (err: unknown) => books.health.report(err);
  const webStack = createWebStack(config, { fetcher: web, clock, log, state, onDatabaseError });
  b.closers.add(() => webStack.close());
  // propstats / propdata, mediastage / videoasm: a client only for a keyed vendor (else their actions answer
  // not_configured). One pooled pool serves them all: undici keeps a connection pool per origin.
  const pool = createPool({ connections });
  b.closers.add(() => pool.close());
  const client = { pool, timeoutMs: config.upstreamTimeoutMs, log };
  const keyed = <T extends object>(vendor: VendorName, make: (o: typeof client & Keyed) => T) => {
    const { apiKey, baseUrl } = config.vendors[vendor];
    return measured(vendor.toLowerCase(), apiKey ? make({ ...client, baseUrl, apiKey }) : undefined);
  };
  // files: metadata in the gateway's database, bytes on local disk or in S3 (TOLLGATE_STORAGE_URL).
  const files = await openFileStorage({
    location: config.storage,
    state,
    dataDir: config.dataDir,
    meta: o.fileMeta ?? openFileMetaStore(state),
    clock,
    log: log.child({ component: 'files' }),
    publicUrl: () => services.publicUrl,
    signingSecret: config.env.TOLLGATE_SIGNING_SECRET,
  });
  b.closers.add(() => files.close());
  const download = createDownloader({ allow });
  b.closers.add(() => download.close());
  const services: Services = {
    publicUrl: config.publicUrl,
    vendors: {
      rentcast: keyed('RENTCAST', createRentCastClient),
      realestateapi: keyed('REALESTATEAPI', createRealEstateApiClient),
      fal: keyed('FAL', createFalClient),
      cueframe: keyed('CUEFRAME', createCueFrameClient),
      firecrawl: measured('firecrawl', webStack.vendors.firecrawl),
      fastcrw: measured('fastcrw', webStack.vendors.fastcrw),
      scrapingant: measured('scrapingant', webStack.vendors.scrapingant),
    },
    engine: webStack.engine,
    web,
    handles: openHandleStore(state, clock),
    files: files.library,
    download,
  };

  // Crawls left running by a previous process resume from their stored frontier; background jobs (whose work
  // was in memory) are marked failed. Either way none stays `scraping`/`processing` for ever.
  const recovered = await webStack.engine.recover();
  if (recovered.crawlsResumed + recovered.crawlsFailed + recovered.jobsFailed > 0) {
    log.warn(recovered, 'web engine: recovered work left by a previous process');
  }
  log.info({ scrapers: webStack.routes }, 'web engine routes');

  // The model router: with an upstream key (then loaded) it also backs the internal LlmService that actions use
  // (the gateway's own cost, never billed per token); its door is mounted either way (src/gateway/doors.ts).
  const llmCfg = config.llm;
  const llm =
    llmCfg.apiKey === undefined
      ? undefined
      : (await import('../llm/index.js')).createModelRouter(
          { ...llmCfg, apiKey: llmCfg.apiKey },
          {
            clock,
            log: log.child({ door: 'llm' }),
            wrapUpstream: telemetry && ((u) => instrumentClient('llm', u, telemetry)),
          },
        );
  if (llm) {
    services.llm = llm.service;
    b.closers.add(() => llm.close());
  }
  return { services, files, llm };
}
