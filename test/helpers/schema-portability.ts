// Three published rule sets for tool input schemas, written down as checks (test/contract/tool-schemas.test.ts
// walks every tool with them). Each rule cites where it is published; where a source is stricter than another
// it is kept as the source states it, so a schema that passes all three is accepted by all three.
//
// inspector: MCP Inspector's tool-schema portability lint (`mcp-inspector --cli … --strict`), core/json/
//   schemaLint.ts from modelcontextprotocol/inspector PR #2121 (issue #1005), reworded by PR #2395:
//   - root-type (error): an inputSchema root is `type: "object"` (the MCP schema's Tool.inputSchema);
//   - boolean-schema (error): no bare `true`/`false` where a schema object is expected (boolean-valued
//     keywords such as additionalProperties excepted);
//   - type-union (warning): `type` is a single string, never an array (suggested fix: anyOf);
//   - missing-type (warning, issue #1005 "missing required type fields"; Gemini CLI skips such tools,
//     google-gemini/gemini-cli PR #5694/#7875): every schema has a type, enum, const, $ref or a combinator.
// openai: Structured Outputs "Supported schemas" (platform.openai.com/docs/guides/structured-outputs), which
//   strict function calling applies to `parameters`, as enforced by openai-node src/lib/transform.ts
//   (toStrictJsonSchema):
//   - the root is an object and not an anyOf; every object sets additionalProperties: false; every property is
//     in `required` (optional ones are written nullable) and every required name is a property;
//   - supported keywords only: type, properties, required, additionalProperties, items, enum, const, anyOf,
//     $ref/$defs, description, title; strings: pattern, format; numbers: minimum, maximum, exclusiveMinimum,
//     exclusiveMaximum, multipleOf; arrays: minItems, maxItems (allOf, not, if/then/else, oneOf,
//     patternProperties, propertyNames, prefixItems, uniqueItems, min/maxLength, … are refused);
//   - format is one of date-time, time, date, duration, email, hostname, ipv4, ipv6, uuid;
//   - no boolean schemas; at most 10 levels of object nesting, 5000 properties, 1000 enum values, and
//     15,000 characters of property names and enum/const values.
// gemini: the function-declaration `parameters` Schema, "a select subset of an OpenAPI 3.0 schema object"
//   (ai.google.dev/api/caching#Schema; Vertex AI reference/rest/v1/Schema):
//   - fields: type, format, title, description, nullable, enum, maxItems, minItems, properties, required,
//     minProperties, maxProperties, minLength, maxLength, pattern, example, anyOf, propertyOrdering, default,
//     items, minimum, maximum, additionalProperties; nothing else (no const, oneOf, allOf, exclusive bounds,
//     $schema);
//   - type is one Type value: STRING, NUMBER, INTEGER, BOOLEAN, ARRAY, OBJECT, NULL (any case);
//   - enum values are strings; format is enum or date-time for strings, float/double for numbers, int32/int64
//     for integers;
//   - every schema reached through properties or items has a type (or anyOf).

export type Host = 'inspector' | 'openai' | 'gemini';

export interface Finding {
  host: Host;
  rule: string;
  severity: 'error' | 'warning';
  path: string;
  message: string;
}

type Node = Record<string, unknown>;
const isObj = (v: unknown): v is Node => typeof v === 'object' && v !== null && !Array.isArray(v);

const OPENAI_KEYWORDS = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'anyOf',
  '$ref',
  '$defs',
  'definitions',
  'description',
  'title',
  'pattern',
  'format',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
]);
const OPENAI_FORMATS = new Set([
  'date-time',
  'time',
  'date',
  'duration',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'uuid',
]);
const GEMINI_KEYWORDS = new Set([
  'type',
  'format',
  'title',
  'description',
  'nullable',
  'enum',
  'maxItems',
  'minItems',
  'properties',
  'required',
  'minProperties',
  'maxProperties',
  'minLength',
  'maxLength',
  'pattern',
  'example',
  'anyOf',
  'propertyOrdering',
  'default',
  'items',
  'minimum',
  'maximum',
  'additionalProperties',
]);
const GEMINI_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'array', 'object', 'null']);
const GEMINI_FORMATS: Record<string, string[]> = {
  string: ['enum', 'date-time'],
  number: ['float', 'double'],
  integer: ['int32', 'int64'],
};
const TYPED = ['type', 'enum', 'const', '$ref', 'anyOf', 'oneOf', 'allOf'];
/** Keywords whose value is one schema, a list of schemas or a map of schemas (where a walk goes next). */
const ONE = ['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames'];
const MANY = ['anyOf', 'oneOf', 'allOf', 'prefixItems'];
const MAP = ['properties', '$defs', 'definitions', 'patternProperties', 'dependentSchemas'];

interface Walk {
  findings: Finding[];
  properties: number;
  enumValues: number;
  chars: number;
  depth: number;
}

function add(
  w: Walk,
  host: Host,
  rule: string,
  severity: 'error' | 'warning',
  path: string,
  message: string,
) {
  w.findings.push({ host, rule, severity, path: path || '(root)', message });
}

function checkNode(w: Walk, node: unknown, path: string, objectDepth: number, viaKeyword: string): void {
  if (typeof node === 'boolean') {
    if (viaKeyword === 'additionalProperties') return; // boolean-valued there: closes or opens the object
    add(w, 'inspector', 'boolean-schema', 'error', path, `bare ${node} where a schema is expected`);
    add(w, 'openai', 'boolean-schema', 'error', path, 'boolean schemas are not supported');
    add(w, 'gemini', 'boolean-schema', 'error', path, 'a Schema is an object');
    return;
  }
  if (!isObj(node)) return;
  const type = node.type;
  const isObject = type === 'object' || (isObj(node.properties) && type === undefined);

  // inspector
  if (Array.isArray(type)) add(w, 'inspector', 'type-union', 'warning', path, 'type is an array; use anyOf');
  if (!TYPED.some((k) => k in node))
    add(w, 'inspector', 'missing-type', 'warning', path, 'no type, enum, const, $ref or combinator');

  // openai
  for (const k of Object.keys(node)) {
    if (!OPENAI_KEYWORDS.has(k)) add(w, 'openai', 'unsupported-keyword', 'error', path, `keyword ${k}`);
  }
  if (typeof node.format === 'string' && !OPENAI_FORMATS.has(node.format))
    add(w, 'openai', 'unsupported-format', 'error', path, `format ${node.format}`);
  if (isObject) {
    if (node.additionalProperties !== false)
      add(
        w,
        'openai',
        'additional-properties',
        'error',
        path,
        'objects must set additionalProperties: false',
      );
    const props = isObj(node.properties) ? Object.keys(node.properties) : [];
    const req = Array.isArray(node.required) ? (node.required as string[]) : [];
    for (const p of props)
      if (!req.includes(p)) add(w, 'openai', 'all-required', 'error', `${path}.${p}`, 'not in required');
    for (const r of req)
      if (!props.includes(r))
        add(w, 'openai', 'required-declared', 'error', `${path}.${r}`, 'required, not a property');
    w.properties += props.length;
    w.chars += props.reduce((n, p) => n + p.length, 0);
    w.depth = Math.max(w.depth, objectDepth + 1);
  }
  if (Array.isArray(node.enum)) {
    w.enumValues += node.enum.length;
    w.chars += node.enum.reduce((n: number, v) => n + String(v).length, 0);
  }
  if ('const' in node) w.chars += String(node.const).length;

  // gemini
  for (const k of Object.keys(node)) {
    if (!GEMINI_KEYWORDS.has(k)) add(w, 'gemini', 'unsupported-field', 'error', path, `field ${k}`);
  }
  if (type !== undefined && (typeof type !== 'string' || !GEMINI_TYPES.has(type.toLowerCase())))
    add(w, 'gemini', 'type', 'error', path, `type ${JSON.stringify(type)} is not one Type value`);
  if (Array.isArray(node.enum) && node.enum.some((v) => typeof v !== 'string'))
    add(w, 'gemini', 'enum-strings', 'error', path, 'enum values must be strings');
  if (typeof node.format === 'string') {
    const allowed = GEMINI_FORMATS[typeof type === 'string' ? type.toLowerCase() : ''] ?? [];
    if (!allowed.includes(node.format)) add(w, 'gemini', 'format', 'error', path, `format ${node.format}`);
  }
  if (type === undefined && !Array.isArray(node.anyOf))
    add(w, 'gemini', 'typed', 'error', path, 'a property schema needs a type (or anyOf)');
  if (isObj(node.properties) && Array.isArray(node.required)) {
    for (const r of node.required as string[])
      if (!(r in node.properties))
        add(w, 'gemini', 'required-declared', 'error', `${path}.${r}`, 'not a property');
  }

  // children
  const depth = isObject ? objectDepth + 1 : objectDepth;
  for (const k of ONE) if (k in node) checkNode(w, node[k], `${path}/${k}`, depth, k);
  for (const k of MANY) {
    const list = node[k];
    if (!Array.isArray(list)) continue;
    for (const [i, c] of list.entries()) checkNode(w, c, `${path}/${k}/${i}`, depth, k);
  }
  for (const k of MAP) {
    const map = node[k];
    if (isObj(map)) for (const [name, c] of Object.entries(map)) checkNode(w, c, `${path}.${name}`, depth, k);
  }
}

/** Every finding of the three rule sets on one tool input schema. */
export function checkToolSchema(schema: unknown): Finding[] {
  const w: Walk = { findings: [], properties: 0, enumValues: 0, chars: 0, depth: 0 };
  if (!isObj(schema) || schema.type !== 'object') {
    add(w, 'inspector', 'root-type', 'error', '', 'inputSchema root must be type "object"');
    add(w, 'openai', 'root-type', 'error', '', 'the root must be an object');
  }
  if (isObj(schema) && 'anyOf' in schema)
    add(w, 'openai', 'root-anyof', 'error', '', 'the root must not be anyOf');
  checkNode(w, schema, '', 0, '');
  if (w.depth > 10) add(w, 'openai', 'nesting', 'error', '', `${w.depth} levels of objects (at most 10)`);
  if (w.properties > 5000) add(w, 'openai', 'size', 'error', '', `${w.properties} properties (at most 5000)`);
  if (w.enumValues > 1000)
    add(w, 'openai', 'enum-size', 'error', '', `${w.enumValues} enum values (at most 1000)`);
  if (w.chars > 15_000)
    add(w, 'openai', 'string-size', 'error', '', `${w.chars} characters of names and values`);
  return w.findings;
}
