#!/usr/bin/env node
// `npm ci` refuses a lock file that lacks an entry for any optional dependency of a locked package, even a
// build for another platform. The registry this project is built against lacks some platforms' builds (biome's
// darwin/win32/musl binaries, anvil's non-linux-x64 ones), so npm leaves them out of the lock and a clean clone
// fails `npm ci` (docs/decisions.md, "Build and install"). This adds each missing one as npm would have written
// it, with the os/cpu/libc its name declares and no integrity (npm checks the tarball's on the platform that
// installs it). npm keeps such entries on later installs. Run it after changing dependencies:
//
//   node scripts/complete-lock.mjs
//
// test/contract/lockfile.test.ts fails until the lock is complete.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const LOCK = join(import.meta.dirname, '..', 'package-lock.json');
const PLATFORM =
  /-(android|darwin|freebsd|linux|openbsd|win32)-(arm64|arm|ia32|x64|amd64)(-(musl|gnu|msvc))?$/;

const lock = JSON.parse(readFileSync(LOCK, 'utf8'));
const packages = lock.packages;
const added = [];
const unknown = [];

/** Where npm would find `dep` from the package at `path`: its own node_modules, then each parent's. */
function resolves(path, dep) {
  for (let dir = path; ; dir = dir.slice(0, Math.max(0, dir.lastIndexOf('/node_modules/')))) {
    if (packages[`${dir ? `${dir}/` : ''}node_modules/${dep}`]) return true;
    if (!dir) return false;
  }
}

for (const [path, pkg] of Object.entries({ ...packages })) {
  for (const [dep, version] of Object.entries(pkg.optionalDependencies ?? {})) {
    if (resolves(path, dep)) continue;
    const m = PLATFORM.exec(dep);
    if (!m || !/^\d+\.\d+\.\d+$/.test(version)) {
      unknown.push(`${dep}@${version} (of ${path || 'the project'})`);
      continue;
    }
    const [, os, arch, , libc] = m;
    const entry = { version, cpu: [arch === 'amd64' ? 'x64' : arch] };
    if (pkg.dev) entry.dev = true;
    if (os === 'linux') entry.libc = [libc === 'musl' ? 'musl' : 'glibc'];
    entry.optional = true;
    entry.os = [os];
    packages[`node_modules/${dep}`] = entry;
    added.push(`${dep}@${version}`);
  }
}

if (unknown.length > 0) {
  console.error(
    `Not a platform build (add these to the lock by hand, or install them):\n  ${unknown.join('\n  ')}`,
  );
  process.exitCode = 1;
}
if (added.length > 0) {
  // npm's own order, so that its next write leaves the file as it is.
  lock.packages = Object.fromEntries(
    Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b, 'en'))),
  );
  writeFileSync(LOCK, `${JSON.stringify(lock, null, 2)}\n`);
}
console.log(added.length > 0 ? `added to the lock:\n  ${added.join('\n  ')}` : 'the lock is complete');
