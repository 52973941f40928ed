import type { Action } from '../../../catalog/index.js';
import type { X402Config } from '../../config/index.js';
import type { PaymentRails } from '../rails.js';
import { offerFor } from './requirements.js';

// How a paid action may be paid, for every machine-readable description of it (the descriptor, the catalog,
// /openapi.json, the MCP tool list). docs/spec.md §5: "Every paid operation declares x402 as its payment protocol and
// a fixed price mode". The x402 terms are those of its challenge (./requirements.ts), so what is advertised is
// exactly what a payer will be asked for. Without x402 configured only the API key is declared: advertising a
// protocol the gateway would refuse helps nobody.

export interface X402Terms {
  protocol: 'x402';
  x402_version: 2;
  scheme: 'exact';
  price_mode: 'fixed';
  network: string;
  asset: string;
  /** Atomic units of the asset (6 decimals: micro-USD). */
  amount: string;
  pay_to: string;
  max_timeout_seconds: number;
  /** Where the payment goes: the HTTP header, or the MCP request `_meta` key. */
  http_header: 'PAYMENT-SIGNATURE';
  mcp_meta_key: 'x402/payment';
}

export interface ApiKeyTerms {
  protocol: 'api_key';
  price_mode: 'fixed';
  http_header: 'Authorization';
  format: 'Bearer tg_sk_…';
}

export interface PaymentTerms {
  price_mode: 'fixed';
  price_cents: number;
  currency: 'USD';
  /** Charged only on success; the API key pays from the account balance, x402 needs no account. */
  protocols: Array<X402Terms | ApiKeyTerms | RailTerms>;
}

const API_KEY: ApiKeyTerms = {
  protocol: 'api_key',
  price_mode: 'fixed',
  http_header: 'Authorization',
  format: 'Bearer tg_sk_…',
};

/** The terms of another rail (x402 sessions, MPP: ../rails.ts), as that rail declares them. */
export type RailTerms = Record<string, unknown> & { protocol: string };

/** The payment terms of a paid action; undefined for free ones. */
export function paymentTerms(
  x402: X402Config | undefined,
  action: Action,
  rails?: PaymentRails,
): PaymentTerms | undefined {
  if (action.access !== 'paid') return undefined;
  const protocols: PaymentTerms['protocols'] = [];
  if (x402) {
    const r = offerFor(x402, action).requirements;
    protocols.push({
      protocol: 'x402',
      x402_version: 2,
      scheme: 'exact',
      price_mode: 'fixed',
      network: r.network,
      asset: r.asset,
      amount: r.amount,
      pay_to: r.payTo,
      max_timeout_seconds: r.maxTimeoutSeconds,
      http_header: 'PAYMENT-SIGNATURE',
      mcp_meta_key: 'x402/payment',
    });
  }
  for (const t of [rails?.sessions?.terms(action), rails?.mpp?.terms(action)])
    if (t) protocols.push(t as RailTerms);
  protocols.push(API_KEY);
  return { price_mode: 'fixed', price_cents: action.priceCents, currency: 'USD', protocols };
}
