import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import { DataDirInUseError } from '../lib/instance-lock.js';
import { createGateway, type Gateway } from '../main.js';
import { databaseError, noteDatabase } from './database.js';
import { bootstrapOperator, deliverOperatorKey } from './first-start.js';
import { CliError, type Out } from './output.js';
import { checkBind, listening } from './start-checks.js';
import { isWorker, onBootstrap, runPrimary, tellPrimary, workerCount } from './workers.js';

// `tollgate serve`: start the gateway; on the first start create the operator account and hand its key to the
// person (src/cli/first-start.ts). Everything serve says goes through the log: JSON lines on stdout.

export async function serve(
  config: Config,
  out: Out,
  envFile: string | undefined,
  log: Logger,
  workersFlag?: string,
): Promise<number> {
  if (isWorker()) return serveAsWorker(config, log);
  const workers = workerCount(config, workersFlag);
  if (workers > 1) return runPrimary(config, out, workers, envFile, log);
  const stop = signals();
  const { gw, url } = await start(checkBind(config, log), log);
  // Only now, with the port bound, is the operator account created: its key is shown once and never stored,
  // so a start that fails (a busy port) must not use up the "first start" that shows it.
  const bootstrap = await bootstrapOperator(gw.ledger, gw.money, config);
  const operator = bootstrap ? deliverOperatorKey(bootstrap, config.dataDir, log) : null;
  const fields = listening(log, config, url, 1, envFile);
  if (out.json) out.result({ ...fields, operator }, '');
  await stop.until(gw);
  return 0;
}

async function start(config: Config, log: Logger): Promise<{ gw: Gateway; url: string }> {
  let gw: Gateway;
  try {
    gw = await createGateway(config, { log });
  } catch (e) {
    throw startupError(databaseError(e, config), config);
  }
  try {
    noteDatabase(config);
    return { gw, url: await gw.listen() };
  } catch (e) {
    await gw.close();
    throw startupError(e, config);
  }
}

/** A worker of `serve --workers N`: the primary reports; worker 1 creates the operator account when told. */
async function serveAsWorker(config: Config, log: Logger): Promise<number> {
  const stop = signals();
  let started: { gw: Gateway; url: string };
  try {
    started = await start(checkBind(config, log), log);
  } catch (e) {
    const error =
      e instanceof CliError
        ? { code: e.code, message: e.message }
        : { code: 'start_failed', message: String(e) };
    tellPrimary({ tollgate: 'failed', error });
    return 1;
  }
  const { gw, url } = started;
  onBootstrap(async () => {
    const b = await bootstrapOperator(gw.ledger, gw.money, config);
    // The key travels to the primary over the IPC channel (never a log line); the primary delivers it.
    return {
      tollgate: 'bootstrapped',
      operator: b ? { account_id: b.accountId, api_key: b.key, credit: b.credit } : null,
    };
  });
  tellPrimary({ tollgate: 'listening', url });
  await stop.until(gw);
  // The channel to the primary would keep this process alive once the gateway has closed.
  process.disconnect?.();
  return 0;
}

/**
 * Listens for SIGINT/SIGTERM from the start (a signal while the gateway is still starting must not kill it
 * half-built, with its lease or lock held); `until(gw)` then closes gracefully once one came (in-flight calls
 * finish and resolve their holds).
 */
function signals(): { until(gw: Gateway): Promise<void> } {
  const signalled = new Promise<string>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
  return {
    async until(gw) {
      const signal = await signalled;
      gw.log.info({ signal }, 'shutting down: finishing in-flight calls');
      await gw.close().catch((err: unknown) => gw.log.error({ err }, 'shutdown failed'));
    },
  };
}

/** Start-up failures an operator fixes by configuration, as one line instead of a stack trace. */
function startupError(e: unknown, config: Config): unknown {
  if (e instanceof CliError) return e;
  if (e instanceof DataDirInUseError) {
    return new CliError('data_dir_in_use', e.message, 1, { data_dir: e.dataDir, pid: e.pid });
  }
  const { host, port } = config;
  const details = { host, port };
  switch ((e as NodeJS.ErrnoException | undefined)?.code) {
    case 'EADDRINUSE':
      return new CliError(
        'port_in_use',
        `port ${port} on ${host} is already in use (another tollgate?); stop that process or set TOLLGATE_PORT to a free port`,
        1,
        details,
      );
    case 'EACCES':
      return new CliError(
        'port_not_allowed',
        `not allowed to listen on port ${port} (ports below 1024 need privileges); set TOLLGATE_PORT to a higher port`,
        1,
        details,
      );
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new CliError(
        'host_not_local',
        `cannot listen on TOLLGATE_HOST=${host}: not an address of this machine`,
        1,
        details,
      );
    default:
      return e;
  }
}
