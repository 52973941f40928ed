import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import { TEXT_IS_STRUCTURED, toResult } from '../../src/mcp/call.js';
import { resultMessage } from '../../src/mcp/fast-call.js';

// The fast path writes a tool result's JSON once (src/mcp/fast-call.ts resultMessage): it must be exactly what
// JSON.stringify({ result, jsonrpc, id }) gives, whatever the data holds.

const outcome = (data: unknown) =>
  ({
    ok: true,
    data,
    chargedCents: 1,
    chargedMicros: 10_000,
    transactionId: 'txn_1',
    replayed: false,
    receipt: 'a.b.c',
  }) as const;

describe('[mcp:fast-path] one serialisation of a tool result', () => {
  const data = {
    markdown: '# Title\n\n"quoted" \\ back\u2028slash \u{1F600} </script>',
    nested: { list: [1, 2.5, null, true], empty: {} },
  };

  it.each([
    ['2025 era', toResult(outcome(data) as never), 7],
    ['2026-07-28 with its envelope', { ...toResult(outcome(data) as never), resultType: 'complete' }, 'abc'],
    [
      'an error result (not marked: stringified whole)',
      toResult({ ok: false, error: new GatewayError('not_found', 'x') } as never),
      3,
    ],
  ])('%s: identical to JSON.stringify', (_name, result, id) => {
    const marked = (result as { [TEXT_IS_STRUCTURED]?: true })[TEXT_IS_STRUCTURED] === true;
    const ours = resultMessage(result, id, marked);
    expect(ours).toBe(JSON.stringify({ result, jsonrpc: '2.0', id }));
    expect(JSON.parse(ours).result.structuredContent).toEqual(
      JSON.parse(JSON.stringify(result.structuredContent)),
    );
  });
});
