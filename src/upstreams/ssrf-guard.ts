import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { GatewayError } from '../errors.js';

// The SSRF guard: one module for every server-side fetch of a caller's URL. It refuses
//  - schemes other than http(s);
//  - any address whose range is not plain global unicast: loopback, private, link-local (169.254.169.254),
//    CGNAT, multicast, broadcast, unspecified (0.0.0.0), reserved, IPv6 ULA/link-local, and IPv4-mapped,
//    6to4, Teredo and NAT64 forms (they embed an IPv4 address that could be internal);
//  - names that resolve to any such address. The check runs inside the socket's DNS lookup, so the address
//    checked is the address connected (no DNS-rebinding window), and again for every redirect hop.
// Parsing is ipaddr.js's; URL normalization (0x7f.1, 2130706433, 0177.0.0.1 → 127.0.0.1) is WHATWG's.

export interface SsrfPolicy {
  /** Hostnames (exact, or `.suffix`) and CIDRs let through, from TOLLGATE_FETCH_ALLOW. */
  allow: readonly string[];
}

export interface CompiledPolicy {
  hosts: Set<string>;
  suffixes: string[];
  cidrs: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]>;
  /**
   * IP literals already judged (address → why refused, or null): the verdict is a function of the address and
   * this fixed policy alone, and parsing it costs more than the rest of a URL's check. Bounded (cleared when full).
   */
  verdicts: Map<string, string | null>;
}

/** How many IP-literal verdicts a policy remembers before starting over. */
const MAX_VERDICTS = 4096;

export function compilePolicy(policy: SsrfPolicy): CompiledPolicy {
  const out: CompiledPolicy = { hosts: new Set(), suffixes: [], cidrs: [], verdicts: new Map() };
  for (const raw of policy.allow) {
    const entry = raw.trim().toLowerCase();
    if (!entry) continue;
    if (entry.includes('/')) out.cidrs.push(ipaddr.parseCIDR(entry));
    else if (ipaddr.isValid(entry)) out.cidrs.push([ipaddr.parse(entry), entry.includes(':') ? 128 : 32]);
    else if (entry.startsWith('.')) out.suffixes.push(entry);
    else out.hosts.add(entry);
  }
  return out;
}

const ALLOWED_RANGES = new Set(['unicast']);
/**
 * IPv6 addresses outside 2000::/3 are not global unicast even when ipaddr.js calls them `unicast` (e.g. the
 * deprecated IPv4-compatible `::127.0.0.1`, which some stacks still route to the embedded IPv4 address).
 */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

function normalize(addr: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | ipaddr.IPv6 {
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) {
    return (addr as ipaddr.IPv6).toIPv4Address();
  }
  return addr;
}

export function inAllowedCidr(addr: ipaddr.IPv4 | ipaddr.IPv6, policy: CompiledPolicy): boolean {
  for (const [net, bits] of policy.cidrs) {
    if (net.kind() === addr.kind() && addr.match(net as never, bits)) return true;
  }
  return false;
}

/** Why an address is refused, or null if it may be connected to. */
export function addressRefusal(ip: string, policy: CompiledPolicy): string | null {
  if (!ipaddr.isValid(ip)) return `unparseable address ${ip}`;
  const raw = ipaddr.parse(ip);
  if (inAllowedCidr(raw, policy)) return null;
  const addr = normalize(raw);
  if (addr !== raw && inAllowedCidr(addr, policy)) return null;
  const range = addr.range();
  if (!ALLOWED_RANGES.has(range)) return `${ip} is a ${range} address`;
  if (addr.kind() === 'ipv6' && !addr.match(GLOBAL_UNICAST_V6 as never)) return `${ip} is not global unicast`;
  return null;
}

export function hostAllowed(host: string, policy: CompiledPolicy): boolean {
  const h = host.toLowerCase();
  return policy.hosts.has(h) || policy.suffixes.some((s) => h.endsWith(s));
}

function refused(url: string, reason: string): GatewayError {
  return new GatewayError(
    'invalid_input',
    `Refused to fetch ${url}: ${reason}. Only public http(s) addresses can be fetched (the gateway's operator can let hosts through with TOLLGATE_FETCH_ALLOW); nothing was charged.`,
    { details: { issues: [{ path: 'url', message: `not a public address (${reason})` }] } },
  );
}

/** Checks a URL before connecting: scheme, and IP literals (which never go through DNS). */
export function checkUrl(url: string, policy: CompiledPolicy): URL {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw refused(url, 'not a valid URL');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw refused(url, `scheme ${u.protocol} is not allowed`);
  if (u.username || u.password) throw refused(url, 'credentials in URLs are not allowed');
  // `localhost.` is `localhost`: the trailing root dot does not make a name public.
  const host = u.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '');
  if (hostAllowed(host, policy)) return u;
  if (isIP(host)) {
    let why = policy.verdicts.get(host);
    if (why === undefined) {
      why = addressRefusal(host, policy);
      if (policy.verdicts.size >= MAX_VERDICTS) policy.verdicts.clear();
      policy.verdicts.set(host, why);
    }
    if (why) throw refused(url, why);
  } else if (host === 'localhost' || host.endsWith('.localhost')) {
    throw refused(url, 'localhost is not allowed');
  }
  return u;
}

export class SsrfRefusal extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'SsrfRefusal';
  }
}

/** The DNS resolution step, injectable so tests can make names resolve to private addresses offline. */
export type Resolver = (
  hostname: string,
  options: { all: true; family: number },
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

/**
 * A `lookup` for net.connect that resolves and refuses forbidden addresses. Because the socket connects to
 * what this returns, the checked address is the connected address (no DNS-rebinding window).
 */
export function guardedLookup(policy: CompiledPolicy, resolve: Resolver = dnsLookup as unknown as Resolver) {
  return (
    hostname: string,
    options: { family?: number | string; all?: boolean },
    callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    const allowHost = hostAllowed(hostname, policy);
    resolve(
      hostname,
      { all: true, family: typeof options.family === 'number' ? options.family : 0 },
      (err, addrs) => {
        if (err) return callback(err, '', 0);
        for (const a of addrs) {
          const why = allowHost ? null : addressRefusal(a.address, policy);
          if (why) return callback(new SsrfRefusal(`${hostname} resolves to ${why}`), '', 0);
        }
        const first = addrs[0];
        if (!first) return callback(new SsrfRefusal(`${hostname} did not resolve`), '', 0);
        if (options.all) return callback(null, addrs);
        callback(null, first.address, first.family);
      },
    );
  };
}

export { refused as ssrfRefused };
