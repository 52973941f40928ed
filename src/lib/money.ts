// Money is integers. The ledger counts micro-USD (1e-6 USD, the same unit as USDC's atomic unit);
// cents exist only at the edges (catalog prices, `charged_cents`).

export const MICROS_PER_CENT = 10_000;
export const MICROS_PER_USD = 1_000_000;

export function centsToMicros(cents: number): number {
  if (!Number.isSafeInteger(cents) || cents < 0)
    throw new RangeError(`cents must be a non-negative integer, got ${cents}`);
  return cents * MICROS_PER_CENT;
}

/**
 * Cents shown to a caller for a charge in micro-USD. Rounds up so that a charged sub-cent amount is never
 * reported as 0; fixed-price actions are whole cents, so this is exact for them.
 */
export function microsToCents(micros: number): number {
  return Math.ceil(micros / MICROS_PER_CENT);
}

/** Parses a decimal USD string ("2", "0.35", "10.000001") into micro-USD without going through floats. */
export function parseUsdToMicros(usd: string): number {
  const m = /^(\d{1,9})(?:\.(\d{1,6}))?$/.exec(usd.trim());
  if (!m) throw new RangeError(`not a USD amount with at most 6 decimals: ${JSON.stringify(usd)}`);
  const whole = Number(m[1]);
  const frac = Number((m[2] ?? '').padEnd(6, '0'));
  return whole * MICROS_PER_USD + frac;
}

export function formatUsd(micros: number): string {
  const sign = micros < 0 ? '-' : '';
  const abs = Math.abs(micros);
  const whole = Math.floor(abs / MICROS_PER_USD);
  const frac = String(abs % MICROS_PER_USD).padStart(6, '0');
  // Trim to cents when the sub-cent digits are zero; keep them otherwise so nothing is hidden.
  const shown = frac.endsWith('0000') ? frac.slice(0, 2) : frac.replace(/0+$/, '');
  return `${sign}$${whole}.${shown}`;
}

/** "1 cent", "5 cents": a count of cents in words. */
export function centsPhrase(cents: number): string {
  return `${cents} ${cents === 1 ? 'cent' : 'cents'}`;
}
