import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStateLedger } from '../../src/ledger/index.js';
import type { ChargeRefundRequest, Ledger } from '../../src/ledger/types.js';
import { BACKENDS, type OpenedState } from '../helpers/backends.js';
import { beginRequest as req } from '../helpers/begin-request.js';
import { ManualClock } from '../helpers/clock.js';
import { sqlOn } from '../helpers/state-sql.js';

// The operator's refunds and adjustments against the Ledger interface, on both backends: a call is never given
// back more than it was charged (in part, in full, in parallel from two processes), a reference moves money once,
// and a debit never takes what pending holds need.

const HOUR = 3_600_000;

describe.each(BACKENDS)('operator refunds and adjustments ($name)', (backend) => {
  let state: OpenedState;
  let other: OpenedState;
  let ledger: Ledger;
  /** A second process on the same ledger: the CLI beside the gateway (SQLite), another replica (PostgreSQL). */
  let second: Ledger;
  const clock = new ManualClock(Date.UTC(2026, 10, 22, 12));

  beforeEach(async () => {
    state = await backend.open();
    other = await backend.share(state);
    ledger = await openStateLedger(state.db, { clock, idempotencyTtlMs: 24 * HOUR, groupCommit: true });
    second = await openStateLedger(other.db, { clock, idempotencyTtlMs: 24 * HOUR });
  });
  afterEach(async () => {
    await second.close();
    await ledger.close();
    await other.close();
    await state.close();
  });

  const sql = <T = Record<string, unknown>>(text: string) => sqlOn<T>(state.db, text);

  async function charged(micros: number, credit = 10_000_000): Promise<{ acct: string; call: string }> {
    const acct = (await ledger.createAccount({ name: 'op' })).id;
    await ledger.credit(acct, credit, 'test');
    const begun = await ledger.begin(req(acct, micros));
    if (begun.kind !== 'started') throw new Error(begun.kind);
    await ledger.capture(begun.callId, { amountMicros: micros, provider: null, durationMs: 1 });
    return { acct, call: begun.callId };
  }

  const refund = (l: Ledger, call: string, micros: number | undefined, ref: string, reason = 'goodwill') =>
    l.refundCharge({ callId: call, micros, ref, reason, by: 'cli:test' } satisfies ChargeRefundRequest);

  async function assertConservation(): Promise<void> {
    const [total] = await sql<{ s: number }>(
      'SELECT CAST(coalesce(sum(amount_micros), 0) AS bigint) AS s FROM entries',
    );
    expect(total?.s).toBe(0);
    const sums = await sql<{ account_id: string; s: number }>(
      'SELECT account_id, CAST(sum(amount_micros) AS bigint) AS s FROM entries GROUP BY account_id',
    );
    for (const a of await ledger.listAccounts()) {
      expect(a.balance_micros, a.id).toBe(sums.find((r) => r.account_id === a.id)?.s ?? 0);
    }
  }

  it('[billing:refund-within-charge] partial refunds add up to the charge and no further; each is a movement linked to the call', async () => {
    const { acct, call } = await charged(1_000_000);
    const a = await refund(ledger, call, 300_000, `${call}:a`);
    expect(a.kind).toBe('refunded');
    if (a.kind !== 'refunded') return;
    expect(a.movement).toMatchObject({
      kind: 'call_refund',
      account_id: acct,
      amount_micros: 300_000,
      memo: 'goodwill',
      external_ref: `${call}:a`,
      meta: { refund_of: call, by: 'cli:test', requested_micros: 300_000 },
    });
    // In part: still succeeded, with what was refunded.
    expect(a.call).toMatchObject({
      status: 'succeeded',
      refunded_micros: 300_000,
      operator_refunded_micros: 300_000,
    });
    expect(a.balance.balance_micros).toBe(10_000_000 - 700_000);

    const tooMuch = await refund(ledger, call, 700_001, `${call}:b`);
    expect(tooMuch).toMatchObject({ kind: 'exceeds', leftMicros: 700_000 });
    // The rest (no amount): in full now, status refunded.
    const rest = await refund(second, call, undefined, `${call}:c`);
    expect(rest).toMatchObject({ kind: 'refunded', movement: { amount_micros: 700_000 } });
    expect(await ledger.getCall(call)).toMatchObject({ status: 'refunded', refunded_micros: 1_000_000 });
    expect(await refund(ledger, call, 1, `${call}:d`)).toMatchObject({ kind: 'not_refundable' });
    // A refund of failed work after it gives nothing more.
    expect(await ledger.refundCall(call, 'job_failed')).toEqual({ refundedMicros: 0 });
    expect((await ledger.balance(acct)).balance_micros).toBe(10_000_000);
    const moves = await ledger.movements(acct, 10);
    expect(
      moves
        .filter((m) => m.kind === 'call_refund')
        .map((m) => m.amount_micros)
        .sort(),
    ).toEqual([300_000, 700_000]);
    await assertConservation();
  });

  it('[billing:refund-within-charge] a refund of failed work after a partial refund gives back only the rest', async () => {
    const { acct, call } = await charged(500_000);
    await refund(ledger, call, 200_000, `${call}:x`);
    expect(await ledger.refundCall(call, 'job_failed')).toEqual({ refundedMicros: 300_000 });
    expect(await ledger.getCall(call)).toMatchObject({
      status: 'refunded',
      refunded_micros: 500_000,
      operator_refunded_micros: 200_000,
    });
    expect((await ledger.balance(acct)).balance_micros).toBe(10_000_000);
    await assertConservation();
  });

  it('[billing:refund-within-charge] failed, unknown and pending calls are not refunded', async () => {
    const acct = (await ledger.createAccount({ name: 'f' })).id;
    await ledger.credit(acct, 100_000, 'test');
    const failed = await ledger.begin(req(acct, 10_000));
    if (failed.kind !== 'started') throw new Error(failed.kind);
    await ledger.void(failed.callId, { errorCode: 'upstream_error', provider: null, durationMs: 1 });
    expect(await refund(ledger, failed.callId, undefined, 'r1')).toMatchObject({
      kind: 'not_refundable',
      call: { status: 'failed' },
    });
    expect(await refund(ledger, 'txn_nope', undefined, 'r2')).toEqual({ kind: 'unknown_call' });
    const pending = await ledger.begin(req(acct, 10_000));
    if (pending.kind !== 'started') throw new Error(pending.kind);
    expect(await refund(ledger, pending.callId, undefined, 'r3')).toMatchObject({
      kind: 'not_refundable',
      call: { status: 'pending' },
    });
    await expect(refund(ledger, pending.callId, 0, 'r4')).rejects.toThrow(/positive integer/);
    await assertConservation();
  });

  it('[billing:refund-within-charge] 50 parallel partial refunds of one call from two processes never exceed its charge', async () => {
    const { acct, call } = await charged(1_000_000);
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => refund(i % 2 ? second : ledger, call, 30_000, `${call}:p${i}`)),
    );
    // 33 × 30,000 fit in 1,000,000; the other 17 are refused: nothing moved for them.
    expect(results.filter((r) => r.kind === 'refunded')).toHaveLength(33);
    expect(results.filter((r) => r.kind === 'exceeds')).toHaveLength(17);
    expect(await ledger.getCall(call)).toMatchObject({ status: 'succeeded', refunded_micros: 990_000 });
    expect((await ledger.balance(acct)).balance_micros).toBe(10_000_000 - 10_000);
    const [sum] = await sql<{ s: number }>(
      `SELECT CAST(sum(amount_micros) AS bigint) AS s FROM movements WHERE kind = 'call_refund' AND account_id = '${acct}'`,
    );
    expect(sum?.s).toBe(990_000);
    await assertConservation();
  });

  it('[billing:refund-idempotent] one reference refunds once, in parallel too; another request under it is refused', async () => {
    const { acct, call } = await charged(1_000_000);
    const same = await Promise.all(
      Array.from({ length: 10 }, (_, i) => refund(i % 2 ? second : ledger, call, 250_000, `${call}:same`)),
    );
    expect(same.filter((r) => r.kind === 'refunded')).toHaveLength(1);
    expect(same.filter((r) => r.kind === 'duplicate')).toHaveLength(9);
    const ids = new Set(
      same.map((r) => (r.kind === 'refunded' || r.kind === 'duplicate' ? r.movement.id : '')),
    );
    expect(ids.size).toBe(1);
    expect(await refund(ledger, call, 100_000, `${call}:same`)).toMatchObject({ kind: 'mismatch' });
    expect(await refund(ledger, call, 250_000, `${call}:same`, 'another reason')).toMatchObject({
      kind: 'mismatch',
    });
    // Two different partial refunds both go through.
    expect(await refund(ledger, call, 250_000, `${call}:other`)).toMatchObject({ kind: 'refunded' });
    expect((await ledger.balance(acct)).balance_micros).toBe(10_000_000 - 500_000);
    await assertConservation();
  });

  it('[billing:adjust-audited] an adjustment either way is a movement with its reason, who and when, double entry', async () => {
    const acct = (await ledger.createAccount({ name: 'adj' })).id;
    await ledger.credit(acct, 1_000_000, 'test');
    const up = await ledger.adjust({
      accountId: acct,
      micros: 250_000,
      reason: 'late credit',
      by: 'cli:ops',
    });
    expect(up).toMatchObject({
      kind: 'adjusted',
      movement: { kind: 'adjustment', amount_micros: 250_000, memo: 'late credit', meta: { by: 'cli:ops' } },
      balance: { balance_micros: 1_250_000 },
    });
    const down = await second.adjust({
      accountId: acct,
      micros: -1_000_000,
      reason: 'chargeback',
      by: 'http',
    });
    expect(down).toMatchObject({ kind: 'adjusted', balance: { balance_micros: 250_000 } });
    if (down.kind !== 'adjusted') return;
    expect(down.movement.created_at).toBe(clock.now());
    // Once per reference.
    const keyed = { accountId: acct, micros: -50_000, reason: 'fee', by: 'http', ref: `${acct}:k1` };
    const first = await ledger.adjust(keyed);
    expect(await second.adjust(keyed)).toMatchObject({
      kind: 'duplicate',
      movement: { id: first.kind === 'adjusted' ? first.movement.id : '' },
    });
    expect(await ledger.adjust({ ...keyed, micros: -60_000 })).toMatchObject({ kind: 'mismatch' });
    expect((await ledger.balance(acct)).balance_micros).toBe(200_000);
    await expect(
      ledger.adjust({ accountId: 'sys_revenue', micros: 1, reason: 'x', by: 'x' }),
    ).rejects.toThrow(/customer/);
    await expect(ledger.adjust({ accountId: acct, micros: 0, reason: 'x', by: 'x' })).rejects.toThrow(
      /non-zero/,
    );
    await assertConservation();
  });

  it('[billing:adjust-within-holds] a debit never takes what pending holds need; the line counts unless frozen', async () => {
    const acct = (await ledger.createAccount({ name: 'held' })).id;
    await ledger.credit(acct, 1_000_000, 'test');
    const hold = await ledger.begin(req(acct, 700_000));
    if (hold.kind !== 'started') throw new Error(hold.kind);
    // 300,000 is free of the hold: a debit of 300,001 is refused whole, from this process or another.
    expect(await ledger.adjust({ accountId: acct, micros: -300_001, reason: 'x', by: 't' })).toMatchObject({
      kind: 'insufficient',
      balance: { balance_micros: 1_000_000, held_micros: 700_000, available_micros: 300_000 },
    });
    if (backend.name === 'postgres') {
      // Another replica sees the hold (a row): refused there too.
      expect(await second.adjust({ accountId: acct, micros: -300_001, reason: 'x', by: 't' })).toMatchObject({
        kind: 'insufficient',
      });
    }
    expect(await ledger.adjust({ accountId: acct, micros: -300_000, reason: 'fee', by: 't' })).toMatchObject({
      kind: 'adjusted',
      balance: { available_micros: 0 },
    });
    // The hold still captures in full.
    expect(
      await ledger.capture(hold.callId, { amountMicros: 700_000, provider: null, durationMs: 1 }),
    ).toEqual({
      chargedMicros: 700_000,
    });
    // A credit line is usable headroom; frozen, it is not.
    await ledger.grantCreditLine({ accountId: acct, micros: 2_000_000, cardFingerprint: 'fp', memo: 'line' });
    await ledger.freezeCreditLine(acct, 'declined');
    expect(await ledger.adjust({ accountId: acct, micros: -1, reason: 'x', by: 't' })).toMatchObject({
      kind: 'insufficient',
    });
    await ledger.freezeCreditLine(acct, null);
    expect(
      await ledger.adjust({ accountId: acct, micros: -2_000_000, reason: 'owed', by: 't' }),
    ).toMatchObject({
      kind: 'adjusted',
      balance: { balance_micros: -2_000_000, available_micros: 0 },
    });
    await assertConservation();
  });
});
