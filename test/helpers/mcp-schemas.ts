import { z } from 'zod';

// The two public formats tollgate publishes about itself, as zod mirrors of their JSON Schemas (only what they
// constrain; both are open objects): the MCP registry's server.json, schema 2025-12-11
// (modelcontextprotocol/registry docs/reference/server-json), and the MCP server card, schema v1
// (modelcontextprotocol/experimental-ext-server-card schema.ts, SEP-2127).

const NAME = z
  .string()
  .min(3)
  .max(200)
  .regex(/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/);
const VERSION = z
  .string()
  .max(255)
  .refine((v) => !/^[\^~><=]|\.[x*]$|^latest$/.test(v), 'a specific version, not a range');
const URI = z.url();

const input = z.object({
  description: z.string().optional(),
  isRequired: z.boolean().optional(),
  isSecret: z.boolean().optional(),
  format: z.enum(['string', 'number', 'boolean', 'filepath']).optional(),
  default: z.string().optional(),
  placeholder: z.string().optional(),
  value: z.string().optional(),
  choices: z.array(z.string()).optional(),
});
const keyValueInput = input.extend({ name: z.string(), variables: z.record(z.string(), input).optional() });
const repository = z.object({
  url: URI,
  source: z.string(),
  subfolder: z.string().optional(),
  id: z.string().optional(),
});
const icon = z.object({
  src: URI,
  mimeType: z.string().optional(),
  sizes: z.array(z.string()).optional(),
  theme: z.enum(['light', 'dark']).optional(),
});

/** The 2025-12-11 remote: an http(s) URL whose {variables} (in the host too) are defined next to it. */
const registryRemote = z
  .object({
    type: z.enum(['streamable-http', 'sse']),
    url: z.string().regex(/^https?:\/\/[^\s]+$/),
    headers: z.array(keyValueInput).optional(),
    variables: z.record(z.string(), input).optional(),
  })
  .refine(
    (r) => [...r.url.matchAll(/\{([a-zA-Z_][a-zA-Z0-9_]*)\}/g)].every((m) => r.variables?.[m[1] as string]),
    'every {variable} in url is defined in variables',
  );

export const serverJsonSchema = z.object({
  $schema: z.literal('https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json'),
  name: NAME,
  description: z.string().min(1).max(100),
  title: z.string().min(1).max(100).optional(),
  version: VERSION,
  websiteUrl: URI.optional(),
  repository: repository.optional(),
  icons: z.array(icon).optional(),
  remotes: z.array(registryRemote).optional(),
  _meta: z
    .record(z.string(), z.unknown())
    .refine(
      (m) => Object.keys(m).every((k) => k === 'io.modelcontextprotocol.registry/publisher-provided'),
      'the official registry keeps only io.modelcontextprotocol.registry/publisher-provided',
    )
    .refine(
      (m) => JSON.stringify(m['io.modelcontextprotocol.registry/publisher-provided'] ?? {}).length <= 4096,
      'publisher-provided metadata is at most 4 KiB',
    )
    .optional(),
});

const META_KEY =
  /^(?:[a-zA-Z](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*\/)?(?:[a-zA-Z0-9](?:[a-zA-Z0-9._-]*[a-zA-Z0-9])?)?$/;

export const serverCardSchema = z.object({
  $schema: z.literal('https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json'),
  name: NAME,
  version: VERSION,
  description: z.string().min(1).max(100),
  title: z.string().min(1).max(100).optional(),
  websiteUrl: URI.optional(),
  repository: repository.optional(),
  icons: z.array(icon).optional(),
  remotes: z
    .array(
      z.object({
        type: z.enum(['streamable-http', 'sse']),
        url: z.string().regex(/^(https?:\/\/[^\s]+|\{[a-zA-Z_][a-zA-Z0-9_]*\}[^\s]*)$/),
        headers: z.array(keyValueInput).optional(),
        variables: z.record(z.string(), input).optional(),
        supportedProtocolVersions: z.array(z.string()).optional(),
      }),
    )
    .optional(),
  _meta: z
    .record(z.string(), z.unknown())
    .refine((m) => Object.keys(m).every((k) => META_KEY.test(k)), '_meta keys are prefix/name')
    .optional(),
});
