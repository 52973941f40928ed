import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { deliverOperatorKey, OPERATOR_KEY_FILE } from '../../src/cli/first-start.js';
import { createLogger } from '../../src/log.js';

// The first start's key with a terminal attached: shown there, not logged, no file left behind. (Without one, the
// 0600 file: test/integration/serve-start.test.ts.)

const dir = mkdtempSync(join(tmpdir(), 'tollgate-key-'));
const tty = Object.getOwnPropertyDescriptor(process.stderr, 'isTTY');
const write = process.stderr.write;
afterEach(() => {
  if (tty) Object.defineProperty(process.stderr, 'isTTY', tty);
  else delete (process.stderr as { isTTY?: boolean }).isTTY;
  process.stderr.write = write;
});

describe('the first start key on a terminal', () => {
  it('[ops:key-not-logged] goes to the terminal only: the log says where, not what', () => {
    Object.defineProperty(process.stderr, 'isTTY', { value: true, configurable: true });
    let shown = '';
    process.stderr.write = ((chunk: string) => {
      shown += chunk;
      return true;
    }) as typeof process.stderr.write;
    const lines: string[] = [];
    const log = createLogger('info', { write: (l: string) => void lines.push(l) });
    const key = 'tg_sk_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG';
    const d = deliverOperatorKey({ accountId: 'acct_operator', key, credit: '$0.00' }, dir, log);
    process.stderr.write = write;
    expect(d).toEqual({ account_id: 'acct_operator', api_key_file: null });
    expect(shown).toContain(`API key (shown once, not logged; store it now): ${key}`);
    expect(lines.join('')).not.toContain(key);
    expect(JSON.parse(lines[0] as string).msg).toContain('shown on the terminal');
    expect(existsSync(join(dir, OPERATOR_KEY_FILE))).toBe(false);
    rmSync(dir, { recursive: true, force: true });
  });
});
