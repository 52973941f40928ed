import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { describe, expect, it } from 'vitest';
import { envSchema, loadConfig } from '../../src/config/index.js';

describe('.env.example', () => {
  it('lists exactly the variables the config schema accepts', () => {
    const text = readFileSync(join(import.meta.dirname, '..', '..', '.env.example'), 'utf8');
    const listed = [...text.matchAll(/^(TOLLGATE_[A-Z0-9_]+)=/gm)].map((m) => m[1] as string).sort();
    expect(new Set(listed).size, 'duplicates in .env.example').toBe(listed.length);
    expect(listed).toEqual(Object.keys(envSchema.shape).sort());
  });

  it('[ops:env-file] copied to .env as it is, it is valid and changes no default', () => {
    const text = readFileSync(join(import.meta.dirname, '..', '..', '.env.example'), 'utf8');
    // What the gateway uses (the raw `env` differs only in spelling out the defaults).
    const { env: _copiedEnv, ...copied } = loadConfig(parseEnv(text));
    const { env: _defaultEnv, ...defaults } = loadConfig({});
    expect(copied).toEqual(defaults);
  });
});
