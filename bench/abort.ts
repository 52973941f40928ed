import { linkSignals } from '../src/lib/abort.js';
import type { BenchModule } from './types.js';

// The cost of linking a call's abort signals, the way every call does it (the caller's signal, the process-wide
// shutdown signal and a deadline): src/lib/abort.ts's linkSignals against AbortSignal.any + AbortSignal.timeout,
// each link created, its work awaited (a resolved promise) and released, one after another.

const ROUNDS = 5;
const PER_ROUND = 20_000;

function measure(label: string, link: (caller: AbortSignal, shutdown: AbortSignal) => () => void) {
  const shutdown = new AbortController().signal;
  const caller = new AbortController().signal;
  const perCall: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t = performance.now();
    for (let i = 0; i < PER_ROUND; i++) link(caller, shutdown)();
    perCall.push(((performance.now() - t) * 1000) / PER_ROUND);
  }
  perCall.sort((a, b) => a - b);
  return { label, us: perCall[Math.floor(ROUNDS / 2)] as number };
}

const bench: BenchModule = async () => {
  // Warm-up of both, so the JIT has seen them.
  const rows = [0, 1].map(() => [
    measure('linkSignals (src/lib/abort.ts)', (caller, shutdown) => {
      const l = linkSignals([caller, shutdown], 30_000);
      return () => l.dispose();
    }),
    measure('AbortSignal.any + AbortSignal.timeout', (caller, shutdown) => {
      AbortSignal.any([caller, shutdown, AbortSignal.timeout(30_000)]);
      return () => {};
    }),
  ])[1] as Array<{ label: string; us: number }>;
  const [ours, native] = rows as [{ label: string; us: number }, { label: string; us: number }];
  const heapMb = process.memoryUsage().heapUsed / 2 ** 20;
  return {
    id: 'abort',
    title: 'Linking abort signals',
    body: [
      "Every call links the caller's signal, the gateway's shutdown signal and a deadline into one signal for its",
      `work. Measured in one process, ${PER_ROUND.toLocaleString('en-US')} links per round, median of ${ROUNDS} rounds`,
      'after a warm-up (create, then release when the work is done):',
      '',
      '| way | µs per call |',
      '|---|---|',
      `| ${ours.label} | **${ours.us.toFixed(2)}** |`,
      `| ${native.label} | ${native.us.toFixed(2)} |`,
      '',
      `linkSignals is ${(native.us / ours.us).toFixed(1)}× cheaper, and it detaches from the long-lived shutdown`,
      'signal when the call ends, where AbortSignal.any leaves a dependant on it until garbage collection (heap',
      `after the run: ${heapMb.toFixed(0)} MiB). It is the one way the gateway links signals (src/lib/abort.ts).`,
    ].join('\n'),
    targets: [
      {
        target: '#10 one way to link abort signals, against `AbortSignal.any`',
        measured: `${ours.us.toFixed(2)} µs vs ${native.us.toFixed(2)} µs per call`,
        verdict: 'reported',
      },
    ],
  };
};

export default bench;
