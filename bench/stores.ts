import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import pg from 'pg';
import type { OAuthStore } from '../auth/oauth/store.js';
import { openOAuthStore } from '../auth/oauth/store.js';
import { openSessionStore } from '../src/account/session-store.js';
import type { StateDb } from '../src/backend.js';
import { openState } from '../src/cli/state.js';
import { loadConfig } from '../src/config/index.js';
import { systemClock } from '../src/lib/clock.js';
import { openPaymentStore } from '../src/run/x402/payment-store.js';
import type { BenchModule } from './types.js';

// The stores a paid call reads or writes, in CPU time per operation (robust to a shared machine, unlike wall
// clock): the OAuth token check (the four reads `auth/oauth/verifier.ts` makes per call: the access token, its
// grant, the grant's API key, the client's daily limit), an x402 payment's life (reserve, reserved → settling
// with the envelope, settling → settled with the receipt), and a dashboard session read. One operation at a
// time on one connection. PostgreSQL's share is the CPU of the one server process serving that connection
// (/proc), so other work on the server does not count.

const ADMIN_URL = process.env.TOLLGATE_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: ADMIN_URL });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** CPU ms a process has used (0 when it is not on this machine). */
function procCpuMs(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10; // USER_HZ = 100
  } catch {
    return 0;
  }
}

interface Figure {
  op: string;
  clientUs: number;
  serverUs: number;
}

async function measure(
  op: string,
  n: number,
  serverPid: number | undefined,
  fn: (i: number) => Promise<unknown>,
): Promise<Figure> {
  for (let i = 0; i < Math.min(500, n); i++) await fn(-1 - i); // warm up (prepares, JIT)
  const s0 = procCpuMs(serverPid);
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) await fn(i);
  const c = process.cpuUsage(c0);
  return { op, clientUs: (c.user + c.system) / n, serverUs: ((procCpuMs(serverPid) - s0) * 1000) / n };
}

async function tokenCheck(store: OAuthStore, token: string) {
  const at = await store.find('AccessToken', token);
  const grant = await store.find('Grant', at?.grantId as string);
  await store.grantKey(grant?.jti ?? (at?.grantId as string));
  await store.dailyLimit(at?.accountId as string, at?.clientId as string);
}

async function run(state: StateDb, serverPid: number | undefined, n: number): Promise<Figure[]> {
  const oauth = openOAuthStore(state);
  const tokens: string[] = [];
  for (let i = 0; i < 100; i++) {
    const grantId = `grant_${i}`;
    await oauth.upsert('Grant', grantId, { accountId: `acct_${i}`, clientId: 'client' }, 3600);
    await oauth.setGrantKey(grantId, `key_${i}`);
    await oauth.setDailyLimit(`acct_${i}`, 'client', 5_000_000);
    const token = randomBytes(32).toString('base64url');
    await oauth.upsert(
      'AccessToken',
      token,
      { accountId: `acct_${i}`, clientId: 'client', grantId, exp: Date.now() / 1000 + 3600 },
      3600,
    );
    tokens.push(token);
  }
  const payments = openPaymentStore(state, systemClock);
  const payload = {
    x402Version: 2,
    payload: { signature: '0x', authorization: {} },
  } as unknown as PaymentPayload;
  const requirements = { scheme: 'exact', network: 'eip155:8453' } as unknown as PaymentRequirements;
  const sessions = openSessionStore(state);
  const now = Date.now();
  for (let i = 0; i < 100; i++) {
    await sessions.add(
      `s_${i}`,
      { accountId: `acct_${i}`, keyId: null, memberId: null },
      now,
      now + 3_600_000,
    );
  }
  const run = randomBytes(4).toString('hex');
  return [
    await measure('OAuth token check (4 reads)', n, serverPid, (i) =>
      tokenCheck(oauth, tokens[Math.abs(i) % 100] as string),
    ),
    await measure('x402 payment: reserve + 2 transitions', n, serverPid, async (i) => {
      const key = `k_${run}_${i}`;
      await payments.reserve({
        key,
        payer: '0xpayer',
        action: 'bench/call',
        fingerprint: 'f',
        payload,
        requirements,
        expiresAt: now + 600_000,
      });
      await payments.transition(key, 'reserved', 'settling', { envelope: { ok: true } });
      await payments.transition(key, 'settling', 'settled', {
        receipt: { success: true, transaction: '0x1', network: 'eip155:8453' } as never,
      });
    }),
    await measure('dashboard session read', n, serverPid, (i) => sessions.get(`s_${Math.abs(i) % 100}`, now)),
  ];
}

function table(rows: Array<{ backend: string } & Figure>): string {
  return [
    '| backend | operation | gateway CPU µs/op | PostgreSQL CPU µs/op |',
    '|---|---|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.backend} | ${r.op} | ${r.clientUs.toFixed(1)} | ${r.backend === 'sqlite' ? '–' : r.serverUs.toFixed(1)} |`,
    ),
  ].join('\n');
}

export async function measureStores(n = Number(process.env.TOLLGATE_BENCH_STORE_OPS ?? 10_000)) {
  const rows: Array<{ backend: string } & Figure> = [];
  const dir = mkdtempSync(join(tmpdir(), 'tg-bench-stores-'));
  try {
    const sqlite = await openState(loadConfig({ TOLLGATE_DATA_DIR: dir }));
    try {
      for (const f of await run(sqlite.state, undefined, n)) rows.push({ backend: 'sqlite', ...f });
    } finally {
      await sqlite.close();
    }
    const name = `tg_bench_${randomBytes(4).toString('hex')}`;
    await admin((c) => c.query(`CREATE DATABASE ${name} TEMPLATE template0`));
    try {
      const opened = await openState(
        loadConfig({ TOLLGATE_DATA_DIR: dir, TOLLGATE_DATABASE_URL: withDatabase(ADMIN_URL, name) }),
        { poolMax: 1 },
      );
      try {
        const { state } = opened;
        if (state.kind !== 'postgres') throw new Error('expected PostgreSQL');
        const pid = (await state.pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
        for (const f of await run(state, pid, n)) rows.push({ backend: 'postgres', ...f });
      } finally {
        await opened.close();
      }
    } finally {
      await admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

const bench: BenchModule = async () => {
  const rows = await measureStores();
  return {
    id: 'stores',
    title: 'Stores on the call path (CPU per operation)',
    body: [
      'The stores a call touches besides the ledger, one operation at a time on one connection, in CPU time (robust',
      "to a shared machine). PostgreSQL's column is the server process serving that connection. The OAuth token",
      'check is the four reads `auth/oauth/verifier.ts` makes per call; an x402 payment is its reservation and',
      'its two transitions.',
      '',
      table(rows),
    ].join('\n'),
  };
};

export default bench;

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop() as string)) {
  const rows = await measureStores();
  process.stdout.write(`${table(rows)}\n`);
}
