import type { StateDb } from '../../backend.js';
import type { X402Config } from '../../config/index.js';
import type { Clock } from '../../lib/clock.js';
import { instrumentFacilitator } from '../../ops/instrument.js';
import type { Telemetry } from '../../ops/telemetry.js';
import { builtinFacilitator } from './facilitator-builtin.js';
import { remoteFacilitator } from './facilitator-remote.js';
import type { X402Deps } from './gate.js';
import { openPaymentStore } from './payment-store.js';

// x402 for the composition root: the facilitator the configuration names (remote, or built in on our own
// RPC and key) and the payment store in the gateway database.

export function createX402Payments(
  config: X402Config,
  state: StateDb,
  clock: Clock,
  /** When on, the facilitator's verify and settle are measured. */
  telemetry?: Telemetry,
): X402Deps {
  const f = config.facilitator;
  const facilitator =
    f.kind === 'remote'
      ? remoteFacilitator({ url: f.url, authHeader: f.authHeader, timeoutMs: config.facilitatorTimeoutMs })
      : builtinFacilitator({
          network: config.network,
          chainId: config.chainId,
          rpcUrl: f.rpcUrl,
          signerKey: f.signerKey,
          confirmationTimeoutMs: config.facilitatorTimeoutMs,
        });
  return {
    config,
    facilitator: telemetry ? instrumentFacilitator(facilitator, telemetry) : facilitator,
    payments: openPaymentStore(state, clock),
  };
}
