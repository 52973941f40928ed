import { createHash, generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { fdatasync, fdatasyncSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Agent, request } from 'undici';

// The paid-call floor: the least a paid call must do under issue 19's own rules, and nothing else, as its own
// process beside the bare proxy (bench/bare-proxy.mjs), so that a target below it is seen to be below the work
// itself and not below the gateway's way of doing it. Per call:
// - the API key: sha256 of the bearer token, looked up in memory (the gateway caches its key look-ups too);
// - the body: JSON, `url` a string;
// - the hold: a reservation in memory against the balance (the gateway's hold on SQLite);
// - the fetch, with undici;
// - the capture: one SQLite transaction (the call's row, two entries, two balances) committed with
//   synchronous=OFF, then one fdatasync of the WAL before the answer — on the event loop when it is the only call
//   in flight, else on libuv's pool, and the captures that arrive meanwhile commit together after it (group
//   commit), as the gateway does; a checkpoint every 100 ms at most starts the WAL over;
// - the receipt: an ES256 JWS of the charge, signed on the event loop;
// - the answer: the shim's envelope and the receipt header.
// No validation beyond `url`, no SSRF check, no HTML to Markdown, no log line, no metrics, no call tracking.
// PAID_FLOOR_SYNC=0 leaves out the fdatasync (not durable), PAID_FLOOR_RECEIPT=0 the receipt, PAID_FLOOR_LEDGER=0
// the ledger's write (the reservation stays): what each part costs. GET /jwks and GET /ledger (its public key, what
// its ledger committed) are for test/unit/bench-paid-floor.test.ts.

const on = (name) => process.env[name] !== '0';
const DURABLE = on('PAID_FLOOR_SYNC');
const RECEIPT = on('PAID_FLOOR_RECEIPT');
const LEDGER = on('PAID_FLOOR_LEDGER');
const PRICE_MICROS = 10_000;
const KEY = 'tg_sk_paid_floor';

const agent = new Agent({ connections: 128, keepAliveTimeout: 60_000 });
const dir = mkdtempSync(join(tmpdir(), 'tollgate-paid-floor-'));
const db = new Database(join(dir, 'ledger.sqlite'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = OFF');
db.pragma('wal_autocheckpoint = 0');
db.exec(`
  CREATE TABLE accounts (id TEXT PRIMARY KEY, balance_micros INTEGER NOT NULL);
  CREATE TABLE calls (id TEXT PRIMARY KEY, account_id TEXT NOT NULL, action TEXT NOT NULL,
    charged_micros INTEGER NOT NULL, created_at INTEGER NOT NULL) WITHOUT ROWID;
  CREATE TABLE entries (id INTEGER PRIMARY KEY, call_id TEXT NOT NULL, account_id TEXT NOT NULL,
    amount_micros INTEGER NOT NULL);
  INSERT INTO accounts VALUES ('acct', 100000000000), ('revenue', 0);
`);
const s = {
  begin: db.prepare('BEGIN IMMEDIATE'),
  commit: db.prepare('COMMIT'),
  call: db.prepare('INSERT INTO calls VALUES (?, ?, ?, ?, ?)'),
  entry: db.prepare('INSERT INTO entries (call_id, account_id, amount_micros) VALUES (?, ?, ?)'),
  balance: db.prepare('UPDATE accounts SET balance_micros = balance_micros + ? WHERE id = ?'),
};
const keys = new Map([[createHash('sha256').update(KEY).digest('hex'), 'acct']]);
const balance = new Map([['acct', 100_000_000_000]]);
const held = new Map([['acct', 0]]);

let walFd;
let syncing = false;
const queued = [];
let inFlight = 0;

/** Commits a batch of captures, then makes it durable; what arrives meanwhile waits for the next batch. */
function commit(batch) {
  s.begin.run();
  for (const c of batch) {
    s.call.run(c.id, c.account, 'scraperC/scrape', PRICE_MICROS, Date.now());
    s.entry.run(c.id, c.account, -PRICE_MICROS);
    s.entry.run(c.id, 'revenue', PRICE_MICROS);
    s.balance.run(-PRICE_MICROS, c.account);
    s.balance.run(PRICE_MICROS, 'revenue');
  }
  s.commit.run();
  for (const c of batch) {
    balance.set(c.account, balance.get(c.account) - PRICE_MICROS);
    held.set(c.account, held.get(c.account) - PRICE_MICROS);
  }
  const done = () => {
    syncing = false;
    for (const c of batch) c.resolve();
    if (queued.length > 0) commit(queued.splice(0));
    else if (Date.now() - checkpointed > 100) checkpoint();
  };
  if (!DURABLE) return done();
  walFd ??= openSync(join(dir, 'ledger.sqlite-wal'), 'r');
  syncing = true;
  if (inFlight <= 1) {
    fdatasyncSync(walFd);
    done();
  } else fdatasync(walFd, done);
}

/**
 * Every 100 ms at most, between commits: the WAL's frames copied into the database and the WAL started over, so
 * that commits overwrite its blocks (an fdatasync then has no file size to sync) and its index stays small. A
 * durable checkpoint (synchronous=NORMAL syncs the WAL and the database around it). The gateway runs it on a
 * worker thread; here it runs on the event loop, which can only make the floor higher.
 */
let checkpointed = Date.now();
function checkpoint() {
  checkpointed = Date.now();
  if (!DURABLE) return db.pragma('wal_checkpoint(RESTART)');
  db.pragma('synchronous = NORMAL');
  db.pragma('wal_checkpoint(RESTART)');
  db.pragma('synchronous = OFF');
}

function capture(id, account) {
  if (!LEDGER) {
    held.set(account, held.get(account) - PRICE_MICROS);
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    const c = { id, account, resolve };
    if (syncing) queued.push(c);
    else commit([c]);
  });
}

const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const publicJwk = publicKey.export({ format: 'jwk' });
const signingKey = { key: privateKey, dsaEncoding: 'ieee-p1363' };
const header = Buffer.from(
  JSON.stringify({ alg: 'ES256', typ: 'tollgate-receipt+jwt', kid: 'floor' }),
).toString('base64url');
function receipt(id, account) {
  const claims = {
    iss: 'http://127.0.0.1',
    jti: id,
    iat: Math.floor(Date.now() / 1000),
    action: 'scraperC/scrape',
    amount_micros: PRICE_MICROS,
    charged_cents: 1,
    currency: 'USD',
    payment_method: 'api_key',
    account,
  };
  const input = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  return `${input}.${sign('sha256', Buffer.from(input), signingKey).toString('base64url')}`;
}

async function paidCall(req, res, raw) {
  const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
  const account = keys.get(createHash('sha256').update(token).digest('hex'));
  if (!account) return res.writeHead(401).end();
  const { url } = JSON.parse(raw);
  if (typeof url !== 'string') return res.writeHead(422).end();
  const holding = held.get(account);
  if (balance.get(account) - holding < PRICE_MICROS) return res.writeHead(402).end();
  held.set(account, holding + PRICE_MICROS);
  const id = `txn_${randomUUID()}`;
  let page;
  try {
    const r = await request(url, { dispatcher: agent });
    page = await r.body.text();
  } catch {
    held.set(account, held.get(account) - PRICE_MICROS);
    return res.writeHead(502).end();
  }
  const captured = capture(id, account);
  const signed = RECEIPT ? receipt(id, account) : undefined;
  await captured;
  const text = JSON.stringify({ ok: true, data: { markdown: page }, charged_cents: 1, transaction_id: id });
  const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) };
  if (signed) headers['tollgate-receipt'] = signed;
  res.writeHead(200, headers).end(text);
}

/** What the bench's test checks the floor by: its public key, and what its ledger committed. */
function inspect(req, res) {
  const body =
    req.url === '/jwks'
      ? publicJwk
      : {
          calls: db.prepare('SELECT count(*) AS n FROM calls').get().n,
          revenue_micros: db.prepare("SELECT balance_micros AS b FROM accounts WHERE id = 'revenue'").get().b,
        };
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

const server = createServer((req, res) => {
  if (req.method === 'GET') return inspect(req, res);
  const parts = [];
  req.on('data', (c) => parts.push(c));
  req.on('end', () => {
    inFlight++;
    paidCall(req, res, Buffer.concat(parts).toString('utf8'))
      .catch(() => res.writeHead(500).end())
      .finally(() => inFlight--);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}`, key: KEY })}\n`);
});
process.on('SIGTERM', () =>
  server.close(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  }),
);
