import { closeSync, ftruncateSync, openSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isDatabaseUnavailable } from '../../src/errors.js';
import { PROBE_ROOM_BYTES } from '../../src/ledger/sqlite/sqlite-ledger.js';
import { systemClock } from '../../src/lib/clock.js';
import { fillDisk, mountSmallDisk, unmountSmallDisk } from '../helpers/small-disk.js';
import { openLedger } from '../helpers/sqlite-ledger.js';

// The SQLite outage probe after a full disk: its small write can go through on space a failed commit left inside
// the WAL file, so it also asks the filesystem for room to spare before it says the database answers again.

let mnt: string;

beforeAll(() => {
  mnt = mountSmallDisk(16);
});

afterAll(() => unmountSmallDisk(mnt));

describe('[db:unavailable-503] the SQLite probe after a full disk', () => {
  it('fails while the filesystem has less room than the WAL needs, even when its write goes through', async () => {
    const { ledger, db } = openLedger(join(mnt, 'data'), {
      clock: systemClock,
      idempotencyTtlMs: 60_000,
      groupCommit: true,
    });
    const filler = join(mnt, 'filler');
    try {
      await ledger.ping();
      fillDisk(filler);
      // Give back less than the probe asks for: its write fits, the room does not.
      const full = statSync(filler).size;
      const fd = openSync(filler, 'r+');
      ftruncateSync(fd, full - PROBE_ROOM_BYTES / 4);
      closeSync(fd);
      const refused = await ledger.ping().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(String(refused)).toMatch(/bytes free where the database is/);
      // Classified as the outage it continues, not as a bug.
      expect(isDatabaseUnavailable(refused)).toBe(true);
      // Room again: the probe succeeds.
      unlinkSync(filler);
      await expect(ledger.ping()).resolves.toBeUndefined();
    } finally {
      await ledger.close();
      db.close();
    }
  });
});
