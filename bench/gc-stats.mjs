import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { constants, PerformanceObserver } from 'node:perf_hooks';

// Preloaded (`node --import`) into a server the bench measures: counts its garbage collections and the time its
// main thread stood in them, and on SIGUSR2 writes the counts to <tmpdir>/tollgate-bench-gc-<pid>.json (read by
// bench/process.ts `gcStats`). No timer of its own: the server wakes for nothing of the bench's.

const stats = { seq: 0, minor: 0, minorMs: 0, major: 0, majorMs: 0 };
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    // Scavenges (the young generation) apart from everything else (mark-compact, incremental steps, weak callbacks).
    if (e.detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) {
      stats.minor++;
      stats.minorMs += e.duration;
    } else {
      stats.major++;
      stats.majorMs += e.duration;
    }
  }
}).observe({ entryTypes: ['gc'] });

process.on('SIGUSR2', () => {
  stats.seq++;
  writeFileSync(join(tmpdir(), `tollgate-bench-gc-${process.pid}.json`), JSON.stringify(stats));
});
