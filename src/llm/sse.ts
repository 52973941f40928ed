import type { SseEvent } from './types.js';

// Splits a text/event-stream into events as the bytes arrive. Events are yielded as soon as their blank line
// is seen, never held for more; a partial event waits only for the rest of its own bytes.

export class SseSplitter {
  private buf = '';
  /** A chunk ended in `\r`: it may be the first half of a `\r\n` split across reads. */
  private pendingCr = false;

  push(text: string): SseEvent[] {
    let t = text;
    if (this.pendingCr) {
      t = `\r${t}`;
      this.pendingCr = false;
    }
    if (t.includes('\r')) {
      if (t.endsWith('\r')) {
        this.pendingCr = true;
        t = t.slice(0, -1);
      }
      t = t.replace(/\r\n?/g, '\n');
    }
    this.buf += t;
    const out: SseEvent[] = [];
    let i = this.buf.indexOf('\n\n');
    while (i >= 0) {
      const block = this.buf.slice(0, i);
      this.buf = this.buf.slice(i + 2);
      const ev = parseBlock(block);
      if (ev) out.push(ev);
      i = this.buf.indexOf('\n\n');
    }
    return out;
  }

  /** What is left when the stream ends (an event missing its final blank line). */
  flush(): SseEvent[] {
    const rest = (this.pendingCr ? `${this.buf}\n` : this.buf).replace(/\n+$/, '');
    this.buf = '';
    this.pendingCr = false;
    const ev = rest ? parseBlock(rest) : undefined;
    return ev ? [ev] : [];
  }
}

function parseBlock(block: string): SseEvent | undefined {
  // Leading blank lines between events are not events.
  const body = block.replace(/^\n+/, '');
  if (body === '') return undefined;
  let data: string | undefined;
  for (const line of body.split('\n')) {
    if (!line.startsWith('data:')) continue;
    const v = line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5);
    data = data === undefined ? v : `${data}\n${v}`;
  }
  return { text: `${body}\n\n`, data };
}

/** The events of a byte stream (an undici response body). */
export async function* sseEvents(body: AsyncIterable<Buffer>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  const splitter = new SseSplitter();
  for await (const chunk of body) {
    for (const ev of splitter.push(decoder.decode(chunk, { stream: true }))) yield ev;
  }
  for (const ev of splitter.push(decoder.decode())) yield ev;
  for (const ev of splitter.flush()) yield ev;
}
