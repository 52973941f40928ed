import { describe, expect, it } from 'vitest';
import { SseSplitter, sseEvents } from '../../src/llm/sse.js';

// SSE framing of the upstream stream: events come out as soon as their blank line arrives.

describe('[llm:stream-passthrough] SSE splitting', () => {
  it('yields each event as soon as it is complete, across arbitrary chunk boundaries', () => {
    const s = new SseSplitter();
    expect(s.push('data: {"a"')).toEqual([]);
    expect(s.push(':1}\n')).toEqual([]);
    expect(s.push('\n: OPENROUTER PROCESSING\n\ndata: [DO')).toEqual([
      { text: 'data: {"a":1}\n\n', data: '{"a":1}' },
      { text: ': OPENROUTER PROCESSING\n\n', data: undefined },
    ]);
    expect(s.push('NE]\n\n')).toEqual([{ text: 'data: [DONE]\n\n', data: '[DONE]' }]);
  });

  it('normalizes CRLF, also when a CR and its LF arrive in different reads', () => {
    const s = new SseSplitter();
    expect(s.push('data: x\r')).toEqual([]);
    expect(s.push('\n\r\ndata: y\r\n\r\n')).toEqual([
      { text: 'data: x\n\n', data: 'x' },
      { text: 'data: y\n\n', data: 'y' },
    ]);
  });

  it('joins multi-line data and keeps other fields in the forwarded text', () => {
    const s = new SseSplitter();
    expect(s.push('event: message\ndata: a\ndata:b\nid: 7\n\n')).toEqual([
      { text: 'event: message\ndata: a\ndata:b\nid: 7\n\n', data: 'a\nb' },
    ]);
  });

  it('flushes a last event that lacks its blank line', async () => {
    async function* body() {
      yield Buffer.from('data: 1\n\n\n\ndata: 2');
    }
    const out = [];
    for await (const ev of sseEvents(body())) out.push(ev.data);
    expect(out).toEqual(['1', '2']);
  });

  it('decodes UTF-8 split across chunks', async () => {
    const bytes = Buffer.from('data: é\n\n');
    async function* body() {
      yield bytes.subarray(0, 7);
      yield bytes.subarray(7);
    }
    const out = [];
    for await (const ev of sseEvents(body())) out.push(ev.data);
    expect(out).toEqual(['é']);
  });
});
