/** Where a command writes: one JSON object on stdout with --json, human text otherwise. */
export interface Out {
  json: boolean;
  /** The command's result. With --json it is the only thing printed on stdout. */
  result(obj: Record<string, unknown>, human: string): void;
  /** Notes for humans (stderr with --json, so stdout stays one object). */
  note(text: string): void;
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
  };
}

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
