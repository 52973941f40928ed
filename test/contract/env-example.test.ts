import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { envSchema } from '../../src/config/index.js';

describe('.env.example', () => {
  it('lists exactly the variables the config schema accepts', () => {
    const text = readFileSync(join(import.meta.dirname, '..', '..', '.env.example'), 'utf8');
    const listed = [...text.matchAll(/^(TOLLGATE_[A-Z0-9_]+)=/gm)].map((m) => m[1] as string).sort();
    expect(new Set(listed).size, 'duplicates in .env.example').toBe(listed.length);
    expect(listed).toEqual(Object.keys(envSchema.shape).sort());
  });
});
