import { Challenge, Credential, PaymentRequest } from 'mppx';
import type { Action } from '../../../catalog/index.js';
import { type ChallengeTerms, challengeFor, methodsFor, realmOf } from './challenges.js';

// An MPP credential as it arrives: `Authorization: Payment <base64url JSON>` over HTTP, or the parsed object in
// MCP `_meta["org.paymentauth/credential"]`. It is accepted only if it echoes a challenge this gateway issued
// (the HMAC id checks out), for this action, at this action's current price, with a method on offer. Whether it
// is still within its expiry is checked by the method, after the replay lookup: a credential that already paid
// replays its result even once the challenge has expired.

/** Larger than any honest credential (an EIP-3009 signature, an SPT id); bounds the parsing work. */
const MAX_CREDENTIAL_BYTES = 16 * 1024;

export interface ParsedCredential {
  challenge: Challenge.Challenge;
  payload: Record<string, unknown>;
  source: string | undefined;
  method: 'evm' | 'stripe';
}

/** A refusal in the Payment scheme's problem vocabulary (paymentauth.org/problems/…). */
export interface MppRefusal {
  problem:
    | 'malformed-credential'
    | 'invalid-challenge'
    | 'payment-expired'
    | 'verification-failed'
    | 'method-unsupported'
    | 'invalid-payload';
  message: string;
}

export type CredentialCheck = { ok: true; credential: ParsedCredential } | { ok: false; refusal: MppRefusal };

function decode(raw: unknown): Credential.Credential | undefined {
  try {
    if (typeof raw === 'string') {
      if (raw.length > MAX_CREDENTIAL_BYTES) return undefined;
      return Credential.deserialize(raw);
    }
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
    if (JSON.stringify(raw).length > MAX_CREDENTIAL_BYTES) return undefined;
    // The MCP form is the same object the header carries, decoded: re-encoded so both are read one way.
    return Credential.deserialize(Credential.serialize(raw as Credential.Credential));
  } catch {
    return undefined;
  }
}

/** Same JSON value, whatever the key order (the request is compared after the HMAC already bound it). */
function sameJson(a: unknown, b: unknown): boolean {
  const canon = (v: unknown): unknown =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.keys(v as object)
            .sort()
            .map((k) => [k, canon((v as Record<string, unknown>)[k])]),
        )
      : Array.isArray(v)
        ? v.map(canon)
        : v;
  return JSON.stringify(canon(a)) === JSON.stringify(canon(b));
}

export function checkCredential(raw: unknown, action: Action, t: ChallengeTerms): CredentialCheck {
  const refuse = (problem: MppRefusal['problem'], message: string): CredentialCheck => ({
    ok: false,
    refusal: { problem, message },
  });
  const c = decode(raw);
  if (!c)
    return refuse('malformed-credential', 'the credential is not a Payment credential (base64url JSON)');
  const { challenge } = c;
  if (!Challenge.verify(challenge, { secretKey: t.mpp.secretKey }) || challenge.realm !== realmOf(t)) {
    return refuse('invalid-challenge', 'the credential does not answer a challenge this gateway issued');
  }
  // `opaque` carries the action (bound into the id); decoded from the wire form the payer echoed.
  if (opaqueOf(challenge).action !== action.id) {
    return refuse('invalid-challenge', `the challenge was issued for another action, not ${action.id}`);
  }
  const method = challenge.method;
  if (challenge.intent !== 'charge' || (method !== 'evm' && method !== 'stripe')) {
    return refuse('method-unsupported', `${method}/${challenge.intent} is not accepted here`);
  }
  if (!methodsFor(t, action).includes(method)) {
    return refuse('method-unsupported', `${method} is not offered for ${action.id}`);
  }
  // The HMAC proves we issued it; this proves it is still the price (a repriced action needs a new challenge).
  // The expected request is built like a real challenge, so both are in the same canonical form.
  if (!sameJson(challenge.request, challengeFor(t, action, method, 0).request)) {
    return refuse(
      'invalid-challenge',
      `the challenge's terms are no longer those of ${action.id}; ask again`,
    );
  }
  const payload = c.payload;
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) {
    return refuse('invalid-payload', 'the credential payload must be an object');
  }
  return {
    ok: true,
    credential: {
      challenge,
      payload: payload as Record<string, unknown>,
      source: typeof c.source === 'string' ? c.source : undefined,
      method,
    },
  };
}

/** The challenge's server data (`opaque`, base64url JSON), whichever form the payer echoed it in. */
function opaqueOf(challenge: Challenge.Challenge): Record<string, unknown> {
  if (challenge.meta) return challenge.meta;
  try {
    return challenge.opaque ? (PaymentRequest.deserialize(challenge.opaque) as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** Whether the challenge has expired at `now` (ms). */
export function expired(challenge: Challenge.Challenge, now: number): boolean {
  return challenge.expires !== undefined && Date.parse(challenge.expires) <= now;
}
