import { Parser } from 'htmlparser2';
import { isDropped, K, kindOf } from './html-tags.js';

// HTML → Markdown (or plain text) in one streaming pass over htmlparser2's tokens. A DOM (linkedom) plus
// Turndown took ~60 ms for a 100 KB page here and Readability another ~170 ms; the built-in engine needs
// several hundred pages per second, so the sink below writes Markdown straight from the token stream.
// What is dropped (scripts, boilerplate) is decided by the caller's scanner (src/engine/scan.ts) or, for plain
// `htmlToMarkdown`, by `isDropped` (src/lib/html-tags.ts).

const isBlock = (k: number) => k === K.BLOCK || (k >= K.MAIN && k <= K.EDGE) || k === K.HTML || k === K.BODY;
const MARKERS: Record<number, string> = { [K.STRONG]: '**', [K.EM]: '_', [K.CODE]: '`', [K.DEL]: '~~' };

/** Stands for a <br> until whitespace is collapsed (a private-use character: never in real text). */
const BR = '\uE000';
const WS = /[ \t\n\r\f\u00a0]+/g;
const MD_SPECIAL = /[\\`*[\]]|(?<![\p{L}\p{N}])_|_(?![\p{L}\p{N}])/gu;
/** Cheap pre-test: most text has none of these, and the full pattern (lookbehind, Unicode) is slow. */
const MD_MAYBE = /[\\`*_[\]]/;
const LINE_START_SPECIAL = /^(#{1,6}\s|[-+]\s|>|\d+[.)]\s)/;

interface ListFrame {
  ordered: boolean;
  n: number;
}

interface TableFrame {
  rows: string[][];
  row: string[] | null;
  cellStart: number;
}

/** Makes a link or image URL absolute (undefined: unusable). */
export type UrlResolver = (href: string) => string | undefined;

/**
 * Receives open/close/text events and writes Markdown (`mode: 'markdown'`) or plain text (`mode: 'text'`).
 * Links are made absolute against `baseUrl`, or by `resolve` when the caller already resolves them.
 */
export class MarkdownSink {
  private readonly md: boolean;
  private out: string[] = [];
  private lastTight = false;
  private inline: string[] = [];
  private readonly lists: ListFrame[] = [];
  private liMarker: string | null = null;
  private quote = 0;
  private heading = 0;
  private pre = 0;
  private preText = '';
  private preLang = '';
  private readonly links: Array<{ href: string; start: number }> = [];
  private readonly marks: Array<{ kind: number; start: number }> = [];
  private readonly tables: TableFrame[] = [];
  private tableDepth = 0;

  private readonly resolve: UrlResolver;

  constructor(mode: 'markdown' | 'text', base?: string | UrlResolver) {
    this.md = mode === 'markdown';
    this.resolve = typeof base === 'function' ? base : (href) => absolute(href, base);
  }

  open(kind: number, attrs: Record<string, string>): void {
    if (this.pre > 0) {
      if (kind === K.PRE) this.pre++;
      return;
    }
    if (kind >= K.H1 && kind <= K.H6) {
      this.flush();
      this.heading = kind - K.H1 + 1;
      return;
    }
    if (isBlock(kind)) {
      this.flush();
      return;
    }
    switch (kind) {
      case K.BR:
        this.inline.push(BR);
        return;
      case K.UL:
      case K.OL:
        this.flush();
        this.lists.push({ ordered: kind === K.OL, n: Number(attrs.start) || 1 });
        return;
      case K.LI: {
        this.flush();
        const list = this.lists[this.lists.length - 1];
        if (!this.md) this.liMarker = '';
        else if (list?.ordered) this.liMarker = `${list.n++}. `;
        else this.liMarker = '- ';
        return;
      }
      case K.QUOTE:
        this.flush();
        this.quote++;
        return;
      case K.PRE:
        this.flush();
        this.pre = 1;
        this.preText = '';
        this.preLang = /(?:^|\s)(?:language|lang)-([\w+#-]+)/.exec(attrs.class ?? '')?.[1] ?? '';
        return;
      case K.HR:
        this.flush();
        if (this.md) this.emit('---', false);
        return;
      case K.TABLE:
        if (this.tableDepth++ === 0) {
          this.flush();
          this.tables.push({ rows: [], row: null, cellStart: 0 });
        }
        return;
      case K.TR:
        if (this.tableDepth === 1) this.table().row = [];
        return;
      case K.CELL:
        if (this.tableDepth === 1) this.table().cellStart = this.inline.length;
        return;
      case K.A:
        if (this.md && attrs.href !== undefined) {
          this.links.push({ href: attrs.href, start: this.inline.length });
        }
        return;
      case K.IMG: {
        if (!this.md) {
          if (attrs.alt) this.inline.push(attrs.alt);
          return;
        }
        const src = this.resolve(attrs.src ?? '');
        if (src && !src.startsWith('data:'))
          this.inline.push(`![${escapeMd(clean(attrs.alt ?? ''))}](${src})`);
        return;
      }
      case K.STRONG:
      case K.EM:
      case K.CODE:
      case K.DEL:
        if (this.md) {
          this.marks.push({ kind, start: this.inline.length });
          this.inline.push(MARKERS[kind] as string);
        }
        return;
    }
  }

  close(kind: number): void {
    if (this.pre > 0) {
      if (kind !== K.PRE || --this.pre > 0) return;
      const body = this.preText.replace(/^\n/, '').replace(/\s+$/, '');
      if (!body) return;
      if (this.md) {
        const fence = body.includes('```') ? '~~~~' : '```';
        this.emit(`${fence}${this.preLang}\n${body}\n${fence}`, false);
      } else this.emit(body, false);
      return;
    }
    if (kind >= K.H1 && kind <= K.H6) {
      this.flush();
      this.heading = 0;
      return;
    }
    if (isBlock(kind)) {
      this.flush();
      return;
    }
    switch (kind) {
      case K.LI:
        this.flush();
        this.liMarker = null;
        return;
      case K.UL:
      case K.OL:
        this.flush();
        this.lists.pop();
        // Two lists in a row stay two lists: a blank line after the outermost one.
        if (this.lists.length === 0) this.lastTight = false;
        return;
      case K.QUOTE:
        this.flush();
        this.quote = Math.max(0, this.quote - 1);
        return;
      case K.TABLE:
        if (--this.tableDepth === 0) this.renderTable();
        return;
      case K.TR: {
        if (this.tableDepth !== 1) return;
        const t = this.table();
        if (t.row && t.row.length > 0) t.rows.push(t.row);
        t.row = null;
        return;
      }
      case K.CELL: {
        if (this.tableDepth !== 1) return;
        const t = this.table();
        const cell = clean(this.inline.splice(t.cellStart).join(''));
        if (!t.row) t.row = [];
        t.row.push(this.md && cell.includes('|') ? cell.replace(/\|/g, '\\|') : cell);
        return;
      }
      case K.A:
        this.closeLink();
        return;
      case K.STRONG:
      case K.EM:
      case K.CODE:
      case K.DEL:
        this.unmark(kind);
        return;
    }
  }

  text(t: string): void {
    if (this.pre > 0) {
      this.preText += t;
      return;
    }
    if (!this.md) {
      this.inline.push(t);
      return;
    }
    const inCode = this.marks.length > 0 && this.marks[this.marks.length - 1]?.kind === K.CODE;
    this.inline.push(inCode ? t : escapeMd(t));
  }

  /** The finished document. */
  finish(): string {
    if (this.tableDepth > 0) {
      this.tableDepth = 1;
      this.renderTable();
    }
    this.flush();
    return this.out.join('');
  }

  private unmark(kind: number): void {
    if (!this.md) return;
    const i = this.marks.findLastIndex((m) => m.kind === kind);
    if (i < 0) return;
    const m = this.marks[i] as { kind: number; start: number };
    this.marks.length = i;
    const marker = this.inline[m.start] as string;
    const inner = this.inline.slice(m.start + 1).join('');
    const trimmed = clean(inner);
    // Markers must hug the text (`**a**`, not `** a **`), and empty emphasis is dropped.
    this.inline.length = m.start;
    if (!trimmed) {
      if (inner) this.inline.push(' ');
      return;
    }
    const lead = isSpace(inner.charCodeAt(0)) ? ' ' : '';
    const trail = isSpace(inner.charCodeAt(inner.length - 1)) ? ' ' : '';
    this.inline.push(`${lead}${marker}${trimmed}${marker}${trail}`);
  }

  private closeLink(): void {
    const link = this.links.pop();
    if (!link) return;
    const label = clean(this.inline.slice(link.start).join(''));
    const href = this.resolve(link.href);
    this.inline.length = link.start;
    if (!label) return;
    if (!href || /^(javascript|data|vbscript):/i.test(href)) this.inline.push(label);
    else
      this.inline.push(
        `[${label}](${/[()\s]/.test(href) ? href.replace(/[()\s]/g, encodeURIComponent) : href})`,
      );
  }

  private table(): TableFrame {
    return this.tables[this.tables.length - 1] as TableFrame;
  }

  private renderTable(): void {
    const t = this.tables.pop();
    if (!t) return;
    if (t.row && t.row.length > 0) t.rows.push(t.row);
    if (t.rows.length === 0) return;
    if (!this.md) {
      this.emit(t.rows.map((r) => r.join('\t')).join('\n'), false);
      return;
    }
    const width = Math.max(...t.rows.map((r) => r.length));
    const line = (r: string[]) => `| ${Array.from({ length: width }, (_, i) => r[i] ?? '').join(' | ')} |`;
    const [head, ...body] = t.rows;
    const sep = `| ${Array.from({ length: width }, () => '---').join(' | ')} |`;
    this.emit([line(head as string[]), sep, ...body.map(line)].join('\n'), false);
  }

  private flush(): void {
    if (this.inline.length === 0 || this.tableDepth > 0) return;
    const text = clean(this.inline.join(''));
    this.inline = [];
    this.links.length = 0;
    this.marks.length = 0;
    if (!text) return;
    const quote = this.md ? '> '.repeat(this.quote) : '';
    const depth = Math.max(0, this.lists.length - 1);
    const indent = this.md ? '  '.repeat(depth) : '';
    let first: string;
    let rest: string;
    let tight = false;
    if (this.heading > 0 && this.md) {
      first = `${quote}${'#'.repeat(this.heading)} `;
      rest = quote;
    } else if (this.liMarker !== null) {
      first = `${quote}${indent}${this.liMarker}`;
      rest = `${quote}${indent}${' '.repeat(this.liMarker.length)}`;
      this.liMarker = null;
      tight = true;
    } else if (this.lists.length > 0) {
      first = rest = `${quote}${indent}  `;
    } else {
      first = rest = quote;
    }
    let body = text;
    if (this.md && this.heading === 0 && LINE_START_SPECIAL.test(body)) body = `\\${body}`;
    if (body.includes(BR))
      body = body
        .split(BR)
        .map((l) => l.trim())
        .join(`\n${rest}`);
    this.emit(first + body, tight);
  }

  private emit(block: string, tight: boolean): void {
    if (this.out.length > 0) this.out.push(tight && this.lastTight ? '\n' : '\n\n');
    this.out.push(block);
    this.lastTight = tight;
  }
}

/** Whitespace that collapsing would change: anything but single spaces. */
const NEEDS_COLLAPSE = /[\t\n\r\f\u00a0]| {2}/;

function clean(s: string): string {
  // The test is much cheaper than a replace that changes nothing (most text is already single-spaced).
  const t = NEEDS_COLLAPSE.test(s) ? s.replace(WS, ' ') : s;
  return (t.includes(BR) ? t.replace(/ ?\uE000 ?/g, BR) : t).trim();
}

function isSpace(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13 || c === 12 || c === 0xa0;
}

function escapeMd(t: string): string {
  return MD_MAYBE.test(t) ? t.replace(MD_SPECIAL, '\\$&') : t;
}

/** `href` made absolute against `base` (unchanged when there is no base); undefined if it cannot be. */
export function absolute(href: string, base: string | undefined): string | undefined {
  const h = href.trim();
  if (!h) return undefined;
  if (/^[a-z][a-z0-9+.-]*:/i.test(h)) return h;
  if (!base) return h;
  try {
    return new URL(h, base).toString();
  } catch {
    return undefined;
  }
}

export interface MarkdownOptions {
  /** Base URL for relative links and images. */
  baseUrl?: string;
}

/** Converts a whole document; non-content elements (scripts, styles, head) are dropped. */
export function htmlToMarkdown(
  html: string,
  opts: MarkdownOptions = {},
): { markdown: string; title: string | null } {
  const sink = new MarkdownSink('markdown', opts.baseUrl);
  let drop = 0;
  let inTitle = false;
  let title = '';
  const parser = new Parser(
    {
      onopentag(name, attrs) {
        const kind = kindOf(name);
        if (kind === K.TITLE) inTitle = true;
        if (drop > 0 || isDropped(kind)) {
          drop++;
          return;
        }
        sink.open(kind, attrs);
      },
      onclosetag(name) {
        const kind = kindOf(name);
        if (kind === K.TITLE) inTitle = false;
        if (drop > 0) {
          drop--;
          return;
        }
        sink.close(kind);
      },
      ontext(t) {
        if (inTitle) title += t;
        else if (drop === 0) sink.text(t);
      },
    },
    { decodeEntities: true },
  );
  parser.end(html);
  return { markdown: sink.finish(), title: title.trim() || null };
}
