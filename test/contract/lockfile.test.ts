import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// A clean clone installs with `npm ci` (Docker builds and most CI) as well as `npm install`. npm ci refuses a
// lock that lacks any platform's optional build; scripts/complete-lock.mjs adds them (docs/decisions.md,
// "Build and install").

const ROOT = join(import.meta.dirname, '..', '..');

describe('package-lock.json', () => {
  it('[build:npm-ci] npm ci accepts the lock as it is committed', () => {
    // The project's two files alone, in a directory of their own: a dry run that reads the lock and the
    // manifest and checks they agree, offline, installing nothing.
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-lock-'));
    try {
      for (const f of ['package.json', 'package-lock.json']) copyFileSync(join(ROOT, f), join(dir, f));
      const r = spawnSync(
        'npm',
        ['ci', '--dry-run', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'],
        {
          cwd: dir,
          encoding: 'utf8',
          timeout: 60_000,
        },
      );
      expect(r.status, `${r.stderr}\nrun: node scripts/complete-lock.mjs`).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
