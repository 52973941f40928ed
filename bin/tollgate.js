#!/usr/bin/env node
// The operator CLI: `node bin/tollgate.js <command>` (or `tollgate` after `npm link`). It loads the build in dist/,
// made by `npm run build` (the container's build stage; `npm start` builds it when missing or stale).
import { existsSync } from 'node:fs';

const entry = new URL('../dist/src/cli/entry.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write(
    'tollgate: not built yet: run `npm run build` (after `npm install`), or `npm start`\n',
  );
  process.exit(1);
}
await import(entry.href);
