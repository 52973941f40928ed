import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { errors } from 'undici';
import { describe, expect, it } from 'vitest';
import { isUndiciTimeout, UpstreamPool } from '../../src/lib/upstream-pool.js';

// The upstreams' pool loads undici on its first request, so timeouts are told by undici's error codes rather
// than its classes: a wrong code would turn an upstream timeout (504, retryable) into a generic upstream error.

describe('UpstreamPool', () => {
  it("tells undici's header and body timeouts by their codes, and nothing else", () => {
    expect(isUndiciTimeout(new errors.HeadersTimeoutError())).toBe(true);
    expect(isUndiciTimeout(new errors.BodyTimeoutError())).toBe(true);
    expect(isUndiciTimeout(new errors.ConnectTimeoutError())).toBe(false);
    expect(isUndiciTimeout(new errors.SocketError('closed'))).toBe(false);
    expect(isUndiciTimeout(new Error('UND_ERR_HEADERS_TIMEOUT'))).toBe(false);
    expect(isUndiciTimeout(undefined)).toBe(false);
    expect(isUndiciTimeout(null)).toBe(false);
  });

  it('a request to a server that never answers fails with an error the check calls a timeout', async () => {
    const server = createServer(() => {
      // never answers
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const pool = new UpstreamPool({ connections: 1 });
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      const err = await pool.request(url, { method: 'GET', headersTimeout: 50 }).catch((e: unknown) => e);
      expect(isUndiciTimeout(err)).toBe(true);
    } finally {
      await pool.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it('answers through the loaded module, and closes whether or not it was used', async () => {
    const server = createServer((_req, res) => res.end('ok'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const used = new UpstreamPool({ connections: 1 });
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      const first = await used.request(url, { method: 'GET' });
      expect(await first.body.text()).toBe('ok');
      const second = await used.request(new URL(url), { method: 'GET' });
      expect(second.statusCode).toBe(200);
      await second.body.dump();
    } finally {
      await used.close();
      await new UpstreamPool({ connections: 1 }).close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
