import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStateLedger } from '../../src/ledger/index.js';
import type { Ledger } from '../../src/ledger/types.js';
import { Lifecycle } from '../../src/run/lifecycle.js';
import { BACKENDS, type OpenedState } from '../helpers/backends.js';
import { ManualClock } from '../helpers/clock.js';

// The lifecycle's words when a credit line cannot pay: a 402 that says why and where to fix it.

const clock = new ManualClock(Date.UTC(2026, 10, 22));
const log = pino({ level: 'silent' });

describe.each(BACKENDS)('lifecycle with a credit line ($name)', (backend) => {
  let state: OpenedState;
  let ledger: Ledger;

  beforeEach(async () => {
    state = await backend.open();
    ledger = await openStateLedger(state.db, { clock, idempotencyTtlMs: 86_400_000 });
  });
  afterEach(async () => {
    await ledger.close();
    await state.close();
  });

  async function frozenAccount(money: Lifecycle) {
    const acct = await ledger.createAccount({ name: 'x' });
    await money.grantLine(acct.id, 2_000_000, 'fp');
    await money.freezeLine(acct.id, 'the card ending 0341 was declined (card_declined) when settling $1.50');
    return acct.id;
  }

  const hold = (money: Lifecycle, accountId: string) =>
    money.hold({
      principal: { kind: 'api_key', accountId, keyId: 'key_1' },
      action: 'scraperC/scrape',
      priceMicros: 10_000,
      timeoutMs: 1_000,
    });

  describe('refusals with a credit line', () => {
    it('[billing:line-frozen] a frozen line answers 402 naming the reason and the account page', async () => {
      const money = new Lifecycle({
        ledger,
        clock,
        log,
        holdTtlMs: 60_000,
        accountUrl: () => 'https://gw.example/account',
      });
      const acct = await frozenAccount(money);
      const err = await hold(money, acct).catch((e: unknown) => e);
      expect(err).toMatchObject({
        code: 'insufficient_credit',
        status: 402,
        details: { credit_line: 'frozen', frozen_reason: expect.stringContaining('declined') },
      });
      expect((err as Error).message).toBe(
        'Insufficient credit: scraperC/scrape needs $0.01 and $0.00 is available. Your credit line is frozen: the card ending 0341 was declined (card_declined) when settling $1.50. Update your card or top up at https://gw.example/account/card. Nothing was charged.',
      );
      await money.unfreezeLine(acct);
      expect((await hold(money, acct)).kind).toBe('held');
    });

    it('without card payments the refusal points to the operator', async () => {
      const money = new Lifecycle({ ledger, clock, log, holdTtlMs: 60_000 });
      const acct = await ledger.createAccount({ name: 'y' });
      const err = (await hold(money, acct.id).catch((e: unknown) => e)) as Error;
      expect(err.message).toContain(`Ask the operator to add credit (\`tollgate credit ${acct.id} <usd>\`)`);
      const withPage = new Lifecycle({
        ledger,
        clock,
        log,
        holdTtlMs: 60_000,
        accountUrl: () => 'http://gw/account',
      });
      const err2 = (await hold(withPage, acct.id).catch((e: unknown) => e)) as Error;
      expect(err2.message).toContain('Top up or add a card at http://gw/account/top-up.');
    });
  });
});
