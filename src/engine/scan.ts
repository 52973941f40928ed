import { Parser } from 'htmlparser2';
import { isDropped, K, kindOf } from '../lib/html-tags.js';
import { absolute, MarkdownSink } from '../lib/markdown.js';
import { normalizeUrl } from './url.js';

// One parse of a page gives everything the engine needs: Markdown, plain text, cleaned HTML, links, metadata
// and the signals used to decide whether the page needs a browser. Parsing once matters: the tokenizer is
// most of the cost (~3 ms for 100 KB here).

export interface ScanOptions {
  /** The page's URL: base for relative links. */
  baseUrl: string;
  /** Keep only the main content: <main>/<article> when present, and never nav, asides or ads. */
  mainContent?: boolean;
  markdown?: boolean;
  text?: boolean;
  /** Cleaned HTML: no scripts, styles or hidden elements (main content only when mainContent). */
  html?: boolean;
}

export interface PageHints {
  /** Executable scripts (inline or src). */
  scripts: number;
  /** Visible text characters in the body. */
  textChars: number;
  /** An SPA mount point (#root, #app, #__next …) that holds no text. */
  emptyAppRoot: boolean;
  /** A <noscript> asking for JavaScript. */
  noscriptJs: boolean;
}

export interface ScanResult {
  title: string | null;
  description: string | null;
  language: string | null;
  markdown?: string;
  plainText?: string;
  html?: string;
  /** Absolute http(s) links, fragment stripped, deduplicated, in page order. */
  links: string[];
  hints: PageHints;
}

const BOILERPLATE_ROLES = new Set([
  'navigation',
  'complementary',
  'banner',
  'contentinfo',
  'search',
  'dialog',
]);
const BOILERPLATE_TOKEN =
  /^(nav|navbar|navigation|menu|main-menu|sidebar|side-bar|breadcrumbs?|site-header|site-footer|footer|cookies?|cookie-banner|consent|banner|ads?|advert|advertisement|social|share|sharing|popup|modal|newsletter|related|comments?)$/i;
const MAIN_PRESENT = /<(main|article)[\s>]|role\s*=\s*["']?main/i;
const APP_ROOTS = new Set(['root', 'app', '__next', '__nuxt', 'svelte', 'main-app']);
// biome-ignore format: a word list
const VOID = new Set([
  'area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source', 'track', 'wbr',
]);

function isHidden(a: Record<string, string>): boolean {
  return (
    a.hidden !== undefined ||
    a['aria-hidden'] === 'true' ||
    (a.style !== undefined && /display\s*:\s*none|visibility\s*:\s*hidden/i.test(a.style))
  );
}

function boilerplateTokens(tokens: string): boolean {
  for (const t of tokens.split(/\s+/)) if (t && BOILERPLATE_TOKEN.test(t)) return true;
  return false;
}

const escText = (s: string) =>
  s.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));
const escAttr = (s: string) => s.replace(/[&"]/g, (c) => (c === '&' ? '&amp;' : '&quot;'));

export function scanHtml(source: string, opts: ScanOptions): ScanResult {
  const wantMain = opts.mainContent === true && MAIN_PRESENT.test(source);
  const result = scanOnce(source, opts, wantMain);
  // The <main> test is a cheap regex; if it matched inside a script, nothing was kept: scan again without it.
  if (wantMain && !result.markdown && !result.plainText && !result.html) return scanOnce(source, opts, false);
  return result;
}

function scanOnce(source: string, opts: ScanOptions, onlyMain: boolean): ScanResult {
  let base = opts.baseUrl;
  // Pages repeat their links (navigation, footers) and class names: resolve and classify each once.
  const resolved = new Map<string, string | undefined>();
  const resolve = (href: string): string | undefined => {
    let r = resolved.get(href);
    if (r === undefined && !resolved.has(href)) {
      r = absolute(href, base);
      resolved.set(href, r);
    }
    return r;
  };
  const classified = new Map<string, boolean>();
  const isBoilerplate = (kind: number, a: Record<string, string>, inMain: boolean): boolean => {
    if (kind === K.NAV) return true;
    if (!inMain && kind === K.EDGE) return true;
    if (a.role !== undefined && BOILERPLATE_ROLES.has(a.role)) return true;
    if (a.id === undefined && a.class === undefined) return false;
    const tokens = `${a.id ?? ''} ${a.class ?? ''}`;
    let b = classified.get(tokens);
    if (b === undefined) {
      b = boilerplateTokens(tokens);
      classified.set(tokens, b);
    }
    return b;
  };
  const md = opts.markdown ? new MarkdownSink('markdown', resolve) : undefined;
  const txt = opts.text ? new MarkdownSink('text', resolve) : undefined;
  const html: string[] | undefined = opts.html ? [] : undefined;
  const mainContent = opts.mainContent === true;

  const links: string[] = [];
  const seen = new Set<string>();
  let title = '';
  let inTitle = false;
  let description: string | null = null;
  let language: string | null = null;
  const hints: PageHints = { scripts: 0, textChars: 0, emptyAppRoot: false, noscriptJs: false };

  let depth = 0;
  /** Kind of the open element at each depth, so a close needs no lookup. */
  const kinds: number[] = [K.OTHER];
  /** Depth at which an element whose content is dropped opened (-1: not dropping). */
  let dropAt = -1;
  let mainAt = -1;
  let inBody = false;
  let noscriptAt = -1;
  let noscriptText = '';
  const appRoots: Array<{ depth: number; chars: number }> = [];

  /** Whether content at this point is kept: not inside a dropped element, and inside main when asked. */
  let keep = !onlyMain;
  const recompute = () => {
    keep = dropAt < 0 && (!onlyMain || mainAt >= 0);
  };

  const parser = new Parser(
    {
      onopentag(name, a) {
        depth++;
        const kind = kindOf(name);
        kinds[depth] = kind;
        switch (kind) {
          case K.TITLE:
            inTitle = true;
            break;
          case K.HTML:
            if (a.lang) language = a.lang;
            break;
          case K.BODY:
            inBody = true;
            break;
          case K.BASE:
            if (a.href) {
              base = absolute(a.href, base) ?? base;
              resolved.clear();
            }
            break;
          case K.META: {
            const key = (a.name ?? a.property ?? '').toLowerCase();
            if ((key === 'description' || key === 'og:description') && a.content && description === null) {
              description = a.content.trim();
            }
            break;
          }
          case K.SCRIPT:
            if (!a.type || /javascript|module|ecmascript/i.test(a.type)) hints.scripts++;
            break;
          case K.NOSCRIPT:
            noscriptAt = depth;
            noscriptText = '';
            break;
          case K.A:
            if (a.href !== undefined) addLink(a.href);
            break;
        }
        if (a.id !== undefined && APP_ROOTS.has(a.id)) appRoots.push({ depth, chars: hints.textChars });
        if (dropAt >= 0) return;
        if (isDropped(kind) || isHidden(a) || (mainContent && isBoilerplate(kind, a, mainAt >= 0))) {
          dropAt = depth;
          keep = false;
          return;
        }
        if (mainAt < 0 && (kind === K.MAIN || a.role === 'main')) {
          mainAt = depth;
          recompute();
        }
        if (!keep) return;
        md?.open(kind, a);
        txt?.open(kind, a);
        if (html) {
          let tag = `<${name}`;
          for (const k in a) tag += ` ${k}="${escAttr(a[k] as string)}"`;
          html.push(`${tag}>`);
        }
      },
      onclosetag(name) {
        const kind = kinds[depth] ?? K.OTHER;
        if (kind === K.TITLE) inTitle = false;
        if (depth === noscriptAt) {
          if (/javascript|enable js/i.test(noscriptText)) hints.noscriptJs = true;
          noscriptAt = -1;
        }
        const root = appRoots[appRoots.length - 1];
        if (root && root.depth === depth) {
          appRoots.pop();
          if (hints.textChars === root.chars) hints.emptyAppRoot = true;
        }
        if (dropAt === depth) {
          dropAt = -1;
          recompute();
        } else if (keep) {
          md?.close(kind);
          txt?.close(kind);
          if (html && !VOID.has(name)) html.push(`</${name}>`);
        }
        if (mainAt === depth) {
          mainAt = -1;
          recompute();
        }
        depth--;
      },
      ontext(t) {
        if (inTitle) {
          title += t;
          return;
        }
        if (noscriptAt >= 0) noscriptText += t;
        if (dropAt >= 0) return;
        if (inBody) hints.textChars += t.trim().length;
        if (!keep) return;
        md?.text(t);
        txt?.text(t);
        html?.push(escText(t));
      },
    },
    { decodeEntities: true },
  );

  function addLink(href: string) {
    const abs = resolve(href);
    if (!abs || seen.has(abs) || !/^https?:/i.test(abs)) return;
    seen.add(abs);
    const n = abs.includes('#') ? normalizeUrl(abs) : abs;
    if (n && (n === abs || !seen.has(n))) {
      seen.add(n);
      links.push(n);
    }
  }

  parser.end(source);
  return {
    title: title.replace(/\s+/g, ' ').trim() || null,
    description,
    language,
    markdown: md?.finish(),
    plainText: txt?.finish(),
    html: html?.join(''),
    links,
    hints,
  };
}

/**
 * Whether a page fetched without a browser probably needs one: it runs scripts and shows (almost) no text of
 * its own, mounts an empty single-page-app root, or says it needs JavaScript.
 */
export function needsBrowser(h: PageHints): boolean {
  if (h.scripts === 0) return false;
  return h.textChars < 200 || (h.emptyAppRoot && h.textChars < 2000) || (h.noscriptJs && h.textChars < 1000);
}
