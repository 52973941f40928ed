import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { runCli } from '../helpers/cli.js';

describe('config', () => {
  it('defaults: port 8402, ./data, SQLite and local storage, public URL from host and port', () => {
    const c = loadConfig({});
    expect(c.port).toBe(8402);
    expect(c.dataDir).toBe(join(process.cwd(), 'data'));
    expect(c.publicUrl).toBe('http://127.0.0.1:8402');
    expect(c.vendors.LLM.baseUrl).toBe('https://openrouter.ai/api/v1');
    expect(c.vendors.RENTCAST.apiKey).toBeUndefined();
  });

  it('[ops:config-errors] every bad value is reported, not just the first', () => {
    try {
      loadConfig({
        TOLLGATE_PORT: 'eighty',
        TOLLGATE_LOG_LEVEL: 'loud',
        TOLLGATE_PUBLIC_URL: 'ftp://x',
        TOLLGATE_IDEMPOTENCY_TTL_HOURS: '1',
      });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      const problems = (e as ConfigError).problems.join('\n');
      for (const v of [
        'TOLLGATE_PORT',
        'TOLLGATE_LOG_LEVEL',
        'TOLLGATE_PUBLIC_URL',
        'TOLLGATE_IDEMPOTENCY_TTL_HOURS',
      ]) {
        expect(problems).toContain(v);
      }
    }
  });

  it('[ops:config-errors] unknown TOLLGATE_ variables are refused (typos); empty values mean unset', () => {
    expect(() => loadConfig({ TOLLGATE_PROT: '1' })).toThrow(/TOLLGATE_PROT: unknown variable/);
    expect(loadConfig({ TOLLGATE_PORT: '' }).port).toBe(8402);
  });

  it('[ops:config-errors] a typo, bad values and a section problem are all reported in one go', () => {
    let problems: string[] = [];
    try {
      loadConfig({
        TOLLGATE_PROT: '8403',
        TOLLGATE_PORT: 'eighty',
        TOLLGATE_PUBLIC_URL: 'ftp://x',
        TOLLGATE_X402_PAY_TO: '0x1234567890123456789012345678901234567890',
      });
      expect.unreachable();
    } catch (e) {
      problems = (e as ConfigError).problems;
    }
    expect(problems).toEqual([
      'TOLLGATE_PORT: an integer from 0 to 65535',
      'TOLLGATE_PUBLIC_URL: an http or https URL',
      'TOLLGATE_PROT: unknown variable (did you mean TOLLGATE_PORT?)',
      'TOLLGATE_X402_PAY_TO: x402 needs a facilitator: FACILITATOR_URL, or RPC_URL and SIGNER_KEY',
    ]);
  });

  it('[ops:config-errors] a section whose own variable is bad adds no second-hand complaint', () => {
    expect(() => loadConfig({ TOLLGATE_X402_PAY_TO: 'nope', TOLLGATE_LOG_LEVEL: 'loud' })).toThrow(
      new ConfigError([
        'TOLLGATE_LOG_LEVEL: expected one of "fatal"|"error"|"warn"|"info"|"debug"|"trace"|"silent"',
        'TOLLGATE_X402_PAY_TO: a 0x-prefixed 20-byte hex address',
      ]),
    );
  });

  it('[ops:config-errors] the CLI prints every problem and exits 1', () => {
    const r = runCli(['serve'], {
      cwd: import.meta.dirname,
      env: { TOLLGATE_PORT: '-1', TOLLGATE_HOLD_TTL_SECONDS: 'x' },
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('TOLLGATE_PORT');
    expect(r.stderr).toContain('TOLLGATE_HOLD_TTL_SECONDS');
  });
});
