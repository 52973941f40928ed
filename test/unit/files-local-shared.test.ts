import { mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import { newId } from '../../src/lib/ids.js';
import { openFileMetaStore } from '../../src/storage/file-meta.js';
import { GatewayLinks } from '../../src/storage/gateway-links.js';
import { LocalObjectStore } from '../../src/storage/objects-local.js';
import { loadSigningSecret } from '../../src/storage/signing.js';
import { BACKENDS } from '../helpers/backends.js';
import { ManualClock } from '../helpers/clock.js';

// Local storage shared by several gateway processes on one data dir (workers on one machine): one signing
// secret for all (kept in the database), an object written once whoever races, and no process sweeping away another's upload.

/** A body that arrives slowly, so two uploads overlap. */
function slow(fill: number, chunks = 5, size = 1000): Readable {
  let i = 0;
  return new Readable({
    read() {
      if (i++ === chunks) return this.push(null);
      setTimeout(() => this.push(Buffer.alloc(size, fill)), 5);
    },
  });
}

describe('local storage shared by processes', () => {
  const root = mkdtempSync(join(tmpdir(), 'tollgate-shared-dir-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it.each(BACKENDS)(
    '[files:local-shared-dir] two uploads racing to one file: the first complete one wins, the other is refused ($name)',
    async (backend) => {
      const state = await backend.open();
      const other = await backend.share(state, { replicaId: 'r_other' });
      rmSync(join(root, 'files'), { recursive: true, force: true });
      try {
        const meta = openFileMetaStore(state.db);
        const clock = new ManualClock();
        // Two processes' views of one data dir and database.
        const views = [state, other].map(
          (s) =>
            new GatewayLinks({
              meta: openFileMetaStore(s.db),
              objects: new LocalObjectStore(join(root, 'files')),
              clock,
              secret: Buffer.alloc(32, 3),
              publicUrl: () => 'https://gw.example',
            }),
        );
        const file = {
          file_id: newId('file', clock.now()),
          owner: 'acct_a',
          filename: 'race.bin',
          size_bytes: 5000,
          mime: null,
          tags: [],
          note: null,
          status: 'pending' as const,
          source_url: null,
          created_at: clock.now(),
        };
        await meta.insert(file);
        const results = await Promise.allSettled(
          views.map((v, i) => v.receive(file, slow(i + 1), i === 0 ? 'image/png' : 'video/mp4')),
        );
        const ok = results.filter((r) => r.status === 'fulfilled');
        const refused = results.filter((r) => r.status === 'rejected');
        expect(ok).toHaveLength(1);
        expect(refused).toHaveLength(1);
        const reason = (refused[0] as PromiseRejectedResult).reason;
        expect(reason).toBeInstanceOf(GatewayError);
        expect((reason as GatewayError).code).toBe('forbidden');
        // The stored bytes and type are the winner's, whole.
        const winner = results.indexOf(ok[0] as PromiseFulfilledResult<void>);
        const bytes = readFileSync(join(root, 'files', 'objects', file.file_id));
        expect(bytes.equals(Buffer.alloc(5000, winner + 1))).toBe(true);
        expect(await meta.get(file.file_id)).toMatchObject({
          status: 'stored',
          mime: winner === 0 ? 'image/png' : 'video/mp4',
        });
        expect(readdirSync(join(root, 'files', 'tmp'))).toEqual([]);
      } finally {
        await other.close();
        await state.close();
      }
    },
  );

  it('[files:local-shared-dir] a starting process removes only stale partial uploads, not another’s in progress', () => {
    const tmp = join(root, 'files', 'tmp');
    writeFileSync(join(tmp, 'file_live.upload'), 'in progress');
    writeFileSync(join(tmp, 'file_dead.upload'), 'left by a crash');
    const threeHoursAgo = new Date(Date.now() - 3 * 3_600_000);
    utimesSync(join(tmp, 'file_dead.upload'), threeHoursAgo, threeHoursAgo);
    new LocalObjectStore(join(root, 'files'));
    expect(readdirSync(tmp)).toEqual(['file_live.upload']);
  });

  it.each(BACKENDS)(
    '[files:local-shared-dir] processes starting together generate one signing secret and all use it ($name)',
    async (backend) => {
      const state = await backend.open();
      const others = await Promise.all([1, 2, 3].map((i) => backend.share(state, { replicaId: `r_${i}` })));
      try {
        const secrets = await Promise.all(
          [state, ...others].map((s) => loadSigningSecret(s.db.stores, join(root, 'none.key'), undefined, 1)),
        );
        expect(secrets[0]).toHaveLength(32);
        expect(new Set(secrets.map((b) => b.toString('hex'))).size).toBe(1);
        // The operator's secret wins over the generated one.
        expect(await loadSigningSecret(state.db.stores, join(root, 'none.key'), 'configured!', 1)).toEqual(
          Buffer.from('configured!'),
        );
      } finally {
        for (const o of others) await o.close();
        await state.close();
      }
    },
  );

  it('[files:local-shared-dir] the secret a gateway kept in its data dir before is the one it keeps using', async () => {
    const state = await (BACKENDS[0] as (typeof BACKENDS)[0]).open();
    try {
      const legacy = join(root, 'legacy.key');
      writeFileSync(legacy, `${'cd'.repeat(32)}\n`);
      const first = await loadSigningSecret(state.db.stores, legacy, undefined, 1);
      expect(first.toString('hex')).toBe('cd'.repeat(32));
      // Stored in the database since: the file is no longer needed.
      rmSync(legacy);
      expect(await loadSigningSecret(state.db.stores, legacy, undefined, 2)).toEqual(first);
    } finally {
      await state.close();
    }
  });
});
