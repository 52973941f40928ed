import type { Request, Response } from 'express';
import type { Adapter } from 'oidc-provider';
import { describe, expect, it } from 'vitest';
import { guardedAdapter, TemporarilyUnavailable } from '../../auth/oauth/outage.js';
import { isDatabaseUnavailable } from '../../src/errors.js';
import { AlreadyLogged, readinessRoute } from '../../src/http/readiness.js';
import { capturingLogger } from '../helpers/x402.js';

// The pieces behind the doors' answers during a database outage (the whole is test/e2e/db-faults-doors*.test.ts):
// the OAuth store's failures as oidc-provider's own 503, and /readyz logging a change, not every probe.

const refused = () =>
  Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

describe('[db:error-pages] the OAuth store during an outage', () => {
  it("turns a database failure into the library's exposed 503 temporarily_unavailable, keeping the cause", async () => {
    const reported: unknown[] = [];
    const adapter = guardedAdapter(
      {
        find: async () => {
          throw refused();
        },
        destroy: async () => {
          throw new Error('a bug');
        },
        upsert: async () => undefined,
      } as unknown as Adapter,
      (e) => reported.push(e),
    );
    const e = await adapter.find('x').catch((err: unknown) => err);
    expect(e).toBeInstanceOf(TemporarilyUnavailable);
    expect(e).toMatchObject({
      expose: true,
      statusCode: 503,
      message: 'temporarily_unavailable',
      allow_redirect: false,
    });
    expect((e as TemporarilyUnavailable).error_description).toMatch(/nothing was charged/i);
    // The gateway's health still recognises it, and was told of it.
    expect(isDatabaseUnavailable(e)).toBe(true);
    expect(reported).toHaveLength(1);
    // A bug stays a bug (the library's 500), and a working call is untouched.
    await expect(adapter.destroy('x')).rejects.toThrow('a bug');
    await expect(adapter.upsert('x', {}, 1)).resolves.toBeUndefined();
    expect(reported).toHaveLength(1);
  });
});

describe('[db:outage-once] /readyz during an outage', () => {
  function call(route: ReturnType<typeof readinessRoute>): Promise<number> {
    let status = 0;
    const res = {
      status(s: number) {
        status = s;
        return res;
      },
      set: () => res,
      json: () => res,
    };
    return route({} as Request, res as unknown as Response).then(() => status);
  }

  it('logs a check going unready once (not every probe), an outage already logged never, and the return', async () => {
    const { log, text } = capturingLogger();
    let failure: Error | undefined = new Error('no answer');
    const route = readinessRoute(
      {
        database: async () => {
          if (failure) throw failure;
        },
        storage: async () => undefined,
        draining: () => false,
      },
      log,
    );
    const lines = () =>
      text()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l).msg as string);
    expect([await call(route), await call(route), await call(route)]).toEqual([503, 503, 503]);
    expect(lines()).toEqual(['readiness: not ready']);
    failure = undefined;
    expect(await call(route)).toBe(200);
    expect(lines()).toEqual(['readiness: not ready', 'readiness: ready again']);
    failure = new AlreadyLogged('database outage in progress');
    expect([await call(route), await call(route)]).toEqual([503, 503]);
    expect(lines()).toHaveLength(2);
  });
});
