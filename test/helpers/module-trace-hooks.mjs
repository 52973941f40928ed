import { appendFileSync } from 'node:fs';

// The hooks of ./module-trace.mjs (they run on the loader's own thread).

let file;

export function initialize(data) {
  file = data.file;
}

export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  if (file) appendFileSync(file, `${r.url}\n`);
  return r;
}
