import type { BeginRequest } from '../../src/ledger/types.js';

/** A plain call's begin as the ledger tests take it: a 1-minute hold of `micros` for scraperC/scrape by an API key. */
export function beginRequest(
  accountId: string,
  micros: number,
  extra: Partial<BeginRequest> = {},
): BeginRequest {
  return {
    accountId,
    action: 'scraperC/scrape',
    priceMicros: micros,
    holdMicros: micros,
    paymentMethod: 'api_key',
    principal: 'key_test',
    holdTtlMs: 60_000,
    ...extra,
  };
}
