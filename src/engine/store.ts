import { migrate, type SqliteDb } from '../lib/sqlite.js';
import type { CrawlState, JobState } from '../ports/index.js';

// The engine's own SQLite file (data/web.sqlite): crawl jobs with their frontier and pages, and background
// jobs (async extraction). Pages are written as they are scraped, so a crawl's memory stays flat and a restart
// can resume it from the frontier. Kept apart from the ledger's database: page bodies are bulky, and losing
// the last pages on power loss only means fetching them again (synchronous=NORMAL here, FULL for money).

const MIGRATIONS = [
  `CREATE TABLE crawl_jobs (
     id         TEXT PRIMARY KEY,
     status     TEXT NOT NULL,
     params     TEXT NOT NULL,
     total      INTEGER NOT NULL DEFAULT 0,
     completed  INTEGER NOT NULL DEFAULT 0,
     error      TEXT,
     resumes    INTEGER NOT NULL DEFAULT 0,
     created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL
   );
   CREATE TABLE crawl_queue (
     job_id TEXT NOT NULL,
     seq    INTEGER NOT NULL,
     url    TEXT NOT NULL,
     depth  INTEGER NOT NULL,
     done   INTEGER NOT NULL DEFAULT 0,
     PRIMARY KEY (job_id, url)
   );
   CREATE INDEX crawl_queue_next ON crawl_queue(job_id, done, depth, seq);
   CREATE TABLE crawl_pages (
     job_id TEXT NOT NULL,
     seq    INTEGER NOT NULL,
     data   TEXT NOT NULL,
     PRIMARY KEY (job_id, seq)
   );
   CREATE TABLE web_jobs (
     id         TEXT PRIMARY KEY,
     kind       TEXT NOT NULL,
     status     TEXT NOT NULL,
     result     TEXT,
     error      TEXT,
     created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL
   );`,
];

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

export class WebStore {
  constructor(readonly db: SqliteDb) {
    migrate(db, 'web', MIGRATIONS);
  }

  // ---- crawls ---------------------------------------------------------------------------------------------

  createCrawl(id: string, params: unknown, now: number): void {
    this.db
      .prepare(
        "INSERT INTO crawl_jobs (id, status, params, created_at, updated_at) VALUES (?, 'scraping', ?, ?, ?)",
      )
      .run(id, JSON.stringify(params), now, now);
  }

  crawl(id: string): CrawlJobRow | undefined {
    return this.db.prepare('SELECT * FROM crawl_jobs WHERE id = ?').get(id) as CrawlJobRow | undefined;
  }

  crawlsIn(status: CrawlState): CrawlJobRow[] {
    return this.db.prepare('SELECT * FROM crawl_jobs WHERE status = ?').all(status) as CrawlJobRow[];
  }

  setCrawlStatus(id: string, status: CrawlState, error: string | null, now: number): void {
    this.db
      .prepare('UPDATE crawl_jobs SET status = ?, error = ?, updated_at = ? WHERE id = ?')
      .run(status, error, now, id);
  }

  countResume(id: string, now: number): number {
    this.db.prepare('UPDATE crawl_jobs SET resumes = resumes + 1, updated_at = ? WHERE id = ?').run(now, id);
    return (this.crawl(id)?.resumes ?? 0) as number;
  }

  /** Adds URLs not yet known to the job while the job has room; returns how many were added. */
  enqueue(id: string, items: QueueItem[], maxPages: number): number {
    const count = this.db.prepare('SELECT count(*) AS n FROM crawl_queue WHERE job_id = ?');
    const ins = this.db.prepare(
      'INSERT OR IGNORE INTO crawl_queue (job_id, seq, url, depth) VALUES (?, ?, ?, ?)',
    );
    let added = 0;
    this.db.transaction(() => {
      let n = (count.get(id) as { n: number }).n;
      for (const it of items) {
        if (n >= maxPages) break;
        if (ins.run(id, it.seq, it.url, it.depth).changes > 0) {
          n++;
          added++;
        }
      }
      this.db.prepare('UPDATE crawl_jobs SET total = ? WHERE id = ?').run(n, id);
    })();
    return added;
  }

  /** The next pending URLs in breadth-first order, skipping those already being fetched. */
  pending(id: string, limit: number, exclude: ReadonlySet<string>): QueueItem[] {
    const rows = this.db
      .prepare(
        'SELECT seq, url, depth FROM crawl_queue WHERE job_id = ? AND done = 0 ORDER BY depth, seq LIMIT ?',
      )
      .all(id, limit + exclude.size) as QueueItem[];
    return rows.filter((r) => !exclude.has(r.url)).slice(0, limit);
  }

  maxSeq(id: string): number {
    const r = this.db.prepare('SELECT max(seq) AS m FROM crawl_queue WHERE job_id = ?').get(id) as {
      m: number | null;
    };
    return r.m ?? 0;
  }

  /** Records one finished page and the links it led to, in one transaction. */
  finishPage(
    id: string,
    item: QueueItem,
    page: unknown,
    found: QueueItem[],
    maxPages: number,
    now: number,
  ): void {
    this.db.transaction(() => {
      this.db.prepare('UPDATE crawl_queue SET done = 1 WHERE job_id = ? AND url = ?').run(id, item.url);
      this.db
        .prepare('INSERT OR REPLACE INTO crawl_pages (job_id, seq, data) VALUES (?, ?, ?)')
        .run(id, item.seq, JSON.stringify(page));
      if (found.length > 0) this.enqueue(id, found, maxPages);
      this.db
        .prepare(
          'UPDATE crawl_jobs SET completed = (SELECT count(*) FROM crawl_queue WHERE job_id = ? AND done = 1), updated_at = ? WHERE id = ?',
        )
        .run(id, now, id);
    })();
  }

  /** Pages from `skip`, at most `maxCount` and about `maxBytes` of JSON (at least one page). */
  pages(id: string, skip: number, maxCount: number, maxBytes: number): { pages: unknown[]; more: boolean } {
    const it = this.db
      .prepare('SELECT data FROM crawl_pages WHERE job_id = ? ORDER BY seq LIMIT -1 OFFSET ?')
      .iterate(id, skip) as IterableIterator<{ data: string }>;
    const pages: unknown[] = [];
    let bytes = 0;
    for (const row of it) {
      if (pages.length >= maxCount || (pages.length > 0 && bytes + row.data.length > maxBytes)) {
        it.return?.();
        return { pages, more: true };
      }
      bytes += row.data.length;
      pages.push(JSON.parse(row.data));
    }
    return { pages, more: false };
  }

  /** Deletes crawls and jobs last touched before `before`. */
  prune(before: number): number {
    let n = 0;
    this.db.transaction(() => {
      const old = this.db
        .prepare('SELECT id FROM crawl_jobs WHERE updated_at < ? AND status != ?')
        .all(before, 'scraping') as Array<{ id: string }>;
      for (const { id } of old) {
        this.db.prepare('DELETE FROM crawl_pages WHERE job_id = ?').run(id);
        this.db.prepare('DELETE FROM crawl_queue WHERE job_id = ?').run(id);
        this.db.prepare('DELETE FROM crawl_jobs WHERE id = ?').run(id);
        n++;
      }
      n += this.db
        .prepare("DELETE FROM web_jobs WHERE updated_at < ? AND status != 'processing'")
        .run(before).changes;
    })();
    return n;
  }

  // ---- background jobs ----------------------------------------------------------------------------------

  createJob(id: string, kind: string, now: number): void {
    this.db
      .prepare(
        "INSERT INTO web_jobs (id, kind, status, created_at, updated_at) VALUES (?, ?, 'processing', ?, ?)",
      )
      .run(id, kind, now, now);
  }

  updateJob(id: string, status: JobState, result: unknown, error: string | null, now: number): void {
    this.db
      .prepare('UPDATE web_jobs SET status = ?, result = ?, error = ?, updated_at = ? WHERE id = ?')
      .run(status, result === undefined ? null : JSON.stringify(result), error, now, id);
  }

  job(id: string): JobRow | undefined {
    return this.db.prepare('SELECT id, kind, status, result, error FROM web_jobs WHERE id = ?').get(id) as
      | JobRow
      | undefined;
  }

  /** Jobs left `processing` by a previous process: they cannot be continued (their work was in memory). */
  failOrphanJobs(reason: string, now: number): number {
    return this.db
      .prepare("UPDATE web_jobs SET status = 'failed', error = ?, updated_at = ? WHERE status = 'processing'")
      .run(reason, now).changes;
  }
}
