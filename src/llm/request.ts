import { z } from 'zod';
import { type FieldIssue, invalidInput } from '../errors.js';
import { zodIssues } from '../run/zod-issues.js';
import type { PromptEstimate } from './cost.js';

// The request rules of the model router (docs/spec.md §4.9, §8), applied before anything is priced or held. The body is
// the OpenAI chat-completions format; fields we do not need to understand pass through to the upstream, except
// those that would make the call cost more than the hold can know in advance.

/** docs/spec.md §4.9 rule 3 and §8. */
export const DEFAULT_MAX_TOKENS = 4_096;
export const MAX_TOKENS_CAP = 16_384;

/** Content parts the router can price: text (bytes) and input images (a fixed allowance each). */
const PRICED_PARTS = new Set(['text', 'image_url']);
const MEDIA = new Set(['image', 'audio', 'video']);

/** Fields refused because their cost is outside the hold (or would bypass the tiers' ceilings). */
const REFUSED_FIELDS: Record<string, string> = {
  models:
    'upstream fallback lists are not accepted; use a tier alias (platform/cheap, platform/mid, platform/best) for fallback',
  plugins: 'upstream plugins are not supported: their cost cannot be held in advance',
  web_search_options: 'web search is not supported by the model router: its cost cannot be held in advance',
};
/** Fields the router sets itself for every attempt. */
const OWNED_FIELDS = [
  'model',
  'max_tokens',
  'max_completion_tokens',
  'stream',
  'stream_options',
  'usage',
  'route',
];

const part = z.looseObject({ type: z.string() });
const message = z.looseObject({
  role: z.string().min(1),
  content: z.union([z.string(), z.array(part), z.null()]).optional(),
});
export const chatBody = z.looseObject({
  model: z.string().min(1).max(256),
  messages: z.array(message).min(1),
  max_tokens: z.number().int().min(1).nullish(),
  max_completion_tokens: z.number().int().min(1).nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().nullish() }).nullish(),
  n: z.number().int().nullish(),
  modalities: z.array(z.string()).nullish(),
});

type ChatBody = z.output<typeof chatBody>;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isNullish = (v: unknown) => v === undefined || v === null;
const isCount = (v: unknown) => typeof v === 'number' && Number.isSafeInteger(v);

/**
 * True when `chatBody` accepts the body as it is (a subset of what it accepts: when in doubt, false, and the
 * schema decides). test/unit/llm-request.test.ts checks the two agree.
 */
export function plainlyValid(b: Record<string, unknown>): boolean {
  if (typeof b.model !== 'string' || b.model.length < 1 || b.model.length > 256) return false;
  const messages = b.messages;
  if (!Array.isArray(messages) || messages.length < 1) return false;
  for (const m of messages) {
    if (!isObject(m) || typeof m.role !== 'string' || m.role.length < 1) return false;
    const c = m.content;
    if (Array.isArray(c)) {
      for (const p of c) if (!isObject(p) || typeof p.type !== 'string') return false;
    } else if (!(c === undefined || c === null || typeof c === 'string')) return false;
  }
  for (const f of ['max_tokens', 'max_completion_tokens'] as const) {
    const v = b[f];
    if (!isNullish(v) && !(isCount(v) && (v as number) >= 1)) return false;
  }
  if (!isNullish(b.stream) && typeof b.stream !== 'boolean') return false;
  const so = b.stream_options;
  if (!isNullish(so)) {
    if (!isObject(so)) return false;
    if (!isNullish(so.include_usage) && typeof so.include_usage !== 'boolean') return false;
  }
  if (!isNullish(b.n) && !isCount(b.n)) return false;
  const mod = b.modalities;
  if (!isNullish(mod) && !(Array.isArray(mod) && mod.every((x) => typeof x === 'string'))) return false;
  return true;
}

export interface ChatRequest {
  /** An exact upstream slug or a tier alias. */
  model: string;
  stream: boolean;
  /** The caller asked for the final usage chunk (`stream_options.include_usage`). */
  clientWantsUsage: boolean;
  /** Effective completion limit sent upstream. */
  maxTokens: number;
  /** The caller asked for more than MAX_TOKENS_CAP and was clamped. */
  clamped: boolean;
  prompt: PromptEstimate;
  /** The body for the upstream, without `model` (set per attempt). */
  upstreamBody: Record<string, unknown>;
}

/** Validates and normalizes a chat-completions body; a GatewayError `invalid_input` (400) says what to fix. */
export function normalizeChatRequest(raw: unknown): ChatRequest {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw invalidInput([{ path: '', message: 'the request body must be a JSON object' }]);
  }
  const obj = raw as Record<string, unknown>;
  if (obj.messages === undefined) {
    throw invalidInput([
      {
        path: 'messages',
        message:
          'required: send the full conversation on every call (the router keeps no state between calls)',
      },
    ]);
  }
  // The common, valid body is checked by hand (plainly valid: every field as the schema wants it); anything
  // else goes through the schema, which accepts the same and words the refusals. A zod schema is slow until V8
  // has optimised it (tens of µs a call for the first few thousand calls), which is time to first byte.
  let body: ChatBody;
  if (plainlyValid(obj)) body = obj as ChatBody;
  else {
    const parsed = chatBody.safeParse(raw);
    if (!parsed.success) throw invalidInput(zodIssues(parsed.error, raw));
    body = parsed.data;
  }

  const issues: FieldIssue[] = [];
  for (const [field, why] of Object.entries(REFUSED_FIELDS)) {
    if (obj[field] !== undefined && obj[field] !== null) issues.push({ path: field, message: why });
  }
  const media = (body.modalities ?? []).filter((m) => m !== 'text');
  if (media.length > 0 || (obj.audio !== undefined && obj.audio !== null)) {
    issues.push({
      path: media.length > 0 ? 'modalities' : 'audio',
      message:
        'image, audio and video generation are not supported by the model router; it answers with text',
    });
  }
  if (body.n !== undefined && body.n !== null && body.n !== 1) {
    issues.push({ path: 'n', message: 'only n = 1 is supported (one completion per call)' });
  }

  let images = 0;
  body.messages.forEach((m, i) => {
    if (!Array.isArray(m.content)) return;
    m.content.forEach((p, j) => {
      if (p.type === 'image_url') images++;
      else if (!PRICED_PARTS.has(p.type)) {
        issues.push({
          path: `messages.${i}.content.${j}.type`,
          message: `content parts of type "${p.type.slice(0, 40)}" are not supported; send text and image_url parts`,
        });
      }
    });
  });
  if (issues.length > 0) throw invalidInput(issues);

  const asked = body.max_completion_tokens ?? body.max_tokens ?? DEFAULT_MAX_TOKENS;
  const maxTokens = Math.min(asked, MAX_TOKENS_CAP);
  const stream = body.stream === true;

  const upstreamBody: Record<string, unknown> = { ...obj };
  for (const f of OWNED_FIELDS) delete upstreamBody[f];
  upstreamBody.max_tokens = maxTokens;
  if (stream) {
    upstreamBody.stream = true;
    // The usage (and OpenRouter's cost) arrives in a final chunk only when asked for.
    upstreamBody.stream_options = { include_usage: true };
  }

  return {
    model: body.model,
    stream,
    clientWantsUsage: body.stream_options?.include_usage === true,
    maxTokens,
    clamped: asked > MAX_TOKENS_CAP,
    prompt: { bytes: promptBytes(obj), images },
    upstreamBody,
  };
}

/**
 * UTF-8 bytes of everything that becomes prompt tokens: the messages (image parts left out: they are priced
 * per image), tool definitions, the tool choice and the response format.
 */
export function promptBytes(body: Record<string, unknown>): number {
  const json = JSON.stringify(
    {
      messages: body.messages,
      tools: body.tools,
      functions: body.functions,
      tool_choice: body.tool_choice,
      response_format: body.response_format,
    },
    (_key, value: unknown) =>
      value !== null && typeof value === 'object' && (value as { type?: unknown }).type === 'image_url'
        ? undefined
        : value,
  );
  return Buffer.byteLength(json, 'utf8');
}

/** True when a model listing's output modalities include images, audio or video (refused: docs/spec.md §4.9 rule 6). */
export function generatesMedia(outputModalities: readonly string[] | undefined): boolean {
  return (outputModalities ?? []).some((m) => MEDIA.has(m));
}
