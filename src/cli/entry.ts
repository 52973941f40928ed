import { main } from './main.js';

// Process entry of the CLI (bin/tollgate.js loads the compiled copy; tests run it with tsx). `main` reports
// its own failures; a failed start may leave handles open (a half-built gateway), so failures exit at once.
main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exit(code);
  },
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
