import type { Telemetry } from '../ops/telemetry.js';

// The lifecycle's (./lifecycle.ts) hot ledger writes under their trace step and latency metric.

/** One ledger write under its trace step and its latency metric; just the write without telemetry. */
export async function observed<T>(
  tel: Telemetry | undefined,
  op: 'hold' | 'capture' | 'void',
  write: () => Promise<T>,
): Promise<T> {
  if (tel === undefined) return write();
  const step = tel.tracing?.step(op);
  const started = performance.now();
  try {
    const r = await write();
    step?.end();
    return r;
  } catch (e) {
    step?.end('ledger_error');
    throw e;
  } finally {
    tel.metrics.ledgerOp(op, (performance.now() - started) / 1000);
  }
}
