import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStateLedger } from '../../src/ledger/index.js';
import type { ExternalRequest, Ledger } from '../../src/ledger/types.js';
import { BACKENDS, type OpenedState } from '../helpers/backends.js';
import { ManualClock } from '../helpers/clock.js';
import { sqlOn } from '../helpers/state-sql.js';

// A debit of card money (a refund, a chargeback) and its reversal (the refund failed or was cancelled, the
// dispute's funds were reinstated), in every order and concurrently, against the Ledger interface on both
// backends: the pair nets to what Stripe did, to the micro-dollar, and entries still sum to zero.

const USD = 1_000_000;

describe.each(BACKENDS)('card money reversals ($name)', (backend) => {
  let state: OpenedState;
  let ledger: Ledger;

  beforeEach(async () => {
    state = await backend.open();
    ledger = await openStateLedger(state.db, {
      clock: new ManualClock(Date.UTC(2026, 10, 22, 12)),
      idempotencyTtlMs: 86_400_000,
    });
  });
  afterEach(async () => {
    await ledger.close();
    await state.close();
  });

  async function prepaid(micros: number): Promise<string> {
    const a = await ledger.createAccount({ name: 't' });
    await ledger.recordExternal({
      accountId: a.id,
      kind: 'topup',
      micros,
      externalRef: `cs_${a.id}`,
      memo: 'top-up',
    });
    return a.id;
  }

  const ext = (accountId: string, kind: ExternalRequest['kind'], micros: number, ref: string) =>
    ledger.recordExternal({ accountId, kind, micros, externalRef: ref, memo: kind });

  const balance = async (a: string) => (await ledger.balance(a)).balance_micros;

  async function assertConservation(): Promise<void> {
    const [total] = await sqlOn<{ s: number }>(
      state.db,
      'SELECT CAST(coalesce(sum(amount_micros), 0) AS bigint) AS s FROM entries',
    );
    expect(total?.s).toBe(0);
  }

  it('[billing:refund-failed-given-back] a refund that fails gives back exactly what it took, once', async () => {
    const a = await prepaid(10 * USD);
    expect(await ext(a, 'refund', 3 * USD, 're_1')).toMatchObject({ kind: 'recorded', movedMicros: 3 * USD });
    expect(await balance(a)).toBe(7 * USD);
    const back = await ext(a, 'refund_reversal', 3 * USD, 're_1');
    expect(back).toMatchObject({ kind: 'recorded', movedMicros: 3 * USD, unrecoveredMicros: 0 });
    expect(await balance(a)).toBe(10 * USD);
    // Reported again (refund.failed after charge.refund.updated), or the refund again: nothing more.
    expect(await ext(a, 'refund_reversal', 3 * USD, 're_1')).toMatchObject({ kind: 'duplicate' });
    expect(await ext(a, 'refund', 3 * USD, 're_1')).toMatchObject({ kind: 'duplicate' });
    expect(await balance(a)).toBe(10 * USD);
    const moves = await ledger.movements(a, 10);
    const reversal = moves.find((m) => m.kind === 'refund_reversal');
    const refund = moves.find((m) => m.kind === 'refund');
    expect(reversal).toMatchObject({
      kind: 'refund_reversal',
      amount_micros: 3 * USD,
      external_ref: 're_1',
      meta: { requested_micros: 3 * USD, reverses: refund?.id },
    });
    expect(refund).toMatchObject({ kind: 'refund', amount_micros: -3 * USD, external_ref: 're_1' });
    await assertConservation();
  });

  it('[billing:refund-failed-given-back] a failure reported before its refund moves nothing, and the refund then takes nothing', async () => {
    const a = await prepaid(10 * USD);
    expect(await ext(a, 'refund_reversal', 4 * USD, 're_early')).toMatchObject({
      kind: 'recorded',
      movedMicros: 0,
    });
    const refund = await ext(a, 'refund', 4 * USD, 're_early');
    expect(refund.kind).toBe('reversed');
    expect(await balance(a)).toBe(10 * USD);
    expect(await ext(a, 'refund', 4 * USD, 're_early')).toMatchObject({ kind: 'reversed' });
    const moves = await ledger.movements(a, 10);
    expect(moves.map((m) => m.kind).sort()).toEqual(['refund_reversal', 'topup']);
    const tombstone = moves.find((m) => m.kind === 'refund_reversal');
    expect(tombstone).toMatchObject({
      kind: 'refund_reversal',
      amount_micros: 0,
      meta: { before_debit: true, requested_micros: 4 * USD },
    });
    expect(refund).toEqual({ kind: 'reversed', movementId: tombstone?.id });
    await assertConservation();
  });

  it('[billing:refund-failed-given-back] refunds and their failures racing in any order net to zero, each once', async () => {
    const a = await prepaid(50 * USD);
    const pairs = Array.from({ length: 20 }, (_, i) => `re_race_${i}`);
    // Each pair: the refund and its failure together, duplicated, in both orders.
    await Promise.all(
      pairs.flatMap((ref, i) => {
        const refund = () => ext(a, 'refund', 1 * USD, ref);
        const failed = () => ext(a, 'refund_reversal', 1 * USD, ref);
        return i % 2 === 0
          ? [refund(), failed(), failed(), refund()]
          : [failed(), refund(), refund(), failed()];
      }),
    );
    expect(await balance(a)).toBe(50 * USD);
    const moves = await ledger.movements(a, 100);
    for (const ref of pairs) {
      const mine = moves.filter((m) => m.external_ref === ref);
      expect(mine.filter((m) => m.kind === 'refund_reversal')).toHaveLength(1);
      expect(mine.filter((m) => m.kind === 'refund').length).toBeLessThanOrEqual(1);
      expect(mine.reduce((s, m) => s + m.amount_micros, 0)).toBe(0);
    }
    await assertConservation();
  });

  it('[billing:refund-failed-given-back] a refund that could take only part gives back only that part', async () => {
    const a = await prepaid(2 * USD);
    expect(await ext(a, 'refund', 5 * USD, 're_big')).toMatchObject({
      movedMicros: 2 * USD,
      unrecoveredMicros: 3 * USD,
    });
    expect(await ext(a, 'refund_reversal', 5 * USD, 're_big')).toMatchObject({ movedMicros: 2 * USD });
    expect(await balance(a)).toBe(2 * USD);
    await assertConservation();
  });

  it('[billing:dispute-chargeback] reinstated dispute funds give back what the chargeback took, less what it could not take', async () => {
    // Won in full: 10 withdrawn, 10 reinstated.
    const won = await prepaid(10 * USD);
    await ext(won, 'dispute', 10 * USD, 'dp_won');
    expect(await balance(won)).toBe(0);
    expect(await ext(won, 'dispute_reversal', 10 * USD, 'dp_won')).toMatchObject({ movedMicros: 10 * USD });
    expect(await balance(won)).toBe(10 * USD);
    // "Partially won" (a partly refunded payment disputed in full): 10 withdrawn, the 3 refunded reinstated.
    const partial = await prepaid(10 * USD);
    await ext(partial, 'refund', 3 * USD, 're_p');
    await ext(partial, 'dispute', 10 * USD, 'dp_p'); // only the 7 left can be taken; 3 unrecovered
    expect(await balance(partial)).toBe(0);
    // The 3 reinstated cover what the account could not pay: nothing comes back to it.
    expect(await ext(partial, 'dispute_reversal', 3 * USD, 'dp_p')).toMatchObject({ movedMicros: 0 });
    expect(await balance(partial)).toBe(0);
    // Fully funded, partly reinstated: the reinstated part comes back.
    const funded = await prepaid(20 * USD);
    await ext(funded, 'dispute', 10 * USD, 'dp_f');
    expect(await ext(funded, 'dispute_reversal', 3 * USD, 'dp_f')).toMatchObject({ movedMicros: 3 * USD });
    expect(await balance(funded)).toBe(13 * USD);
    await assertConservation();
  });
});
