import { randomBytes } from 'node:crypto';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Express } from 'express';
import type { Logger } from 'pino';
import { operatorMoveLog } from '../account/audit.js';
import type { StateDb } from '../backend.js';
import { ENDPOINT_FILE, findLocalGateway, type LocalGateway } from '../cli/local-gateway.js';
import type { Config } from '../config/index.js';
import { operatorRoutes } from '../http/operator-routes.js';
import type { LedgerReads } from '../ledger/types.js';
import type { Lifecycle } from '../run/lifecycle.js';

// The operator's refunds and adjustments over HTTP (src/http/operator-routes.ts; docs/operator.md "Refunds and
// adjustments"), mounted by the doors' step (./doors.ts). A SQLite gateway keeps its holds in memory, so the CLI
// beside it sends `refund` and `adjust` here: once it listens it writes <data dir>/operator-endpoint.json (its
// loopback URL, pid and a token made at this start; src/cli/local-gateway.ts reads it) and removes it on close.

export interface OperatorDoor {
  mount(app: Express): void;
  /** The gateway listens at `url`: a SQLite gateway says so in its data dir. */
  listening(url: string): void;
  close(): void;
}

/** The operator's endpoints of a gateway, with the local token on SQLite. */
export function operatorDoor(opts: {
  config: Config;
  state: StateDb;
  ledger: LedgerReads;
  money: Lifecycle;
  log: Logger;
}): OperatorDoor {
  const { config, state, ledger, money, log } = opts;
  const dataDir = config.dataDir;
  const local = state.kind === 'sqlite' ? randomBytes(32).toString('base64url') : undefined;
  const tokens = [config.env.TOLLGATE_ADMIN_TOKEN, local].filter((t): t is string => t !== undefined);
  const audit = operatorMoveLog(state, (err, movement) =>
    log.error({ err, movement }, 'operator move not recorded on the event log'),
  );
  const router = operatorRoutes({ ledger, money, audit, tokens, log });
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
