import { startIdleTrim } from '../lib/idle-trim.js';
import { startSweeper } from '../run/sweeper.js';
import type { Doors } from './doors.js';
import type { Books } from './ledger.js';
import type { Opened } from './services.js';
import type { Base } from './state.js';

// Step 6: the work that runs on timers, stopped first at close: the sweep of expired holds and x402 records, the
// settlements of credit lines, the model router's refresh of its catalog and prices; and, once calls stop, one
// collection that gives memory back (src/lib/idle-trim.ts).

export function startBackground(b: Base, m: Books, s: Opened, d: Doors): void {
  const { money, x402, health } = m;
  const { clock, log } = b;
  s.llm?.start();
  d.billing?.scheduler.start();
  const sweeper = startSweeper({ money, x402, clock, log, health, intervalMs: b.config.sweepIntervalMs });
  b.closers.add(() => sweeper.stop());
  const trim = startIdleTrim(() => b.inflight.started);
  b.closers.add(() => trim.stop());
}
