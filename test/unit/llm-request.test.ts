import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import { chatBody, normalizeChatRequest, plainlyValid, promptBytes } from '../../src/llm/request.js';

// The model router's request rules (docs/spec.md §4.9), before anything is priced.

const msgs = [{ role: 'user', content: 'hi' }];

function refusal(body: unknown): { param: string; message: string } {
  try {
    normalizeChatRequest(body);
  } catch (e) {
    expect(e).toBeInstanceOf(GatewayError);
    const g = e as GatewayError;
    expect(g.code).toBe('invalid_input');
    const first = ((g.details?.issues ?? []) as Array<{ path: string; message: string }>)[0];
    return { param: first?.path ?? '', message: first?.message ?? '' };
  }
  throw new Error('expected a refusal');
}

describe('[llm:max-tokens] max_tokens', () => {
  it('defaults to 4096, clamps above 16384, and prefers max_completion_tokens', () => {
    expect(normalizeChatRequest({ model: 'm', messages: msgs }).maxTokens).toBe(4096);
    const big = normalizeChatRequest({ model: 'm', messages: msgs, max_tokens: 100_000 });
    expect(big).toMatchObject({ maxTokens: 16384, clamped: true });
    expect(big.upstreamBody.max_tokens).toBe(16384);
    const mct = normalizeChatRequest({
      model: 'm',
      messages: msgs,
      max_tokens: 50,
      max_completion_tokens: 70,
    });
    expect(mct.maxTokens).toBe(70);
    expect(mct.upstreamBody).not.toHaveProperty('max_completion_tokens');
    expect(refusal({ model: 'm', messages: msgs, max_tokens: 0 }).param).toBe('max_tokens');
  });
});

describe('[llm:openai-compatible] the request body', () => {
  it('requires messages: every call carries the full conversation', () => {
    expect(refusal({ model: 'm' })).toMatchObject({ param: 'messages' });
    expect(refusal({ model: 'm', messages: [] }).param).toBe('messages');
    expect(refusal([]).param).toBe('');
  });

  it('passes unknown fields through and owns model, stream options and usage', () => {
    const r = normalizeChatRequest({
      model: 'm',
      messages: msgs,
      temperature: 0.3,
      tools: [{ type: 'function', function: { name: 'f' } }],
      usage: { include: false },
      route: 'fallback',
      stream: true,
      stream_options: { include_usage: false },
    });
    expect(r.upstreamBody).toMatchObject({
      temperature: 0.3,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(r.upstreamBody).not.toHaveProperty('model');
    expect(r.upstreamBody).not.toHaveProperty('usage');
    expect(r.upstreamBody).not.toHaveProperty('route');
    expect(r.clientWantsUsage).toBe(false);
    expect(normalizeChatRequest({ model: 'm', messages: msgs }).upstreamBody).not.toHaveProperty('stream');
  });

  it('refuses fields whose cost the hold cannot know (upstream fallback lists, plugins, web search, n > 1)', () => {
    expect(refusal({ model: 'm', messages: msgs, models: ['a', 'b'] }).param).toBe('models');
    expect(refusal({ model: 'm', messages: msgs, plugins: [{ id: 'web' }] }).param).toBe('plugins');
    expect(refusal({ model: 'm', messages: msgs, web_search_options: {} }).param).toBe('web_search_options');
    expect(refusal({ model: 'm', messages: msgs, n: 3 }).param).toBe('n');
    expect(normalizeChatRequest({ model: 'm', messages: msgs, n: 1, models: null }).maxTokens).toBe(4096);
  });

  it('[llm:no-media-generation] refuses image, audio and video generation', () => {
    expect(refusal({ model: 'm', messages: msgs, modalities: ['text', 'audio'] }).message).toMatch(
      /not supported/,
    );
    expect(refusal({ model: 'm', messages: msgs, audio: { voice: 'alloy', format: 'mp3' } }).param).toBe(
      'audio',
    );
    expect(normalizeChatRequest({ model: 'm', messages: msgs, modalities: ['text'] }).model).toBe('m');
  });

  it('accepts text and image parts; refuses parts it cannot price', () => {
    const parts = [
      { type: 'text', text: 'what is this?' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${'A'.repeat(10_000)}` } },
    ];
    const r = normalizeChatRequest({ model: 'm', messages: [{ role: 'user', content: parts }] });
    expect(r.prompt.images).toBe(1);
    expect(r.prompt.bytes).toBeLessThan(200); // the image's base64 is priced per image, not per byte
    const bad = refusal({ model: 'm', messages: [{ role: 'user', content: [{ type: 'input_audio' }] }] });
    expect(bad.param).toBe('messages.0.content.0.type');
  });
});

describe('[llm:hold-worst-case] prompt size', () => {
  it('counts the UTF-8 bytes of messages, tools and response format', () => {
    const messages = [{ role: 'user', content: 'héllo' }];
    expect(promptBytes({ messages })).toBe(Buffer.byteLength(JSON.stringify({ messages })));
    const tools = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }];
    expect(promptBytes({ messages, tools })).toBe(Buffer.byteLength(JSON.stringify({ messages, tools })));
  });
});

describe('[llm:openai-compatible] the quick check of a plain body', () => {
  const base = { model: 'openai/gpt-5', messages: msgs };
  const variants: Array<Record<string, unknown>> = [
    base,
    { ...base, stream: true, stream_options: { include_usage: true } },
    { ...base, stream: null, stream_options: null, max_tokens: null, n: null, modalities: null },
    { ...base, max_tokens: 10, max_completion_tokens: 20, n: 1, modalities: ['text'], extra: { a: 1 } },
    { ...base, messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }, { type: 'image_url' }] }] },
    { ...base, messages: [{ role: 'assistant', content: null }, { role: 'tool' }] },
    { ...base, model: '' },
    { ...base, model: 'x'.repeat(257) },
    { ...base, model: 7 },
    { ...base, messages: [] },
    { ...base, messages: 'hi' },
    { ...base, messages: [null] },
    { ...base, messages: [['user']] },
    { ...base, messages: [{ role: '' }] },
    { ...base, messages: [{ role: 'user', content: 5 }] },
    { ...base, messages: [{ role: 'user', content: [{ type: 3 }] }] },
    { ...base, messages: [{ role: 'user', content: ['text'] }] },
    { ...base, max_tokens: 0 },
    { ...base, max_tokens: 1.5 },
    { ...base, max_tokens: '10' },
    { ...base, max_completion_tokens: -1 },
    { ...base, max_tokens: 2 ** 60 },
    { ...base, stream: 'yes' },
    { ...base, stream_options: [] },
    { ...base, stream_options: { include_usage: 1 } },
    { ...base, n: 1.5 },
    { ...base, modalities: 'text' },
    { ...base, modalities: ['text', 2] },
  ];

  it.each(variants.map((v, i) => [i, v] as const))(
    'body %i: never accepted where the schema refuses',
    (_i, v) => {
      const schema = chatBody.safeParse(v).success;
      // A subset: what the quick check accepts the schema accepts; what it refuses, the schema decides.
      if (plainlyValid(v)) expect(schema).toBe(true);
      // And on these plain bodies the two agree exactly, except the schema's wider integers.
      if (v.max_tokens !== 2 ** 60) expect(plainlyValid(v)).toBe(schema);
    },
  );
});
