import type { Logger } from 'pino';
import type { StateDb } from '../backend.js';
import type { Config } from '../config/index.js';
import type { Clock } from '../lib/clock.js';
import { type PaymentRail, Rails } from './rails.js';
import type { X402Deps } from './x402/gate.js';
import { x402Rail } from './x402/rail.js';

// The payment rails for the composition root (src/gateway/run.ts), in the order they are offered: x402 (with its
// sessions), then MPP. Each optional module (and its libraries: mppx, the Stripe client, the batch-settlement
// scheme) is imported only when its configuration turns it on, so a gateway without them never loads them.

export interface RailsSetupDeps {
  state: StateDb;
  clock: Clock;
  log: Logger;
  x402: X402Deps | undefined;
  /** Read per call: the public URL is known once the server listens. */
  publicUrl: () => string;
}

export async function openRails(config: Config, d: RailsSetupDeps): Promise<Rails> {
  const { state, clock, publicUrl } = d;
  const sessions =
    config.x402Sessions && d.x402
      ? await (await import('./sessions/index.js')).createSessionRail({
          config: config.x402Sessions,
          x402: d.x402,
          state,
          clock,
          log: d.log.child({ rail: 'x402-session' }),
        })
      : undefined;
  const x402 = d.x402 && x402Rail(d.x402, publicUrl, sessions);
  const mpp =
    config.mpp &&
    (await (
      await import('./mpp/index.js')
    ).createMppRail({
      config: config.mpp,
      x402: config.x402,
      x402Rail: x402,
      stripe: config.billing.stripe,
      state,
      clock,
      publicUrl,
    }));
  return new Rails([x402, mpp].filter((r): r is PaymentRail => r !== undefined));
}
