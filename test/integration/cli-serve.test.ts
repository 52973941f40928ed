import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/lib/clock.js';
import { ownStderr, runCli, serveCli } from '../helpers/cli.js';
import { openLedger } from '../helpers/sqlite-ledger.js';

// `tollgate serve` as a new operator meets it: the first start prints the operator key once, and start-up
// failures an operator can fix are one line, not a stack trace.

const work = mkdtempSync(join(tmpdir(), 'tollgate-serve-'));
let busy: Server;
let busyPort: number;

beforeAll(async () => {
  busy = createServer();
  await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
  busyPort = (busy.address() as { port: number }).port;
});
afterAll(async () => {
  await new Promise((r) => busy.close(r));
  rmSync(work, { recursive: true, force: true });
});

async function customerAccounts(dataDir: string): Promise<number> {
  const { ledger, db } = openLedger(dataDir, { clock: systemClock, idempotencyTtlMs: 86_400_000 });
  try {
    return (await ledger.listAccounts('customer')).length;
  } finally {
    await ledger.close();
    db.close();
  }
}

describe('tollgate serve', () => {
  it('[ops:first-start-key] a first start on a busy port fails in one line and uses nothing up: the next start prints the key', async () => {
    const dataDir = join(work, 'first');
    const env = { TOLLGATE_DATA_DIR: dataDir, TOLLGATE_PORT: String(busyPort) };

    const human = runCli(['serve'], { cwd: work, env });
    expect(human.code).toBe(1);
    expect(human.stdout).toBe('');
    expect(ownStderr(human.stderr)).toBe(
      `tollgate: port ${busyPort} on 127.0.0.1 is already in use (another tollgate?); stop that process or set TOLLGATE_PORT to a free port\n`,
    );
    const json = runCli(['serve', '--json'], { cwd: work, env });
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toEqual({
      ok: false,
      error: {
        code: 'port_in_use',
        message: expect.stringContaining(`port ${busyPort}`),
        host: '127.0.0.1',
        port: busyPort,
      },
    });
    expect(await customerAccounts(dataDir), 'no operator account without a printed key').toBe(0);

    const gw = await serveCli({ cwd: work, env: { TOLLGATE_DATA_DIR: dataDir } });
    try {
      const op = gw.started.operator;
      expect(op).toEqual({
        account_id: 'acct_operator',
        api_key_file: join(dataDir, 'operator-key.txt'),
        api_key: expect.stringMatching(/^tg_sk_/),
      });
      const res = await request(`${gw.started.url}/api/run/platform/balance`, {
        method: 'POST',
        headers: { authorization: `Bearer ${op?.api_key}`, 'content-type': 'application/json' },
        body: '{}',
      });
      expect(res.statusCode).toBe(200);
      expect(((await res.body.json()) as { data: { balance_usd: string } }).data.balance_usd).toBe('$0.00');
    } finally {
      await gw.stop();
    }
  }, 90_000);

  it('[ops:startup-errors] a data directory in use by a live gateway is one line naming it', async () => {
    const dataDir = join(work, 'shared');
    const first = await serveCli({ cwd: work, env: { TOLLGATE_DATA_DIR: dataDir } });
    try {
      const second = runCli(['serve'], {
        cwd: work,
        env: { TOLLGATE_DATA_DIR: dataDir, TOLLGATE_PORT: '0' },
      });
      expect(second.code).toBe(1);
      expect(ownStderr(second.stderr)).toBe(
        `tollgate: another gateway (pid ${first.proc.pid}) is running on ${dataDir}; stop it or use another TOLLGATE_DATA_DIR\n`,
      );
    } finally {
      await first.stop();
    }
    // Stopped, it gives the directory back, and the operator account of the first start stays the only one.
    const again = await serveCli({ cwd: work, env: { TOLLGATE_DATA_DIR: dataDir } });
    expect(again.started.operator).toBeNull();
    await again.stop();
    expect(await customerAccounts(dataDir)).toBe(1);
  }, 90_000);
});
