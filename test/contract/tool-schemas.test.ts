import { describe, expect, it } from 'vitest';
import { actions } from '../../catalog/index.js';
import { inputJsonSchema } from '../../catalog/json-schema.js';
import { portableInputSchema, toolArguments } from '../../catalog/portable-schema.js';
import { compactToolList } from '../../src/mcp/compact.js';
import { fullToolList } from '../../src/mcp/tools.js';
import { checkToolSchema, type Finding } from '../helpers/schema-portability.js';

// Every MCP tool's input schema against the published rules of MCP Inspector's --strict lint, OpenAI strict
// function calling and Gemini's function-declaration Schema (test/helpers/schema-portability.ts), and the
// door's reading of a strict host's arguments back into the zod body (catalog/portable-schema.ts).

const show = (fs: Finding[]) => fs.map((f) => `${f.host}/${f.rule} ${f.path}: ${f.message}`);

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What a strict host sends for a body: every property present (null when not given), JSON text as text. */
function asStrictHost(schema: Json, value: unknown): unknown {
  const branches = Array.isArray(schema.anyOf) ? (schema.anyOf as Json[]) : [schema];
  if (value === undefined || value === null) return null;
  const obj = branches.find((b) => b.type === 'object');
  if (obj && isObj(value)) {
    const out: Json = {};
    for (const [k, s] of Object.entries(obj.properties as Record<string, Json>))
      out[k] = asStrictHost(s, value[k]);
    return out;
  }
  const arr = branches.find((b) => b.type === 'array');
  if (arr && Array.isArray(value)) return value.map((v) => asStrictHost(arr.items as Json, v));
  const text = branches.find((b) => b.type === 'string');
  if (text && typeof value !== 'string' && !branches.some((b) => b.type === typeof value))
    return JSON.stringify(value);
  return value;
}

describe('[mcp:portable-schemas] tool input schemas pass the strict hosts’ published rules', () => {
  it('every tool of the full and the compact set: no error and no warning of any of the three', () => {
    for (const tool of [...fullToolList(new Map(), false), ...compactToolList()]) {
      expect(show(checkToolSchema(tool.inputSchema)), tool.name).toEqual([]);
    }
  });

  it('the checker is not vacuous: the zod rendering itself draws findings from each host', () => {
    const all = actions.flatMap((a) => checkToolSchema(inputJsonSchema(a)));
    const rules = new Set(all.map((f) => `${f.host}/${f.rule}`));
    for (const r of [
      'inspector/type-union',
      'inspector/missing-type',
      'openai/all-required',
      'openai/unsupported-format',
      'gemini/unsupported-field',
    ]) {
      expect(rules, r).toContain(r);
    }
    expect(
      show(
        checkToolSchema({
          type: 'object',
          properties: { a: true },
          required: ['a'],
          additionalProperties: false,
        }),
      ),
    ).toContain('inspector/boolean-schema .a: bare true where a schema is expected');
  });

  it('a strict host’s arguments (nulls for fields not given, JSON text) read back as the example body', () => {
    for (const a of actions) {
      const host = asStrictHost(portableInputSchema(a), a.example);
      const body = toolArguments(a, host);
      const parsed = a.input.safeParse(body);
      expect(parsed.success, `${a.id}: ${JSON.stringify(body)}`).toBe(true);
      expect(parsed.data, a.id).toEqual(a.input.parse(a.example));
    }
  });

  it('null means absent only where the rendering made a field nullable; JSON text is decoded only where untyped', () => {
    const scrape = actions.find((a) => a.id === 'scraperB/scrape');
    const validate = actions.find((a) => a.id === 'videoasm/validate');
    if (!scrape || !validate) throw new Error('catalog changed');
    // renderJs takes null itself (auto-detect): kept. country is optional: null dropped.
    expect(toolArguments(scrape, { url: 'https://e.com/', renderJs: null, country: null })).toEqual({
      url: 'https://e.com/',
      renderJs: null,
    });
    expect(toolArguments(scrape, { url: 'https://e.com/', jsonSchema: '{"type":"object"}' })).toEqual({
      url: 'https://e.com/',
      jsonSchema: { type: 'object' },
    });
    // A typed string field is never decoded, and text that is not JSON stays text.
    expect(toolArguments(scrape, { url: '{"a":1}' })).toEqual({ url: '{"a":1}' });
    expect(toolArguments(validate, { tracks: '[{"id":"t"}]', v: '1', format: 'not json' })).toEqual({
      tracks: [{ id: 't' }],
      v: 1,
      format: 'not json',
    });
  });
});
