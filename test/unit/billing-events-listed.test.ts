import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HANDLED_EVENTS } from '../../src/billing/events.js';

// The operator registers the webhook endpoint with the events tollgate acts on; an event missing there is money
// Stripe moved that the ledger never hears of (a refund that failed, an inquiry that became a chargeback).

const ROOT = resolve(import.meta.dirname, '..', '..');
const read = (p: string) => readFileSync(resolve(ROOT, p), 'utf8');

describe('Stripe events tollgate acts on', () => {
  it('[billing:webhook-verified] the handler acts on exactly HANDLED_EVENTS', () => {
    const cases = [...read('src/billing/events.ts').matchAll(/case '([a-z_.]+)':/g)].map((m) => m[1]);
    expect([...cases].sort()).toEqual([...HANDLED_EVENTS].sort());
  });

  it.each(['.env.example', 'docs/operator.md'])(
    '[billing:refund-failed-given-back] [billing:dispute-inquiry] every one of them is listed in %s',
    (file) => {
      const text = read(file);
      // A whole name (refund.updated is not found inside charge.refund.updated).
      const listed = (e: string) => new RegExp(`(?<![\\w.])${e.replaceAll('.', '\\.')}(?![\\w])`).test(text);
      expect(HANDLED_EVENTS.filter((e) => !listed(e))).toEqual([]);
    },
  );
});
