import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import { ManualClock } from '../../src/lib/clock.js';
import { newId } from '../../src/lib/ids.js';
import { openFileMetaStore } from '../../src/storage/file-meta.js';
import { GatewayLinks } from '../../src/storage/gateway-links.js';
import { LocalObjectStore } from '../../src/storage/objects-local.js';
import { BACKENDS } from '../helpers/backends.js';

// Local storage shared by several gateway processes on one data dir (workers on one machine): one signing
// secret for all, an object written once whoever races, and no process sweeping away another's upload.

const ROOT = resolve(import.meta.dirname, '..', '..');

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

  it('[files:local-shared-dir] processes starting together generate one signing secret and all use it', async () => {
    const path = join(root, 'secret', 'signing.key');
    const script = `import { loadSigningSecret } from './src/storage/signing.ts';
      process.stdout.write(loadSigningSecret(${JSON.stringify(path)}).toString('hex'));`;
    const run = () =>
      new Promise<string>((done, fail) => {
        const p = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
          cwd: ROOT,
        });
        let out = '';
        p.stdout.on('data', (d) => {
          out += d;
        });
        p.on('error', fail);
        p.on('exit', (code) => (code === 0 ? done(out) : fail(new Error(`exit ${code}`))));
      });
    const secrets = await Promise.all(Array.from({ length: 4 }, run));
    expect(secrets[0]).toMatch(/^[0-9a-f]{64}$/);
    expect(new Set(secrets).size).toBe(1);
    expect(readFileSync(path, 'utf8').trim()).toBe(secrets[0]);
    // Nothing else is left beside it (each process's temporary file is gone).
    expect(readdirSync(join(root, 'secret'))).toEqual(['signing.key']);
  });
});
