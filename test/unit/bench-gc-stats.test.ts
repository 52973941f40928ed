import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { GC_STATS_ARGS, gcStats } from '../../bench/process.js';

// The shim's section of the bench says what garbage each server leaves (bench/gc-stats.mjs, preloaded into it):
// the counts must grow with the collections the server really makes, and reading them must not stop it.

describe('the GC counts of the bench', () => {
  it('[bench:gc-stats] counts the scavenges of a server that allocates, each time it is asked', async () => {
    const script =
      'let keep = []; setInterval(() => { for (let i = 0; i < 50000; i++) keep.push({ i }); if (keep.length > 200000) keep = []; }, 2); console.log("ready")';
    const proc = spawn(process.execPath, ['--max-semi-space-size=1', ...GC_STATS_ARGS, '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      await once(proc.stdout, 'data');
      const pid = proc.pid as number;
      const first = await gcStats(pid);
      await new Promise((r) => setTimeout(r, 300));
      const second = await gcStats(pid);
      expect(second.minor).toBeGreaterThan(first.minor);
      expect(second.minorMs).toBeGreaterThan(first.minorMs);
      expect(proc.exitCode).toBeNull();
    } finally {
      proc.kill('SIGTERM');
    }
  });
});
