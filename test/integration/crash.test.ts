import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../auth/api-keys.js';
import { openLedger } from '../../src/ledger/index.js';
import { systemClock } from '../../src/lib/clock.js';
import { serveCli } from '../helpers/cli.js';
import { startGateway } from '../helpers/gateway.js';
import { startSite, type TestSite } from '../helpers/site.js';

// A real gateway process is killed with SIGKILL while a paid call is between hold and capture. After a
// restart nothing is charged and the hold is gone.

let site: TestSite;
let dataDir: string;
let child: ChildProcess | undefined;

beforeAll(async () => {
  // A page that never answers: the call sits in its handler, hold taken, until the process dies.
  site = await startSite({ '/hang': () => new Promise(() => {}) });
  dataDir = mkdtempSync(join(tmpdir(), 'tollgate-crash-'));
});
afterAll(async () => {
  child?.kill('SIGKILL');
  await site.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('crash between hold and capture', () => {
  it('[billing:crash-recovery] SIGKILL mid-call leaves no charge after restart', async () => {
    // Set up an account with credit before the server owns the data dir.
    const { ledger, db } = openLedger(dataDir, { clock: systemClock, idempotencyTtlMs: 86_400_000 });
    const acct = await ledger.createAccount({ name: 'crash' });
    await ledger.credit(acct.id, 1_000_000, 'test');
    const { key } = await createApiKey(ledger, acct.id);
    await ledger.close();
    db.close();

    const gw = await serveCli({
      cwd: dataDir,
      env: { TOLLGATE_DATA_DIR: dataDir, TOLLGATE_FETCH_ALLOW: '127.0.0.1' },
    });
    const { proc } = gw;
    const { url } = gw.started;
    child = proc;
    const pending = request(`${url}/api/run/scraperC/markdown`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${site.url}/hang`, browser: false }),
    }).catch(() => undefined);
    await expect.poll(() => site.hits.get('/hang') ?? 0, { timeout: 10_000 }).toBe(1);

    // The hold is on disk, committed before the handler ran.
    const peek = openLedger(dataDir, { clock: systemClock, idempotencyTtlMs: 86_400_000 });
    expect(await peek.ledger.balance(acct.id)).toMatchObject({
      balance_micros: 1_000_000,
      held_micros: 10_000,
    });
    await peek.ledger.close();
    peek.db.close();

    proc.kill('SIGKILL');
    await new Promise((r) => proc.once('exit', r));
    await pending;

    // Restart (in-process, same data dir; the dead process's lock is taken over).
    const t = await startGateway({ dataDir });
    try {
      expect(await t.gw.ledger.balance(acct.id)).toEqual({
        balance_micros: 1_000_000,
        held_micros: 0,
        available_micros: 1_000_000,
      });
      const [tx] = await t.gw.ledger.transactions(acct.id, 1);
      expect(tx).toMatchObject({ status: 'failed', charged_micros: 0, error_code: 'orphaned_by_restart' });
      // And the gateway serves normally.
      expect((await t.post('/api/run/platform/balance', {}, { key })).body.data.available_micros).toBe(
        1_000_000,
      );
    } finally {
      await t.close();
    }
  }, 60_000);
});
