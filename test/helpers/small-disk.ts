import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// A filesystem of a test's own that it can fill (the SQLite fault tests: a data directory whose disk is full).
// A tmpfs: mounting it needs root, which these tests say plainly rather than skip.

/** Mounts a tmpfs of `sizeMb` on a fresh directory and returns its path. */
export function mountSmallDisk(sizeMb: number): string {
  const mnt = mkdtempSync(join(tmpdir(), 'tollgate-tmpfs-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m`, 'tmpfs', mnt]);
  } catch (e) {
    throw new Error(`this test mounts a small tmpfs for the data directory and needs root to: ${String(e)}`);
  }
  return mnt;
}

export function unmountSmallDisk(mnt: string | undefined): void {
  if (!mnt) return;
  execFileSync('umount', ['-l', mnt]);
  rmSync(mnt, { recursive: true, force: true });
}

/** Writes zeros into a file until the filesystem is full. */
export function fillDisk(path: string): void {
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(64 * 1024);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
  } finally {
    closeSync(fd);
  }
}
