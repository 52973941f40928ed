import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive } from '../lib/instance-lock.js';

// A SQLite gateway keeps its holds in its own memory (src/ledger/sqlite/reservations.ts): another process that
// writes the database (the CLI) cannot see them, so a debit made there could take money a call in flight needs.
// While it runs, such a gateway therefore says where it listens, with a token made at start, in
// <data dir>/operator-endpoint.json (mode 0600: whoever may read it may write the database anyway), and the CLI
// sends `adjust` and `refund` to its operator endpoints instead (src/cli/operator.ts). On PostgreSQL holds are rows
// every process sees: nothing is written and the CLI writes the ledger itself. The gateway's side, which writes the
// file, is src/gateway/operator.ts; this is the file's format and the CLI's side, which reads it.

export const ENDPOINT_FILE = 'operator-endpoint.json';

export interface LocalGateway {
  url: string;
  pid: number;
  token: string;
}

/** The gateway running on this SQLite data dir, as it announced itself; undefined if none (or it died). */
export function findLocalGateway(
  dataDir: string,
  alive: (pid: number) => boolean = isAlive,
): LocalGateway | undefined {
  let v: Partial<LocalGateway>;
  try {
    v = JSON.parse(readFileSync(join(dataDir, ENDPOINT_FILE), 'utf8')) as Partial<LocalGateway>;
  } catch {
    return undefined;
  }
  if (typeof v.url !== 'string' || typeof v.token !== 'string' || typeof v.pid !== 'number') return undefined;
  return alive(v.pid) ? (v as LocalGateway) : undefined;
}

/** The pid of the gateway holding the data dir's lock (src/lib/instance-lock.ts), if it is alive. */
export function lockHolder(dataDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(dataDir, 'gateway.lock'), 'utf8'));
    return Number.isInteger(pid) && pid > 0 && isAlive(pid) ? pid : undefined;
  } catch {
    return undefined;
  }
}
