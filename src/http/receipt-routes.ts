import { Router } from 'express';
import { RECEIPT_JWKS_PATH, type ReceiptSigner } from '../run/receipts.js';

// The public key of the gateway's receipts as a JWK Set (RFC 7517), at a well-known URL: anyone holding a
// receipt verifies it with this alone. Public, CORS *, cacheable for an hour (the key changes only when the
// operator replaces it).

export function receiptRoutes(receipts: ReceiptSigner): Router {
  const r = Router();
  const body = JSON.stringify(receipts.jwks());
  r.get(RECEIPT_JWKS_PATH, (_req, res) => {
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Cache-Control', 'public, max-age=3600');
    res.type('application/jwk-set+json').send(body);
  });
  return r;
}
