import { migrate, type SqliteDb } from '../lib/sqlite.js';
import type { CrawlState, JobState } from '../ports/index.js';
import type { CrawlJobRow, JobRow, OrphanScan, QueueItem, WebStore } from './store.js';

// The engine's own SQLite file (data/web.sqlite), owned by one process: whatever is left running at its start
// was left by a previous process, and nothing needs adopting while it runs. Synchronous underneath (better-
// sqlite3), so each method is one transaction that never spans an await.

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

export class SqliteWebStore implements WebStore {
  readonly shared = false;

  constructor(readonly db: SqliteDb) {
    migrate(db, 'web', MIGRATIONS);
  }

  close(): Promise<void> {
    this.db.close();
    return Promise.resolve();
  }

  claimOrphanCrawls(now: number, scan: OrphanScan): Promise<CrawlJobRow[]> {
    if (!scan.atStart) return Promise.resolve([]);
    const rows = this.crawlsIn('scraping').filter((r) => !scan.running.has(r.id));
    return Promise.resolve(rows.map((r) => ({ ...r, resumes: this.countResume(r.id, now) })));
  }

  // ---- crawls ---------------------------------------------------------------------------------------------

  createCrawl(id: string, params: unknown, now: number): Promise<void> {
    this.db
      .prepare(
        "INSERT INTO crawl_jobs (id, status, params, created_at, updated_at) VALUES (?, 'scraping', ?, ?, ?)",
      )
      .run(id, JSON.stringify(params), now, now);
    return Promise.resolve();
  }

  crawl(id: string): Promise<CrawlJobRow | undefined> {
    return Promise.resolve(this.crawlRow(id));
  }

  private crawlRow(id: string): CrawlJobRow | undefined {
    return this.db.prepare('SELECT * FROM crawl_jobs WHERE id = ?').get(id) as CrawlJobRow | undefined;
  }

  private crawlsIn(status: CrawlState): CrawlJobRow[] {
    return this.db.prepare('SELECT * FROM crawl_jobs WHERE status = ?').all(status) as CrawlJobRow[];
  }

  setCrawlStatus(id: string, status: CrawlState, error: string | null, now: number): Promise<boolean> {
    const r = this.db
      .prepare('UPDATE crawl_jobs SET status = ?, error = ?, updated_at = ? WHERE id = ?')
      .run(status, error, now, id);
    return Promise.resolve(r.changes === 1);
  }

  private countResume(id: string, now: number): number {
    this.db.prepare('UPDATE crawl_jobs SET resumes = resumes + 1, updated_at = ? WHERE id = ?').run(now, id);
    return (this.crawlRow(id)?.resumes ?? 0) as number;
  }

  enqueue(id: string, items: QueueItem[], maxPages: number): Promise<number> {
    return Promise.resolve(this.enqueueNow(id, items, maxPages));
  }

  private enqueueNow(id: string, items: QueueItem[], maxPages: number): number {
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

  pending(id: string, limit: number, exclude: ReadonlySet<string>): Promise<QueueItem[]> {
    const rows = this.db
      .prepare(
        'SELECT seq, url, depth FROM crawl_queue WHERE job_id = ? AND done = 0 ORDER BY depth, seq LIMIT ?',
      )
      .all(id, limit + exclude.size) as QueueItem[];
    return Promise.resolve(rows.filter((r) => !exclude.has(r.url)).slice(0, limit));
  }

  maxSeq(id: string): Promise<number> {
    const r = this.db.prepare('SELECT max(seq) AS m FROM crawl_queue WHERE job_id = ?').get(id) as {
      m: number | null;
    };
    return Promise.resolve(r.m ?? 0);
  }

  finishPage(
    id: string,
    item: QueueItem,
    page: unknown,
    found: QueueItem[],
    maxPages: number,
    now: number,
  ): Promise<boolean> {
    this.db.transaction(() => {
      this.db.prepare('UPDATE crawl_queue SET done = 1 WHERE job_id = ? AND url = ?').run(id, item.url);
      this.db
        .prepare('INSERT OR REPLACE INTO crawl_pages (job_id, seq, data) VALUES (?, ?, ?)')
        .run(id, item.seq, JSON.stringify(page));
      if (found.length > 0) this.enqueueNow(id, found, maxPages);
      this.db
        .prepare(
          'UPDATE crawl_jobs SET completed = (SELECT count(*) FROM crawl_queue WHERE job_id = ? AND done = 1), updated_at = ? WHERE id = ?',
        )
        .run(id, now, id);
    })();
    return Promise.resolve(true);
  }

  pages(
    id: string,
    skip: number,
    maxCount: number,
    maxBytes: number,
  ): Promise<{ pages: unknown[]; more: boolean }> {
    const it = this.db
      .prepare('SELECT data FROM crawl_pages WHERE job_id = ? ORDER BY seq LIMIT -1 OFFSET ?')
      .iterate(id, skip) as IterableIterator<{ data: string }>;
    const pages: unknown[] = [];
    let bytes = 0;
    for (const row of it) {
      if (pages.length >= maxCount || (pages.length > 0 && bytes + row.data.length > maxBytes)) {
        it.return?.();
        return Promise.resolve({ pages, more: true });
      }
      bytes += row.data.length;
      pages.push(JSON.parse(row.data));
    }
    return Promise.resolve({ pages, more: false });
  }

  prune(before: number): Promise<number> {
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
    return Promise.resolve(n);
  }

  // ---- background jobs ----------------------------------------------------------------------------------

  createJob(id: string, kind: string, now: number): Promise<void> {
    this.db
      .prepare(
        "INSERT INTO web_jobs (id, kind, status, created_at, updated_at) VALUES (?, ?, 'processing', ?, ?)",
      )
      .run(id, kind, now, now);
    return Promise.resolve();
  }

  updateJob(id: string, status: JobState, result: unknown, error: string | null, now: number): Promise<void> {
    this.db
      .prepare('UPDATE web_jobs SET status = ?, result = ?, error = ?, updated_at = ? WHERE id = ?')
      .run(status, result === undefined ? null : JSON.stringify(result), error, now, id);
    return Promise.resolve();
  }

  job(id: string): Promise<JobRow | undefined> {
    return Promise.resolve(
      this.db.prepare('SELECT id, kind, status, result, error FROM web_jobs WHERE id = ?').get(id) as
        | JobRow
        | undefined,
    );
  }

  failOrphanJobs(reason: string, now: number, atStart: boolean): Promise<number> {
    if (!atStart) return Promise.resolve(0);
    return Promise.resolve(
      this.db
        .prepare(
          "UPDATE web_jobs SET status = 'failed', error = ?, updated_at = ? WHERE status = 'processing'",
        )
        .run(reason, now).changes,
    );
  }
}
