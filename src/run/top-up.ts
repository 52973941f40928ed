import { randomBytes } from 'node:crypto';
import type { StateDb } from '../backend.js';
import { getOrCreate } from '../db/secrets.js';
import type { LedgerRecords } from '../ledger/types.js';
import type { Clock } from '../lib/clock.js';

// What the MCP door needs to let a person top up in the middle of a call (src/mcp/top-up.ts): the key that seals
// the state a 2026-07-28 client echoes back on its retry, and a wait for the money to arrive. Both are used only
// on the refusal path; a paid call that has the money never touches them.

export interface McpTopUp {
  /** HMAC key of the retry state: one for every replica (generated once into `shared_secrets`). */
  key: () => Promise<Buffer>;
  /** How long a retried call waits for the person's money to be credited (TOLLGATE_MCP_TOPUP_WAIT_SECONDS). */
  waitMs: number;
}

const KEY_NAME = 'mcp_request_state';

export function mcpTopUp(state: StateDb, clock: Clock, waitSeconds: number): McpTopUp {
  let key: Promise<Buffer> | undefined;
  return {
    key: () => {
      key ??= getOrCreate(
        state.stores,
        'shared_secrets',
        KEY_NAME,
        () => randomBytes(32).toString('hex'),
        clock.now(),
      ).then(
        (hex) => Buffer.from(hex, 'hex'),
        (err: unknown) => {
          key = undefined; // asked again next time
          throw err;
        },
      );
      return key;
    },
    waitMs: waitSeconds * 1000,
  };
}

/**
 * Waits until the account can cover `micros` (its available money: balance, less holds, plus an unfrozen credit
 * line), reading the ledger every so often, for at most `maxMs`. True when it can. Reading the ledger (not an
 * in-process event) sees a top-up whichever replica its webhook reached.
 */
export async function waitForFunds(
  ledger: Pick<LedgerRecords, 'balance'>,
  accountId: string,
  micros: number,
  opts: { maxMs: number; signal: AbortSignal },
): Promise<boolean> {
  const deadline = Date.now() + opts.maxMs;
  let pause = 250;
  for (;;) {
    if ((await ledger.balance(accountId)).available_micros >= micros) return true;
    const left = deadline - Date.now();
    if (left <= 0 || opts.signal.aborted) return false;
    await sleep(Math.min(pause, left), opts.signal);
    pause = Math.min(pause * 2, 2000);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
