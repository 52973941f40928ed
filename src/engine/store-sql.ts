import { sql } from 'kysely';
import type { StateDb } from '../backend.js';
import { forUpdate, inTransaction } from '../db/open.js';
import type { StoreDb } from '../db/schema.js';
import type { CrawlState } from '../ports/index.js';
import type { CrawlJobRow, OrphanScan, QueueItem, WebStore } from './store.js';
import { SqlJobStore } from './store-jobs.js';

// The web engine's store over the store layer: crawl_jobs, crawl_queue, crawl_pages and web_jobs live in
// `state.bulk` (SQLite: data/web.sqlite; PostgreSQL: the shared database), the replica leases in `state.stores`.
// A crawl belongs to the replica running it (`owner`): only the owner writes its frontier and pages, each write
// checking ownership under the crawl row's lock, so that after a survivor adopts the crawl of a replica whose
// lease expired, a late write of the presumed-dead one is refused and it stops. Any replica reads any crawl.

/** Pages read per round trip by a status poll. */
const PAGE_BATCH = 50;
/** URLs looked up or inserted per statement (well below SQLite's parameter limit). */
const CHUNK = 200;

const CRAWL = ['id', 'status', 'params', 'total', 'completed', 'error', 'resumes'] as const;
const CRAWL_ROW = [...CRAWL, 'created_at', 'updated_at'] as const;

/** Opens the web engine's store on the gateway's state. */
export function openWebStore(state: StateDb): WebStore {
  return new SqlWebStore(state.bulk, state.stores, state.replicaId);
}

function chunks<T>(items: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}

class SqlWebStore extends SqlJobStore implements WebStore {
  // ---- crawls ---------------------------------------------------------------------------------------------

  async createCrawl(id: string, params: unknown, now: number): Promise<void> {
    await this.db
      .insertInto('crawl_jobs')
      .values({
        id,
        status: 'scraping',
        params: JSON.stringify(params),
        created_at: now,
        updated_at: now,
        owner: this.replicaId,
      })
      .execute();
  }

  async crawl(id: string): Promise<CrawlJobRow | undefined> {
    const row = await this.db
      .selectFrom('crawl_jobs')
      .select(CRAWL_ROW)
      .where('id', '=', id)
      .executeTakeFirst();
    return row as CrawlJobRow | undefined;
  }

  async claimOrphanCrawls(now: number, scan: OrphanScan): Promise<CrawlJobRow[]> {
    const orphaned = await this.orphaned(now, scan.atStart);
    const candidates = await this.db
      .selectFrom('crawl_jobs')
      .select(['id', 'owner'])
      .where('status', '=', 'scraping')
      .orderBy('created_at')
      .execute();
    const claimed: CrawlJobRow[] = [];
    for (const { id, owner } of candidates) {
      if (scan.running.has(id) || !orphaned(owner)) continue;
      // The claim: conditional on the owner seen above. Two survivors racing both match the row; the second
      // waits for the first's commit, re-checks the condition on the new row, finds another owner, and gets 0.
      const row = await this.db
        .updateTable('crawl_jobs')
        .set((eb) => ({ owner: this.replicaId, resumes: eb('resumes', '+', 1), updated_at: now }))
        .where('id', '=', id)
        .where('owner', '=', owner)
        .where('status', '=', 'scraping')
        .returning(CRAWL_ROW)
        .executeTakeFirst();
      if (row) claimed.push(row as CrawlJobRow);
    }
    return claimed;
  }

  async setCrawlStatus(id: string, status: CrawlState, error: string | null, now: number): Promise<boolean> {
    const r = await this.db
      .updateTable('crawl_jobs')
      .set({ status, error, updated_at: now })
      .where('id', '=', id)
      .where('owner', '=', this.replicaId)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  enqueue(id: string, items: QueueItem[], maxPages: number): Promise<number> {
    return inTransaction(this.db, async (trx) =>
      (await this.lockOwned(trx, id)) ? this.enqueueIn(trx, id, items, maxPages) : 0,
    );
  }

  async pending(id: string, limit: number, exclude: ReadonlySet<string>): Promise<QueueItem[]> {
    const rows = await this.db
      .selectFrom('crawl_queue')
      .select(['seq', 'url', 'depth'])
      .where('job_id', '=', id)
      .where('done', '=', sql.lit(false))
      .orderBy('depth')
      .orderBy('seq')
      .limit(limit + exclude.size)
      .execute();
    return rows.filter((q) => !exclude.has(q.url)).slice(0, limit);
  }

  async maxSeq(id: string): Promise<number> {
    const r = await this.db
      .selectFrom('crawl_queue')
      .select((eb) => eb.fn.max('seq').as('m'))
      .where('job_id', '=', id)
      .executeTakeFirst();
    return r?.m ?? 0;
  }

  finishPage(
    id: string,
    item: QueueItem,
    page: unknown,
    found: QueueItem[],
    maxPages: number,
    now: number,
  ): Promise<boolean> {
    return inTransaction(this.db, async (trx) => {
      if (!(await this.lockOwned(trx, id))) return false;
      await trx
        .updateTable('crawl_queue')
        .set({ done: sql.lit(true) })
        .where('job_id', '=', id)
        .where('url', '=', item.url)
        .execute();
      await trx
        .insertInto('crawl_pages')
        .values({ job_id: id, seq: item.seq, data: JSON.stringify(page) })
        .onConflict((oc) => oc.columns(['job_id', 'seq']).doUpdateSet({ data: JSON.stringify(page) }))
        .execute();
      if (found.length > 0) await this.enqueueIn(trx, id, found, maxPages);
      await trx
        .updateTable('crawl_jobs')
        .set((eb) => ({
          updated_at: now,
          completed: eb
            .selectFrom('crawl_queue')
            .select(eb.fn.countAll<number>().as('n'))
            .where('job_id', '=', id)
            .where('done', '=', sql.lit(true)),
        }))
        .where('id', '=', id)
        .execute();
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
      const rows = await this.db
        .selectFrom('crawl_pages')
        .select('data')
        .where('job_id', '=', id)
        .orderBy('seq')
        .limit(PAGE_BATCH)
        .offset(offset)
        .execute();
      for (const row of rows) {
        if (pages.length >= maxCount || (pages.length > 0 && bytes + row.data.length > maxBytes)) {
          return { pages, more: true };
        }
        bytes += row.data.length;
        pages.push(JSON.parse(row.data));
      }
      if (rows.length < PAGE_BATCH) return { pages, more: false };
    }
  }

  prune(before: number): Promise<number> {
    return inTransaction(this.db, async (trx) => {
      const old = trx
        .selectFrom('crawl_jobs')
        .select('id')
        .where('updated_at', '<', before)
        .where('status', '<>', 'scraping');
      await trx.deleteFrom('crawl_pages').where('job_id', 'in', old).execute();
      await trx.deleteFrom('crawl_queue').where('job_id', 'in', old).execute();
      const crawls = await trx
        .deleteFrom('crawl_jobs')
        .where('updated_at', '<', before)
        .where('status', '<>', 'scraping')
        .executeTakeFirst();
      const jobs = await trx
        .deleteFrom('web_jobs')
        .where('updated_at', '<', before)
        .where('status', '<>', 'processing')
        .executeTakeFirst();
      return Number(crawls.numDeletedRows) + Number(jobs.numDeletedRows);
    });
  }

  /** Locks the crawl row for this transaction; false when another replica owns the crawl now. */
  private async lockOwned(trx: StoreDb, id: string): Promise<boolean> {
    const row = await forUpdate(
      trx,
      trx.selectFrom('crawl_jobs').select('owner').where('id', '=', id),
    ).executeTakeFirst();
    return row?.owner === this.replicaId;
  }

  /** enqueue inside a transaction that holds the crawl row's lock: the count and the inserts cannot interleave. */
  private async enqueueIn(trx: StoreDb, id: string, items: QueueItem[], maxPages: number): Promise<number> {
    const count = await trx
      .selectFrom('crawl_queue')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('job_id', '=', id)
      .executeTakeFirstOrThrow();
    let n = Number(count.n);
    const seen = new Set<string>();
    for (const part of chunks(items.map((i) => i.url))) {
      const known = await trx
        .selectFrom('crawl_queue')
        .select('url')
        .where('job_id', '=', id)
        .where('url', 'in', part)
        .execute();
      for (const k of known) seen.add(k.url);
    }
    const add: QueueItem[] = [];
    for (const it of items) {
      if (n >= maxPages) break;
      if (seen.has(it.url)) continue;
      seen.add(it.url);
      add.push(it);
      n++;
    }
    for (const part of chunks(add)) {
      await trx
        .insertInto('crawl_queue')
        .values(part.map((i) => ({ job_id: id, seq: i.seq, url: i.url, depth: i.depth })))
        .onConflict((oc) => oc.doNothing())
        .execute();
    }
    await trx.updateTable('crawl_jobs').set({ total: n }).where('id', '=', id).execute();
    return add.length;
  }
}
