import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { StateDb } from '../../src/backend.js';
import { pgStoreDb } from '../../src/db/open.js';
import { type BuiltinEngine, createWebEngine } from '../../src/engine/index.js';
import { systemClock } from '../../src/lib/clock.js';
import type { PgPool } from '../../src/pg/pool.js';
import { createWebFetcher } from '../../src/upstreams/web-fetch.js';

// The web engine's timers (adopting a dead replica's crawls, pruning) during a database outage: the outage is
// the gateway's health's to say, once (src/run/db-health.ts), not a line from each round of each timer; a failure
// that is not the database's is still logged. The store is a PostgreSQL handle whose every query fails as told.

const refused = () =>
  Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

function failingState(fail: () => Error): StateDb {
  const pool = {
    connect: async () => {
      throw fail();
    },
  } as unknown as PgPool;
  const stores = pgStoreDb(pool);
  return { kind: 'postgres', pool, stores, bulk: stores, replicaId: 'r1', dataDir: '/nonexistent' };
}

const fetcher = createWebFetcher({ allow: ['127.0.0.1'] });
afterAll(() => fetcher.close());
let engine: BuiltinEngine | undefined;
afterEach(async () => {
  await engine?.close();
  engine = undefined;
});

function start(fail: () => Error, onDatabaseError?: (err: unknown) => void) {
  const lines: Array<{ level: number; msg: string }> = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l));
      done();
    },
  });
  engine = createWebEngine({
    state: failingState(fail),
    fetcher,
    groups: new Set(['scraperA']),
    chromiumPath: '/nonexistent',
    browserConcurrency: 1,
    defaultTimeoutMs: 1_000,
    crawl: { perHost: 1, delayMs: 0, maxPages: 1, maxJobs: 1 },
    inlineJobMs: 0,
    clock: systemClock,
    log: pino({ level: 'info' }, sink),
    adoptEveryMs: 20,
    onDatabaseError,
  });
  return lines;
}

const errors = (lines: Array<{ level: number; msg: string }>) => lines.filter((l) => l.level >= 50);
const rounds = () => new Promise((r) => setTimeout(r, 200));

describe('the web engine timers in a database outage', () => {
  it('[db:outage-once] [web:timers] report a database that does not answer to the health, and log nothing each round', async () => {
    const reported: unknown[] = [];
    const lines = start(refused, (err) => reported.push(err));
    await rounds();
    expect(reported.length).toBeGreaterThanOrEqual(2);
    expect((reported[0] as { code?: string }).code).toBe('ECONNREFUSED');
    expect(errors(lines)).toEqual([]);
  });

  it('[web:timers] still log a failure that is not the database being away', async () => {
    const reported: unknown[] = [];
    const lines = start(
      () => new Error('relation "web_jobs" does not exist'),
      (err) => reported.push(err),
    );
    await rounds();
    expect(errors(lines).map((l) => l.msg)).toContain('adopting orphaned crawls failed');
  });

  it('[web:timers] log every failure where no health is told (an engine outside the gateway)', async () => {
    const lines = start(refused);
    await rounds();
    expect(errors(lines).map((l) => l.msg)).toContain('adopting orphaned crawls failed');
  });
});
