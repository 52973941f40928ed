import { randomFillSync } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

// Random bytes drawn 4 KiB at a time: a paid call makes three ids (its transaction, two ledger transfers), and
// one randomBytes(16) each — a Buffer, a call into the CSPRNG — cost more than the rest of the id. The pool is the
// same CSPRNG's output, used once each, as crypto.randomUUID does with its own cache.
const POOL = Buffer.allocUnsafe(4096);
let next = POOL.length;

/** The next random byte below 252 (a multiple of 36): rejection sampling keeps every character equally likely. */
function unbiasedByte(): number {
  for (;;) {
    if (next === POOL.length) {
      randomFillSync(POOL);
      next = 0;
    }
    const b = POOL[next++] as number;
    if (b < 252) return b;
  }
}

/** Random base36 string of `len` characters (about 5.17 bits each). */
export function randomToken(len: number): string {
  let out = '';
  for (let i = 0; i < len; i++) out += ALPHABET[unbiasedByte() % 36];
  return out;
}

/**
 * Prefixed, time-ordered id (`txn_0mdx3k…`): a millisecond timestamp in base36 keeps ids roughly sortable,
 * 16 random characters (~82 bits) keep them unguessable.
 */
export function newId(prefix: string, now: number = Date.now()): string {
  return `${prefix}_${now.toString(36).padStart(9, '0')}${randomToken(16)}`;
}
