import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REQUIREMENTS } from '../requirements.js';

// Every rule of the spec's requirements list is cited by at least one test (its id appears in a test file).

const TEST_DIR = resolve(import.meta.dirname, '..');

function testFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) out.push(...testFiles(p));
    else if (p.endsWith('.test.ts') && !p.endsWith('requirements.test.ts')) out.push(p);
  }
  return out;
}

describe('requirements coverage', () => {
  it('every rule in test/requirements.ts is cited by a test', () => {
    const corpus = testFiles(TEST_DIR)
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n');
    const uncited = Object.keys(REQUIREMENTS).filter((id) => !corpus.includes(`[${id}]`));
    expect(uncited).toEqual([]);
  });

  it('rule ids are well-formed', () => {
    for (const id of Object.keys(REQUIREMENTS)) expect(id).toMatch(/^[a-z0-9]+:[a-z0-9-]+$/);
  });
});
