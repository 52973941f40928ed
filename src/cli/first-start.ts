import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { createApiKey } from '../../auth/api-keys.js';
import type { Config } from '../config/index.js';
import type { LedgerRecords } from '../ledger/types.js';
import { formatUsd, parseUsdToMicros } from '../lib/money.js';
import type { Lifecycle } from '../run/lifecycle.js';

// The first `serve` on an empty database creates the operator account and its API key. The key is a secret shown
// once, so it must reach the person and never the log stream (journald, `docker logs`, a log shipper keep those):
// on a terminal it is written there; otherwise into a file in the data dir that only the gateway's user can read,
// and the log says where (docs/decisions.md "The first start's operator key").

export const OPERATOR_ACCOUNT = 'acct_operator';
export const OPERATOR_KEY_FILE = 'operator-key.txt';

export interface Bootstrapped {
  accountId: string;
  key: string;
  credit: string;
}

/** Creates the operator account and key on an empty database; undefined when accounts already exist. */
export async function bootstrapOperator(
  ledger: LedgerRecords,
  money: Lifecycle,
  config: Pick<Config, 'operatorCreditUsd'>,
): Promise<Bootstrapped | undefined> {
  if ((await ledger.listAccounts('customer')).length > 0) return undefined;
  // One id for the first start's account: replicas starting together on an empty PostgreSQL race here, and
  // the unique id lets exactly one of them create (and deliver) it.
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

/** Where the key went: shown on the terminal, or the file that holds it. */
export interface Delivery {
  account_id: string;
  api_key_file: string | null;
}

/** Hands the key to the person: the terminal if there is one, else a 0600 file in the data dir; logs where. */
export function deliverOperatorKey(b: Bootstrapped, dataDir: string, log: Logger): Delivery {
  const terminal = process.stderr.isTTY ? process.stderr : process.stdout.isTTY ? process.stdout : undefined;
  if (terminal) {
    terminal.write(
      `\nFirst start: created operator account ${b.accountId} with ${b.credit}.\n` +
        `API key (shown once, not logged; store it now): ${b.key}\n\n`,
    );
    log.info(
      { operator_account: b.accountId },
      'first start: created the operator account; its API key was shown on the terminal (not logged)',
    );
    return { account_id: b.accountId, api_key_file: null };
  }
  const file = join(dataDir, OPERATOR_KEY_FILE);
  mkdirSync(dataDir, { recursive: true });
  // Created afresh with its mode (a mode given to an existing file would not apply).
  rmSync(file, { force: true });
  writeFileSync(
    file,
    `# tollgate: the API key of the operator account ${b.accountId} (credit ${b.credit}), created at the first start.\n` +
      '# Store it (a password manager, your secret store), then delete this file.\n' +
      `${b.key}\n`,
    { mode: 0o600, flag: 'wx' },
  );
  log.warn(
    { operator_account: b.accountId, operator_key_file: file },
    `first start: created the operator account; its API key is in ${file} (readable only by this user): store it, then delete the file`,
  );
  return { account_id: b.accountId, api_key_file: file };
}
