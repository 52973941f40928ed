import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// [billing:one-lifecycle] Money moves in one place: src/run/lifecycle.ts. No other source file calls the
// ledger's money methods, and only the lifecycle, the ledger itself and the composition roots (which build the
// lifecycle) are even given a ledger that has them; everyone else is typed `LedgerRecords` / `LedgerReads`.

const ROOT = resolve(import.meta.dirname, '..', '..');
const LIFECYCLE = 'src/run/lifecycle.ts';
const MONEY_METHODS = [
  'begin',
  'capture',
  'void',
  'credit',
  'refundJob',
  'refundCall',
  'refundCharge',
  'adjust',
  'sweep',
  'voidAllPending',
  'recordExternal',
  'grantCreditLine',
  'freezeCreditLine',
  'beginSettlement',
  'finishSettlement',
];

function files(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) out.push(...files(p));
    else if (p.endsWith('.ts')) out.push(p);
  }
  return out;
}

const SOURCE = ['src', 'catalog', 'tools', 'auth'].flatMap((d) =>
  files(join(ROOT, d)).map((f) => relative(ROOT, f).replaceAll('\\', '/')),
);
const isLedgerImpl = (f: string) => f.startsWith('src/ledger/');
const isRoot = (f: string) => f === 'src/main.ts' || f.startsWith('src/cli/') || f.startsWith('src/gateway/');

/** Calls of a money method on anything named like a ledger: `ledger.capture(`, `this.deps.ledger.void(`. */
const MONEY_CALL = new RegExp(`\\b\\w*[Ll]edger\\??\\s*\\.\\s*(${MONEY_METHODS.join('|')})\\s*\\(`, 'g');
/** The ledger types that carry the money methods, named in an import or a type position. */
const MONEY_TYPE = /\b(Ledger|LedgerMoney)\b(?!Records|Reads|Admin|State)/g;

function moneyCalls(text: string): string[] {
  return [...text.matchAll(MONEY_CALL)].map((m) => m[0]);
}

function moneyTypes(text: string): string[] {
  // Only code: comments may name the ledger.
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
  return [...code.matchAll(MONEY_TYPE)].map((m) => m[0]);
}

describe('[billing:one-lifecycle] one place moves money', () => {
  it('the patterns find what they look for (the test can fail)', () => {
    expect(moneyCalls('await deps.ledger.capture(id, {})')).toEqual(['ledger.capture(']);
    expect(moneyCalls('this.run.ledger.credit(a, 1, "x")')).toEqual(['ledger.credit(']);
    expect(moneyCalls('await ledger.begin({})')).toEqual(['ledger.begin(']);
    expect(moneyCalls('ledger.getAccount(id); hold.capture(1, {})')).toEqual([]);
    expect(moneyTypes("import type { Ledger } from '../ledger/types.js';")).toEqual(['Ledger']);
    expect(moneyTypes('function f(l: LedgerMoney) {}')).toEqual(['LedgerMoney']);
    expect(moneyTypes('function f(l: LedgerRecords, r: LedgerReads) {} // a Ledger')).toEqual([]);
  });

  it('no source file but the lifecycle calls the ledger money methods', () => {
    const offenders = SOURCE.filter((f) => f !== LIFECYCLE && !isLedgerImpl(f)).flatMap((f) =>
      moneyCalls(readFileSync(join(ROOT, f), 'utf8')).map((c) => `${f}: ${c}`),
    );
    expect(offenders).toEqual([]);
  });

  it('only the lifecycle, the ledger and the composition roots hold a ledger with money methods', () => {
    const offenders = SOURCE.filter((f) => f !== LIFECYCLE && !isLedgerImpl(f) && !isRoot(f)).flatMap((f) =>
      moneyTypes(readFileSync(join(ROOT, f), 'utf8')).map((t) => `${f}: ${t}`),
    );
    expect(offenders).toEqual([]);
  });

  it('the lifecycle exists and does call them', () => {
    const calls = moneyCalls(readFileSync(join(ROOT, LIFECYCLE), 'utf8'));
    for (const m of MONEY_METHODS.filter((m) => m !== 'sweep' && m !== 'voidAllPending')) {
      expect(
        calls.some((c) => c.includes(`.${m}(`)),
        m,
      ).toBe(true);
    }
  });
});
