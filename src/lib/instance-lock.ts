import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** Another live gateway owns the data dir. */
export class DataDirInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(`another gateway (pid ${pid}) is running on ${dataDir}; stop it or use another TOLLGATE_DATA_DIR`);
    this.name = 'DataDirInUseError';
  }
}

/**
 * One gateway process per data dir. SQLite has one writer, and start-up recovery voids every pending hold as
 * orphaned, which is only right if no other live process owns one. A stale lock (its process is gone) is taken
 * over.
 */
export function acquireInstanceLock(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, 'gateway.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => {
        try {
          if (readFileSync(path, 'utf8') === String(process.pid)) unlinkSync(path);
        } catch {}
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const pid = Number(readFileSync(path, 'utf8'));
      if (pid === process.pid) return () => {};
      if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) {
        throw new DataDirInUseError(dataDir, pid);
      }
      unlinkSync(path);
    }
  }
  throw new Error(`could not take the lock on ${dataDir}`);
}

/** Whether a process with this pid exists (one of another user's counts: EPERM). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
