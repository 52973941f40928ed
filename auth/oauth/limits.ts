import { parseUsdToMicros } from '../../src/lib/money.js';

// The daily spend limit offered at consent: a few presets, no limit, or an amount of the user's choosing.

export const LIMIT_CHOICES = [
  { value: '1', label: '$1.00 per day' },
  { value: '5', label: '$5.00 per day' },
  { value: '20', label: '$20.00 per day' },
  { value: 'none', label: 'No daily limit: up to the whole balance' },
] as const;
/** Preselected for a client that has none yet: a limit rather than none, so a runaway host cannot drain the balance. */
const DEFAULT_LIMIT = '5';
const USD = /^\d{1,6}(?:\.\d{1,2})?$/;

/** The form choice that shows a stored limit. */
export function limitChoice(current: number | undefined): string {
  if (current === undefined) return DEFAULT_LIMIT;
  const match = LIMIT_CHOICES.find((c) => c.value !== 'none' && parseUsdToMicros(c.value) === current);
  return match?.value ?? 'custom';
}

/** The chosen limit in micro-USD, undefined for "no limit", or 'invalid'. */
export function parseLimit(body: Record<string, unknown>): number | undefined | 'invalid' {
  const choice = body.daily_limit;
  if (choice === 'none') return undefined;
  if (choice === 'custom') {
    const raw =
      typeof body.custom_limit_usd === 'string' ? body.custom_limit_usd.trim().replace(/^\$/, '') : '';
    if (!USD.test(raw)) return 'invalid';
    const micros = parseUsdToMicros(raw);
    return micros > 0 ? micros : 'invalid';
  }
  const known = LIMIT_CHOICES.find((c) => c.value === choice && c.value !== 'none');
  return known ? parseUsdToMicros(known.value) : 'invalid';
}
