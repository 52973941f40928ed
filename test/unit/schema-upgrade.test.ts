import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openOAuthStore } from '../../auth/oauth/store.js';
import { openSessionStore } from '../../src/account/session-store.js';
import { openBillingStore } from '../../src/billing/store.js';
import { openState } from '../../src/cli/state.js';
import { migrate } from '../../src/db/migrate.js';
import { MIGRATIONS } from '../../src/db/migrations/index.js';
import { openWebStore } from '../../src/engine/store-sql.js';
import { sha256Hex } from '../../src/lib/hash.js';
import { migrate as migrateSqlite, openSqlite } from '../../src/lib/sqlite.js';
import { openPgPool } from '../../src/pg/pool.js';
import { openReceiptKeyStore } from '../../src/run/receipt-keys.js';
import { openPaymentStore } from '../../src/run/x402/payment-store.js';
import { openFileMetaStore } from '../../src/storage/file-meta.js';
import { openHandleStore } from '../../src/storage/handles.js';
import { loadSigningSecret } from '../../src/storage/signing.js';
import { LEGACY_POSTGRES, LEGACY_SQLITE, LEGACY_SQLITE_WEB } from '../fixtures/legacy-schema.js';
import { createTestDatabase, type TestDatabase } from '../helpers/pg.js';
import { schemaOf } from '../helpers/schema.js';

// Deployed gateways keep their data: a database made by the release before the one store layer (each store's
// own SQLite migrations, or PostgreSQL's list of then: test/fixtures/legacy-schema.ts), holding rows, is brought
// to the same schema as a new one by the one migration list, and every row is still found through the stores.

const NOW = Date.now();
const clock = { now: () => NOW };
const TOKEN = 'tok_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const SIGNING = 'ab'.repeat(32);

/** The rows of then, in the shapes of then (`replica`, `owner`: PostgreSQL's columns only). */
function legacyRows(pg: boolean) {
  const grant = JSON.stringify({ accountId: 'acct_1', clientId: 'client_1', kind: 'Grant' });
  const token = JSON.stringify({ accountId: 'acct_1', clientId: 'client_1', grantId: 'grant_1' });
  return {
    main: [
      [
        'INSERT INTO oauth_store (model, id_hash, payload, grant_id, expires_at) VALUES (?, ?, ?, ?, ?)',
        ['Grant', sha256Hex('grant_1'), grant, 'grant_1', NOW + 3_600_000],
      ],
      [
        'INSERT INTO oauth_store (model, id_hash, payload, grant_id, expires_at) VALUES (?, ?, ?, ?, ?)',
        ['AccessToken', sha256Hex(TOKEN), token, 'grant_1', NOW + 3_600_000],
      ],
      ['INSERT INTO oauth_secrets (name, value, created_at) VALUES (?, ?, ?)', ['jwks', 'legacy-jwks', 1]],
      ['INSERT INTO account_secrets (name, value) VALUES (?, ?)', ['form_key', 'legacy-form-key']],
      [
        'INSERT INTO account_sessions (id_hash, account_id, key_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?)',
        ['sess_hash', 'acct_1', null, 1, NOW + 3_600_000],
      ],
      ['INSERT INTO billing_state (name, value) VALUES (?, ?)', ['schedule', '42']],
      [
        'INSERT INTO handles (handle, owner, kind, ref, data, created_at) VALUES (?, ?, ?, ?, ?, ?)',
        ['crawl_h1', 'acct_1', 'crawl', 'up-1', '{"n":1}', 1],
      ],
      [
        `INSERT INTO files (file_id, owner, filename, size_bytes, tags, status, created_at) VALUES (?, ?, ?, ?, ${pg ? '?::jsonb' : '?'}, ?, ?)`,
        ['file_1', 'acct_1', 'a.txt', 3, '["red"]', 'stored', 1],
      ],
      [
        `INSERT INTO x402_payments (key, payer, action, fingerprint, status, payload, requirements, expires_at, created_at, updated_at${pg ? ', replica' : ''})
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?${pg ? ', ?' : ''})`,
        [
          'pay_1',
          '0xpayer',
          'scraperC/scrape',
          'fp',
          'reserved',
          '{}',
          '{}',
          NOW + 600_000,
          1,
          1,
          ...(pg ? ['r_old'] : []),
        ],
      ],
      ['INSERT INTO receipt_keys (name, jwk, created_at) VALUES (?, ?, ?)', ['current', 'legacy-jwk', 1]],
      // PostgreSQL kept the file links' secret in the database; SQLite in <data dir>/files/signing.key.
      ...(pg
        ? [
            [
              'INSERT INTO shared_secrets (name, value, created_at) VALUES (?, ?, ?)',
              ['file_link_signing', SIGNING, 1],
            ],
          ]
        : []),
    ] as Array<[string, unknown[]]>,
    web: [
      [
        `INSERT INTO crawl_jobs (id, status, params, total, completed, created_at, updated_at${pg ? ', owner' : ''})
         VALUES (?, ?, ?, ?, ?, ?, ?${pg ? ', ?' : ''})`,
        ['crawl_1', 'scraping', '{"url":"u"}', 2, 1, 1, 1, ...(pg ? ['r_old'] : [])],
      ],
      [
        'INSERT INTO crawl_queue (job_id, seq, url, depth, done) VALUES (?, ?, ?, ?, ?)',
        ['crawl_1', 1, 'u', 0, pg ? true : 1],
      ],
      ['INSERT INTO crawl_pages (job_id, seq, data) VALUES (?, ?, ?)', ['crawl_1', 1, '{"page":1}']],
      [
        `INSERT INTO web_jobs (id, kind, status, created_at, updated_at${pg ? ', owner' : ''}) VALUES (?, ?, ?, ?, ?${pg ? ', ?' : ''})`,
        ['job_1', 'extract', 'processing', 1, 1, ...(pg ? ['r_old'] : [])],
      ],
    ] as Array<[string, unknown[]]>,
  };
}

const numbered = (text: string) => {
  let i = 0;
  return text.replace(/\?/g, () => `$${++i}`);
};

/** What every store reads back after the upgrade. */
async function expectRowsKept(state: Awaited<ReturnType<typeof openState>>['state'], legacyKey: string) {
  const oauth = openOAuthStore(state);
  expect(await oauth.grantsOf('acct_1')).toEqual([
    { grantId: 'grant_1', payload: { accountId: 'acct_1', clientId: 'client_1', kind: 'Grant' } },
  ]);
  expect(await oauth.find('AccessToken', TOKEN)).toMatchObject({ grantId: 'grant_1', jti: TOKEN });
  expect(await oauth.secret('jwks', () => 'new')).toBe('legacy-jwks');
  const sessions = openSessionStore(state);
  expect(await sessions.secret('form_key', () => 'new')).toBe('legacy-form-key');
  expect(await sessions.get('sess_hash', NOW)).toEqual({ accountId: 'acct_1', keyId: null, memberId: null });
  expect(await openBillingStore(state).state('schedule')).toBe('42');
  expect(await openHandleStore(state, clock).resolve('acct_1', 'crawl', 'crawl_h1')).toMatchObject({
    data: { n: 1 },
  });
  expect(await openFileMetaStore(state).list('acct_1', { tag: 'red', limit: 5, offset: 0 })).toMatchObject({
    total: 1,
    files: [{ file_id: 'file_1', tags: ['red'] }],
  });
  expect(await openReceiptKeyStore(state, clock).loadOrCreate(() => 'new')).toBe('legacy-jwk');
  expect(await loadSigningSecret(state.stores, legacyKey, undefined, NOW)).toEqual(
    Buffer.from(SIGNING, 'hex'),
  );
  const web = openWebStore(state);
  expect((await web.pages('crawl_1', 0, 10, 10_000)).pages).toEqual([{ page: 1 }]);
}

describe('[scale:one-schema] a database made by the release before upgrades without loss', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'tg-upgrade-'));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('SQLite: each store’s tables and the web engine’s file', async () => {
    const db = openSqlite(join(dataDir, 'tollgate.db'));
    for (const [namespace, list] of Object.entries(LEGACY_SQLITE)) migrateSqlite(db, namespace, list);
    const web = openSqlite(join(dataDir, 'web.sqlite'));
    migrateSqlite(web, 'web', LEGACY_SQLITE_WEB);
    const rows = legacyRows(false);
    for (const [text, values] of rows.main) db.prepare(text).run(...values);
    for (const [text, values] of rows.web) web.prepare(text).run(...values);
    db.close();
    web.close();
    mkdirSync(join(dataDir, 'files'));
    const legacyKey = join(dataDir, 'files', 'signing.key');
    writeFileSync(legacyKey, `${SIGNING}\n`);

    const opened = await openState({ dataDir, database: undefined });
    const freshDir = mkdtempSync(join(tmpdir(), 'tg-upgrade-fresh-'));
    const fresh = await openState({ dataDir: freshDir, database: undefined });
    try {
      const { state } = opened;
      await expectRowsKept(state, legacyKey);
      // The crawl and the job a process of then left running belong to this one (a cluster of one): resumed
      // and failed at start, as before.
      const engine = openWebStore(state);
      expect(await engine.claimOrphanCrawls(NOW, { atStart: true, running: new Set() })).toMatchObject([
        { id: 'crawl_1', resumes: 1, completed: 1 },
      ]);
      expect(await engine.failOrphanJobs('restarted', NOW, true)).toBe(1);
      expect(await openPaymentStore(state, clock).recover(true)).toEqual({ released: 1, unknown: 0 });

      // The same tables and columns as a database made new (its types as SQLite declared them then aside).
      await fresh.state.bulk.selectFrom('crawl_jobs').select('id').execute();
      const names = async (s: typeof state) => {
        const all = { ...(await schemaOf(s.stores, 'sqlite')), ...(await schemaOf(s.bulk, 'sqlite')) };
        return Object.fromEntries(
          Object.entries(all).map(([t, cols]) => [t, cols.map((c) => c.split(':')[0])]),
        );
      };
      expect(await names(state)).toEqual(await names(fresh.state));
    } finally {
      await fresh.close();
      await opened.close();
      rmSync(freshDir, { recursive: true, force: true });
    }
    // Opened again: nothing more to apply.
    const again = await openState({ dataDir, database: undefined });
    expect(again.migrated.applied).toEqual([]);
    await again.close();
  });

  describe('PostgreSQL', () => {
    let old: TestDatabase;
    let fresh: TestDatabase;
    beforeEach(async () => {
      [old, fresh] = await Promise.all([createTestDatabase('tg_upgrade'), createTestDatabase('tg_fresh')]);
    });
    afterEach(async () => {
      await Promise.all([old.drop(), fresh.drop()]);
    });

    it('the schema of then (versions up to 300) and its rows', async () => {
      const pool = openPgPool(old.url, { max: 2 });
      try {
        // As the release before migrated: its ledger (versions 1–4) and its store migrations.
        const then = [
          ...MIGRATIONS.filter((m) => m.only === 'postgres' && m.version < 5),
          ...LEGACY_POSTGRES.map((m) => ({ version: m.version, name: m.name, up: m.sql })),
        ];
        await migrate(pool, { migrations: then });
        const rows = legacyRows(true);
        for (const [text, values] of [...rows.main, ...rows.web]) await pool.query(numbered(text), values);
      } finally {
        await pool.end();
      }
      const config = (url: string) => ({ dataDir, database: { url, pool: 4, leaseMs: 30_000 } });
      const opened = await openState(config(old.url), { replicaId: 'r_new' });
      const made = await openState(config(fresh.url), { replicaId: 'r_new' });
      try {
        // And the changes since that release (5: the ledger's caps per key; 6: the operator's refunds and
        // adjustments; 110: team accounts; 330: alerts).
        expect(opened.migrated.applied.map((m) => m.version)).toEqual([
          5, 6, 110, 201, 202, 260, 301, 302, 303, 330,
        ]);
        const { state } = opened;
        await expectRowsKept(state, join(dataDir, 'none'));
        // The rows of a replica whose lease is gone (r_old left no lease row) are adopted by this one.
        const engine = openWebStore(state);
        expect(await engine.claimOrphanCrawls(NOW, { atStart: false, running: new Set() })).toHaveLength(1);
        expect(await schemaOf(state.stores, 'postgres')).toEqual(
          await schemaOf(made.state.stores, 'postgres'),
        );
        const index = await state.stores
          .selectFrom('pg_indexes' as never)
          .select('indexname' as never)
          .where('indexname' as never, '=', 'oauth_store_grant_account' as never)
          .execute();
        expect(index).toEqual([]);
      } finally {
        await made.close();
        await opened.close();
      }
    });
  });
});
