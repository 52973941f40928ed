import type { Principal } from '../../../auth/principal.js';
import type { Action } from '../../../catalog/index.js';
import { GatewayError } from '../../errors.js';
import { fingerprint } from '../../lib/hash.js';
import { centsToMicros } from '../../lib/money.js';
import { type Envelope, execute, type RunDeps } from '../execute.js';
import type { RailCall } from '../rails.js';
import { x402AccountId } from '../x402/accounts.js';
import { type CallResult, settlementUnknown } from '../x402/gate.js';
import type { PaymentRow } from '../x402/payment-store.js';
import { expired, type MppRefusal, type ParsedCredential } from './credential.js';
import { meta, type StripeDeps, StripeGate, stripeReceipt } from './stripe-gate.js';

// A paid call with an MPP `stripe` credential: look up the token (who pays, what it allows), reserve the
// credential in the shared payment table (one INSERT on its key: exactly one presenter wins, on any replica), and
// run the call through execute with a StripeGate as its payment. A credential seen before is replayed (same call:
// its stored result, no new charge), refused (another call), reported in flight, or resumed (a capture whose
// outcome was unknown). The result is a CallResult whose `paid` names the PaymentIntent for the receipt.

export interface StripePaid {
  result: CallResult;
  /** The PaymentIntent that paid, when the call was paid (now or before): the Payment-Receipt's reference. */
  reference?: string | undefined;
  replayed?: boolean;
}

const SPT = /^spt_[A-Za-z0-9_]{1,200}$/;

export async function payWithStripe(
  run: RunDeps,
  deps: StripeDeps,
  action: Action,
  c: ParsedCredential,
  call: RailCall,
  refused: (r: MppRefusal) => CallResult,
): Promise<StripePaid> {
  const spt = c.payload.spt;
  if (typeof spt !== 'string' || !SPT.test(spt)) {
    return { result: refused({ problem: 'invalid-payload', message: 'the payload needs an spt (spt_…)' }) };
  }
  const key = `mpp:stripe:${spt}`;
  const fp = fingerprint({ action: action.id, body: call.input });
  const existing = await deps.payments.get(key);
  if (existing && existing.status !== 'released') return again(run, deps, action, existing, fp, refused);
  if (expired(c.challenge, run.clock.now())) {
    return {
      result: refused({ problem: 'payment-expired', message: 'the challenge has expired; ask again' }),
    };
  }
  const t = await deps.processor.token(spt);
  if (t.kind === 'unknown') {
    run.log.warn({ err: t.cause }, 'mpp stripe: the token could not be looked up');
    return { result: { outcome: { ok: false, error: unavailable() } } };
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
    return { result: refused({ problem: 'verification-failed', message: problem ?? '' }) };
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
  if (claim.kind === 'taken') return again(run, deps, action, claim.row, fp, refused);

  const gate = new StripeGate(run, deps, { action, key, spt, challengeId: c.challenge.id, payer });
  const principal: Principal = { kind: 'x402', accountId: gate.accountId, payer };
  // The credential is the call's idempotency key; an Idempotency-Key header is not used.
  const outcome = await execute(run, action.id, call.input, principal, {
    ...call.opts,
    idempotencyKey: undefined,
    payment: gate,
  });
  await gate.finish(outcome);
  if (gate.refusal) return { result: refused(gate.refusal) };
  return { result: { outcome }, reference: outcome.ok ? gate.paymentIntent : undefined };
}

function unavailable(): GatewayError {
  return new GatewayError(
    'upstream_unavailable',
    'Stripe could not be reached to check the payment token. Nothing was charged; retry with the same credential.',
    { retryAfterSeconds: 2 },
  );
}

/** A credential seen before (by its token): replay, refuse, report in flight, or resume. */
async function again(
  run: RunDeps,
  deps: StripeDeps,
  action: Action,
  row: PaymentRow,
  fp: string,
  refused: (r: MppRefusal) => CallResult,
): Promise<StripePaid> {
  if (row.fingerprint !== fp) {
    return {
      result: refused({
        problem: 'invalid-challenge',
        message: 'this token already paid for a different call',
      }),
    };
  }
  switch (row.status) {
    case 'reserved':
    case 'settling':
    case 'released':
      return {
        result: {
          outcome: {
            ok: false,
            error: new GatewayError(
              'idempotency_in_flight',
              'This MPP credential is paying for a call that is still running; retry shortly with the same ' +
                'credential to get its result.',
              { retryAfterSeconds: 1 },
            ),
          },
        },
      };
    case 'failed':
      return {
        result: refused({
          problem: 'verification-failed',
          message: 'this credential can no longer pay (its card authorization was declined or released)',
        }),
      };
    case 'settled':
      return replay(row, true);
    case 'unknown':
      return resume(run, deps, action, row, refused);
  }
}

function replay(
  row: PaymentRow,
  replayed: boolean,
  envelope = row.envelope as Envelope | undefined,
): StripePaid {
  if (!envelope)
    return { result: { outcome: { ok: false, error: new GatewayError('internal', 'no stored result') } } };
  const chargedMicros = centsToMicros(envelope.charged_cents);
  return {
    result: {
      outcome: {
        ok: true,
        data: envelope.data,
        chargedCents: envelope.charged_cents,
        chargedMicros,
        transactionId: envelope.transaction_id,
        replayed,
        ...(envelope.warnings ? { warnings: envelope.warnings } : {}),
      },
    },
    reference: row.receipt?.transaction,
    replayed,
  };
}

/** Captures again a PaymentIntent whose capture outcome was unknown (the same key: it captures at most once). */
async function resume(
  run: RunDeps,
  deps: StripeDeps,
  action: Action,
  row: PaymentRow,
  refused: (r: MppRefusal) => CallResult,
): Promise<StripePaid> {
  const pi = row.receipt?.transaction;
  if (!pi || !(await deps.payments.transition(row.key, 'unknown', 'settling'))) {
    return { result: { outcome: { ok: false, error: settlementUnknown(pi) } } };
  }
  const r = await deps.processor.capture(pi);
  if (r.kind === 'unknown') {
    await deps.payments.transition(row.key, 'settling', 'unknown');
    return { result: { outcome: { ok: false, error: settlementUnknown(pi) } } };
  }
  if (r.kind === 'refused' || r.value.status !== 'succeeded') {
    await deps.payments.transition(row.key, 'settling', 'failed', {
      receipt: stripeReceipt(pi, row.payer, false, r.kind === 'refused' ? r.code : r.value.status),
    });
    return {
      result: refused({ problem: 'verification-failed', message: 'the card payment could not be captured' }),
    };
  }
  const envelope = row.envelope as Envelope;
  let delivered = envelope;
  try {
    // The first attempt was voided when its capture was unknown; the money that did move gets its own call.
    const txn = await run.money.recordSettledCall({
      principal: { kind: 'x402', accountId: x402AccountId(row.payer), payer: row.payer },
      action: action.id,
      micros: centsToMicros(action.priceCents),
      memo: `MPP stripe payment ${pi} by ${row.payer} (captured late)`,
      meta: { ...meta(pi, row.payer, ''), resumed_from: envelope.transaction_id },
    });
    delivered = { ...envelope, transaction_id: txn };
  } catch (err) {
    run.log.error({ err, key: row.key }, 'mpp stripe: captured but not recorded in the ledger');
  }
  await deps.payments.transition(row.key, 'settling', 'settled', {
    envelope: delivered,
    receipt: stripeReceipt(pi, row.payer, true),
  });
  return replay({ ...row, receipt: stripeReceipt(pi, row.payer, true) }, false, delivered);
}
