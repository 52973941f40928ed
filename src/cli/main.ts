import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { OAuthGrants } from '../../auth/oauth/grants.js';
import { openOAuthStore } from '../../auth/oauth/store.js';
import { operatorMoveLog } from '../account/audit.js';
import type { StateDb } from '../backend.js';
import { type Config, ConfigError, loadConfig } from '../config/index.js';
import { DB_FILE, openStateLedger } from '../ledger/index.js';
import type { LedgerRecords } from '../ledger/types.js';
import { systemClock } from '../lib/clock.js';
import { formatUsd } from '../lib/money.js';
import { createLogger, routeProcessOutput } from '../log.js';
import { accountHistory, describeTransaction } from '../run/account-view.js';
import { Lifecycle } from '../run/lifecycle.js';
import { generateReceiptKey } from '../run/receipts.js';
import * as cmd from './accounts.js';
import { catalogCommand } from './catalog.js';
import { chooseDatabase, databaseError, describeDatabase, noDatabase } from './database.js';
import * as keys from './keys.js';
import { members } from './members.js';
import { operatorCommand } from './operator.js';
import { CliError, createOut, NotFoundError, type Out, table, UsageError } from './output.js';
import { openState } from './state.js';
import { checkCommand, USAGE, usageOf } from './usage.js';

export async function main(argv: string[]): Promise<number> {
  // Known before parsing, so that even a malformed command line fails in the form the caller asked for.
  const out = createOut(argv.includes('--json'));
  try {
    return await run(argv, out);
  } catch (e) {
    return out.fail(e);
  }
}

async function run(argv: string[], out: Out): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (e) {
    // node:util's own wording names the option; the line to use is that of the command, when one is recognisable.
    const first = argv.find((a) => !a.startsWith('-'));
    throw new UsageError(
      (e as Error).message.replace(/\. To specify a positional.*$/s, ''),
      usageOf(first ?? ''),
    );
  }
  const { values, positionals } = parsed;
  const [command, sub, ...rest] = positionals;
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  checkCommand(command, sub);
  const envFile = loadEnvFile();
  let config: Config;
  try {
    config = loadConfig();
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    const from = envFile ? ` (environment and ${envFile})` : '';
    const list = e.problems.map((p) => `  - ${p}`).join('\n');
    throw new CliError('config', `invalid configuration${from}:\n${list}`, 1, { problems: e.problems });
  }
  if (command === 'catalog') {
    catalogCommand(config, out);
    return 0;
  }
  if (command === 'receipt-key') {
    // A secret: printed once for the operator to store, never logged.
    const jwk = generateReceiptKey();
    out.result({ receipt_signing_key: jwk }, jwk);
    return 0;
  }
  // Loaded only for these two: the whole gateway (browser, chain, OAuth and MCP libraries) is not needed by the
  // other commands, which then start in a third of the time.
  if (command === 'server-json') {
    const { serverJson } = await import('./server-json.js');
    process.stdout.write(serverJson(config, values.template === true, (w) => out.info(`warning: ${w}`)));
    return 0;
  }
  config = chooseDatabase(config, values.database);
  if (command === 'serve') {
    // One log format: what libraries print while the gateway loads and runs becomes log lines too.
    const log = createLogger(config.logLevel);
    routeProcessOutput(log);
    const { serve } = await import('./serve.js');
    return serve(config, out, envFile, log, values.workers);
  }
  if (command === 'migrate') return migrateCommand(config, out);
  // Moving the whole state between databases (src/cli/transfer): loaded only for these.
  if (command === 'export')
    return (await import('./transfer/export.js')).exportCommand(config, out, values.out);
  if (command === 'import') {
    if (!sub) throw new UsageError('missing <file>', usageOf('import'));
    return (await import('./transfer/import.js')).importCommand(config, out, sub);
  }

  // Every other command works on the gateway's existing database; only `accounts create` may start one. A
  // command run from the wrong directory would otherwise find an empty new database and answer "no account".
  // With PostgreSQL the database is the one TOLLGATE_DATABASE_URL names (migrated first, as serve does).
  const dbPath = config.database
    ? 'the PostgreSQL database of TOLLGATE_DATABASE_URL'
    : join(config.dataDir, DB_FILE);
  const creates = command === 'accounts' && sub === 'create';
  if (!config.database && !existsSync(dbPath)) {
    if (!creates) throw noDatabase(config.dataDir);
    out.note(`Creating a new database in ${config.dataDir}.`);
  }
  let opened: Awaited<ReturnType<typeof openState>>;
  try {
    opened = await openState(config, { poolMax: 2 });
  } catch (e) {
    throw databaseError(e, config);
  }
  const ledger = await openStateLedger(opened.state, {
    clock: systemClock,
    idempotencyTtlMs: config.idempotencyTtlMs,
  });
  // Credits go through the one money lifecycle, as the server's do (its log is not the CLI's output).
  const money = new Lifecycle({
    ledger,
    clock: systemClock,
    log: createLogger('silent'),
    holdTtlMs: config.holdTtlMs,
  });
  try {
    if (command === 'oauth') {
      await oauth(new OAuthGrants(openOAuthStore(opened.state)), ledger, out, sub, rest);
    } else if (command === 'members') {
      await members(opened.state, ledger, config.publicUrl, out, sub, rest, values);
    } else if (command === 'refund' || command === 'adjust') {
      const audit = operatorMoveLog(opened.state, (err, movement) =>
        out.info(`${movement} was made but not recorded on the account's event log: ${String(err)}`),
      );
      await operatorCommand({ config, ledger, money, out, audit }, command, sub, rest, values);
    } else await dispatch(opened.state, ledger, money, out, command as string, sub, rest, values);
    // Which database answered (a refusal names it in its own words).
    out.info(`database: ${describeDatabase(config)}`);
    return 0;
  } catch (e) {
    // Name the database: "no account" from the wrong data directory is the mistake this catches.
    if (e instanceof NotFoundError) throw new NotFoundError(`${e.message} in ${dbPath}`);
    throw e;
  } finally {
    await ledger.close();
    await opened.close();
  }
}

/**
 * `tollgate migrate`: the store layer's versioned migrations (and PostgreSQL's ledger), under the lock every
 * starting replica also takes. `serve` runs the same at start.
 */
async function migrateCommand(config: Config, out: Out): Promise<number> {
  if (!config.database && !existsSync(join(config.dataDir, DB_FILE))) throw noDatabase(config.dataDir);
  const backend = config.database ? 'postgres' : 'sqlite';
  let opened: Awaited<ReturnType<typeof openState>>;
  try {
    opened = await openState(config, { poolMax: 1 });
  } catch (e) {
    const refused = databaseError(e, config);
    if (refused !== e) throw refused;
    throw new CliError('migrate_failed', `migrations failed: ${(e as Error).message}`, 1);
  }
  const r = opened.migrated;
  await opened.close();
  out.result(
    { backend, applied: r.applied, current: r.current },
    r.applied.length === 0
      ? `schema already at version ${r.current}`
      : `applied ${r.applied.map((m) => `${m.version} ${m.name}`).join(', ')}; now at version ${r.current}`,
  );
  return 0;
}

/** `.env` of the current directory, through Node's own loader; variables already set in the environment win. */
function loadEnvFile(): string | undefined {
  const path = resolve('.env');
  try {
    process.loadEnvFile(path);
    return path;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CliError('config', `cannot read ${path}: ${(e as Error).message}`);
  }
}

/** A negative amount (`adjust alice -1.50`) is an argument, not an option: marked while parsing. */
const NEGATIVE = /^-\d/;
const MARK = '\u0000';

function parse(argv: string[]) {
  const unmark = (v: string) => (v.startsWith(MARK) ? v.slice(1) : v);
  const r = parseArgs({
    args: argv.map((a) => (NEGATIVE.test(a) ? MARK + a : a)),
    allowPositionals: true,
    options: {
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
      name: { type: 'string' },
      role: { type: 'string' },
      'credit-usd': { type: 'string' },
      'max-call-usd': { type: 'string' },
      'daily-limit-usd': { type: 'string' },
      'monthly-limit-usd': { type: 'string' },
      actions: { type: 'string' },
      limit: { type: 'string' },
      template: { type: 'boolean' },
      workers: { type: 'string' },
      database: { type: 'string' },
      out: { type: 'string' },
      usd: { type: 'string' },
      reason: { type: 'string' },
      'idempotency-key': { type: 'string' },
    },
  });
  for (const [k, v] of Object.entries(r.values))
    if (typeof v === 'string') Object.assign(r.values, { [k]: unmark(v) });
  return { values: r.values, positionals: r.positionals.map(unmark) };
}

type Values = ReturnType<typeof parse>['values'];

async function dispatch(
  state: StateDb,
  ledger: LedgerRecords,
  money: Lifecycle,
  out: Out,
  command: string,
  sub: string | undefined,
  rest: string[],
  values: Values,
): Promise<void> {
  // A missing argument: said with the one usage line of the command meant.
  const need = (v: string | undefined, what: string, s?: string): string => {
    if (!v) throw new UsageError(`missing ${what}`, usageOf(command, s));
    return v;
  };
  const limits = {
    maxCallUsd: values['max-call-usd'],
    dailyLimitUsd: values['daily-limit-usd'],
    monthlyLimitUsd: values['monthly-limit-usd'],
    actions: values.actions,
  };
  switch (command) {
    case 'accounts':
      if (sub === 'list') return cmd.accountsList(ledger, out);
      return cmd.accountsCreate(ledger, money, out, { name: values.name, creditUsd: values['credit-usd'] });
    case 'keys':
      if (sub === 'create')
        return keys.keysCreate(ledger, out, need(rest[0], '<account>', sub), {
          name: values.name,
          ...limits,
        });
      if (sub === 'list') return keys.keysList(ledger, out, rest[0]);
      if (sub === 'limit') return keys.keysLimit(ledger, state, out, need(rest[0], '<key_id>', sub), limits);
      return keys.keysRevoke(ledger, out, need(rest[0], '<key_id>', sub));
    case 'credit':
      return cmd.credit(ledger, money, out, need(sub, '<account>'), need(rest[0], '<usd>'));
    case 'balance':
      return cmd.balance(ledger, out, need(sub, '<account>'));
    case 'tx':
      return tx(ledger, out, need(sub, '<account>'), values.limit);
    default:
      throw new UsageError(`unknown command ${command}`);
  }
}

async function tx(ledger: LedgerRecords, out: Out, account: string, limitFlag: string | undefined) {
  const limit = limitFlag === undefined ? 20 : Number(limitFlag);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
    throw new UsageError('--limit must be 1-1000', usageOf('tx'));
  const acct = await cmd.findAccount(ledger, account);
  const txs = await accountHistory(ledger, acct.id, limit);
  out.result(
    { account_id: acct.id, transactions: txs },
    txs.length === 0
      ? `no transactions for ${cmd.accountLabel(acct)}`
      : table(
          ['WHEN (UTC)', 'TRANSACTION', 'WHAT', 'STATUS', { header: 'AMOUNT', right: true }, 'ERROR'],
          txs.map((t) => [
            cmd.minute(t.created_at),
            t.id,
            describeTransaction(t),
            t.status === 'succeeded' && t.refunded_cents > 0 ? 'partly refunded' : t.status,
            formatUsd(t.amount_micros),
            t.error_code ?? '',
          ]),
        ),
  );
}

async function oauth(
  grants: OAuthGrants,
  ledger: LedgerRecords,
  out: Out,
  sub: string | undefined,
  rest: string[],
) {
  if (!rest[0]) throw new UsageError('missing <account>', usageOf('oauth', sub));
  const acct = await cmd.findAccount(ledger, rest[0]);
  if (sub === 'list') {
    const list = await grants.of(acct.id);
    out.result(
      { account_id: acct.id, grants: list },
      list.length === 0
        ? `no connected apps for ${cmd.accountLabel(acct)}`
        : table(
            ['CLIENT', 'NAME', 'SINCE (UTC)', { header: 'DAILY LIMIT', right: true }],
            list.map((g) => [
              g.client_id,
              g.client_name ?? '(unnamed)',
              g.granted_at ? cmd.minute(g.granted_at) : '?',
              g.daily_limit_micros === null ? 'none' : formatUsd(g.daily_limit_micros),
            ]),
          ),
    );
    return;
  }
  const client = rest[1];
  if (!client) throw new UsageError('missing <client_id>', usageOf('oauth', 'revoke'));
  const revoked = await grants.revoke(acct.id, client);
  if (revoked === 0) throw new NotFoundError(`${client} is not connected to ${cmd.accountLabel(acct)}`);
  out.result(
    { account_id: acct.id, client_id: client, revoked_grants: revoked },
    `disconnected ${client} (${revoked} grant(s))`,
  );
}
