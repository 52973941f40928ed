import pino from 'pino';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INITIALIZE } from '../e2e/oauth-helpers.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

// What every door shares: how a request path is decoded and how an Authorization header is read.

let t: TestGateway;
let key: string;
const logged: Array<{ level: number; msg: string }> = [];

beforeAll(async () => {
  const log = pino({ level: 'debug' }, { write: (line: string) => logged.push(JSON.parse(line)) });
  t = await startGateway({ log });
  ({ key } = await t.account('1'));
});
afterAll(() => t.close());

async function send(method: string, path: string, headers: Record<string, string> = {}, body?: string) {
  const res = await request(`${t.url}${path}`, { method, headers, body });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text, json: () => JSON.parse(text) };
}

describe('request paths', () => {
  it('[http:malformed-path] a malformed percent-escape is a 400 on every door, never a 500 or an error log', async () => {
    const json = { 'content-type': 'application/json' };
    const cases: Array<[string, string]> = [
      ['POST', '/api/run/scraperC/%ff'],
      ['GET', '/api/run/scraperC/%ff'],
      ['POST', '/api/run/%ff/markdown'],
      ['POST', '/api/run/scraperC/markdown%'],
      ['GET', '/files/%ff?expires=1&signature=x'],
      ['PUT', '/files/file_%E0%A4%A?expires=1&signature=x'],
      ['GET', '/api/llm/v1/%ff'],
      ['POST', '/mcp/%ff'],
    ];
    const before = logged.length;
    for (const [method, path] of cases) {
      const r = await send(
        method,
        path,
        { ...json, authorization: `Bearer ${key}` },
        method === 'GET' ? undefined : '{}',
      );
      expect(r.status, `${method} ${path}`).toBe(400);
      expect(r.json()).toEqual({
        ok: false,
        error: {
          code: 'invalid_input',
          message:
            'The request path has a malformed percent-escape (such as %ff or a lone %); nothing was charged.',
          retryable: false,
        },
        charged_cents: 0,
      });
    }
    expect(logged.slice(before).filter((l) => l.level >= 50)).toEqual([]);
    // Well-formed escapes still reach their routes.
    expect((await send('GET', '/api/run/scraperC/%6darkdown')).status).toBe(200);
  });
});

describe('field errors', () => {
  it('[http:required-fields] a missing field reads "url is required" in the error message and its details', async () => {
    const r = await send(
      'POST',
      '/api/run/scraperC/markdown',
      { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      JSON.stringify({ browser: 'no' }),
    );
    expect(r.status).toBe(400);
    expect(r.json().error).toMatchObject({
      code: 'invalid_input',
      message:
        'Invalid input: url is required; browser: expected boolean, received string. Nothing was charged.',
      details: { issues: [{ path: 'url', message: 'required' }, { path: 'browser' }] },
    });
  });
});

describe('Authorization: one parser for every door', () => {
  const chat = JSON.stringify({ model: 'platform/cheap', messages: [{ role: 'user', content: 'hi' }] });
  /** Whether each door accepted the header: the shim's balance, an MCP initialize, the router's chat. */
  async function doors(authorization: string) {
    const shim = await send(
      'POST',
      '/api/run/platform/balance',
      { authorization, 'content-type': 'application/json' },
      '{}',
    );
    const mcp = await send(
      'POST',
      '/mcp',
      {
        authorization,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-06-18',
      },
      JSON.stringify(INITIALIZE),
    );
    // No upstream key in this gateway: an accepted key gets the router's 503 not_configured, a refused one 401.
    const llm = await send(
      'POST',
      '/api/llm/v1/chat/completions',
      { authorization, 'content-type': 'application/json' },
      chat,
    );
    return {
      shim: shim.status,
      mcp: mcp.status,
      llm: llm.status,
      challenge: mcp.headers['www-authenticate'],
    };
  }

  it('[auth:one-bearer-parser] the same header is accepted or refused by the HTTP shim, MCP and the model router alike', async () => {
    for (const ok of [`Bearer ${key}`, `Bearer   ${key}`, `bearer ${key}`, `BEARER ${key}`]) {
      expect(await doors(ok), ok).toMatchObject({ shim: 200, mcp: 200, llm: 503 });
    }
    for (const bad of [
      `Bearer ${key} extra`,
      `Bearer ${key},${key}`,
      `Bearer\t${key}`,
      `Bearer${key}`,
      `Basic ${key}`,
      `${key}`,
      'Bearer ',
    ]) {
      const r = await doors(bad);
      expect(r, bad).toMatchObject({ shim: 401, mcp: 401, llm: 401 });
      expect(r.challenge, bad).toMatch(/^Bearer error="invalid_token"/);
    }
  });
});
