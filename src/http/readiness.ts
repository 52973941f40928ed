import type { Request, Response } from 'express';
import type { Logger } from 'pino';

// GET /readyz: may this replica take traffic? 200 when its database and its file storage answer and it is not
// draining; 503 otherwise, naming the part that is not ready (never the error itself: the route is public). A
// load balancer stops sending calls on 503; /healthz stays liveness (the process answers) so a supervisor does not
// restart a replica whose database is down.

export interface ReadinessChecks {
  database(): Promise<unknown>;
  storage(): Promise<unknown>;
  /** True once shutdown began: in-flight calls finish, new ones are refused. */
  draining(): boolean;
}

const CHECK_TIMEOUT_MS = 2_000;

function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** A check's failure that was logged where it happened (a database outage: once, with its cause). */
export class AlreadyLogged extends Error {}

export function readinessRoute(checks: ReadinessChecks, log: Logger) {
  // Logged when a check changes state, not on every probe: a load balancer asks every few seconds.
  const last = new Map<string, string>();
  const probe = async (name: string, check: () => Promise<unknown>): Promise<string> => {
    let state = 'ok';
    try {
      await within(check(), CHECK_TIMEOUT_MS);
    } catch (err) {
      state = 'unavailable';
      if (last.get(name) !== state && !(err instanceof AlreadyLogged)) {
        log.warn({ err, check: name }, 'readiness: not ready');
      }
    }
    if (state === 'ok' && last.get(name) === 'unavailable')
      log.info({ check: name }, 'readiness: ready again');
    last.set(name, state);
    return state;
  };
  return async (_req: Request, res: Response): Promise<void> => {
    const [database, storage] = await Promise.all([
      probe('database', checks.database),
      probe('storage', checks.storage),
    ]);
    const draining = checks.draining();
    const ok = database === 'ok' && storage === 'ok' && !draining;
    res
      .status(ok ? 200 : 503)
      .set('Cache-Control', 'no-store')
      .json({ ok, database, storage, draining });
  };
}
