import { createApiKey } from '../../auth/api-keys.js';
import type { Config } from '../config/index.js';
import type { LedgerRecords } from '../ledger/types.js';
import { DataDirInUseError } from '../lib/instance-lock.js';
import { formatUsd, parseUsdToMicros } from '../lib/money.js';
import { createGateway, type Gateway } from '../main.js';
import type { Lifecycle } from '../run/lifecycle.js';
import { CliError, type Out } from './output.js';
import { isWorker, onBootstrap, runPrimary, tellPrimary, workerCount } from './workers.js';

// `tollgate serve`: start the gateway, and on the first start create the operator account and print its key.

export async function serve(
  config: Config,
  out: Out,
  envFile: string | undefined,
  workersFlag?: string,
): Promise<number> {
  if (isWorker()) return serveAsWorker(config);
  const workers = workerCount(config, workersFlag);
  if (workers > 1) return runPrimary(config, out, workers, envFile);
  const stop = signals();
  const { gw, url } = await start(config);
  // Only now, with the port bound, is the operator account created: its key is printed once and never
  // stored, so a start that fails (a busy port) must not use up the "first start" that shows it.
  const bootstrap = await bootstrapOperator(gw.ledger, gw.money, config);
  if (bootstrap) {
    out.note(
      `First start: created operator account ${bootstrap.accountId} with ${bootstrap.credit}.\n` +
        `API key (shown once, store it now): ${bootstrap.key}`,
    );
  }
  out.result(
    {
      url,
      public_url: config.publicUrl,
      data_dir: config.dataDir,
      env_file: envFile ?? null,
      workers: 1,
      operator: bootstrap ? { account_id: bootstrap.accountId, api_key: bootstrap.key } : null,
    },
    `tollgate listening on ${url} (${config.database ? 'state: PostgreSQL' : `data: ${config.dataDir}`}${envFile ? `; settings from ${envFile}` : ''})`,
  );
  await stop.until(gw);
  return 0;
}

async function start(config: Config): Promise<{ gw: Gateway; url: string }> {
  let gw: Gateway;
  try {
    gw = await createGateway(config);
  } catch (e) {
    throw startupError(e, config);
  }
  try {
    return { gw, url: await gw.listen() };
  } catch (e) {
    await gw.close();
    throw startupError(e, config);
  }
}

/** A worker of `serve --workers N`: the primary prints; worker 1 creates the operator account when told. */
async function serveAsWorker(config: Config): Promise<number> {
  const stop = signals();
  let started: { gw: Gateway; url: string };
  try {
    started = await start(config);
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

const OPERATOR_ACCOUNT = 'acct_operator';

/** The first `serve` on an empty database creates an operator account and prints its key once. */
async function bootstrapOperator(ledger: LedgerRecords, money: Lifecycle, config: Config) {
  if ((await ledger.listAccounts('customer')).length > 0) return undefined;
  // One id for the first start's account: replicas starting together on an empty PostgreSQL race here, and
  // the unique id lets exactly one of them create (and print) it.
  let acct: Awaited<ReturnType<LedgerRecords['createAccount']>>;
  try {
    acct = await ledger.createAccount({ name: 'operator', id: OPERATOR_ACCOUNT });
  } catch (err) {
    if (await ledger.getAccount(OPERATOR_ACCOUNT)) return undefined;
    throw err;
  }
  const micros = parseUsdToMicros(config.operatorCreditUsd);
  if (micros > 0) await money.credit(acct.id, micros, 'operator', 'operator bootstrap credit');
  const { key } = await createApiKey(ledger, acct.id, 'operator');
  return { accountId: acct.id, key, credit: formatUsd(micros) };
}

/** Start-up failures an operator fixes by configuration, as one line instead of a stack trace. */
function startupError(e: unknown, config: Config): unknown {
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
