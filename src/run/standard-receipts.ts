import type { SettleResponse } from '@x402/core/types';
import type { Clock } from '../lib/clock.js';
import type { ReceiptSigner } from './receipts.js';

// Receipts in the forms the payment protocols define, signed with the gateway's receipt key (the one published at
// /.well-known/tollgate-receipts.json, ./receipts.ts), so a payer checks them like any tollgate receipt:
//
// - x402: the offer-and-receipt extension's signed receipt in PAYMENT-RESPONSE (`extensions["offer-receipt"]
//   .info.receipt = { format: "jws", signature }`; @x402/extensions `extractReceiptFromResponse` reads it and
//   `verifyReceiptSignatureJWS(receipt, jwk)` checks it with our JWK). Payload: { version: 1, network,
//   resourceUrl, payer, issuedAt, transaction? } as JCS JSON, header { alg: ES256, kid: the JWK thumbprint }.
// - MPP: `Payment-Receipt` (base64url JSON { status, method, timestamp, reference }, draft-httpauth-payment
//   §"Payment-Receipt Header"), plus `jws`: the tollgate receipt of the same charge (methods may add fields).

export const OFFER_RECEIPT = 'offer-receipt';
export const MPP_RECEIPT_HEADER = 'Payment-Receipt';
export const MPP_RECEIPT_META = 'org.paymentauth/receipt';

/** The extension's receipt schema, sent beside the receipt as x402 extensions are (info + schema). */
const RECEIPT_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: {
    receipt: {
      type: 'object',
      properties: { format: { type: 'string' }, signature: { type: 'string' } },
      required: ['format', 'signature'],
    },
  },
  required: ['receipt'],
};

interface Signing {
  receipts?: ReceiptSigner | undefined;
  clock: Clock;
}

/**
 * The settlement response with the offer-and-receipt extension's signed receipt added; unchanged when the call
 * was not settled (or receipts are off). A signing failure never fails the call it describes.
 */
export function withOfferReceipt(
  deps: Signing,
  receipt: SettleResponse,
  resourceUrl: string,
): SettleResponse {
  if (!deps.receipts || !receipt.success || !receipt.payer) return receipt;
  const payload: Record<string, unknown> = {
    version: 1,
    network: receipt.network,
    resourceUrl,
    payer: receipt.payer,
    issuedAt: Math.floor(deps.clock.now() / 1000),
  };
  if (receipt.transaction) payload.transaction = receipt.transaction;
  let signature: string;
  try {
    signature = deps.receipts.signPayload(payload);
  } catch {
    return receipt;
  }
  return {
    ...receipt,
    extensions: {
      ...receipt.extensions,
      [OFFER_RECEIPT]: { info: { receipt: { format: 'jws', signature } }, schema: RECEIPT_SCHEMA },
    },
  };
}

export interface MppReceipt {
  status: 'success';
  method: string;
  reference: string;
  timestamp: string;
  /** The tollgate receipt (compact JWS) of the same charge. */
  jws?: string;
}

/** `Payment-Receipt` (HTTP) and `_meta["org.paymentauth/receipt"]` (MCP, with the challenge id) of a paid call. */
export function mppReceiptParts(r: MppReceipt, challengeId: string) {
  return {
    headers: { [MPP_RECEIPT_HEADER]: Buffer.from(JSON.stringify(r)).toString('base64url') },
    meta: { [MPP_RECEIPT_META]: { ...r, challengeId } },
  };
}
