import { z } from 'zod';

// Field parsers shared by the config sections.

export const int = (min: number, max: number) => {
  const error = `an integer from ${min} to ${max}`;
  return z.coerce.number({ error }).int({ error }).min(min, { error }).max(max, { error });
};
export const url = z
  .url({ protocol: /^https?$/, error: 'an http or https URL' })
  .transform((u) => u.replace(/\/+$/, ''));
export const list = z.string().transform((s) =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean),
);
export const usd = z.string().regex(/^\d{1,9}(\.\d{1,6})?$/, 'a USD amount such as 2 or 0.35');
export const evmAddress = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, 'a 0x-prefixed 20-byte hex address')
  .transform((s) => s as `0x${string}`);
