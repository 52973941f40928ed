import type { Logger } from 'pino';
import type { StateDb } from '../backend.js';
import type { Config } from '../config/index.js';
import type { Clock } from '../lib/clock.js';
import type { PaymentRails } from './rails.js';
import type { X402Deps } from './x402/gate.js';

// The optional rails for the composition root (main.ts): each module (and its libraries: mppx, the Stripe client,
// the batch-settlement scheme) is imported only when its configuration turns it on, so a gateway without them never
// loads them.

export interface RailsSetupDeps {
  state: StateDb;
  clock: Clock;
  log: Logger;
  x402: X402Deps | undefined;
  /** Read per call: the public URL is known once the server listens. */
  publicUrl: () => string;
}

export async function openRails(config: Config, d: RailsSetupDeps): Promise<PaymentRails | undefined> {
  if (!config.mpp && !(config.x402Sessions && d.x402)) return undefined;
  const mpp =
    config.mpp &&
    (await (
      await import('./mpp/index.js')
    ).createMppRail({
      config: config.mpp,
      x402: config.x402,
      stripe: config.billing.stripe,
      state: d.state,
      clock: d.clock,
      publicUrl: d.publicUrl,
    }));
  const sessions =
    config.x402Sessions && d.x402
      ? await (await import('./sessions/index.js')).createSessionRail({
          config: config.x402Sessions,
          x402: d.x402,
          state: d.state,
          clock: d.clock,
          log: d.log.child({ rail: 'x402-session' }),
        })
      : undefined;
  return {
    mpp,
    sessions,
    async close() {
      await mpp?.close();
      await sessions?.close();
    },
  };
}
