import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { OAuthGrants } from '../../auth/oauth/grants.js';
import { openOAuthStore } from '../../auth/oauth/store.js';
import { actions } from '../../catalog/index.js';
import { type Config, ConfigError, loadConfig } from '../config/index.js';
import { DB_FILE, openStateLedger } from '../ledger/index.js';
import type { LedgerRecords } from '../ledger/types.js';
import { systemClock } from '../lib/clock.js';
import { formatUsd } from '../lib/money.js';
import { createLogger } from '../log.js';
import { accountHistory } from '../run/account-view.js';
import { Lifecycle } from '../run/lifecycle.js';
import { generateReceiptKey } from '../run/receipts.js';
import * as cmd from './accounts.js';
import { CliError, createOut, NotFoundError, type Out, UsageError } from './output.js';
import { openState } from './state.js';

const USAGE = `tollgate — pay-per-call gateway for AI agents

Usage: tollgate <command> [options] [--json]

  serve [--workers N]                     start the gateway (HTTP shim, MCP, model router); with PostgreSQL,
                                          N worker processes behind one port (default: one per core)
  migrate                                 bring the database schema up to this version (serve also does)
  accounts create [--name N] [--credit-usd X]
                                          create an account and its first API key
  accounts list                           accounts with their balances and credit lines
  keys create <account> [--name N]        issue another API key
  keys list [<account>]                   list keys (never the secrets)
  keys revoke <key_id>                    revoke a key; it stops working at once
  credit <account> <usd>                  add credit to an account
  balance <account>                       show an account's balance
  tx <account> [--limit N]                recent transactions, newest first
  oauth list <account>                    apps (MCP hosts) connected to the account over OAuth
  oauth revoke <account> -- <client_id>   disconnect an app: its tokens stop working at once
                                          (client ids may start with "-": put them after --)
  catalog                                 the price list
  receipt-key                             a new receipt signing key (for TOLLGATE_RECEIPT_SIGNING_KEY)
  server-json [--template]                this gateway's entry for the MCP registry (server.json); --template:
                                          the one the repository ships, its host left as a variable

Every command accepts --json and then prints one JSON object on stdout (errors too:
{"ok":false,"error":{"code","message"}}, with a non-zero exit code).
Configuration comes from TOLLGATE_* environment variables, or a .env file in the current directory
(see .env.example); the environment wins over .env. The data directory is TOLLGATE_DATA_DIR (default
./data): run operator commands where the gateway runs, or set it.`;

export async function main(argv: string[]): Promise<number> {
  // Known before parsing, so that even a malformed command line fails in the form the caller asked for.
  const out = createOut(argv.includes('--json'));
  try {
    return await run(argv, out);
  } catch (e) {
    return out.fail(e, USAGE);
  }
}

async function run(argv: string[], out: Out): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const { values, positionals } = parsed;
  const [command, sub, ...rest] = positionals;
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (!command) throw new UsageError('missing <command>');
  if (command === 'catalog') return catalog(out);
  if (command === 'receipt-key') {
    // A secret: printed once for the operator to store, never logged.
    const jwk = generateReceiptKey();
    out.result({ receipt_signing_key: jwk }, jwk);
    return 0;
  }

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
  // Loaded only for these two: the whole gateway (browser, chain, OAuth and MCP libraries) is not needed by the
  // other commands, which then start in a third of the time.
  if (command === 'server-json') {
    const { serverJson } = await import('./server-json.js');
    process.stdout.write(serverJson(config, values.template === true));
    return 0;
  }
  if (command === 'serve') {
    const { serve } = await import('./serve.js');
    return serve(config, out, envFile, values.workers);
  }

  if (command === 'migrate') return migrateCommand(config, out);

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
  const opened = await openState(config, { poolMax: 2 });
  const ledger = openStateLedger(opened.state, {
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
    } else await dispatch(ledger, money, out, command, sub, rest, values);
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

function noDatabase(dataDir: string): CliError {
  const how = process.env.TOLLGATE_DATA_DIR
    ? 'TOLLGATE_DATA_DIR'
    : 'the default ./data of the current directory; set TOLLGATE_DATA_DIR';
  return new CliError(
    'no_database',
    `no tollgate database in ${dataDir} (${how}): run this where the gateway runs, or point TOLLGATE_DATA_DIR at its data directory`,
    1,
    { data_dir: dataDir },
  );
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
      name: { type: 'string' },
      'credit-usd': { type: 'string' },
      limit: { type: 'string' },
      template: { type: 'boolean' },
      workers: { type: 'string' },
    },
  });
}

type Values = ReturnType<typeof parse>['values'];

async function dispatch(
  ledger: LedgerRecords,
  money: Lifecycle,
  out: Out,
  command: string,
  sub: string | undefined,
  rest: string[],
  values: Values,
): Promise<void> {
  const need = (v: string | undefined, what: string): string => {
    if (!v) throw new UsageError(`missing ${what}`);
    return v;
  };
  switch (command) {
    case 'accounts':
      if (sub === 'list') return cmd.accountsList(ledger, out);
      if (sub !== 'create') throw new UsageError(`unknown: accounts ${sub ?? ''}`);
      return cmd.accountsCreate(ledger, money, out, { name: values.name, creditUsd: values['credit-usd'] });
    case 'keys':
      if (sub === 'create') return cmd.keysCreate(ledger, out, need(rest[0], '<account>'), values.name);
      if (sub === 'list') return cmd.keysList(ledger, out, rest[0]);
      if (sub === 'revoke') return cmd.keysRevoke(ledger, out, need(rest[0], '<key_id>'));
      throw new UsageError(`unknown: keys ${sub ?? ''}`);
    case 'credit':
      return cmd.credit(ledger, money, out, need(sub, '<account>'), need(rest[0], '<usd>'));
    case 'balance':
      return cmd.balance(ledger, out, need(sub, '<account>'));
    case 'tx': {
      const account = need(sub, '<account>');
      const limit = values.limit === undefined ? 20 : Number(values.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
        throw new UsageError('--limit must be 1-1000');
      if (!(await ledger.getAccount(account))) throw new NotFoundError(`no account ${account}`);
      const txs = await accountHistory(ledger, account, limit);
      out.result(
        { account_id: account, transactions: txs },
        txs.length === 0
          ? 'no transactions'
          : txs
              .map(
                (t) =>
                  `${t.created_at}  ${t.id}  ${t.action.padEnd(28)} ${t.status.padEnd(9)} ${formatUsd(t.amount_micros).padStart(9)}  ${t.error_code ?? ''}`,
              )
              .join('\n'),
      );
      return;
    }
    default:
      throw new UsageError(`unknown command ${command}`);
  }
}

async function oauth(
  grants: OAuthGrants,
  ledger: LedgerRecords,
  out: Out,
  sub: string | undefined,
  rest: string[],
) {
  const account = rest[0];
  if (!account || (sub !== 'list' && sub !== 'revoke'))
    throw new UsageError('usage: oauth list|revoke <account> …');
  if (!(await ledger.getAccount(account))) throw new NotFoundError(`no account ${account}`);
  if (sub === 'list') {
    const list = await grants.of(account);
    out.result(
      { account_id: account, grants: list },
      list.length === 0
        ? 'no connected apps'
        : list
            .map(
              (g) =>
                `${g.client_id}  ${g.client_name ?? '(unnamed)'}  since ${g.granted_at ?? '?'}  ${g.daily_limit_micros === null ? 'no daily limit' : `limit ${formatUsd(g.daily_limit_micros)}/day`}`,
            )
            .join('\n'),
    );
    return;
  }
  const client = rest[1];
  if (!client) throw new UsageError('missing <client_id>');
  const revoked = await grants.revoke(account, client);
  if (revoked === 0) throw new NotFoundError(`${client} is not connected to ${account}`);
  out.result(
    { account_id: account, client_id: client, revoked_grants: revoked },
    `disconnected ${client} (${revoked} grant(s))`,
  );
}

function catalog(out: Out): number {
  const rows = actions.map((a) => ({
    id: a.id,
    title: a.title,
    price_cents: a.priceCents,
    access: a.access,
    strict: a.strict,
  }));
  out.result(
    { actions: rows },
    rows
      .map(
        (r) => `${r.id.padEnd(30)} ${r.price_cents === 0 ? 'free' : `$${(r.price_cents / 100).toFixed(2)}`}`,
      )
      .join('\n'),
  );
  return 0;
}
