import { GatewayError } from '../../errors.js';
import { fingerprint } from '../../lib/hash.js';
import { centsToMicros } from '../../lib/money.js';
import { type Outcome, type RunDeps, replayed } from '../execute.js';
import type { RailCall, RailPayment } from '../rails.js';
import { x402AccountId } from '../x402/accounts.js';
import { settlementUnknown } from '../x402/gate.js';
import { deliverLate, presentedAgain } from '../x402/known-payment.js';
import type { PaymentRow } from '../x402/payment-store.js';
import { expired, type ParsedCredential } from './credential.js';
import { mppPaid, mppRefused } from './paid.js';
import { meta, type StripeDeps, StripeGate, stripeReceipt } from './stripe-gate.js';

// A paid call with an MPP `stripe` credential: look up the token (who pays, what it allows), reserve the
// credential in the shared payment table (one INSERT on its key: exactly one presenter wins, on any replica), and
// hand execute a StripeGate as the call's payment. A credential seen before is replayed (same call: its stored
// result, no new charge), refused (another call), reported in flight, or resumed (a capture whose outcome was
// unknown).

const SPT = /^spt_[A-Za-z0-9_]{1,200}$/;

export async function openStripe(
  run: RunDeps,
  deps: StripeDeps,
  c: ParsedCredential,
  call: RailCall,
): Promise<RailPayment | Outcome> {
  const { action } = call;
  const spt = c.payload.spt;
  if (typeof spt !== 'string' || !SPT.test(spt)) {
    return mppRefused(run, call, { problem: 'invalid-payload', message: 'the payload needs an spt (spt_…)' });
  }
  const key = `mpp:stripe:${spt}`;
  const fp = fingerprint({ action: action.id, body: call.body });
  const existing = await deps.payments.get(key);
  if (existing && existing.status !== 'released') return again(run, deps, c, call, existing, fp);
  if (expired(c.challenge, run.clock.now())) {
    return mppRefused(run, call, {
      problem: 'payment-expired',
      message: 'the challenge has expired; ask again',
    });
  }
  const t = await deps.processor.token(spt);
  if (t.kind === 'unknown') {
    run.log.warn({ err: t.cause }, 'mpp stripe: the token could not be looked up');
    return {
      ok: false,
      error: new GatewayError(
        'upstream_unavailable',
        'Stripe could not be reached to check the payment token. Nothing was charged; retry with the same credential.',
        { retryAfterSeconds: 2 },
      ),
    };
  }
  const token = t.kind === 'ok' ? t.value : undefined;
  const problem = !token
    ? 'the token is not known to this seller'
    : token.deactivated
      ? `the token is ${token.deactivated}`
      : token.currency !== 'usd' || token.maxAmount < action.priceCents
        ? `the token does not allow ${action.priceCents} usd cents`
        : token.expiresAt !== undefined && token.expiresAt * 1000 <= run.clock.now()
          ? 'the token has expired'
          : undefined;
  if (problem || !token)
    return mppRefused(run, call, { problem: 'verification-failed', message: problem ?? '' });
  const payer = `stripe:${token.payer}`;
  const claim = await deps.payments.reserve({
    key,
    payer,
    action: action.id,
    fingerprint: fp,
    payload: { challenge: c.challenge, payload: c.payload } as never,
    requirements: c.challenge.request as never,
    expiresAt: Date.parse(c.challenge.expires ?? '') || run.clock.now(),
  });
  if (claim.kind === 'taken') return again(run, deps, c, call, claim.row, fp);
  // The credential is the call's idempotency key.
  return new StripeGate(run, deps, c, call, { key, spt, payer });
}

/** A credential seen before (by its token): replay, refuse, report in flight, or resume. */
function again(
  run: RunDeps,
  deps: StripeDeps,
  c: ParsedCredential,
  call: RailCall,
  row: PaymentRow,
  fp: string,
): Outcome | Promise<Outcome> {
  const reference = row.receipt?.transaction ?? '';
  const paid = (o: Outcome) =>
    o.ok
      ? mppPaid(run, c, o, { action: row.action, method: 'stripe', reference, payer: row.payer }, false)
      : o;
  return presentedAgain(row, fp, {
    what: 'MPP credential',
    mismatch: () =>
      mppRefused(run, call, {
        problem: 'invalid-challenge',
        message: 'this token already paid for a different call',
      }),
    failed: () =>
      mppRefused(run, call, {
        problem: 'verification-failed',
        message: 'this credential can no longer pay (its card authorization was declined or released)',
      }),
    settled: (env) => {
      const principal = { kind: 'x402' as const, accountId: x402AccountId(row.payer), payer: row.payer };
      const mpp = { method: 'stripe', reference, challenge_id: c.challenge.id };
      return paid(replayed(run, env, { action: row.action, principal, paymentMethod: 'mpp', mpp }));
    },
    resume: async () => paid(await resume(run, deps, c, call, row)),
  });
}

/** Captures again a PaymentIntent whose capture outcome was unknown (the same key: it captures at most once). */
async function resume(
  run: RunDeps,
  deps: StripeDeps,
  c: ParsedCredential,
  call: RailCall,
  row: PaymentRow,
): Promise<Outcome> {
  const pi = row.receipt?.transaction;
  if (!pi || !(await deps.payments.transition(row.key, 'unknown', 'settling'))) {
    return { ok: false, error: settlementUnknown(pi) };
  }
  const r = await deps.processor.capture(pi);
  if (r.kind === 'unknown') {
    await deps.payments.transition(row.key, 'settling', 'unknown');
    return { ok: false, error: settlementUnknown(pi) };
  }
  if (r.kind === 'refused' || r.value.status !== 'succeeded') {
    await deps.payments.transition(row.key, 'settling', 'failed', {
      receipt: stripeReceipt(pi, row.payer, false, r.kind === 'refused' ? r.code : r.value.status),
    });
    return mppRefused(run, call, {
      problem: 'verification-failed',
      message: 'the card payment could not be captured',
    });
  }
  // The first attempt was voided when its capture was unknown; the money that did move gets its own call.
  return deliverLate(run, deps.payments, row, {
    micros: centsToMicros(call.action.priceCents),
    memo: `MPP stripe payment ${pi} by ${row.payer} (captured late)`,
    meta: meta(pi, row.payer, c.challenge.id),
    receipt: stripeReceipt(pi, row.payer, true),
    facts: { paymentMethod: 'mpp', mpp: { method: 'stripe', reference: pi, challenge_id: c.challenge.id } },
  });
}
