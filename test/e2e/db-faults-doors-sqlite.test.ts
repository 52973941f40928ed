import { unlinkSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../auth/api-keys.js';
import { DB_FILE } from '../../src/ledger/index.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { fillDisk, mountSmallDisk, unmountSmallDisk } from '../helpers/small-disk.js';
import {
  capturedLog,
  dashboardSession,
  mcpRaw,
  NOT_CHARGED,
  page,
  rpc,
  SCRAPE,
  TOOL,
  TOOLS_CALL,
} from './db-faults-helpers.js';
import { CLIENT_KINDS, connectClient } from './mcp-clients.js';
import { CookieJar, connectedClient, formOf } from './oauth-helpers.js';

// The doors of test/e2e/db-faults-doors.test.ts on SQLite: the data directory on a small tmpfs of the test's own
// (mounted here, as db-faults-sqlite.test.ts does: root needed), filled until the database takes no write. Reads
// still work there, so more is decided than on a PostgreSQL that is gone: a key is found, a page that only reads
// is shown. What must hold: no 500 anywhere, a paid MCP call refused in band with the retryable outage error,
// every other refusal a 503 with Retry-After, no money moved, the outage logged once, /readyz unready; and
// everything working again once there is room.

const { log, records } = capturedLog();
let mnt: string;
let t: TestGateway;

beforeAll(async () => {
  mnt = mountSmallDisk(24);
  // A full SQLite disk (PostgreSQL's outage has test/e2e/db-faults-doors.test.ts).
  t = await startGateway({
    sqliteOnly: true,
    dataDir: join(mnt, 'data'),
    env: {
      TOLLGATE_KEY_CACHE_SECONDS: '300',
      TOLLGATE_OAUTH_SIGNIN_ATTEMPTS_PER_MINUTE: '1000',
      TOLLGATE_SIGNUP: 'open',
      TOLLGATE_SIGNUPS_PER_HOUR: '1000',
    },
    log,
    handlers: { 'scraperC/scrape': async () => ({ raw: '<html>ok</html>' }) },
  });
}, 60_000);

afterAll(async () => {
  await t?.close();
  unmountSmallDisk(mnt);
});

describe('[db:unavailable-503] [db:outage-once] [db:decided-without] [db:error-pages] every door on a SQLite disk that is full', () => {
  it('no 500, paid calls refused with the outage error, nothing charged, logged once, and all working after', async () => {
    const a = await t.account('10');
    const clients = await Promise.all(CLIENT_KINDS.map((k) => connectClient(k, t.url, a.key)));
    for (const c of clients) expect((await c.callTool(TOOL, SCRAPE)).isError ?? false).toBe(false);
    const oauth = await connectedClient(t.url, a.key);
    const dashboard = await dashboardSession(t.url, a.key);
    const coldKey = (await createApiKey(t.gw.ledger, a.accountId, 'cold')).key;

    // A reader held open keeps the WAL from starting over, so every commit extends the file and the commits that
    // fail on the full disk leave blocks inside it that the outage probe's small write fits in: the probe must not
    // end the outage on them (it also asks for room on the filesystem, SqliteLedger.ping). Closed once there is
    // room again.
    const reader = new Database(join(mnt, 'data', DB_FILE), { readonly: true });
    reader.exec('BEGIN');
    reader.prepare('SELECT count(*) FROM accounts').get();

    // Fill the disk, then call until the database refuses a write (the WAL has to grow first).
    const logged = records().length;
    fillDisk(join(mnt, 'filler'));
    let stop = false;
    const worker = async () => {
      while (!stop) {
        const r = await t.post('/api/run/scraperC/scrape', SCRAPE, { key: a.key });
        expect(r.status, r.text).not.toBe(500);
      }
    };
    const load = Array.from({ length: 4 }, worker);
    await expect
      .poll(async () => (await t.get('/readyz')).status, { timeout: 30_000, interval: 100 })
      .toBe(503);
    stop = true;
    await Promise.all(load);
    const before = (await t.gw.ledger.balance(a.accountId)).balance_micros;

    const seen: Array<{ door: string; status: number; retryAfter: string | null; text: string }> = [];
    const note = (door: string, r: { status: number; res: Response; text: string }) =>
      seen.push({ door, status: r.status, retryAfter: r.res.headers.get('retry-after'), text: r.text });

    // MCP: the key (even one never seen) is found, and the paid call is refused at admission, in band.
    for (const c of clients) {
      const r = await c.callTool(TOOL, SCRAPE);
      expect(r.structuredContent?.error?.code, c.kind).toBe('database_unavailable');
      expect(r.structuredContent?.error?.retryable, c.kind).toBe(true);
      expect(r.content[0].text, c.kind).toMatch(NOT_CHARGED);
      expect(
        (await c.listTools()).some((x) => x.name === TOOL),
        c.kind,
      ).toBe(true);
    }
    for (const [door, token] of [
      ['mcp, unseen key', coldKey],
      ['mcp, OAuth token', oauth.accessToken],
    ] as const) {
      const r = await mcpRaw(t.url, token, TOOLS_CALL);
      note(door, r);
      expect(r.status, r.text).toBe(200);
      expect(rpc(r.text).result?.structuredContent?.error?.code, `${door}: ${r.text}`).toBe(
        'database_unavailable',
      );
    }
    const shim = await t.post('/api/run/scraperC/scrape', SCRAPE, { key: a.key });
    expect(shim.status).toBe(503);
    expect(shim.headers['retry-after']).toBe('2');

    // The dashboard reads (a page is shown); signing in and signing up write (a 503 page, or done if the
    // write found room in the journal: never a 500).
    note('dashboard', await page(dashboard, `${t.url}/account`));
    const fresh = new CookieJar();
    const signin = formOf((await page(fresh, `${t.url}/account/signin`)).text, '/account/signin');
    note(
      'sign-in',
      await page(fresh, `${t.url}${signin.action}`, { form: { csrf: signin.csrf, api_key: a.key } }),
    );
    const signup = formOf((await page(fresh, `${t.url}/account/signup`)).text, '/account/signup');
    note(
      'sign-up',
      await page(fresh, `${t.url}${signup.action}`, { form: { csrf: signup.csrf, name: 'x' } }),
    );
    const summary = JSON.stringify(seen.map((s) => [s.door, s.status, s.retryAfter, s.text.slice(0, 160)]));
    // The dashboard only reads: shown. The MCP checks of an unseen key and an OAuth token read: the call itself
    // is refused, in band.
    expect(seen.find((s) => s.door === 'dashboard')?.status, summary).toBe(200);
    for (const s of seen) {
      expect([200, 201, 303, 503], summary).toContain(s.status);
      expect(s.text, s.door).not.toMatch(/\n\s+at |node_modules/);
      if (s.status === 503) {
        expect(s.retryAfter, summary).toBe('2');
        expect(s.text, s.door).toMatch(/^<!doctype html>/i);
        expect(s.text, s.door).toMatch(NOT_CHARGED);
      }
    }
    expect(JSON.parse((await t.get('/readyz')).text)).toMatchObject({ ok: false, database: 'unavailable' });
    // Nothing the doors refused moved money.
    expect((await t.gw.ledger.balance(a.accountId)).balance_micros).toBe(before);
    // One outage, one line with its cause; after it, no request (nor the checkpointer) logged an error of its own.
    const during = records().slice(logged);
    const outage = during.findIndex((r) => r.msg.startsWith('the database is not answering'));
    expect(outage).toBeGreaterThanOrEqual(0);
    expect(during.filter((r) => r.msg.startsWith('the database is not answering')).length).toBe(1);
    expect(during.slice(outage + 1).filter((r) => r.level >= 50)).toEqual([]);

    // Room again: every door works.
    reader.exec('COMMIT');
    reader.close();
    unlinkSync(join(mnt, 'filler'));
    await expect
      .poll(async () => (await t.get('/readyz')).status, { timeout: 15_000, interval: 100 })
      .toBe(200);
    for (const c of clients) {
      const r = await c.callTool(TOOL, SCRAPE);
      expect(r.isError ?? false, JSON.stringify(r)).toBe(false);
      expect(r.structuredContent?.charged_cents).toBe(1);
    }
    expect(rpc((await mcpRaw(t.url, oauth.accessToken, TOOLS_CALL)).text).result?.isError ?? false).toBe(
      false,
    );
    expect((await page(dashboard, `${t.url}/account`)).status).toBe(200);
    expect((await dashboardSession(t.url, coldKey)) instanceof CookieJar).toBe(true);
    expect((await t.gw.ledger.balance(a.accountId)).balance_micros).toBe(before - 40_000);
    await Promise.all(clients.map((c) => c.close()));
  }, 90_000);
});
