import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../src/main.js';
import { connectedClient, INITIALIZE, mcpPost } from '../e2e/oauth-helpers.js';
import { runCli } from '../helpers/cli.js';
import { testConfig } from '../helpers/gateway.js';
import { createTestDatabase, type TestDatabase } from '../helpers/pg.js';
import { freePort } from '../helpers/ports.js';

// Moving a gateway's state with the CLI as an operator would: SQLite → PostgreSQL → SQLite, a gateway started on
// each database in turn on the same public URL. The keys, the OAuth grant and the receipt key still work after
// each move, and `tollgate balance` answers the same. (Every kind of ledger row, both ways, in-process:
// test/integration/transfer.test.ts.)

const work = mkdtempSync(join(tmpdir(), 'tg-cli-export-'));
let pg: TestDatabase | undefined;
afterAll(async () => {
  await pg?.drop();
  rmSync(work, { recursive: true, force: true });
});

function cli(args: string[], env: Record<string, string>) {
  const r = runCli([...args, '--json'], { cwd: work, env });
  const lines = r.stdout.trim().split('\n');
  // --json: exactly one object on stdout, success or failure.
  expect(lines, r.stderr).toHaveLength(1);
  return { code: r.code, json: JSON.parse(lines[0] as string), stderr: r.stderr };
}

describe('[ops:export-import] tollgate export and import, with gateways on both databases', () => {
  it('a paid call with an old key, an OAuth token and the receipt key all work after each move; balances equal', async () => {
    const port = await freePort();
    const publicUrl = `http://127.0.0.1:${port}`;
    const gateway = async (dataDir: string, databaseUrl?: string): Promise<Gateway> => {
      const env: Record<string, string> = { TOLLGATE_PORT: String(port), TOLLGATE_PUBLIC_URL: publicUrl };
      if (databaseUrl) env.TOLLGATE_DATABASE_URL = databaseUrl;
      const gw = await createGateway(testConfig(env, dataDir));
      await gw.listen();
      return gw;
    };
    const paid = async (key: string) => {
      const r = await fetch(`${publicUrl}/api/run/files/upload`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ filename: 'a.bin', size_bytes: 64 }),
      });
      return { status: r.status, body: (await r.json()) as { ok: boolean; charged_cents: number } };
    };
    const kid = async () =>
      (
        (await (await fetch(`${publicUrl}/.well-known/tollgate-receipts.json`)).json()) as {
          keys: Array<{ kid: string }>;
        }
      ).keys[0]?.kid;

    // A gateway on SQLite: an account, a paid call, an app connected over OAuth.
    const a = join(work, 'a');
    const sqliteA = { TOLLGATE_DATA_DIR: a };
    const created = cli(['accounts', 'create', '--name', 'alice', '--credit-usd', '5'], sqliteA);
    const key = created.json.api_key as string;
    const gwA = await gateway(a);
    expect(await paid(key)).toMatchObject({ status: 200, body: { ok: true, charged_cents: 1 } });
    const app = await connectedClient(publicUrl, key);
    expect((await mcpPost(publicUrl, app.accessToken, INITIALIZE)).status).toBe(200);
    const receiptKid = await kid();
    await gwA.close();
    const balanceA = cli(['balance', 'alice'], sqliteA).json;
    expect(balanceA.balance_micros).toBe(4_990_000);

    // Export from SQLite, import into a new PostgreSQL database.
    const file1 = join(work, 'from-sqlite.jsonl');
    const exported = cli(['export', '--out', file1], sqliteA);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.json).toMatchObject({ file: file1, source: { backend: 'sqlite' } });
    expect(exported.stderr).toContain(`tollgate: database: SQLite ${join(a, 'tollgate.db')}`);
    expect(statSync(file1).mode & 0o777).toBe(0o600);
    pg = await createTestDatabase('tg_cli_export');
    const postgres = { TOLLGATE_DATA_DIR: a, TOLLGATE_DATABASE_URL: pg.url };
    // The data dir still holds the SQLite database and the variable names PostgreSQL: which one is meant?
    const guess = cli(['import', file1], postgres);
    expect(guess.code).toBe(1);
    expect(guess.json.error.code).toBe('database_ambiguous');
    const imported = cli(['import', file1, '--database', 'postgres'], postgres);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.json).toMatchObject({ verified: true, target: { backend: 'postgres' } });
    expect(imported.stderr).toContain('tollgate: database: PostgreSQL');
    expect(cli(['balance', 'alice', '--database', 'postgres'], postgres).json).toEqual(balanceA);

    // A gateway on PostgreSQL serves the old key, the old OAuth token and signs with the same receipt key.
    const gwB = await gateway(a, pg.url);
    expect(await paid(key)).toMatchObject({ status: 200, body: { ok: true, charged_cents: 1 } });
    expect((await mcpPost(publicUrl, app.accessToken, INITIALIZE)).status).toBe(200);
    expect(await kid()).toBe(receiptKid);
    await gwB.close();

    // And back: export from PostgreSQL, import into a new SQLite data dir, a gateway on it.
    const file2 = join(work, 'from-postgres.jsonl');
    expect(cli(['export', '--out', file2, '--database', 'postgres'], postgres).code).toBe(0);
    const c = join(work, 'c');
    const sqliteC = { TOLLGATE_DATA_DIR: c };
    expect(cli(['import', file2], sqliteC).json).toMatchObject({
      verified: true,
      target: { backend: 'sqlite' },
    });
    expect(cli(['balance', 'alice'], sqliteC).json).toMatchObject({ balance_micros: 4_980_000 });
    const gwC = await gateway(c);
    expect(await paid(key)).toMatchObject({ status: 200, body: { ok: true, charged_cents: 1 } });
    expect((await mcpPost(publicUrl, app.accessToken, INITIALIZE)).status).toBe(200);
    expect(await kid()).toBe(receiptKid);
    await gwC.close();
  }, 240_000);
});
