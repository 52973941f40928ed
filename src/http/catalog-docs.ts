import { type Action, actions } from '../../catalog/index.js';
import { inputJsonSchema, outputJsonSchema } from '../../catalog/json-schema.js';
import { ERROR_CODES } from '../errors.js';
import { type Availability, availabilityKey, type UnavailableListing } from '../run/availability.js';

// The free, machine-readable views of the catalog: GET /api/run, GET /api/run/{service}/{action} and
// GET /openapi.json. All are built once at first use and served from memory.

export interface Descriptor {
  id: string;
  service: string;
  action: string;
  tool_name: string;
  title: string;
  description: string;
  price_cents: number;
  price_usd: string;
  access: string;
  strict: boolean;
  method: 'POST';
  path: string;
  annotations: Action['annotations'];
  poll_with: string | null;
  input_schema: Record<string, unknown>;
  output_schema: Record<string, unknown>;
  example: unknown;
}

function describe(a: Action): Descriptor {
  return {
    id: a.id,
    service: a.service,
    action: a.action,
    tool_name: a.toolName,
    title: a.title,
    description: a.description,
    price_cents: a.priceCents,
    price_usd: (a.priceCents / 100).toFixed(2),
    access: a.access,
    strict: a.strict,
    method: 'POST',
    path: `/api/run/${a.id}`,
    annotations: a.annotations,
    poll_with: a.pollWith ?? null,
    input_schema: inputJsonSchema(a),
    output_schema: outputJsonSchema(a),
    example: a.example,
  };
}

let descriptors: Map<string, Descriptor> | undefined;
const listings = new Map<string, unknown>();
let openapi: unknown;

/** Whether this gateway can run the action now, and why not: what a descriptor adds to the static facts. */
function availabilityFields(state: Availability | undefined) {
  return {
    available: state?.available ?? true,
    ...(state?.reason ? { availability_note: state.reason } : {}),
    ...(state && !state.available && state.env?.length ? { operator_env: state.env } : {}),
  };
}

function staticDescriptor(id: string): Descriptor | undefined {
  descriptors ??= new Map(actions.map((a) => [a.id, describe(a)]));
  return descriptors.get(id);
}

/** The free descriptor of one action, with its availability on this gateway (listed or not). */
export function descriptorOf(id: string, avail?: ReadonlyMap<string, Availability>) {
  const d = staticDescriptor(id);
  return d && { ...d, ...availabilityFields(avail?.get(id)) };
}

/**
 * GET /api/run: the actions this gateway can run now; with `mark`, also the others, flagged with the reason.
 * Built once per availability state.
 */
export function catalogListing(avail: ReadonlyMap<string, Availability>, mode: UnavailableListing): unknown {
  const key = `${mode}|${availabilityKey(avail)}`;
  let listing = listings.get(key);
  if (!listing) {
    const listed = actions.filter((a) => mode === 'mark' || avail.get(a.id)?.available !== false);
    listing = {
      count: listed.length,
      actions: listed.map((a) => ({
        id: a.id,
        tool_name: a.toolName,
        title: a.title,
        description: a.description,
        price_cents: a.priceCents,
        access: a.access,
        strict: a.strict,
        path: `/api/run/${a.id}`,
        ...availabilityFields(avail.get(a.id)),
      })),
    };
    if (listings.size > 64) listings.clear();
    listings.set(key, listing);
  }
  return listing;
}

export function openApiDocument(publicUrl: string): unknown {
  if (openapi) return openapi;
  const paths: Record<string, unknown> = {};
  for (const a of actions) {
    const d = staticDescriptor(a.id) as Descriptor;
    const responses: Record<string, unknown> = {
      '200': {
        description: 'Success. `charged_cents` is what was charged.',
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['ok', 'data', 'charged_cents'],
              properties: {
                ok: { const: true },
                data: d.output_schema,
                charged_cents: { type: 'integer', minimum: 0 },
                transaction_id: { type: 'string' },
              },
            },
          },
        },
      },
    };
    for (const status of new Set(Object.values(ERROR_CODES).map((c) => c.status))) {
      responses[String(status)] = { $ref: '#/components/responses/Error' };
    }
    paths[`/api/run/${a.id}`] = {
      post: {
        operationId: a.toolName,
        summary: a.title,
        description: a.description,
        tags: [a.service],
        'x-price-cents': a.priceCents,
        'x-strict': a.strict,
        security: a.access === 'public' ? [] : [{ apiKey: [] }],
        parameters: [
          {
            name: 'Idempotency-Key',
            in: 'header',
            required: false,
            schema: { type: 'string', maxLength: 255 },
            description: 'Retrying with the same key and body replays the result without a new charge.',
          },
        ],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: d.input_schema, example: a.example } },
        },
        responses,
      },
      get: {
        operationId: `${a.toolName}_describe`,
        summary: `Describe ${a.id} (free)`,
        tags: [a.service],
        security: [],
        responses: { '200': { description: 'Descriptor: price, schemas, example.' } },
      },
    };
  }
  openapi = {
    openapi: '3.1.0',
    info: {
      title: 'tollgate',
      version: '1.0.0',
      description:
        'Pay-per-call catalog of actions for agents. Every call has a price known before it runs and is charged only on success.',
    },
    servers: [{ url: publicUrl }],
    paths,
    components: {
      securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'API key tg_sk_…' } },
      responses: {
        Error: {
          description: 'Failure; nothing was charged.',
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['ok', 'error', 'charged_cents'],
                properties: {
                  ok: { const: false },
                  error: {
                    type: 'object',
                    required: ['code', 'message', 'retryable'],
                    properties: {
                      code: { enum: Object.keys(ERROR_CODES) },
                      message: { type: 'string' },
                      retryable: { type: 'boolean' },
                      details: { type: 'object' },
                    },
                  },
                  charged_cents: { const: 0 },
                },
              },
            },
          },
        },
      },
    },
  };
  return openapi;
}
