import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openLedger } from '../src/ledger/index.js';
import type { Ledger } from '../src/ledger/types.js';
import { systemClock } from '../src/lib/clock.js';
import { load } from './stats.js';
import type { BenchModule } from './types.js';

// Ledger hold+capture pairs per second on SQLite with synchronous=FULL (every commit fsync'd), sequentially
// and with many calls in flight (group commit shares one fsync among the writes of one event-loop turn).

async function pairs(ledger: Ledger, accountId: string, total: number, concurrency: number) {
  return load(total, concurrency, async () => {
    const r = await ledger.begin({
      accountId,
      action: 'bench/pair',
      priceMicros: 10_000,
      holdMicros: 10_000,
      paymentMethod: 'api_key',
      principal: 'bench',
      holdTtlMs: 60_000,
    });
    if (r.kind !== 'started') throw new Error(`begin: ${r.kind}`);
    await ledger.capture(r.callId, { amountMicros: 10_000, provider: null, durationMs: 0 });
  });
}

const bench: BenchModule = async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-ledger-bench-'));
  const { ledger, db } = openLedger(dir, { clock: systemClock, idempotencyTtlMs: 86_400_000 });
  const acct = await ledger.createAccount({ name: 'bench' });
  await ledger.credit(acct.id, 1_000_000_000_000, 'bench');
  await pairs(ledger, acct.id, 500, 8); // warm-up

  const rows: string[] = [];
  let best = 0;
  for (const c of [1, 8, 64, 256]) {
    const total = c === 1 ? 2000 : 20_000;
    const r = await pairs(ledger, acct.id, total, c);
    best = Math.max(best, r.perSecond);
    rows.push(`| ${c} | ${Math.round(r.perSecond).toLocaleString('en')} |`);
  }
  const sync = db.pragma('synchronous', { simple: true });
  const mode = db.pragma('journal_mode', { simple: true });
  await ledger.close();
  db.close();
  rmSync(dir, { recursive: true, force: true });

  return {
    id: 'ledger',
    title: 'Ledger: hold + capture pairs per second',
    body: [
      `SQLite (${mode}, synchronous=${sync === 2 ? 'FULL' : sync}) on the machine’s disk. One pair = \`begin\` (idempotency`,
      'claim, funds check, hold: one `BEGIN IMMEDIATE` write) + `capture` (post, double-entry rows, transaction',
      'record: a second write). Calls in flight share commits through the write queue (group commit).',
      '',
      '| pairs in flight | pairs/s |',
      '|---|---|',
      ...rows,
      '',
      `Target: ≥ 5,000 pairs/s — best measured **${Math.round(best).toLocaleString('en')}/s** (${best >= 5000 ? 'met' : 'not met'}).`,
      'With one pair in flight every commit waits for its own fsync, which bounds the sequential figure; with',
      'more in flight the fsync is shared and the CPU cost of the statements is what remains.',
    ].join('\n'),
  };
};

export default bench;
