import { randomBytes } from 'node:crypto';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Express } from 'express';
import type { Logger } from 'pino';
import type { StateDb } from '../backend.js';
import type { Config } from '../config/index.js';
import { operatorRoutes } from '../http/operator-routes.js';
import type { LedgerReads } from '../ledger/types.js';
import type { Lifecycle } from '../run/lifecycle.js';

// A SQLite gateway keeps its holds in its own memory (src/ledger/sqlite/reservations.ts): another process that
// writes the database (the CLI) cannot see them, so a debit made there could take money a call in flight needs.
// While it runs, such a gateway therefore says where it listens, with a token made at start, in
// <data dir>/operator-endpoint.json (mode 0600: whoever may read it may write the database anyway), and the CLI
// sends `adjust` and `refund` to its operator endpoints instead (src/cli/operator.ts). On PostgreSQL holds are rows
// every process sees: nothing is written and the CLI writes the ledger itself.

export const ENDPOINT_FILE = 'operator-endpoint.json';

export interface LocalGateway {
  url: string;
  pid: number;
  token: string;
}

export interface OperatorDoor {
  mount(app: Express): void;
  /** The gateway listens at `url`: a SQLite gateway says so in its data dir. */
  listening(url: string): void;
  close(): void;
}

/** The operator's endpoints of a gateway (src/http/operator-routes.ts), with the local token on SQLite. */
export function operatorDoor(opts: {
  config: Config;
  state: StateDb;
  ledger: LedgerReads;
  money: Lifecycle;
  log: Logger;
}): OperatorDoor {
  const dataDir = opts.config.dataDir;
  const local = opts.state.kind === 'sqlite' ? randomBytes(32).toString('base64url') : undefined;
  const tokens = [opts.config.env.TOLLGATE_ADMIN_TOKEN, local].filter((t): t is string => t !== undefined);
  const router = operatorRoutes({ ledger: opts.ledger, money: opts.money, tokens, log: opts.log });
  let announced = false;
  return {
    mount: (app) => void app.use(router),
    listening(url) {
      if (local === undefined) return;
      const file = join(dataDir, ENDPOINT_FILE);
      const text = JSON.stringify({
        url: loopback(url),
        pid: process.pid,
        token: local,
      } satisfies LocalGateway);
      // Written aside and renamed: a reader never sees half a file; the mode applies to the new file.
      writeFileSync(`${file}.${process.pid}`, `${text}\n`, { mode: 0o600 });
      renameSync(`${file}.${process.pid}`, file);
      announced = true;
    },
    close() {
      if (!announced) return;
      announced = false;
      if (findLocalGateway(dataDir, () => true)?.pid === process.pid)
        rmSync(join(dataDir, ENDPOINT_FILE), { force: true });
    },
  };
}

/** A gateway bound to every address is reached on loopback. */
function loopback(url: string): string {
  return url.replace('//0.0.0.0:', '//127.0.0.1:').replace('//[::]:', '//[::1]:');
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

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
