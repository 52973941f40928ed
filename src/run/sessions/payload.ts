import { paymentJson } from '../x402/codec.js';

// A session payment as it arrives (the PAYMENT-SIGNATURE header: base64 JSON; MCP `_meta["x402/payment"]`: the
// object or its base64 form): an x402 v2 PaymentPayload whose accepted scheme is `batch-settlement`. Only the
// shape that routes it is checked here; the scheme checks the rest (signatures, amounts, channel binding).

export interface SessionPayment {
  payload: {
    x402Version: number;
    accepted: { scheme: string; network: string; amount: string; asset: string; payTo: string };
    payload: Record<string, unknown>;
  };
  /** `deposit` (opens or tops up the channel, with the first voucher), `voucher`, or `refund`. */
  type: 'deposit' | 'voucher' | 'refund';
  payer: string;
  channelId: string;
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const BYTES32 = /^0x[0-9a-fA-F]{64}$/;

/** The last header decoded: the entry asks whether it is a session payment, then the rail decodes it again. */
let last: { raw: string; decoded: SessionPayment | undefined } | undefined;

export function decodeSessionPayment(raw: unknown): SessionPayment | undefined {
  if (typeof raw === 'string') {
    if (last?.raw === raw) return last.decoded;
    const decoded = decode(raw);
    last = { raw, decoded };
    return decoded;
  }
  return decode(raw);
}

function decode(raw: unknown): SessionPayment | undefined {
  const read = paymentJson(raw);
  if (!read.ok) return undefined;
  const p = read.json as SessionPayment['payload'];
  const inner = p?.payload as
    | { type?: unknown; channelConfig?: { payer?: unknown }; voucher?: { channelId?: unknown } }
    | undefined;
  if (p?.x402Version !== 2 || p.accepted?.scheme !== 'batch-settlement' || !inner) return undefined;
  const type = inner.type;
  if (type !== 'deposit' && type !== 'voucher' && type !== 'refund') return undefined;
  const payer = inner.channelConfig?.payer;
  const channelId = inner.voucher?.channelId;
  if (typeof payer !== 'string' || !ADDRESS.test(payer)) return undefined;
  if (typeof channelId !== 'string' || !BYTES32.test(channelId)) return undefined;
  if (typeof p.accepted.amount !== 'string' || typeof p.accepted.asset !== 'string') return undefined;
  return { payload: p, type, payer, channelId: channelId.toLowerCase() };
}
