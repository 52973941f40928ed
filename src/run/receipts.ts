import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  sign,
} from 'node:crypto';
import type { Logger } from 'pino';
import type { Principal } from '../../auth/principal.js';
import type { Clock } from '../lib/clock.js';
import { canonicalJson } from '../lib/hash.js';
import { microsToCents } from '../lib/money.js';

// Receipts: every paid response carries a statement of what was charged, signed by the gateway, that the payer
// can keep and anyone can check with only the gateway's public key. It is a compact JWS (a JWT, RFC 7519) signed
// with ECDSA P-256 (alg ES256, RFC 7518): one signature per paid response, verifiable with any JOSE library
// against the JWK Set published at RECEIPT_JWKS_PATH. ES256 rather than EdDSA because it signs faster here
// (OpenSSL's P-256 is assembly-optimized; bench "receipts" in docs/benchmarks.md measures both). The key id is
// the RFC 7638 thumbprint of the public key, so every replica that shares the key names it the same way.
//
// Claims: iss (the gateway's public URL), jti (the transaction id, as in the envelope and the ledger), iat (when
// the charge was made or confirmed), action, amount_micros / charged_cents / currency, payment_method, and for
// x402 the settlement (network, asset, payer, transaction hash). A replayed response (idempotency) gets a
// receipt for the same transaction, marked `replayed`: jti tells a payer it is the same charge.

export const RECEIPT_JWKS_PATH = '/.well-known/tollgate-receipts.json';
/** HTTP response header (and the MCP result `_meta` key, below) carrying the receipt. */
export const RECEIPT_HEADER = 'Tollgate-Receipt';
export const RECEIPT_META_KEY = 'tollgate/receipt';
export const RECEIPT_TYPE = 'tollgate-receipt+jwt';

export interface X402Settlement {
  network: string;
  asset: string;
  payer: string;
  /** The settlement transaction hash; empty for a zero-amount settlement (nothing moved). */
  transaction: string;
  /** Atomic units settled. */
  amount: string;
  scheme: 'exact' | 'upto' | 'batch-settlement';
}

export interface ReceiptFacts {
  transactionId: string;
  action: string;
  chargedMicros: number;
  principal: Principal;
  /** When the charge was made; defaults to now. */
  at?: number;
  x402?: X402Settlement | undefined;
  /** Paid through the Machine Payments Protocol: the method and its reference (src/run/mpp). */
  mpp?: { method: string; reference: string; challenge_id: string } | undefined;
  /** The claim `payment_method` when it is not the principal's kind (an MPP payer is an accountless payer). */
  paymentMethod?: string | undefined;
  /** What a rail's payment recorded when it collected (`x402`, `mpp`): the claims above, where not given. */
  collected?: Record<string, unknown> | undefined;
  replayed?: boolean;
}

export interface ReceiptSigner {
  /** The compact JWS of a receipt. */
  sign(facts: ReceiptFacts): string;
  /**
   * The same, signed on libuv's thread pool: the paid call's hot path, whose event loop is the gateway's one
   * bottleneck, spends ~5 µs instead of the signature's ~45 µs, and the signature overlaps the capture's fsync.
   */
  signAsync(facts: ReceiptFacts): Promise<string>;
  /**
   * A compact JWS over another document with the same key (header `alg`, `kid` only): the x402 offer-and-receipt
   * extension's receipt (src/run/standard-receipts.ts). The payload is JCS-canonical JSON (RFC 8785).
   */
  signPayload(payload: Record<string, unknown>): string;
  /** The public JWK Set to publish at RECEIPT_JWKS_PATH. */
  jwks(): { keys: Array<Record<string, unknown>> };
}

/** Where the receipt key is kept when the operator did not set one: the gateway's database (./receipt-keys.ts). */
export interface ReceiptKeyStore {
  /** The stored private JWK (JSON); the first caller's `generate()` wins, every later caller gets that one. */
  loadOrCreate(generate: () => string): Promise<string>;
}

/** A new P-256 private key as a JWK (JSON text), the form TOLLGATE_RECEIPT_SIGNING_KEY takes. */
export function generateReceiptKey(): string {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return JSON.stringify(privateKey.export({ format: 'jwk' }));
}

/** Parses a private P-256 JWK; throws with a message that never echoes the key. */
export function parseReceiptKey(jwkJson: string): KeyObject {
  let jwk: unknown;
  try {
    jwk = JSON.parse(jwkJson);
  } catch {
    throw new Error('the receipt signing key is not JSON (expected a P-256 private JWK)');
  }
  const j = jwk as Record<string, unknown>;
  if (j.kty !== 'EC' || j.crv !== 'P-256' || [j.d, j.x, j.y].some((v) => typeof v !== 'string')) {
    throw new Error('the receipt signing key must be a P-256 private JWK (kty EC, crv P-256, d, x, y)');
  }
  try {
    return createPrivateKey({
      key: { kty: 'EC', crv: 'P-256', d: String(j.d), x: String(j.x), y: String(j.y) },
      format: 'jwk',
    });
  } catch {
    throw new Error('the receipt signing key is not a valid P-256 key');
  }
}

const b64url = (s: string | Buffer) => Buffer.from(s).toString('base64url');

/** RFC 7638 thumbprint of an EC public key: SHA-256 over its required members in lexical order. */
function thumbprint(x: string, y: string): string {
  return createHash('sha256').update(`{"crv":"P-256","kty":"EC","x":"${x}","y":"${y}"}`).digest('base64url');
}

export function receiptSigner(privateKey: KeyObject, issuer: () => string): ReceiptSigner {
  const pub = createPublicKey(privateKey).export({ format: 'jwk' }) as { x: string; y: string };
  const kid = thumbprint(pub.x, pub.y);
  const header = b64url(JSON.stringify({ alg: 'ES256', typ: RECEIPT_TYPE, kid }));
  const bareHeader = b64url(JSON.stringify({ alg: 'ES256', kid }));
  const jwks = { keys: [{ kty: 'EC', crv: 'P-256', x: pub.x, y: pub.y, kid, alg: 'ES256', use: 'sig' }] };
  // JWS wants the raw r‖s form of an ECDSA signature (RFC 7518 §3.4), not DER.
  const key = { key: privateKey, dsaEncoding: 'ieee-p1363' as const };
  const signed = (input: string) =>
    `${input}.${sign('sha256', Buffer.from(input), key).toString('base64url')}`;
  const signingInput = (f: ReceiptFacts): string => {
    const p = f.principal;
    const claims: Record<string, unknown> = {
      iss: issuer(),
      jti: f.transactionId,
      iat: Math.floor((f.at ?? Date.now()) / 1000),
      action: f.action,
      amount_micros: f.chargedMicros,
      charged_cents: microsToCents(f.chargedMicros),
      currency: 'USD',
    };
    const x402 = f.x402 ?? settlementOf(f.collected);
    const mpp = f.mpp ?? (f.collected?.mpp as ReceiptFacts['mpp']);
    claims.payment_method = f.paymentMethod ?? (mpp ? 'mpp' : p.kind);
    if (p.kind !== 'anonymous') claims.account = p.accountId;
    if (x402) claims.x402 = x402;
    if (mpp) claims.mpp = mpp;
    if (f.replayed) claims.replayed = true;
    return `${header}.${b64url(JSON.stringify(claims))}`;
  };
  return {
    sign: (f) => signed(signingInput(f)),
    signAsync(f) {
      const input = signingInput(f);
      return new Promise((resolve, reject) =>
        sign('sha256', Buffer.from(input), key, (err, sig) =>
          err ? reject(err) : resolve(`${input}.${sig.toString('base64url')}`),
        ),
      );
    },
    // Sorted keys, no whitespace: the JSON Canonicalization Scheme (RFC 8785) for a receipt's plain JSON.
    signPayload: (payload) => signed(`${bareHeader}.${b64url(canonicalJson(payload))}`),
    jwks: () => jwks,
  };
}

/**
 * The gateway's receipt signer: the operator's key (TOLLGATE_RECEIPT_SIGNING_KEY, for replicas that do not share
 * a database, or for a key kept in a secret store), else the one generated once and kept in the database, which
 * every replica on that database loads.
 */
export async function loadReceiptSigner(
  configured: string | undefined,
  store: ReceiptKeyStore,
  issuer: () => string,
): Promise<ReceiptSigner> {
  const jwk = configured ?? (await store.loadOrCreate(generateReceiptKey));
  return receiptSigner(parseReceiptKey(jwk), issuer);
}

/** The receipt of a paid call, when the gateway signs receipts; signing never fails the call it describes. */
type SignDeps = { receipts?: ReceiptSigner | undefined; clock: Clock; log: Logger };

export function signReceipt(deps: SignDeps, facts: ReceiptFacts): string | undefined {
  if (!deps.receipts) return undefined;
  try {
    return deps.receipts.sign({ at: deps.clock.now(), ...facts });
  } catch (err) {
    deps.log.error({ err, txn: facts.transactionId }, 'receipt signing failed');
    return undefined;
  }
}

/** signReceipt, signed off the event loop (ReceiptSigner.signAsync); never rejects. */
export function signReceiptAsync(deps: SignDeps, facts: ReceiptFacts): Promise<string | undefined> {
  if (!deps.receipts) return Promise.resolve(undefined);
  return deps.receipts.signAsync({ at: deps.clock.now(), ...facts }).catch((err: unknown) => {
    deps.log.error({ err, txn: facts.transactionId }, 'receipt signing failed');
    return undefined;
  });
}

/** The settlement facts a collected x402 payment recorded (x402/gate.ts receiptMeta), for the receipt. */
export function settlementOf(meta: Record<string, unknown> | undefined): X402Settlement | undefined {
  const x = meta?.x402 as Partial<X402Settlement> | undefined;
  if (!x || typeof x.transaction !== 'string') return undefined;
  return {
    network: String(x.network),
    asset: String(x.asset),
    payer: String(x.payer),
    transaction: x.transaction,
    amount: String(x.amount),
    scheme: x.scheme ?? 'exact',
  };
}
