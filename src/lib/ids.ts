import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/** Random base36 string of `len` characters (about 5.17 bits each). */
export function randomToken(len: number): string {
  const bytes = randomBytes(len);
  let out = '';
  for (let i = 0; i < len; i++) out += ALPHABET[(bytes[i] as number) % 36];
  return out;
}

/**
 * Prefixed, time-ordered id (`txn_0mdx3k…`): a millisecond timestamp in base36 keeps ids roughly sortable,
 * 16 random characters (~82 bits) keep them unguessable.
 */
export function newId(prefix: string, now: number = Date.now()): string {
  return `${prefix}_${now.toString(36).padStart(9, '0')}${randomToken(16)}`;
}
