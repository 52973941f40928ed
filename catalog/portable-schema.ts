import type { Action } from './define.js';
import { inputJsonSchema, type JsonSchema } from './json-schema.js';

// The input schema MCP hosts are shown (docs/decisions.md, "Portable tool schemas"). The zod schema stays the
// validator on every door; this is a rendering of it in the subset that MCP Inspector's --strict lint, OpenAI's
// strict function calling and Gemini's function-declaration Schema all accept:
// - every object is closed (additionalProperties: false) and lists every property in `required`; a field the
//   caller may leave out is nullable (`anyOf: [X, {type: "null"}]`, never a `type` array), and null means absent;
// - only keywords all three read: type, properties, required, additionalProperties: false, items, enum (of
//   strings), anyOf, description, pattern, minimum, maximum, minItems, maxItems. Bounds the subset lacks
//   (lengths, exclusive bounds, formats, defaults) stay in the descriptions and in the zod validation;
// - a value the subset cannot type (any JSON value, an open map such as a JSON Schema or props) is a string of
//   JSON text, decoded by the door before validation.
// `toolArguments` undoes the rendering on an MCP call's arguments: nulls the rendering introduced are dropped,
// JSON text is decoded where the zod schema wants a value. The HTTP shim never sees it: it accepts exactly what
// the zod schema accepts, as the spec says.

/** Where a tool call's arguments differ from the zod input: per path, what the door undoes. */
export interface ArgShape {
  /** null here means "absent": the rendering made this optional field nullable. */
  nullIsAbsent?: true;
  /** A string here is JSON text for a value the portable subset cannot type. */
  jsonText?: true;
  props?: Record<string, ArgShape>;
  items?: ArgShape;
}

interface Rendered {
  schema: JsonSchema;
  shape: ArgShape;
}

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const isObj = (v: unknown): v is JsonSchema => typeof v === 'object' && v !== null && !Array.isArray(v);
const descOf = (s: JsonSchema) => (typeof s.description === 'string' ? s.description : undefined);
const withDesc = (schema: JsonSchema, description: string | undefined): JsonSchema =>
  description ? { ...schema, description } : schema;

function jsonText(description: string | undefined, value = 'Any JSON value'): Rendered {
  const what = description ? `${description.replace(/\s+$/, '')} ` : '';
  return {
    schema: { type: 'string', description: `${what}${value}, sent as JSON text.` },
    shape: { jsonText: true },
  };
}

/** What a dropped `format` said, kept in words. */
const FORMAT_WORDS: Record<string, string> = { uri: 'A URL.', email: 'An e-mail address.' };

function noteFormat(description: string | undefined, format: unknown): string | undefined {
  const words = typeof format === 'string' ? FORMAT_WORDS[format] : undefined;
  if (!words) return description;
  if (description && /\b(?:url|e-?mail)\b/i.test(description)) return description;
  return description ? `${description.replace(/\s+$/, '')} ${words}` : words;
}

/** Makes a rendered schema accept null too (null is then read as "not given"). */
function nullable(r: Rendered): Rendered {
  const { description, ...rest } = r.schema;
  const branches = Array.isArray(rest.anyOf) ? (rest.anyOf as JsonSchema[]) : [rest];
  if (branches.some((b) => b.type === 'null')) return r;
  const schema = withDesc({ anyOf: [...branches, { type: 'null' }] }, description as string | undefined);
  return { schema, shape: { ...r.shape, nullIsAbsent: true } };
}

function mergeShapes(shapes: ArgShape[]): ArgShape {
  const out: ArgShape = {};
  for (const s of shapes) {
    if (s.jsonText) out.jsonText = true;
    if (s.nullIsAbsent) out.nullIsAbsent = true;
    if (s.items) out.items = mergeShapes(out.items ? [out.items, s.items] : [s.items]);
    if (s.props) {
      out.props ??= {};
      for (const [k, v] of Object.entries(s.props)) {
        out.props[k] = out.props[k] ? mergeShapes([out.props[k] as ArgShape, v]) : v;
      }
    }
  }
  return out;
}

/** Literal alternatives (`1`, or `24 | 30 | 60`): an enum of strings, or a number range naming the values. */
function fromConsts(values: unknown[], description: string | undefined): Rendered {
  if (values.every((v) => typeof v === 'string')) {
    return { schema: withDesc({ type: 'string', enum: values }, description), shape: {} };
  }
  if (values.every((v) => typeof v === 'number')) {
    const nums = values as number[];
    const type = nums.every(Number.isInteger) ? 'integer' : 'number';
    const listed = description?.includes(String(nums[0]))
      ? description
      : `${description ?? ''} One of ${nums.join(', ')}.`.trim();
    const schema = { type, minimum: Math.min(...nums), maximum: Math.max(...nums), description: listed };
    return { schema, shape: {} };
  }
  if (values.every((v) => typeof v === 'boolean'))
    return { schema: withDesc({ type: 'boolean' }, description), shape: {} };
  return jsonText(description);
}

function renderObject(node: JsonSchema, description: string | undefined): Rendered {
  const props = isObj(node.properties) ? (node.properties as Record<string, JsonSchema>) : undefined;
  // An open map (z.record) or a bare object has no fields to list: JSON text.
  if (!props || (Object.keys(props).length === 0 && node.additionalProperties !== false)) {
    return jsonText(description, 'A JSON object');
  }
  const required = new Set(Array.isArray(node.required) ? (node.required as string[]) : []);
  const properties: Record<string, JsonSchema> = {};
  const shapes: Record<string, ArgShape> = {};
  for (const [k, v] of Object.entries(props)) {
    let r = render(v);
    if (!required.has(k)) r = nullable(r);
    properties[k] = r.schema;
    if (r.shape.jsonText || r.shape.nullIsAbsent || r.shape.props || r.shape.items) shapes[k] = r.shape;
  }
  const schema = withDesc(
    { type: 'object', properties, required: Object.keys(properties), additionalProperties: false },
    description,
  );
  return { schema, shape: Object.keys(shapes).length > 0 ? { props: shapes } : {} };
}

function renderScalar(node: JsonSchema, type: string, description: string | undefined): Rendered {
  const out: JsonSchema = { type };
  if (type === 'string') {
    if (Array.isArray(node.enum)) return fromConsts(node.enum, description);
    if (typeof node.pattern === 'string') out.pattern = node.pattern;
  }
  if (type === 'integer' || type === 'number') {
    const step = type === 'integer' ? 1 : 0;
    if (typeof node.minimum === 'number') out.minimum = node.minimum;
    if (typeof node.exclusiveMinimum === 'number') out.minimum = node.exclusiveMinimum + step;
    if (typeof node.maximum === 'number' && node.maximum < MAX_SAFE) out.maximum = node.maximum;
    if (typeof node.exclusiveMaximum === 'number') out.maximum = node.exclusiveMaximum - step;
  }
  return { schema: withDesc(out, noteFormat(description, node.format)), shape: {} };
}

function render(node: unknown): Rendered {
  if (!isObj(node)) return jsonText(undefined);
  const description = descOf(node);
  if ('const' in node) return fromConsts([node.const], description);
  const union = (node.anyOf ?? node.oneOf) as JsonSchema[] | undefined;
  if (Array.isArray(union)) {
    if (union.every((b) => isObj(b) && 'const' in b))
      return fromConsts(
        union.map((b) => b.const),
        description,
      );
    const rendered = union.map(render);
    const branches = rendered.flatMap((r) => {
      const { description: _, ...rest } = r.schema;
      return Array.isArray(rest.anyOf) ? (rest.anyOf as JsonSchema[]) : [rest];
    });
    return {
      schema: withDesc({ anyOf: branches }, description),
      shape: mergeShapes(rendered.map((r) => r.shape)),
    };
  }
  if (Array.isArray(node.type)) {
    const types = node.type as string[];
    const real = types
      .filter((t) => t !== 'null')
      .map((t) => render({ ...node, type: t, description: undefined }));
    const joined: Rendered = {
      schema: withDesc({ anyOf: real.map((r) => r.schema) }, description),
      shape: mergeShapes(real.map((r) => r.shape)),
    };
    if (real.length === 1 && !types.includes('null'))
      return { schema: withDesc(real[0]?.schema ?? {}, description), shape: joined.shape };
    // A field that itself takes null (renderJs: null = auto-detect) keeps null as a value, not as "absent".
    return types.includes('null')
      ? {
          schema: withDesc({ anyOf: [...real.map((r) => r.schema), { type: 'null' }] }, description),
          shape: joined.shape,
        }
      : joined;
  }
  const type = node.type;
  if (type === 'object') return renderObject(node, description);
  if (type === 'array') {
    const items = render(node.items);
    const schema: JsonSchema = { type: 'array', items: items.schema };
    if (typeof node.minItems === 'number') schema.minItems = node.minItems;
    if (typeof node.maxItems === 'number') schema.maxItems = node.maxItems;
    const shape =
      items.shape.jsonText || items.shape.props || items.shape.items || items.shape.nullIsAbsent
        ? { items: items.shape }
        : {};
    return { schema: withDesc(schema, description), shape };
  }
  if (typeof type === 'string') return renderScalar(node, type, description);
  return jsonText(description);
}

const cache = new WeakMap<Action, Rendered>();

function rendered(action: Action): Rendered {
  let r = cache.get(action);
  if (!r) {
    const zodSchema = inputJsonSchema(action);
    r = renderObject({ ...zodSchema, additionalProperties: false }, undefined);
    cache.set(action, r);
  }
  return r;
}

/** The action's input as MCP hosts are shown it: the portable rendering of its zod schema. */
export function portableInputSchema(action: Action): JsonSchema {
  return rendered(action).schema;
}

function undo(value: unknown, shape: ArgShape): unknown {
  if (shape.jsonText && typeof value === 'string') {
    try {
      return JSON.parse(value);
    } catch {
      return value; // not JSON text: a plain string ("cover"), which these fields also take
    }
  }
  if (Array.isArray(value) && shape.items) return value.map((v) => undo(v, shape.items as ArgShape));
  if (isObj(value) && shape.props) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const s = shape.props[k];
      if (!s) out[k] = v;
      else if (v === null && s.nullIsAbsent) continue;
      else out[k] = undo(v, s);
    }
    return out;
  }
  return value;
}

/** An MCP call's arguments as the zod schema reads them: rendered nulls dropped, JSON text decoded. */
export function toolArguments(action: Action, args: unknown): unknown {
  return undo(args, rendered(action).shape);
}
