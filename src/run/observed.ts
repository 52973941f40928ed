import type { CapScope, Telemetry } from '../ops/telemetry.js';

// What the lifecycle (./lifecycle.ts) reports about its ledger writes: each write's trace step and latency, and
// whose limit a refusal names.

/** Whose limit a refusal names (its `details.scope`), for the refusal metric. */
export function capScopeOf(e: unknown): CapScope {
  return ((e as { details?: { scope?: CapScope } }).details?.scope as CapScope | undefined) ?? 'none';
}

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
