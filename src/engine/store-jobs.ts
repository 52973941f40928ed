import type { StoreDb } from '../db/schema.js';
import type { JobState } from '../ports/index.js';
import type { JobRow } from './store.js';

// The web engine's background jobs (table web_jobs, beside the crawls: store-sql.ts), and what both need to know:
// which replicas' work is orphaned. A job's work is in memory, so a job whose replica is gone cannot continue: it
// is failed.

export class SqlJobStore {
  constructor(
    protected readonly db: StoreDb,
    /** Where the replica leases are (on SQLite not the engine's own file). */
    private readonly leases: StoreDb,
    protected readonly replicaId: string,
  ) {}

  /**
   * Whose work is orphaned: a replica's whose lease ran out or that left (it removed its row on a clean stop;
   * its crawls stay `scraping`, to be resumed by someone) — and this replica's own only at its start.
   */
  protected async orphaned(now: number, atStart: boolean): Promise<(owner: string) => boolean> {
    const live = new Set(
      (
        await this.leases.selectFrom('replicas').select('id').where('lease_expires_at', '>', now).execute()
      ).map((r) => r.id),
    );
    return (owner) => (owner === this.replicaId ? atStart : !live.has(owner));
  }

  async createJob(id: string, kind: string, now: number): Promise<void> {
    await this.db
      .insertInto('web_jobs')
      .values({ id, kind, status: 'processing', created_at: now, updated_at: now, owner: this.replicaId })
      .execute();
  }

  async updateJob(
    id: string,
    status: JobState,
    result: unknown,
    error: string | null,
    now: number,
  ): Promise<void> {
    await this.db
      .updateTable('web_jobs')
      .set({ status, result: result === undefined ? null : JSON.stringify(result), error, updated_at: now })
      .where('id', '=', id)
      .execute();
  }

  async job(id: string): Promise<JobRow | undefined> {
    return (await this.db
      .selectFrom('web_jobs')
      .select(['id', 'kind', 'status', 'result', 'error'])
      .where('id', '=', id)
      .executeTakeFirst()) as JobRow | undefined;
  }

  async failOrphanJobs(reason: string, now: number, atStart: boolean): Promise<number> {
    const orphaned = await this.orphaned(now, atStart);
    const running = await this.db
      .selectFrom('web_jobs')
      .select(['id', 'owner'])
      .where('status', '=', 'processing')
      .execute();
    let failed = 0;
    for (const { id, owner } of running) {
      if (!orphaned(owner)) continue;
      const r = await this.db
        .updateTable('web_jobs')
        .set({ status: 'failed', error: reason, updated_at: now })
        .where('id', '=', id)
        .where('owner', '=', owner)
        .where('status', '=', 'processing')
        .executeTakeFirst();
      failed += Number(r.numUpdatedRows);
    }
    return failed;
  }
}
