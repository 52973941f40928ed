import { createHash } from 'node:crypto';
import { newId } from '../lib/ids.js';
import { formatUsd } from '../lib/money.js';

// What an alert says. Every delivery carries one event, the same JSON on every attempt and every channel:
//   { "id": "evt_…", "type": "balance.below_threshold", "created": <unix seconds>, "account": "acct_…", "data": {…} }
// The id is stable (receivers deduplicate on it: delivery is at least once). Amounts are integer micro-USD with
// a display string beside them, as the rest of the gateway reports money.

export const ALERT_EVENT_TYPES = [
  'balance.below_threshold',
  'cap.warning',
  'cap.reached',
  'credit_line.frozen',
  'credit_line.restored',
  'topup.succeeded',
  'topup.failed',
  'settlement.succeeded',
  'settlement.failed',
] as const;
export type AlertEventType = (typeof ALERT_EVENT_TYPES)[number] | 'alert.test';

/** The choices on the dashboard, in its words. */
export const EVENT_LABELS: Record<(typeof ALERT_EVENT_TYPES)[number], string> = {
  'balance.below_threshold': 'Available balance falls below the threshold',
  'cap.warning': 'A key or app has spent 80 % of a spending cap',
  'cap.reached': 'A key or app reached a spending cap (100 %, or a call was refused by it)',
  'credit_line.frozen': 'Credit line frozen',
  'credit_line.restored': 'Credit line restored',
  'topup.succeeded': 'Top-up succeeded',
  'topup.failed': 'Top-up failed',
  'settlement.succeeded': 'Card charged for what was drawn on the line',
  'settlement.failed': 'Card charge for the line failed',
};

export interface AlertEvent {
  id: string;
  type: AlertEventType;
  /** Unix seconds. */
  created: number;
  account: string;
  data: Record<string, unknown>;
}

/** A spending cap of a key or an OAuth app over one window, as the evaluator reads it (./caps.ts). */
export interface CapUsage {
  kind: 'key' | 'app';
  id: string;
  /** Shown in the alert (a key's name or prefix, an app's name). */
  name?: string | undefined;
  window: 'day' | 'month';
  spentMicros: number;
  limitMicros: number;
  /** When the window ends (ms): also the window's identity, so a cap fires once per window. */
  resetsAt: number;
}

export function newEvent(
  type: AlertEventType,
  account: string,
  data: Record<string, unknown>,
  nowMs: number,
  /** For an event reported more than once (a top-up, a settlement): the same id every time. */
  onceKey?: string,
): AlertEvent {
  const id = onceKey
    ? `evt_${createHash('sha256').update(`${type}\n${account}\n${onceKey}`).digest('hex').slice(0, 32)}`
    : newId('evt', nowMs);
  return { id, type, created: Math.floor(nowMs / 1000), account, data };
}

/** `micros` with its display string: `{ amount_micros, amount_usd }`. */
export function money(name: string, micros: number): Record<string, unknown> {
  return { [`${name}_micros`]: micros, [`${name}_usd`]: formatUsd(micros).replace('$', '') };
}

export function capData(c: CapUsage, percent: 80 | 100, refused: boolean): Record<string, unknown> {
  return {
    cap: {
      kind: c.kind,
      id: c.id,
      ...(c.name ? { name: c.name } : {}),
      window: c.window,
      ...money('limit', c.limitMicros),
      ...money('spent', c.spentMicros),
      resets_at: new Date(c.resetsAt).toISOString(),
    },
    percent,
    ...(refused ? { refused_call: true } : {}),
  };
}

const usd = (data: Record<string, unknown>, name: string) => formatUsd(Number(data[`${name}_micros`] ?? 0));

/** The e-mail's subject and text (and the log's words) for an event. */
export function describe(e: AlertEvent, dashboardUrl: string): { subject: string; text: string } {
  const d = e.data;
  const cap = d.cap as Record<string, unknown> | undefined;
  const capName = cap ? `${cap.kind === 'key' ? 'API key' : 'app'} ${String(cap.name ?? cap.id)}` : '';
  const capWindow = cap?.window === 'month' ? 'monthly' : 'daily';
  const line = ((): [string, string] => {
    switch (e.type) {
      case 'balance.below_threshold':
        return [
          `balance below ${usd(d, 'threshold')}`,
          `Your available balance is ${usd(d, 'available')}, below the ${usd(d, 'threshold')} you set. Top up to keep calls running.`,
        ];
      case 'cap.warning':
        return [
          `${capName} at 80 % of its ${capWindow} cap`,
          `The ${capName} has spent ${usd(cap ?? {}, 'spent')} of its ${capWindow} cap of ${usd(cap ?? {}, 'limit')}. The cap resets at ${String(cap?.resets_at)}.`,
        ];
      case 'cap.reached':
        return [
          `${capName} reached its ${capWindow} cap`,
          `The ${capName} has spent ${usd(cap ?? {}, 'spent')} of its ${capWindow} cap of ${usd(cap ?? {}, 'limit')}${d.refused_call ? ', and a call was refused by it' : ''}. Calls beyond the cap are refused until it resets at ${String(cap?.resets_at)}.`,
        ];
      case 'credit_line.frozen':
        return [
          'credit line frozen',
          `Your credit line is frozen: ${String(d.reason ?? '')}. Calls beyond your prepaid balance are refused until a charge succeeds: add a new card or top up.`,
        ];
      case 'credit_line.restored':
        return ['credit line restored', 'Your credit line is usable again.'];
      case 'topup.succeeded':
        return [`top-up of ${usd(d, 'amount')} received`, `Your top-up of ${usd(d, 'amount')} was credited.`];
      case 'topup.failed':
        return [
          'top-up failed',
          `Your top-up did not go through: ${String(d.reason ?? '')}. Nothing was credited.`,
        ];
      case 'settlement.succeeded':
        return [
          `card charged ${usd(d, 'amount')}`,
          `Your card was charged ${usd(d, 'amount')} for usage drawn on your credit line; the line is restored.`,
        ];
      case 'settlement.failed':
        return [
          'card charge failed',
          `Charging your card for usage drawn on your credit line failed: ${String(d.reason ?? '')}.`,
        ];
      case 'alert.test':
        return ['test alert', 'This is a test alert: your alert settings work.'];
    }
  })();
  return {
    subject: `tollgate: ${line[0]}`,
    text: `${line[1]}\n\nAccount: ${e.account}\nEvent: ${e.type} (${e.id})\nAt: ${new Date(e.created * 1000).toISOString()}\n\nYour alert settings: ${dashboardUrl}\n`,
  };
}
