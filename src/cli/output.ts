/** Where a command writes: one JSON object on stdout with --json, human text otherwise. */
export interface Out {
  json: boolean;
  /** The command's result. With --json it is the only thing printed on stdout. */
  result(obj: Record<string, unknown>, human: string): void;
  /** Notes for humans (stderr with --json, so stdout stays one object). */
  note(text: string): void;
  /** Said on stderr in either form: which database a command used, and such. */
  info(text: string): void;
  /**
   * Reports a failure and returns the exit code. With --json the failure is the one object on stdout,
   * `{ ok: false, error: { code, message, … } }`, so scripts read errors where they read results.
   */
  fail(e: unknown): number;
}

export function createOut(json: boolean): Out {
  return {
    json,
    result(obj, human) {
      process.stdout.write(json ? `${JSON.stringify(obj)}\n` : `${human}\n`);
    },
    note(text) {
      (json ? process.stderr : process.stdout).write(`${text}\n`);
    },
    info(text) {
      process.stderr.write(`tollgate: ${text}\n`);
    },
    fail(e) {
      const err = e instanceof CliError ? e : undefined;
      const code = err?.code ?? 'internal';
      const message = e instanceof Error ? e.message : String(e);
      if (json) {
        process.stdout.write(`${JSON.stringify({ ok: false, error: { code, message, ...err?.details } })}\n`);
      } else {
        process.stderr.write(`tollgate: ${message}\n`);
        // The one usage line that applies, not the whole help.
        if (err instanceof UsageError && err.usage) {
          process.stderr.write(`usage: ${err.usage}\n(node bin/tollgate.js --help lists every command)\n`);
        }
      }
      // A bug, not a refusal: its stack helps the report (stderr, so a --json stdout stays one object).
      if (!err && e instanceof Error && e.stack) process.stderr.write(`${e.stack}\n`);
      return err?.exitCode ?? 1;
    },
  };
}

/** A refusal the operator can act on: one line (or the listed problems), never a stack trace. */
export class CliError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly exitCode = 1,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** The command line itself is wrong: exit 2; the human form adds the usage line of the command meant. */
export class UsageError extends CliError {
  constructor(
    message: string,
    readonly usage?: string,
  ) {
    super('usage', message, 2);
    this.name = 'UsageError';
  }
}

/** The account, key or app named does not exist in this database (exit 2, as a wrong argument). */
export class NotFoundError extends CliError {
  constructor(message: string) {
    super('not_found', message, 2);
    this.name = 'NotFoundError';
  }
}

export interface Column {
  header: string;
  /** Right-aligned (amounts). */
  right?: boolean;
}

/** A text table: a header row, then the rows, each column as wide as its widest cell. */
export function table(columns: Array<string | Column>, rows: Array<Array<string | number | null>>): string {
  const cols = columns.map((c) => (typeof c === 'string' ? { header: c } : c));
  const cells = rows.map((r) => cols.map((_, i) => String(r[i] ?? '')));
  const widths = cols.map((c, i) => Math.max(c.header.length, ...cells.map((r) => (r[i] as string).length)));
  const line = (r: string[]) =>
    r
      .map((cell, i) => {
        const w = widths[i] as number;
        if (i === r.length - 1 && !cols[i]?.right) return cell;
        return cols[i]?.right ? cell.padStart(w) : cell.padEnd(w);
      })
      .join('  ')
      .trimEnd();
  return [line(cols.map((c) => c.header)), ...cells.map(line)].join('\n');
}
