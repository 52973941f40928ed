import type { Config } from '../config/index.js';
import { VERSION } from '../main.js';
import { registryEntry } from '../mcp/server-card.js';

// `tollgate server-json`: this deployment's entry for the MCP registry (its public URL, its name, x402 if
// configured), ready for `mcp-publisher publish`. With --template: the entry the repository ships as
// server.json, independent of any configuration (the host is a URL variable; `npm run server-json` writes it).

export function serverJson(config: Config, template: boolean): string {
  const entry = template
    ? registryEntry({ publicUrl: undefined, name: undefined, version: VERSION, x402: false })
    : registryEntry({
        publicUrl: config.publicUrl,
        name: config.env.TOLLGATE_MCP_SERVER_NAME,
        version: VERSION,
        x402: config.x402 !== undefined,
      });
  return `${JSON.stringify(entry, null, 2)}\n`;
}
