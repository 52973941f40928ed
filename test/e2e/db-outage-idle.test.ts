import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { type Cluster, startCluster } from '../helpers/pg-cluster.js';
import { capturedLog } from './db-faults-helpers.js';

// A gateway on PostgreSQL that nobody calls while its database goes away: the only thing that meets the outage
// is the replica lease's renewal (every third of TOLLGATE_REPLICA_LEASE_SECONDS). Its failure is the outage's —
// said once by the outage watch, /readyz unready — not a line of its own beside it (a flake of
// db-faults-doors.test.ts, where a renewal fell inside an outage and logged an error the test did not allow).

const { log, records } = capturedLog();
const OUTAGE = 'the database is not answering';

let cluster: Cluster;
let t: TestGateway;

beforeAll(async () => {
  cluster = await startCluster();
  t = await startGateway({
    env: { TOLLGATE_DATABASE_URL: cluster.url, TOLLGATE_REPLICA_LEASE_SECONDS: '5' },
    log,
  });
}, 60_000);

afterAll(async () => {
  await t?.close();
  await cluster?.destroy();
});

describe('[db:outage-once] the replica lease meets an outage nobody called into', () => {
  it('the renewal starts the outage, said once, with no line of its own; the end is said too', async () => {
    expect((await t.get('/readyz')).status).toBe(200);
    const logged = records().length;
    cluster.stop();
    // No call is made: the renewal (every ~1.7 s) is what finds the database gone.
    await expect
      .poll(
        () =>
          records()
            .slice(logged)
            .filter((r) => r.msg.startsWith(OUTAGE)).length,
        {
          timeout: 10_000,
          interval: 100,
        },
      )
      .toBe(1);
    expect((await t.get('/readyz')).status).toBe(503);
    // Three more renewals fail while it lasts: still one line, and nothing else at warn or above.
    await new Promise((r) => setTimeout(r, 5_500));
    const during = records().slice(logged);
    expect(during.filter((r) => r.msg.startsWith(OUTAGE)).length).toBe(1);
    expect(during.filter((r) => r.level >= 40 && !r.msg.startsWith(OUTAGE))).toEqual([]);

    await cluster.start();
    await expect
      .poll(() => records().filter((r) => r.msg === 'the database answers again').length, {
        timeout: 15_000,
        interval: 100,
      })
      .toBe(1);
    await expect.poll(async () => (await t.get('/readyz')).status, { timeout: 15_000 }).toBe(200);
  }, 60_000);
});
