import type { Action } from '../../../catalog/index.js';
import { inputJsonSchema, type JsonSchema, outputJsonSchema } from '../../../catalog/json-schema.js';

// The extensions a challenge carries (x402 v2 `PaymentRequired.extensions`):
// - `bazaar` (specs/extensions/bazaar.md): how to call the resource — the input and output JSON Schemas, an
//   example body, and over MCP the tool name — so discovery services can list it and agents can call it;
// - `payment-identifier` (specs/extensions/payment_identifier.md): the payer may name its payment with an id;
//   a retry with the same id (even with a freshly signed payment) gets the first call's result, never a second
//   charge, as Idempotency-Key does for accounts.
//
// The challenge travels in a response header (PAYMENT-REQUIRED) and x402 clients echo the extensions back in
// the PAYMENT-SIGNATURE request header, so both stay far below the 16 KiB header limits of Node and undici
// (x402-foundation/x402#2993): schemas are included whole when they fit BAZAAR_MAX_BYTES, else without their
// prose, else flattened to the top-level fields; the descriptor URL in the challenge's description always has
// the whole schema. Built once per action and transport.

export const BAZAAR = 'bazaar';
export const PAYMENT_IDENTIFIER = 'payment-identifier';

/** Largest `bazaar` extension, as JSON bytes (≈ 5.4 KiB once base64-encoded in the header). */
export const BAZAAR_MAX_BYTES = 4096;

const SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema';

/** The payment-identifier extension's published JSON Schema (16-128 characters of [A-Za-z0-9_-]). */
export const PAYMENT_ID_PATTERN = /^[a-zA-Z0-9_-]{16,128}$/;

const PAYMENT_IDENTIFIER_EXTENSION = {
  info: { required: false },
  schema: {
    $schema: SCHEMA_DIALECT,
    type: 'object',
    properties: {
      required: { type: 'boolean' },
      id: { type: 'string', minLength: 16, maxLength: 128, pattern: '^[a-zA-Z0-9_-]+$' },
    },
    required: ['required'],
  },
};

export type Transport = 'http' | 'mcp';

/** How much of the schemas a challenge carries (tests and the bench read it). */
export type SchemaDetail = 'full' | 'compact' | 'flat' | 'input-only';

const PROSE = new Set(['description', 'title', 'examples', '$schema', 'default']);

/** The schema without prose (descriptions, titles, examples): what a caller needs to build a valid call. */
export function withoutProse(s: unknown): unknown {
  if (Array.isArray(s)) return s.map(withoutProse);
  if (s === null || typeof s !== 'object') return s;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s)) {
    // `properties` holds field names, never keywords: a field called "description" stays.
    if (k === 'properties' && v !== null && typeof v === 'object') {
      out[k] = Object.fromEntries(Object.entries(v).map(([name, p]) => [name, withoutProse(p)]));
    } else if (!PROSE.has(k)) {
      out[k] = withoutProse(v);
    }
  }
  return out;
}

/** The top level only: each field's type (nested objects and arrays unconstrained) and what is required. */
export function flat(s: JsonSchema): JsonSchema {
  const props = (s.properties ?? {}) as Record<string, Record<string, unknown>>;
  const out: JsonSchema = { type: 'object' };
  out.properties = Object.fromEntries(
    Object.entries(props).map(([name, p]) => [name, typeof p.type === 'string' ? { type: p.type } : {}]),
  );
  if (Array.isArray(s.required)) out.required = s.required;
  return out;
}

function bazaarWith(action: Action, transport: Transport, input: JsonSchema, output: JsonSchema | undefined) {
  const example = (action.example ?? {}) as Record<string, unknown>;
  // The shape of @x402/extensions' declareDiscoveryExtension (info validated by `schema`), with the output
  // schema given without an example: `info.output` is then just its type.
  const outputInfo = output ? { output: { type: 'json' } } : {};
  const outputSchema = output
    ? {
        output: {
          type: 'object',
          properties: { type: { type: 'string' }, example: { type: 'object', ...output } },
          required: ['type'],
        },
      }
    : {};
  // What the input is and how to check it: an MCP tool call, or a JSON body POSTed over HTTP.
  const [inputInfo, inputProperties, inputRequired] =
    transport === 'mcp'
      ? [
          {
            type: 'mcp',
            toolName: action.toolName,
            transport: 'streamable-http',
            inputSchema: input,
            example,
          },
          {
            type: { type: 'string', const: 'mcp' },
            toolName: { type: 'string' },
            transport: { type: 'string', enum: ['streamable-http'] },
            inputSchema: { type: 'object' },
            example: { type: 'object' },
          },
          ['type', 'toolName', 'inputSchema'],
        ]
      : [
          { type: 'http', method: 'POST', bodyType: 'json', body: example },
          {
            type: { type: 'string', const: 'http' },
            method: { type: 'string', enum: ['POST', 'PUT', 'PATCH'] },
            bodyType: { type: 'string', enum: ['json', 'form-data', 'text'] },
            body: input,
          },
          ['type', 'method', 'bodyType', 'body'],
        ];
  return {
    info: { input: inputInfo, ...outputInfo },
    schema: {
      $schema: SCHEMA_DIALECT,
      type: 'object',
      properties: {
        input: {
          type: 'object',
          properties: inputProperties,
          required: inputRequired,
          additionalProperties: false,
        },
        ...outputSchema,
      },
      required: ['input'],
    },
  };
}

export interface Discovery {
  extensions: Record<string, unknown>;
  detail: SchemaDetail;
}

/** The `bazaar` extension at the most detail that fits the budget. */
export function bazaarFor(action: Action, transport: Transport): { bazaar: unknown; detail: SchemaDetail } {
  const input = inputJsonSchema(action);
  const output = outputJsonSchema(action);
  const lean = (s: JsonSchema) => withoutProse(s) as JsonSchema;
  const tries: Array<[SchemaDetail, JsonSchema, JsonSchema | undefined]> = [
    ['full', input, output],
    ['compact', lean(input), lean(output)],
    ['flat', flat(input), flat(output)],
  ];
  for (const [detail, i, o] of tries) {
    const bazaar = bazaarWith(action, transport, i, o);
    if (Buffer.byteLength(JSON.stringify(bazaar)) <= BAZAAR_MAX_BYTES) return { bazaar, detail };
  }
  return { bazaar: bazaarWith(action, transport, flat(input), undefined), detail: 'input-only' };
}

const cache = new Map<string, Discovery>();

/** The challenge's extensions for an action over a transport; built once. */
export function discoveryFor(action: Action, transport: Transport): Discovery {
  const key = `${transport} ${action.id}`;
  let d = cache.get(key);
  if (!d) {
    const { bazaar, detail } = bazaarFor(action, transport);
    d = { extensions: { [BAZAAR]: bazaar, [PAYMENT_IDENTIFIER]: PAYMENT_IDENTIFIER_EXTENSION }, detail };
    cache.set(key, d);
  }
  return d;
}

/**
 * The id a payer gave its payment, if any. A malformed one is refused rather than ignored: the payer asked for
 * idempotency and would otherwise silently not get it.
 */
export function paymentIdOf(
  extensions: Record<string, unknown> | undefined,
): { ok: true; id: string | undefined } | { ok: false; message: string } {
  const ext = extensions?.[PAYMENT_IDENTIFIER] as { info?: { id?: unknown } } | undefined;
  const id = ext?.info?.id;
  if (id === undefined) return { ok: true, id: undefined };
  if (typeof id !== 'string' || !PAYMENT_ID_PATTERN.test(id)) {
    return {
      ok: false,
      message: 'the payment-identifier id must be 16-128 characters of A-Z, a-z, 0-9, _ and -',
    };
  }
  return { ok: true, id };
}
