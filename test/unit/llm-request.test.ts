import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import { normalizeChatRequest, promptBytes } from '../../src/llm/request.js';

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
