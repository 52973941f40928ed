import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../auth/api-keys.js';
import { systemClock } from '../../src/lib/clock.js';
import { serveCli } from '../helpers/cli.js';
import { startGateway } from '../helpers/gateway.js';
import { startSite, type TestSite } from '../helpers/site.js';
import { openLedger } from '../helpers/sqlite-ledger.js';

// A real gateway process is killed with SIGKILL while a paid call is between hold and capture, and while
// calls are being captured. After a restart nothing unacknowledged is charged for a call that did not finish,
// every acknowledged charge is there, and the ledger balances.

let site: TestSite;
let dataDir: string;
let child: ChildProcess | undefined;

beforeAll(async () => {
  // A page that never answers: the call sits in its handler, hold taken, until the process dies.
  site = await startSite({
    '/hang': () => new Promise(() => {}),
    '/page': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html><body><h1>ok</h1></body></html>');
    },
  });
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

    // The hold is a reservation in the gateway's memory: nothing of it is on disk.
    const peek = openLedger(dataDir, { clock: systemClock, idempotencyTtlMs: 86_400_000 });
    expect(await peek.ledger.balance(acct.id)).toMatchObject({ balance_micros: 1_000_000, held_micros: 0 });
    await peek.ledger.close();
    peek.db.close();

    proc.kill('SIGKILL');
    await new Promise((r) => proc.once('exit', r));
    await pending;

    // Restart (in-process, same data dir; the dead process's lock is taken over).
    const t = await startGateway({ dataDir, sqliteOnly: true });
    try {
      expect(await t.gw.ledger.balance(acct.id)).toEqual({
        balance_micros: 1_000_000,
        held_micros: 0,
        available_micros: 1_000_000,
      });
      // The call that died with its process left no record and no charge.
      expect(await t.gw.ledger.transactions(acct.id, 10)).toEqual([]);
      // And the gateway serves normally.
      expect((await t.post('/api/run/platform/balance', {}, { key })).body.data.available_micros).toBe(
        1_000_000,
      );
    } finally {
      await t.close();
    }
  }, 60_000);

  it('[billing:one-durable-commit] SIGKILL while calls are captured loses no acknowledged charge', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-crash-capture-'));
    try {
      const { ledger, db } = openLedger(dir, { clock: systemClock, idempotencyTtlMs: 86_400_000 });
      const acct = await ledger.createAccount({ name: 'captures' });
      await ledger.credit(acct.id, 100_000_000, 'test');
      const { key } = await createApiKey(ledger, acct.id);
      await ledger.close();
      db.close();

      const gw = await serveCli({
        cwd: dir,
        env: { TOLLGATE_DATA_DIR: dir, TOLLGATE_FETCH_ALLOW: '127.0.0.1' },
      });
      child = gw.proc;
      const acked = new Map<string, number>();
      let stop = false;
      const worker = async () => {
        while (!stop) {
          const r = await request(`${gw.started.url}/api/run/scraperC/scrape`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ url: `${site.url}/page`, browser: false }),
          }).catch(() => undefined);
          if (!r) return;
          const body = (await r.body.json().catch(() => undefined)) as
            | { transaction_id?: string; charged_cents?: number }
            | undefined;
          if (r.statusCode === 200 && body?.transaction_id)
            acked.set(body.transaction_id, body.charged_cents ?? -1);
        }
      };
      const workers = Array.from({ length: 16 }, worker);
      await expect.poll(() => acked.size, { timeout: 20_000 }).toBeGreaterThan(300);
      gw.proc.kill('SIGKILL');
      stop = true;
      await Promise.all(workers);
      if (gw.proc.exitCode === null && gw.proc.signalCode === null)
        await new Promise((r) => gw.proc.once('exit', r));

      const after = openLedger(dir, { clock: systemClock, idempotencyTtlMs: 86_400_000 });
      try {
        // Every charge a caller was told of is in the ledger, as it was told.
        for (const [txn, cents] of acked) {
          expect(await after.ledger.getCall(txn), txn).toMatchObject({
            status: 'succeeded',
            charged_micros: cents * 10_000,
          });
        }
        // And the ledger balances: the account lost exactly what its recorded calls were charged.
        const calls = after.db
          .prepare(
            "SELECT count(*) AS n, coalesce(sum(charged_micros), 0) AS s FROM calls WHERE status = 'succeeded'",
          )
          .get() as { n: number; s: number };
        expect(calls.n).toBeGreaterThanOrEqual(acked.size);
        expect((await after.ledger.balance(acct.id)).balance_micros).toBe(100_000_000 - calls.s);
        const entries = after.db.prepare('SELECT sum(amount_micros) AS s FROM entries').get() as {
          s: number;
        };
        expect(entries.s).toBe(0);
      } finally {
        await after.ledger.close();
        after.db.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
