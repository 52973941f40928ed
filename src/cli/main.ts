import { parseArgs } from 'node:util';
import { createApiKey } from '../../auth/api-keys.js';
import { OAuthGrants } from '../../auth/oauth/grants.js';
import { actions } from '../../catalog/index.js';
import { type Config, ConfigError, loadConfig } from '../config.js';
import { openLedger } from '../ledger/index.js';
import type { LedgerRecords } from '../ledger/types.js';
import { systemClock } from '../lib/clock.js';
import { formatUsd, parseUsdToMicros } from '../lib/money.js';
import { createLogger } from '../log.js';
import { createGateway } from '../main.js';
import { transactionView } from '../run/account-view.js';
import { Lifecycle } from '../run/lifecycle.js';
import { generateReceiptKey } from '../run/receipts.js';
import * as cmd from './accounts.js';
import { createOut, type Out, UsageError } from './output.js';
import { serverJson } from './server-json.js';

const USAGE = `tollgate — pay-per-call gateway for AI agents

Usage: tollgate <command> [options] [--json]

  serve                                   start the gateway (HTTP shim, MCP, model router)
  accounts create [--name N] [--credit-usd X]
                                          create an account and its first API key
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

Every command accepts --json and then prints one JSON object on stdout.
Configuration comes from TOLLGATE_* environment variables (see .env.example).`;

export async function main(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  const out = createOut(values.json === true);
  const [command, sub, ...rest] = positionals;
  if (values.help || !command) {
    process.stdout.write(`${USAGE}\n`);
    return command || values.help ? 0 : 2;
  }

  let config: Config;
  try {
    config = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`${e.message}\n`);
      return 1;
    }
    throw e;
  }

  if (command === 'serve') return serve(config, out);
  if (command === 'catalog') return catalog(out);
  if (command === 'receipt-key') {
    // A secret: printed once for the operator to store, never logged.
    const jwk = generateReceiptKey();
    out.result({ receipt_signing_key: jwk }, jwk);
    return 0;
  }
  if (command === 'server-json') {
    process.stdout.write(serverJson(config, values.template === true));
    return 0;
  }

  const { ledger, db } = openLedger(config.dataDir, {
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
    if (command === 'oauth') await oauth(new OAuthGrants(db), ledger, out, sub, rest);
    else await dispatch(ledger, money, out, command, sub, rest, values);
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`${e.message}\n`);
      return 2;
    }
    throw e;
  } finally {
    await ledger.close();
    db.close();
  }
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
    if (!v) throw new UsageError(`missing ${what}\n\n${USAGE}`);
    return v;
  };
  switch (command) {
    case 'accounts':
      if (sub !== 'create') throw new UsageError(`unknown: accounts ${sub ?? ''}\n\n${USAGE}`);
      return cmd.accountsCreate(ledger, money, out, { name: values.name, creditUsd: values['credit-usd'] });
    case 'keys':
      if (sub === 'create') return cmd.keysCreate(ledger, out, need(rest[0], '<account>'), values.name);
      if (sub === 'list') return cmd.keysList(ledger, out, rest[0]);
      if (sub === 'revoke') return cmd.keysRevoke(ledger, out, need(rest[0], '<key_id>'));
      throw new UsageError(`unknown: keys ${sub ?? ''}\n\n${USAGE}`);
    case 'credit':
      return cmd.credit(ledger, money, out, need(sub, '<account>'), need(rest[0], '<usd>'));
    case 'balance':
      return cmd.balance(ledger, out, need(sub, '<account>'));
    case 'tx': {
      const account = need(sub, '<account>');
      const limit = values.limit === undefined ? 20 : Number(values.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
        throw new UsageError('--limit must be 1-1000');
      if (!(await ledger.getAccount(account))) throw new UsageError(`no account ${account}`);
      const txs = (await ledger.transactions(account, limit)).map(transactionView);
      out.result(
        { account_id: account, transactions: txs },
        txs.length === 0
          ? 'no transactions'
          : txs
              .map(
                (t) =>
                  `${t.created_at}  ${t.id}  ${t.action.padEnd(28)} ${t.status.padEnd(9)} ${String(t.charged_cents).padStart(4)}¢  ${t.error_code ?? ''}`,
              )
              .join('\n'),
      );
      return;
    }
    default:
      throw new UsageError(`unknown command ${command}\n\n${USAGE}`);
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
    throw new UsageError(`usage: oauth list|revoke <account> …\n\n${USAGE}`);
  if (!(await ledger.getAccount(account))) throw new UsageError(`no account ${account}`);
  if (sub === 'list') {
    const list = grants.of(account);
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
  if (!client) throw new UsageError(`missing <client_id>\n\n${USAGE}`);
  const revoked = grants.revoke(account, client);
  if (revoked === 0) throw new UsageError(`${client} is not connected to ${account}`);
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

async function serve(config: Config, out: Out): Promise<number> {
  const gw = await createGateway(config);
  const bootstrap = await bootstrapOperator(gw.ledger, gw.money, config);
  const url = await gw.listen();
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
      operator: bootstrap ? { account_id: bootstrap.accountId, api_key: bootstrap.key } : null,
    },
    `tollgate listening on ${url} (data: ${config.dataDir})`,
  );
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      gw.log.info({ signal }, 'shutting down: finishing in-flight calls');
      gw.close().then(resolve, (err) => {
        gw.log.error({ err }, 'shutdown failed');
        resolve();
      });
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
  return 0;
}

/** The first `serve` on an empty database creates an operator account and prints its key once. */
async function bootstrapOperator(ledger: LedgerRecords, money: Lifecycle, config: Config) {
  if ((await ledger.listAccounts('customer')).length > 0) return undefined;
  const acct = await ledger.createAccount({ name: 'operator' });
  const micros = parseUsdToMicros(config.operatorCreditUsd);
  if (micros > 0) await money.credit(acct.id, micros, 'operator', 'operator bootstrap credit');
  const { key } = await createApiKey(ledger, acct.id, 'operator');
  return { accountId: acct.id, key, credit: formatUsd(micros) };
}
