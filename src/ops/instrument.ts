import { isGatewayError } from '../errors.js';
import type { Telemetry } from './telemetry.js';

// Vendor clients and the x402 facilitator, measured from outside: the composition root wraps each one, so
// the clients themselves (src/upstreams, src/llm/upstream.ts, src/run/x402) carry no instrumentation. Every
// method call is one upstream call: counted by vendor and outcome, timed, and traced as a child of the call
// that made it.

const NOT_CALLS = new Set(['constructor', 'close', 'start', 'stop']);

/** The outcome label of a thrown error: its GatewayError code, `cancelled` for an abort, else `error`. */
function thrownOutcome(e: unknown): string {
  if (isGatewayError(e)) return e.code;
  if (e instanceof Error && (e.name === 'AbortError' || e.name === 'TimeoutError')) return 'cancelled';
  return 'error';
}

/** A result that reports failure instead of throwing (the model router's attempts: `{ ok: false, error }`). */
function resultOutcome(v: unknown): string {
  if (v !== null && typeof v === 'object' && (v as { ok?: unknown }).ok === false) {
    const error = (v as { error?: unknown }).error;
    return isGatewayError(error) ? error.code : 'error';
  }
  return 'ok';
}

function methodNames(obj: object): string[] {
  const names = new Set<string>();
  for (let o: object | null = obj; o && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
    for (const k of Object.getOwnPropertyNames(o)) {
      if (!NOT_CALLS.has(k) && typeof (obj as Record<string, unknown>)[k] === 'function') names.add(k);
    }
  }
  return [...names];
}

/**
 * The client with every method measured as a call to `vendor` (a fixed name: `rentcast`, `llm`…). Other
 * properties read through to the client; methods run with the client as `this`, so its internal calls are
 * not counted twice.
 */
export function instrumentClient<T extends object>(vendor: string, client: T, tel: Telemetry): T {
  const wrapped = Object.create(client) as Record<string, unknown>;
  for (const name of methodNames(client)) {
    const fn = (client as Record<string, unknown>)[name] as (...args: unknown[]) => unknown;
    const spanName = `${vendor} ${name}`;
    wrapped[name] = (...args: unknown[]) => {
      const step = tel.tracing?.step(spanName);
      const started = performance.now();
      const done = (outcome: string) => {
        tel.metrics.upstream(vendor, outcome, (performance.now() - started) / 1000);
        step?.end(outcome === 'ok' ? undefined : outcome);
      };
      let r: unknown;
      try {
        r = fn.apply(client, args);
      } catch (e) {
        done(thrownOutcome(e));
        throw e;
      }
      if (r instanceof Promise) {
        return r.then(
          (v: unknown) => {
            done(resultOutcome(v));
            return v;
          },
          (e: unknown) => {
            done(thrownOutcome(e));
            throw e;
          },
        );
      }
      done(resultOutcome(r));
      return r;
    };
  }
  return wrapped as T;
}

/** The x402 facilitator's shape (src/run/x402/facilitator.ts): every answer is sorted into a `kind`. */
export interface KindedFacilitator {
  verify(...args: never[]): Promise<{ kind: string }>;
  settle(...args: never[]): Promise<{ kind: string }>;
}

/** The facilitator with verify and settle counted by their outcome (`kind`), timed and traced. */
export function instrumentFacilitator<F extends KindedFacilitator>(f: F, tel: Telemetry): F {
  const wrapped = Object.create(f) as F;
  for (const step of ['verify', 'settle'] as const) {
    const fn = f[step].bind(f) as (...args: unknown[]) => Promise<{ kind: string }>;
    (wrapped as Record<string, unknown>)[step] = async (...args: unknown[]) => {
      const span = tel.tracing?.step(`x402 ${step}`);
      const started = performance.now();
      let outcome = 'error';
      try {
        const r = await fn(...args);
        outcome = r.kind;
        return r;
      } finally {
        tel.metrics.x402(step, outcome, (performance.now() - started) / 1000);
        span?.end(outcome === 'valid' || outcome === 'settled' ? undefined : outcome);
      }
    };
  }
  return wrapped;
}
