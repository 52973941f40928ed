// HTML tag kinds for the one-pass converter (src/lib/markdown.ts) and scanner (src/engine/scan.ts).

/**
 * Tag kinds. Each token's name is looked up once (one Map.get) and everything after switches on a small
 * integer: a chain of string comparisons per tag was a measurable share of the conversion time.
 */
export const K = {
  OTHER: 0,
  BLOCK: 1,
  H1: 2,
  H6: 7,
  BR: 8,
  UL: 9,
  OL: 10,
  LI: 11,
  QUOTE: 12,
  PRE: 13,
  HR: 14,
  TABLE: 15,
  TR: 16,
  CELL: 17,
  A: 18,
  IMG: 19,
  STRONG: 20,
  EM: 21,
  CODE: 22,
  DEL: 23,
  /** Blocks the scanner also needs to tell apart. */
  MAIN: 24,
  NAV: 25,
  EDGE: 26,
  /** Not content: never converted (the scanner drops their subtree). */
  DROP: 30,
  SCRIPT: 31,
  NOSCRIPT: 32,
  HEAD: 33,
  TITLE: 34,
  HTML: 35,
  BODY: 36,
  BASE: 37,
  META: 38,
} as const;

const kinds: Array<[number, string]> = [
  [
    K.BLOCK,
    'address dd details dir div dl dt fieldset figcaption figure form hgroup legend menu p section summary center',
  ],
  [K.MAIN, 'main article'],
  [K.NAV, 'nav aside dialog'],
  [K.EDGE, 'header footer'],
  [K.BR, 'br'],
  [K.UL, 'ul'],
  [K.OL, 'ol'],
  [K.LI, 'li'],
  [K.QUOTE, 'blockquote'],
  [K.PRE, 'pre'],
  [K.HR, 'hr'],
  [K.TABLE, 'table'],
  [K.TR, 'tr'],
  [K.CELL, 'td th'],
  [K.A, 'a'],
  [K.IMG, 'img'],
  [K.STRONG, 'b strong'],
  [K.EM, 'i em'],
  [K.CODE, 'code kbd samp'],
  [K.DEL, 's del strike'],
  [K.DROP, 'style template iframe object embed svg canvas select button math'],
  [K.SCRIPT, 'script'],
  [K.NOSCRIPT, 'noscript'],
  [K.HEAD, 'head'],
  [K.TITLE, 'title'],
  [K.HTML, 'html'],
  [K.BODY, 'body'],
  [K.BASE, 'base'],
  [K.META, 'meta'],
];
const KIND = new Map<string, number>();
for (const [k, names] of kinds) for (const n of names.split(' ')) KIND.set(n, k);
for (let h = 1; h <= 6; h++) KIND.set(`h${h}`, K.H1 + h - 1);

export function kindOf(name: string): number {
  return KIND.get(name) ?? K.OTHER;
}

/** Elements whose content is never page text. */
export function isDropped(kind: number): boolean {
  return kind >= K.DROP && kind <= K.HEAD;
}
