import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// docs/architecture.md's layout table, as a test: every relative import in the source folders must follow an arrow the
// table allows, and the module graph stays acyclic.

const ROOT = resolve(import.meta.dirname, '..', '..');

/** Module group of a file (by folder), as in docs/architecture.md's table. */
function groupOf(file: string): string {
  const rel = relative(ROOT, file).replaceAll('\\', '/');
  if (rel === 'src/main.ts' || rel.startsWith('src/cli/') || rel.startsWith('src/gateway/')) return 'root';
  if (rel === 'src/errors.ts') return 'errors';
  if (rel === 'src/log.ts') return 'lib';
  // The state handle (SQLite or PostgreSQL) every store opens from: with the store layer.
  if (rel === 'src/backend.ts') return 'db';
  for (const g of ['catalog', 'tools', 'auth']) if (rel.startsWith(`${g}/`)) return g;
  const m = /^src\/([^/]+)\//.exec(rel);
  if (m) return m[1] as string;
  throw new Error(`no group for ${rel}`);
}

// group → groups it may import. `root` may import everything.
const ALLOWED: Record<string, string[]> = {
  catalog: ['catalog'],
  tools: ['tools', 'catalog', 'upstreams', 'errors', 'lib', 'ports'],
  auth: ['auth', 'ledger', 'errors', 'lib', 'config', 'db'],
  run: [
    'run',
    'catalog',
    'tools',
    'auth',
    'ledger',
    'errors',
    'lib',
    'config',
    'ports',
    'ops',
    'db',
    'pg',
    'alerts',
  ],
  http: ['http', 'run', 'auth', 'catalog', 'errors', 'lib', 'config'],
  mcp: ['mcp', 'run', 'auth', 'catalog', 'errors', 'lib', 'config'],
  llm: ['llm', 'run', 'auth', 'catalog', 'errors', 'lib', 'config', 'upstreams', 'ports', 'ops'],
  // Monitoring: the telemetry seam (interfaces, no-op) and its Prometheus and OpenTelemetry implementations.
  ops: ['ops', 'errors', 'lib'],
  // The ports: interfaces handlers are given and infrastructure implements (vendor client types included).
  ports: ['ports', 'upstreams', 'lib', 'errors'],
  upstreams: ['upstreams', 'lib', 'errors', 'ports'],
  // Card payments (Stripe): money moves only through run's lifecycle; ledger for its types and reads.
  billing: ['billing', 'run', 'ledger', 'lib', 'errors', 'config', 'db'],
  // The pages people use (landing, sign-up and sign-in, the account dashboard): a door, plus billing.
  account: ['account', 'run', 'auth', 'billing', 'ledger', 'lib', 'errors', 'db', 'alerts'],
  // Per-account alerts: thresholds read from the ledger, state and outbox in the store layer, webhooks through the
  // SSRF-guarded poster and e-mail over SMTP (src/upstreams). The lifecycle reports to its seam (signals.ts).
  alerts: ['alerts', 'ledger', 'db', 'lib', 'errors', 'config', 'upstreams'],
  // The ledger keeps its own SQL per backend; from the store layer it takes only the StateDb type.
  ledger: ['ledger', 'pg', 'db', 'lib', 'errors'],
  storage: ['storage', 'lib', 'errors', 'ports', 'db'],
  engine: ['engine', 'upstreams', 'lib', 'errors', 'ports', 'db'],
  // lib may throw the closed error union (errors imports nothing).
  lib: ['lib', 'errors'],
  errors: [],
  config: ['lib'],
  // The store layer: one Kysely schema and migration list over both databases, and the StateDb handle
  // (src/backend.ts) every store opens from.
  db: ['db', 'pg', 'lib', 'errors'],
  // PostgreSQL only: the pool, replica leases, the ledger's migrations.
  pg: ['pg', 'lib', 'errors'],
};

function files(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) out.push(...files(p));
    else if (p.endsWith('.ts')) out.push(p);
  }
  return out;
}

const SOURCE = ['src', 'catalog', 'tools', 'auth'].flatMap((d) => files(join(ROOT, d)));

function importsOf(file: string): Array<{ target: string; typeOnly: boolean }> {
  const text = readFileSync(file, 'utf8');
  const out: Array<{ target: string; typeOnly: boolean }> = [];
  for (const m of text.matchAll(/^\s*(import|export)\s+(type\s+)?[^'"]*?from\s+'(\.[^']+)'/gm)) {
    const target = resolve(join(file, '..'), (m[3] as string).replace(/\.js$/, '.ts'));
    out.push({ target, typeOnly: Boolean(m[2]) });
  }
  for (const m of text.matchAll(/import\(\s*'(\.[^']+)'\s*\)/g)) {
    out.push({
      target: resolve(join(file, '..'), (m[1] as string).replace(/\.js$/, '.ts')),
      typeOnly: false,
    });
  }
  return out;
}

/** The cycles of an import graph, each as its files (relative to the root) in order. */
function cyclesOf(graph: Map<string, string[]>): string[][] {
  const state = new Map<string, 'visiting' | 'done'>();
  const cycles: string[][] = [];
  const visit = (f: string, stack: string[]) => {
    if (state.get(f) === 'done') return;
    if (state.get(f) === 'visiting') {
      cycles.push([...stack.slice(stack.indexOf(f)), f].map((x) => relative(ROOT, x)));
      return;
    }
    state.set(f, 'visiting');
    for (const t of graph.get(f) ?? []) visit(t, [...stack, f]);
    state.set(f, 'done');
  };
  for (const f of graph.keys()) visit(f, []);
  return cycles;
}

describe('module boundaries (docs/architecture.md)', () => {
  it('every import follows an allowed arrow', () => {
    const violations: string[] = [];
    for (const f of SOURCE) {
      const from = groupOf(f);
      if (from === 'root') continue;
      for (const { target } of importsOf(f)) {
        const to = groupOf(target);
        if (to === from || ALLOWED[from]?.includes(to)) continue;
        violations.push(`${relative(ROOT, f)} (${from}) → ${relative(ROOT, target)} (${to})`);
      }
    }
    expect(violations).toEqual([]);
  });

  it('the module graph is acyclic (type-only imports aside)', () => {
    const graph = new Map(
      SOURCE.map((f) => [
        f,
        importsOf(f)
          .filter((i) => !i.typeOnly)
          .map((i) => i.target),
      ]),
    );
    expect(cyclesOf(graph)).toEqual([]);
  });

  it('no store is on an import cycle, type-only imports included (an interface never imports its implementation)', () => {
    // The store layer (src/db) and every module written on it: each store's interface and implementation.
    const layer = join(ROOT, 'src', 'db');
    const stores = new Set(
      SOURCE.filter((f) => f.startsWith(layer) || importsOf(f).some((i) => i.target.startsWith(layer))),
    );
    expect(stores.size).toBeGreaterThan(10);
    const graph = new Map(SOURCE.map((f) => [f, importsOf(f).map((i) => i.target)]));
    const through = cyclesOf(graph).filter((c) => c.some((f) => stores.has(resolve(ROOT, f))));
    expect(through).toEqual([]);
  });

  it('doors do not import each other, and nothing imports test/', () => {
    for (const f of SOURCE) {
      const text = readFileSync(f, 'utf8');
      expect(text, relative(ROOT, f)).not.toMatch(/from '(\.\.\/)+test\//);
    }
  });

  it('at most 3 places in src choose by database kind (the store layer and the state handle decide the rest)', () => {
    // Issue 20: SQLite is a cluster of one; what differs by database lives behind the store layer (Kysely), the
    // state handle and the ledger. A new `state.kind` branch is a sign that a mechanism is missing.
    const branches = SOURCE.filter((f) => relative(ROOT, f).startsWith('src/')).flatMap((f) =>
      readFileSync(f, 'utf8')
        .split('\n')
        .map((line, i) => ({ line: line.trim(), where: `${relative(ROOT, f)}:${i + 1}` }))
        .filter(({ line }) => !line.startsWith('//') && !line.startsWith('*') && /\bstate\.kind\b/.test(line))
        .map(({ where }) => where),
    );
    expect(branches.length, branches.join('\n')).toBeLessThanOrEqual(3);
  });

  it('source files stay under the 500-line limit', () => {
    const big = SOURCE.filter((f) => readFileSync(f, 'utf8').split('\n').length > 500).map((f) =>
      relative(ROOT, f),
    );
    expect(big).toEqual([]);
  });
});
