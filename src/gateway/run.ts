import { handlers as catalogHandlers } from '../../tools/index.js';
import type { Handlers } from '../../tools/types.js';
import type { RunDeps } from '../run/execute.js';
import { openRails } from '../run/rails-setup.js';
import { openRateLimiter } from '../run/rate-limit.js';
import { openReceiptKeyStore } from '../run/receipt-keys.js';
import { loadReceiptSigner, type ReceiptSigner } from '../run/receipts.js';
import type { Books } from './ledger.js';
import type { Opened } from './services.js';
import type { Base } from './state.js';

// Step 4: the one path every catalog call takes (src/run/execute.ts) and what it is given: the handlers, the
// money lifecycle, the services, the receipt signer, the rate limiter and the payment rails.

export async function openRunPath(
  b: Base,
  m: Books,
  s: Opened,
  o: { handlers?: Partial<Handlers> | undefined },
): Promise<RunDeps & { receipts: ReceiptSigner }> {
  const { config, clock, log, state } = b;
  const publicUrl = () => s.services.publicUrl;
  // Receipts of paid responses: the operator's key, or one generated once into the database (every replica).
  const receipts = await loadReceiptSigner(
    config.env.TOLLGATE_RECEIPT_SIGNING_KEY,
    openReceiptKeyStore(state, clock),
    publicUrl,
  );
  const rails = await openRails(config, { state, clock, log, x402: m.x402, publicUrl });
  b.closers.add(() => rails.close());
  return {
    money: m.money,
    ledger: m.ledger,
    handlers: { ...catalogHandlers, ...o.handlers } as Handlers,
    services: s.services,
    clock,
    log,
    inflight: b.inflight,
    rateLimiter: openRateLimiter(state, config.rateLimitPerSecond, config.rateLimitBurst, () => clock.now()),
    receipts,
    telemetry: b.telemetry,
    health: m.health,
    rails,
  };
}
