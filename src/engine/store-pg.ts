import { inTransaction, type PgClient, type PgPool } from '../pg/pool.js';
import type { CrawlState, JobState } from '../ports/index.js';
import type { CrawlJobRow, JobRow, OrphanScan, QueueItem, WebStore } from './store.js';

// The web engine's state in PostgreSQL, shared by replicas (tables crawl_jobs, crawl_queue, crawl_pages,
// web_jobs: src/pg/migrations/stores.ts). A crawl belongs to the replica running it (`owner`): only the owner
// writes its frontier and pages, each write checking ownership under the crawl row's lock, so that after a
// survivor adopts the crawl of a replica whose lease expired, a late write of the presumed-dead one is refused
// and it stops. Any replica reads any crawl's status and pages.

/**
 * The owner of row `c` holds no live lease: it stopped renewing (crashed, hangs), or stopped cleanly and removed
 * its row (a clean stop leaves its crawls `scraping`, to be resumed by someone). Same rule as the ledger's sweep.
 */
const OWNER_GONE = 'NOT EXISTS (SELECT 1 FROM replicas r WHERE r.id = c.owner AND r.lease_expires_at > $1)';

/** Pages read per round trip by a status poll. */
const PAGE_BATCH = 50;

export class PgWebStore implements WebStore {
  readonly shared = true;

  constructor(
    private readonly pool: PgPool,
    private readonly replicaId: string,
  ) {}

  close(): Promise<void> {
    return Promise.resolve(); // the pool is the composition root's
  }

  // ---- crawls ---------------------------------------------------------------------------------------------

  async createCrawl(id: string, params: unknown, now: number): Promise<void> {
    await this.pool.query(
      `INSERT INTO crawl_jobs (id, status, params, created_at, updated_at, owner) VALUES ($1, 'scraping', $2, $3, $3, $4)`,
      [id, JSON.stringify(params), now, this.replicaId],
    );
  }

  async crawl(id: string): Promise<CrawlJobRow | undefined> {
    const r = await this.pool.query<CrawlJobRow>({
      name: 'web_crawl',
      text: 'SELECT id, status, params, total, completed, error, resumes, created_at, updated_at FROM crawl_jobs WHERE id = $1',
      values: [id],
    });
    return r.rows[0];
  }

  async claimOrphanCrawls(now: number, scan: OrphanScan): Promise<CrawlJobRow[]> {
    const candidates = await this.pool.query<{ id: string; owner: string }>(
      `SELECT id, owner FROM crawl_jobs c WHERE status = 'scraping'
         AND (($3 AND owner = $2) OR (owner <> $2 AND ${OWNER_GONE}))
       ORDER BY created_at`,
      [now, this.replicaId, scan.atStart],
    );
    const claimed: CrawlJobRow[] = [];
    for (const { id, owner } of candidates.rows) {
      if (scan.running.has(id)) continue;
      // The claim: conditional on the owner seen above. Two survivors racing both match the row; the second
      // waits for the first's commit, re-checks the condition on the new row, finds another owner, and gets 0.
      const r = await this.pool.query<CrawlJobRow>(
        `UPDATE crawl_jobs SET owner = $1, resumes = resumes + 1, updated_at = $2
         WHERE id = $3 AND owner = $4 AND status = 'scraping'
         RETURNING id, status, params, total, completed, error, resumes, created_at, updated_at`,
        [this.replicaId, now, id, owner],
      );
      if (r.rows[0]) claimed.push(r.rows[0]);
    }
    return claimed;
  }

  async setCrawlStatus(id: string, status: CrawlState, error: string | null, now: number): Promise<boolean> {
    const r = await this.pool.query(
      'UPDATE crawl_jobs SET status = $1, error = $2, updated_at = $3 WHERE id = $4 AND owner = $5',
      [status, error, now, id, this.replicaId],
    );
    return r.rowCount === 1;
  }

  async enqueue(id: string, items: QueueItem[], maxPages: number): Promise<number> {
    return inTransaction(this.pool, async (c) => {
      if (!(await this.lockOwned(c, id))) return 0;
      return this.enqueueIn(c, id, items, maxPages);
    });
  }

  async pending(id: string, limit: number, exclude: ReadonlySet<string>): Promise<QueueItem[]> {
    const r = await this.pool.query<QueueItem>({
      name: 'web_pending',
      text: `SELECT seq, url, depth FROM crawl_queue WHERE job_id = $1 AND NOT done ORDER BY depth, seq LIMIT $2`,
      values: [id, limit + exclude.size],
    });
    return r.rows.filter((q) => !exclude.has(q.url)).slice(0, limit);
  }

  async maxSeq(id: string): Promise<number> {
    const r = await this.pool.query<{ m: number | null }>(
      'SELECT max(seq) AS m FROM crawl_queue WHERE job_id = $1',
      [id],
    );
    return r.rows[0]?.m ?? 0;
  }

  async finishPage(
    id: string,
    item: QueueItem,
    page: unknown,
    found: QueueItem[],
    maxPages: number,
    now: number,
  ): Promise<boolean> {
    return inTransaction(this.pool, async (c) => {
      if (!(await this.lockOwned(c, id))) return false;
      await c.query({
        name: 'web_done',
        text: 'UPDATE crawl_queue SET done = true WHERE job_id = $1 AND url = $2',
        values: [id, item.url],
      });
      await c.query({
        name: 'web_page',
        text: `INSERT INTO crawl_pages (job_id, seq, data) VALUES ($1, $2, $3)
               ON CONFLICT (job_id, seq) DO UPDATE SET data = excluded.data`,
        values: [id, item.seq, JSON.stringify(page)],
      });
      if (found.length > 0) await this.enqueueIn(c, id, found, maxPages);
      await c.query({
        name: 'web_completed',
        text: `UPDATE crawl_jobs SET updated_at = $2,
                 completed = (SELECT count(*) FROM crawl_queue WHERE job_id = $1 AND done) WHERE id = $1`,
        values: [id, now],
      });
      return true;
    });
  }

  async pages(
    id: string,
    skip: number,
    maxCount: number,
    maxBytes: number,
  ): Promise<{ pages: unknown[]; more: boolean }> {
    // In batches, so that a poll over large pages never loads more than about maxBytes (plus one batch).
    const pages: unknown[] = [];
    let bytes = 0;
    for (let offset = skip; ; offset += PAGE_BATCH) {
      const r = await this.pool.query<{ data: string }>({
        name: 'web_pages',
        text: 'SELECT data FROM crawl_pages WHERE job_id = $1 ORDER BY seq OFFSET $2 LIMIT $3',
        values: [id, offset, PAGE_BATCH],
      });
      for (const row of r.rows) {
        if (pages.length >= maxCount || (pages.length > 0 && bytes + row.data.length > maxBytes)) {
          return { pages, more: true };
        }
        bytes += row.data.length;
        pages.push(JSON.parse(row.data));
      }
      if (r.rows.length < PAGE_BATCH) return { pages, more: false };
    }
  }

  async prune(before: number): Promise<number> {
    return inTransaction(this.pool, async (c) => {
      const old = await c.query<{ id: string }>(
        "DELETE FROM crawl_jobs WHERE updated_at < $1 AND status <> 'scraping' RETURNING id",
        [before],
      );
      const ids = old.rows.map((r) => r.id);
      if (ids.length > 0) {
        await c.query('DELETE FROM crawl_pages WHERE job_id = ANY($1::text[])', [ids]);
        await c.query('DELETE FROM crawl_queue WHERE job_id = ANY($1::text[])', [ids]);
      }
      const jobs = await c.query("DELETE FROM web_jobs WHERE updated_at < $1 AND status <> 'processing'", [
        before,
      ]);
      return ids.length + (jobs.rowCount ?? 0);
    });
  }

  /** Locks the crawl row for this transaction; false when another replica owns the crawl now. */
  private async lockOwned(c: PgClient, id: string): Promise<boolean> {
    const r = await c.query<{ owner: string }>({
      name: 'web_lock_crawl',
      text: 'SELECT owner FROM crawl_jobs WHERE id = $1 FOR UPDATE',
      values: [id],
    });
    return r.rows[0]?.owner === this.replicaId;
  }

  /** enqueue inside a transaction that holds the crawl row's lock: the count and the inserts cannot interleave. */
  private async enqueueIn(c: PgClient, id: string, items: QueueItem[], maxPages: number): Promise<number> {
    const known = await c.query<{ n: number; urls: string[] | null }>({
      name: 'web_known',
      text: `SELECT (SELECT count(*) FROM crawl_queue WHERE job_id = $1)::int AS n,
                    (SELECT array_agg(url) FROM crawl_queue WHERE job_id = $1 AND url = ANY($2::text[])) AS urls`,
      values: [id, items.map((i) => i.url)],
    });
    let n = known.rows[0]?.n ?? 0;
    const seen = new Set(known.rows[0]?.urls ?? []);
    const add: QueueItem[] = [];
    for (const it of items) {
      if (n >= maxPages) break;
      if (seen.has(it.url)) continue;
      seen.add(it.url);
      add.push(it);
      n++;
    }
    if (add.length > 0) {
      await c.query({
        name: 'web_enqueue',
        text: `INSERT INTO crawl_queue (job_id, seq, url, depth)
               SELECT $1, s, u, d FROM unnest($2::int[], $3::text[], $4::int[]) AS t(s, u, d)
               ON CONFLICT DO NOTHING`,
        values: [id, add.map((i) => i.seq), add.map((i) => i.url), add.map((i) => i.depth)],
      });
    }
    await c.query({
      name: 'web_total',
      text: 'UPDATE crawl_jobs SET total = $2 WHERE id = $1',
      values: [id, n],
    });
    return add.length;
  }

  // ---- background jobs ----------------------------------------------------------------------------------

  async createJob(id: string, kind: string, now: number): Promise<void> {
    await this.pool.query(
      `INSERT INTO web_jobs (id, kind, status, created_at, updated_at, owner) VALUES ($1, $2, 'processing', $3, $3, $4)`,
      [id, kind, now, this.replicaId],
    );
  }

  async updateJob(
    id: string,
    status: JobState,
    result: unknown,
    error: string | null,
    now: number,
  ): Promise<void> {
    await this.pool.query({
      name: 'web_update_job',
      text: 'UPDATE web_jobs SET status = $1, result = $2, error = $3, updated_at = $4 WHERE id = $5',
      values: [status, result === undefined ? null : JSON.stringify(result), error, now, id],
    });
  }

  async job(id: string): Promise<JobRow | undefined> {
    const r = await this.pool.query<JobRow>({
      name: 'web_job',
      text: 'SELECT id, kind, status, result, error FROM web_jobs WHERE id = $1',
      values: [id],
    });
    return r.rows[0];
  }

  async failOrphanJobs(reason: string, now: number, atStart: boolean): Promise<number> {
    const r = await this.pool.query(
      `UPDATE web_jobs c SET status = 'failed', error = $4, updated_at = $1
       WHERE status = 'processing' AND (($3 AND owner = $2) OR (owner <> $2 AND ${OWNER_GONE}))`,
      [now, this.replicaId, atStart, reason],
    );
    return r.rowCount ?? 0;
  }
}
