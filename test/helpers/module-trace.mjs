// Records every module the process resolves (ESM, and the CommonJS packages ESM imports), one URL a line, into
// the file named by MODULE_TRACE_FILE: `node --import ./module-trace.mjs …`. Used by
// test/integration/lazy-modules.test.ts to see which packages a gateway has loaded.
import { register } from 'node:module';
import { isMainThread } from 'node:worker_threads';

if (process.env.MODULE_TRACE_FILE && isMainThread) {
  register('./module-trace-hooks.mjs', import.meta.url, { data: { file: process.env.MODULE_TRACE_FILE } });
}
