import type { Principal } from '../../auth/principal.js';
import type { Services } from '../../tools/context.js';

/**
 * The account a polled job belongs to, for refunding its start call when the poll reports it failed. Usually
 * the caller's. A free poll may also come anonymously with an accountless (x402) payer's bearer handle
 * (tools/poll.ts): then it is the handle's owner, the payer who started the job.
 */
export async function jobOwner(
  services: Services,
  principal: Principal,
  handle: string,
): Promise<string | undefined> {
  if (principal.kind !== 'anonymous') return principal.accountId;
  return (await services.handles.lookup(handle))?.owner;
}
