import pg from 'pg';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { isDatabaseUnavailable, LEDGER_STOPPED, toGatewayError } from '../../src/errors.js';
import { DatabaseHealth } from '../../src/run/db-health.js';

// A database that does not answer is a retryable 503 that says nothing was charged, logged once per outage, and
// refused at admission until a probe says it answers again (docs/decisions.md "When the database stumbles").

function capturingLog() {
  const lines: Array<Record<string, unknown>> = [];
  const log = pino({ level: 'info' }, { write: (s: string) => lines.push(JSON.parse(s)) });
  return { log, lines };
}

describe('[db:unavailable-503] which failures mean the database does not answer', () => {
  const pgError = (code: string) => Object.assign(new Error('x'), { code });

  it('PostgreSQL shutdowns, connection exceptions, sockets and node-postgres’s own errors are; bugs are not', () => {
    for (const code of ['57P01', '57P02', '57P03', '08006', '08001', '53300', '53100', '25006'])
      expect(isDatabaseUnavailable(pgError(code)), code).toBe(true);
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE'])
      expect(isDatabaseUnavailable(pgError(code)), code).toBe(true);
    expect(isDatabaseUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isDatabaseUnavailable(new Error('timeout exceeded when trying to connect'))).toBe(true);
    // Node 20's happy-eyeballs connect: an AggregateError of the per-address refusals.
    expect(isDatabaseUnavailable(new AggregateError([pgError('ECONNREFUSED')], 'connect'))).toBe(true);
    // A bug, a constraint, a serialization failure: not an outage.
    for (const code of ['23505', '23514', '40001', '42P01', 'SQLITE_CONSTRAINT_CHECK'])
      expect(isDatabaseUnavailable(pgError(code)), code).toBe(false);
    expect(isDatabaseUnavailable(new TypeError('undefined is not a function'))).toBe(false);
    expect(isDatabaseUnavailable(new Error('Connection terminated'))).toBe(true);
  });

  it('a SQLite disk that is full, read-only or failing is, and so is the ledger once it stopped itself', () => {
    for (const code of [
      'SQLITE_FULL',
      'SQLITE_READONLY',
      'SQLITE_READONLY_DBMOVED',
      'SQLITE_IOERR_WRITE',
      'SQLITE_BUSY',
    ])
      expect(isDatabaseUnavailable(pgError(code)), code).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error('stopped'), { code: LEDGER_STOPPED }))).toBe(true);
    // Wrapped one level down (a cause) still counts.
    expect(isDatabaseUnavailable(new Error('outer', { cause: pgError('SQLITE_FULL') }))).toBe(true);
  });

  it('becomes a retryable 503 with Retry-After that says nothing was charged', () => {
    const e = toGatewayError(pgError('57P01'));
    expect(e.code).toBe('database_unavailable');
    expect(e.status).toBe(503);
    expect(e.retryable).toBe(true);
    expect(e.retryAfterSeconds).toBeGreaterThan(0);
    expect(e.message).toMatch(/nothing was charged/);
  });

  it('a real refused connection (node-postgres) is classified', async () => {
    const c = new pg.Client({
      connectionString: 'postgres://postgres@127.0.0.1:1/none',
      connectionTimeoutMillis: 2_000,
    });
    const err = await c.connect().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isDatabaseUnavailable(err)).toBe(true);
  });
});

describe('[db:outage-once] DatabaseHealth', () => {
  it('logs an outage once, refuses admission while it lasts, and ends it when the probe answers', async () => {
    const { log, lines } = capturingLog();
    let answering = false;
    let recovered = 0;
    const health = new DatabaseHealth(
      async () => {
        if (!answering) throw Object.assign(new Error('down'), { code: 'ECONNREFUSED' });
      },
      log,
      20,
    );
    health.onRecovered(async () => {
      recovered++;
    });
    expect(() => health.admit()).not.toThrow();
    health.report(new TypeError('a bug')); // not an outage
    expect(health.down).toBe(false);
    for (let i = 0; i < 50; i++) health.report(Object.assign(new Error('gone'), { code: '57P01' }));
    expect(health.down).toBe(true);
    expect(() => health.admit()).toThrow(/not answering; nothing was charged/);
    await new Promise((r) => setTimeout(r, 80));
    expect(health.down).toBe(true); // the probe still fails
    answering = true;
    await expect.poll(() => health.down, { timeout: 2_000 }).toBe(false);
    expect(recovered).toBe(1);
    expect(() => health.admit()).not.toThrow();
    const outage = lines.filter((l) => String(l.msg).includes('not answering'));
    expect(outage).toHaveLength(1); // fifty failures, one line, with its cause
    expect((outage[0]?.err as { message?: string })?.message).toBe('gone');
    expect(lines.filter((l) => String(l.msg).includes('answers again'))).toHaveLength(1);
    health.close();
  });
});
