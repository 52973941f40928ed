import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, type as osType, release, totalmem } from 'node:os';
import { join } from 'node:path';
import { buildSummary, readSections, replaceSection, sectionBlock } from './doc.js';
import type { BenchModule } from './types.js';

// `npm run bench` runs every module and writes docs/benchmarks.md; `npm run bench -- <id> …` runs only those
// and replaces their sections, leaving the others as they were. The summary at the top is built from the
// sections' own target rows (bench/doc.ts), so it always says what the sections say.

const MODULES: Record<string, () => Promise<{ default: BenchModule }>> = {
  ledger: () => import('./ledger.js'),
  'ledger-pg': () => import('./ledger-pg.js'),
  gateway: () => import('./gateway.js'),
  stages: () => import('./stages.js'),
  logging: () => import('./logging.js'),
  mcp: () => import('./mcp.js'),
  llm: () => import('./llm.js'),
  abort: () => import('./abort.js'),
  receipts: () => import('./receipts.js'),
  x402: () => import('./x402.js'),
  sessions: () => import('./sessions.js'),
  web: () => import('./web.js'),
  agents: () => import('./agents.js'),
  telemetry: () => import('./telemetry.js'),
  soak: () => import('./soak.js'),
  stores: () => import('./stores.js'),
  replicas: () => import('./replicas.js'),
};

const DOC = join(import.meta.dirname, '..', 'docs', 'benchmarks.md');

function machine(): string {
  const c = cpus();
  return [
    `- Machine: ${c.length} × ${c[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM, ${osType()} ${release()}`,
    `- Node ${process.version}; measured ${new Date().toISOString().slice(0, 10)}`,
    '- Load generator, gateway and fake upstreams share the machine (loopback), so figures include their contention.',
  ].join('\n');
}

async function main() {
  // Benches that start `tollgate serve` run the compiled gateway (as production does): build it first.
  const build = spawnSync(
    process.execPath,
    [
      join(import.meta.dirname, '..', 'node_modules', 'typescript', 'bin', 'tsc'),
      '-p',
      'tsconfig.build.json',
    ],
    {
      cwd: join(import.meta.dirname, '..'),
      stdio: 'inherit',
    },
  );
  if (build.status !== 0) throw new Error('build failed');
  const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  const ids = wanted.length > 0 ? wanted : Object.keys(MODULES);
  for (const id of ids) {
    if (!MODULES[id]) throw new Error(`unknown bench ${id}; known: ${Object.keys(MODULES).join(', ')}`);
  }
  let doc: string;
  try {
    doc = readFileSync(DOC, 'utf8');
  } catch {
    doc =
      '# Benchmarks\n\nWritten by `npm run bench`. Targets are from the issues; figures are from the run below.\n';
  }
  const date = new Date().toISOString().slice(0, 10);
  doc = replaceSection(doc, 'machine', `## Machine\n\n${machine()}`);
  for (const id of ids) {
    process.stderr.write(`bench ${id}…\n`);
    const sections = [
      await (await (MODULES[id] as () => Promise<{ default: BenchModule }>)()).default(),
    ].flat();
    for (const section of sections) doc = replaceSection(doc, section.id, sectionBlock(section, date));
    doc = replaceSection(doc, 'summary', buildSummary(readSections(doc)));
    writeFileSync(DOC, doc);
  }
  process.stderr.write(`wrote ${DOC}\n`);
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
