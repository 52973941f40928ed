import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { actions } from '../../catalog/index.js';
import { serverJson } from '../../src/cli/server-json.js';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { VERSION } from '../../src/main.js';
import { REGISTRY_META_KEY, registryEntry } from '../../src/mcp/server-card.js';
import { serverJsonSchema } from '../helpers/mcp-schemas.js';

// server.json, the MCP registry's format (schema 2025-12-11): the copy the repository ships is exactly what the
// generator makes from the catalog and the default configuration (regenerate with `npm run server-json`), it
// passes the schema's rules and the official registry's, and a deployment's own entry (`tollgate server-json`)
// follows its configuration.

const ROOT = join(import.meta.dirname, '..', '..');
const shipped = readFileSync(join(ROOT, 'server.json'), 'utf8');

describe('[mcp:registry-server-json] server.json', () => {
  it('the committed server.json is current (run `npm run server-json` after changing the catalog)', () => {
    expect(shipped).toBe(serverJson(loadConfig({}), true));
    // The template ignores whatever configuration the generating machine has.
    const configured = loadConfig({
      TOLLGATE_PUBLIC_URL: 'https://gw.example.net',
      TOLLGATE_MCP_SERVER_NAME: 'net.example/other',
    });
    expect(serverJson(configured, true)).toBe(shipped);
  });

  it('follows the registry schema: the host is a URL variable each deployment fills in', () => {
    const doc = serverJsonSchema.parse(JSON.parse(shipped));
    expect(doc).toMatchObject({ name: 'io.github.tollgate/tollgate', version: VERSION });
    const [remote] = doc.remotes ?? [];
    expect(remote?.url).toBe('https://{host}/mcp');
    expect(remote?.variables?.host?.isRequired).toBe(true);
    // Substituted, it is the deployment's /mcp URL.
    expect(new URL((remote?.url ?? '').replace('{host}', 'gateway.example.com/base')).href).toBe(
      'https://gateway.example.com/base/mcp',
    );
    // The API key header is optional (OAuth hosts need none) and secret.
    expect(remote?.headers).toEqual([
      expect.objectContaining({ name: 'Authorization', isRequired: false, isSecret: true }),
    ]);
  });

  it('carries the catalog: every tool and its price in cents, under the one _meta key the registry keeps', () => {
    const meta = JSON.parse(shipped)._meta[REGISTRY_META_KEY];
    expect(meta.price_cents).toEqual(Object.fromEntries(actions.map((a) => [a.toolName, a.priceCents])));
    expect(meta.payment).toEqual(['api_key', 'oauth']);
    const priced = actions.filter((a) => a.priceCents > 0).length;
    expect(JSON.parse(shipped).description).toContain(`${priced} priced actions`);
  });

  it("a deployment's entry: its public URL, its host reversed as the name (or TOLLGATE_MCP_SERVER_NAME), x402", () => {
    const entry = JSON.parse(
      serverJson(
        loadConfig({
          TOLLGATE_PUBLIC_URL: 'https://mcp.acme.com/gw',
          TOLLGATE_X402_PAY_TO: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
          TOLLGATE_X402_FACILITATOR_URL: 'https://facilitator.example.com',
        }),
        false,
      ),
    );
    const doc = serverJsonSchema.parse(entry);
    expect(doc.name).toBe('com.acme.mcp/tollgate');
    expect(doc.remotes?.map((r) => [r.url, r.variables])).toEqual([
      ['https://mcp.acme.com/gw/mcp', undefined],
      ['https://mcp.acme.com/gw/mcp/x402', undefined],
    ]);
    expect(entry._meta[REGISTRY_META_KEY]).toMatchObject({
      catalog_url: 'https://mcp.acme.com/gw/api/run',
      payment: ['api_key', 'oauth', 'x402'],
    });
    const named = registryEntry({
      publicUrl: 'https://mcp.acme.com',
      name: 'io.github.acme/gateway',
      version: VERSION,
      x402: false,
    });
    expect(serverJsonSchema.parse(named).name).toBe('io.github.acme/gateway');
    // Loopback and IP literals still make a name the registry's pattern accepts.
    for (const publicUrl of ['http://127.0.0.1:8402', 'http://[::1]:8402', 'http://localhost:8402']) {
      const local = registryEntry({ publicUrl, name: undefined, version: VERSION, x402: false });
      expect(() => serverJsonSchema.parse(local), publicUrl).not.toThrow();
    }
  });

  it('TOLLGATE_MCP_SERVER_NAME must be a registry name', () => {
    expect(() => loadConfig({ TOLLGATE_MCP_SERVER_NAME: 'tollgate' })).toThrow(ConfigError);
    expect(() => loadConfig({ TOLLGATE_MCP_SERVER_NAME: 'com.example/a/b' })).toThrow(/reverse-DNS/);
    expect(
      loadConfig({ TOLLGATE_MCP_SERVER_NAME: 'com.example/tollgate' }).env.TOLLGATE_MCP_SERVER_NAME,
    ).toBe('com.example/tollgate');
  });
});
