#!/usr/bin/env node
// `npm start` from a checkout: build dist/ when it is missing or older than the sources, else start at once.
// There is no `prepare` script (it would run tsc during `npm ci --omit=dev`, where TypeScript is not installed):
// the container builds in its build stage (`npm run build`), and this covers `npm install && npm start` and a
// `git pull && npm start`. Without TypeScript (a slim install) a stale build is used as it is, with a warning.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const SOURCES = ['src', 'catalog', 'tools', 'auth'];

function* tsFiles(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* tsFiles(p);
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) yield p;
  }
}

/** The first source whose compiled file is missing or older than it, if any. */
function staleSource() {
  for (const d of SOURCES) {
    for (const src of tsFiles(join(ROOT, d))) {
      const out = join(ROOT, 'dist', relative(ROOT, src)).replace(/\.ts$/, '.js');
      if (!existsSync(out) || statSync(out).mtimeMs < statSync(src).mtimeMs) return relative(ROOT, src);
    }
  }
  return undefined;
}

const stale = staleSource();
if (stale === undefined) process.exit(0);
let tsc;
try {
  tsc = createRequire(join(ROOT, 'package.json')).resolve('typescript/bin/tsc');
} catch {
  if (existsSync(join(ROOT, 'dist', 'src', 'cli', 'entry.js'))) {
    process.stderr.write(
      `tollgate: dist/ is older than ${stale} and TypeScript is not installed; starting the existing build\n`,
    );
    process.exit(0);
  }
  process.stderr.write(
    'tollgate: not built, and TypeScript is not installed: run `npm install`, then `npm run build`\n',
  );
  process.exit(1);
}
process.stderr.write(
  `tollgate: building dist/ (${existsSync(join(ROOT, 'dist')) ? `${stale} changed` : 'first start'})…\n`,
);
const r = spawnSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json')], { stdio: 'inherit' });
process.exit(r.status ?? 1);
