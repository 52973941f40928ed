import { networkInterfaces } from 'node:os';
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import { describeDatabase } from './database.js';

// Settings that start but would surprise: said once at start, as a warning in the log
// (docs/decisions.md "Warnings at start").

const WILDCARD = new Set(['0.0.0.0', '::', '[::]']);

export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h.endsWith('.localhost') || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/** This machine's own addresses (every interface, IPv4 and IPv6, loopback aside). */
function ownAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flatMap((list) => list ?? [])
    .filter((a) => !a.internal)
    .map((a) => (a.family === 'IPv6' ? `[${a.address}]` : a.address));
}

/**
 * A bind beyond loopback without TOLLGATE_PUBLIC_URL: warn (callers would be told a URL they cannot use), and for a
 * wildcard bind let /mcp accept this machine's own addresses as Host (they are what a LAN client sends; an IP of
 * this machine is not a name an attacker can rebind, which is what the Host check guards against). Returns the
 * configuration to start with.
 */
export function checkBind(config: Config, log: Logger, addresses: () => string[] = ownAddresses): Config {
  if (config.env.TOLLGATE_PUBLIC_URL !== undefined || isLoopbackHost(config.host)) return config;
  if (WILDCARD.has(config.host)) {
    const own = addresses();
    log.warn(
      { host: config.host, public_url: config.publicUrl, accepted_hosts: own },
      `listening on every address (TOLLGATE_HOST=${config.host}) without TOLLGATE_PUBLIC_URL: links, OAuth metadata, the MCP server card and x402 resources name ${config.publicUrl}, which other machines cannot reach. Set TOLLGATE_PUBLIC_URL to the URL callers use (https://… behind a TLS proxy). Meanwhile /mcp also accepts this machine's addresses as Host.`,
    );
    return { ...config, allowedHosts: [...config.allowedHosts, ...own] };
  }
  log.warn(
    { host: config.host, public_url: config.publicUrl },
    `listening on ${config.host} without TOLLGATE_PUBLIC_URL: callers are told ${config.publicUrl} (plain http). Set TOLLGATE_PUBLIC_URL to the URL callers use (https://… behind a TLS proxy) for anything beyond a trusted network.`,
  );
  return config;
}

/** The one line that says the gateway is up, where, on what (in the log, as every other line); its fields. */
export function listening(log: Logger, config: Config, url: string, workers: number, envFile?: string) {
  const fields = {
    url,
    public_url: config.publicUrl,
    data_dir: config.dataDir,
    database: describeDatabase(config),
    env_file: envFile ?? null,
    workers,
  };
  log.info(fields, `tollgate listening on ${url}${workers > 1 ? ` with ${workers} workers` : ''}`);
  return fields;
}
