import type { CrawlState, JobState } from '../ports/index.js';

// The web engine's state: crawl jobs with their frontier and pages, and background jobs (async extraction).
// Pages are written as they are scraped, so a crawl's memory stays flat and another start (or, on PostgreSQL,
// another replica) can resume it from the frontier. Each crawl and job records the replica running it (SQLite,
// a cluster of one: the one fixed id). The implementation is store-sql.ts: SQLite keeps these tables in the
// engine's own file data/web.sqlite, PostgreSQL beside everything else, shared by every replica.

export interface CrawlJobRow {
  id: string;
  status: CrawlState;
  params: string;
  total: number;
  completed: number;
  error: string | null;
  resumes: number;
  created_at: number;
  updated_at: number;
}

export interface QueueItem {
  seq: number;
  url: string;
  depth: number;
}

export interface JobRow {
  id: string;
  kind: string;
  status: JobState;
  result: string | null;
  error: string | null;
}

export interface OrphanScan {
  /** Start-up: also this replica's own leftovers (left by its previous run). */
  atStart: boolean;
  /** Crawls this process runs right now: never claimed. */
  running: ReadonlySet<string>;
}

export interface WebStore {
  createCrawl(id: string, params: unknown, now: number): Promise<void>;
  crawl(id: string): Promise<CrawlJobRow | undefined>;
  /**
   * Claims the crawls left `scraping` by a replica that is gone and counts a resume on each: those of replicas
   * whose lease expired (or that left) and, at start, this replica's own, each with a conditional UPDATE so
   * that exactly one replica adopts it. Returns the claimed rows (resumes counted).
   */
  claimOrphanCrawls(now: number, scan: OrphanScan): Promise<CrawlJobRow[]>;
  /** Sets a crawl's outcome; false when it is not this replica's any more (adopted by another). */
  setCrawlStatus(id: string, status: CrawlState, error: string | null, now: number): Promise<boolean>;
  /** Adds URLs not yet known to the job while the job has room; returns how many were added. */
  enqueue(id: string, items: QueueItem[], maxPages: number): Promise<number>;
  /** The next pending URLs in breadth-first order, skipping those already being fetched. */
  pending(id: string, limit: number, exclude: ReadonlySet<string>): Promise<QueueItem[]>;
  maxSeq(id: string): Promise<number>;
  /**
   * Records one finished page and the links it led to, in one transaction. False when the crawl is no longer
   * this replica's (another adopted it): the caller stops crawling it.
   */
  finishPage(
    id: string,
    item: QueueItem,
    page: unknown,
    found: QueueItem[],
    maxPages: number,
    now: number,
  ): Promise<boolean>;
  /** Pages from `skip`, at most `maxCount` and about `maxBytes` of JSON (at least one page). */
  pages(
    id: string,
    skip: number,
    maxCount: number,
    maxBytes: number,
  ): Promise<{ pages: unknown[]; more: boolean }>;
  /** Deletes crawls and jobs last touched before `before`. */
  prune(before: number): Promise<number>;

  createJob(id: string, kind: string, now: number): Promise<void>;
  updateJob(id: string, status: JobState, result: unknown, error: string | null, now: number): Promise<void>;
  job(id: string): Promise<JobRow | undefined>;
  /**
   * Jobs left `processing` by a replica that is gone: they cannot be continued (their work was in memory).
   * Those of expired replicas and, at start, this replica's own.
   */
  failOrphanJobs(reason: string, now: number, atStart: boolean): Promise<number>;
}
