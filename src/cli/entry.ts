import { main } from './main.js';

// Process entry of the CLI (bin/tollgate.js loads the compiled copy; tests run it with tsx).
main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
