// Vitest set-up (every test worker): the test output carries no warning known to be harmless on the Node the
// tests run on (docs/operator.md "Node version"). Filtered here, in the tests only; in production `serve` logs
// them as JSON lines (src/log.ts). Exactly these two, matched by their opening words; anything else is shown.
//   - oidc-provider prints "Unsupported runtime" once per process that imports it, on Node 20.
//   - the AWS SDK emits a NodeVersionSupportWarning once per process that makes an S3 client, on Node 20.

// biome-ignore lint/suspicious/noControlCharactersInRegex: the warning may start with a terminal colour code
const HARMLESS_CONSOLE = /^(\u001b\[[0-9;]*m)?oidc-provider WARNING: Unsupported runtime\b/;
const HARMLESS_WARNING = /^NodeVersionSupportWarning\b/;

const warn = console.warn.bind(console);
console.warn = (...args: unknown[]) => {
  if (typeof args[0] === 'string' && HARMLESS_CONSOLE.test(args[0])) return;
  warn(...args);
};

const emitWarning = process.emitWarning.bind(process) as (...args: unknown[]) => void;
process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
  const text = typeof warning === 'string' ? warning : warning.message;
  if (HARMLESS_WARNING.test(text)) return;
  emitWarning(warning, ...rest);
}) as typeof process.emitWarning;
