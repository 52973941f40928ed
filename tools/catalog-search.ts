import { type Action, actions } from '../catalog/index.js';

// Keyword search over the catalog, used by platform/discover and platform/consult. Everything it knows comes
// from the catalog itself: each action's name, title, keywords (single words and phrases) and summary. A term
// weighs more the fewer actions carry it (idf), and more in the action's name and keywords than in its prose;
// a keyword phrase found whole in the query counts extra. The index is built once at module load.

const STOP = new Set(
  (
    'a an the and or of for to in on at by with from is are be been me my i we our you your it its this that ' +
    'these those get want need please can could would should will how what about into using use want find ' +
    'do does did have has had there here some any all just also so than then them they their he she his her ' +
    'one more most very much many out up down over under give show tell let make sure like now right'
  ).split(' '),
);

/** Crude suffix folding so "estimates" matches "estimate", "crawling" matches "crawl", "listed" "list". */
export function stem(t: string): string {
  if (t.length > 5 && t.endsWith('ing')) return undouble(t.slice(0, -3));
  if (t.length > 4 && t.endsWith('ies')) return `${t.slice(0, -3)}y`;
  if (t.length > 5 && t.endsWith('ed') && !t.endsWith('eed')) return undouble(t.slice(0, -2));
  if (t.length > 3 && t.endsWith('es') && /(?:ch|sh|x|ss)es$/.test(t)) return t.slice(0, -2);
  if (t.length > 3 && t.endsWith('s') && !t.endsWith('ss') && !t.endsWith('us')) return t.slice(0, -1);
  return t;
}

/** "tagg" → "tag", "runn" → "run": a doubled final consonant left by a removed suffix. */
function undouble(t: string): string {
  return /([b-df-hj-np-tv-z])\1$/.test(t) && !/(?:ll|ss|zz)$/.test(t) ? t.slice(0, -1) : t;
}

/** URLs, e-mail addresses and ids are values, not words about what to do: they do not take part in matching. */
const VALUES = /\bhttps?:\/\/\S+|\b[\w.+-]+@[\w-]+\.[\w.-]+|\b(?:rnd|prj|med|file|crawl|extract)_\w+/gi;

export function tokenize(text: string): string[] {
  return text
    .replace(VALUES, ' ')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((t) => t.length > 1 && !STOP.has(t))
    .map(stem);
}

interface Indexed {
  action: Action;
  /** Words of the action's own name: the strongest signal ("markdown" → scraperC/markdown). */
  name: Set<string>;
  strong: Set<string>;
  weak: Set<string>;
  /** Multi-word keywords, stemmed, matched as phrases. */
  phrases: string[][];
}

const INDEX: Indexed[] = actions.map((a) => ({
  action: a,
  name: new Set(tokenize(a.action.replaceAll(/[-_]/g, ' '))),
  strong: new Set(tokenize(`${a.title.replace(/\([^)]*\)/g, '')} ${a.keywords.join(' ')}`)),
  weak: new Set(tokenize(a.summary)),
  phrases: a.keywords.map(tokenize).filter((p) => p.length > 1),
}));

/** Inverse document frequency of each term over names, titles and keywords: rare words decide. */
const IDF: ReadonlyMap<string, number> = (() => {
  const df = new Map<string, number>();
  for (const i of INDEX)
    for (const t of new Set([...i.name, ...i.strong, ...i.weak])) df.set(t, (df.get(t) ?? 0) + 1);
  const n = INDEX.length;
  return new Map([...df].map(([t, d]) => [t, Math.log(1 + n / d)]));
})();

function containsPhrase(terms: string[], phrase: string[]): boolean {
  outer: for (let i = 0; i + phrase.length <= terms.length; i++) {
    for (let j = 0; j < phrase.length; j++) if (terms[i + j] !== phrase[j]) continue outer;
    return true;
  }
  return false;
}

/** A term of `set` that extends `t` (or that `t` extends) by at most three letters, from four letters on. */
function nearForm(t: string, set: Set<string>): string | undefined {
  if (t.length < 4) return undefined;
  for (const s of set) {
    if (s.length < 4 || Math.abs(s.length - t.length) > 3) continue;
    if (s.startsWith(t) || t.startsWith(s)) return s;
  }
  return undefined;
}

export interface Match {
  action: Action;
  score: number;
}

/** Every action's score for the query (0 when nothing matches), best first. */
export function scoreCatalog(query: string): Match[] {
  const seq = tokenize(query);
  const terms = [...new Set(seq)];
  if (terms.length === 0) return [];
  const out: Match[] = [];
  for (const { action, name, strong, weak, phrases } of INDEX) {
    let score = 0;
    for (const t of terms) {
      const idf = IDF.get(t) ?? 0;
      if (name.has(t)) score += 3 * idf;
      else if (strong.has(t)) score += 2 * idf;
      else if (weak.has(t)) score += 0.6 * idf;
      else {
        // A near form ("list"/"listing", "rent"/"rental", "scrap"/"scrape") counts for less.
        const near = nearForm(t, name) ?? nearForm(t, strong);
        if (near) score += 1.2 * (IDF.get(near) ?? idf);
      }
    }
    for (const p of phrases) if (containsPhrase(seq, p)) score += 1.5 * p.length;
    // Of two actions sharing a word ("crawl"), the one the query names whole wins over its status poll.
    if (score > 0 && name.size > 0) score += [...name].filter((t) => terms.includes(t)).length / name.size;
    out.push({ action, score: score / Math.sqrt(terms.length) });
  }
  out.sort((x, y) => y.score - x.score || x.action.priceCents - y.action.priceCents);
  return out;
}
