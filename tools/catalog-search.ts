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

/** URLs, bare domains, e-mail addresses and ids are values, not words about what to do: they take no part in matching. */
const VALUES =
  /\bhttps?:\/\/\S+|\b(?:[a-z0-9-]+\.)+(?:com|org|net|io|dev|ai|co|app|gov|edu|info|biz|us|uk|de|fr|ca|au|me|tv|xyz|tech|sh|so|gg|ly|to|cc|site|blog)\b(?:\/\S*)?|\b[\w.+-]+@[\w-]+\.[\w.-]+|\b[a-z][a-z0-9]*(?:_[a-z0-9]+)*_(?=[0-9a-z]*\d)[0-9a-z]{3,}\b|\b[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}\b/gi;

/** Every word, stop words kept ("which tool"): for matching keyword phrases as written. */
function words(text: string): string[] {
  return text
    .replace(VALUES, ' ')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((t) => t.length > 0)
    .map(stem);
}

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
  /** Multi-word keywords word for word, stop words included, matched allowing one typo per long word. */
  loose: string[][];
}

const INDEX: Indexed[] = actions.map((a) => ({
  action: a,
  name: new Set(tokenize(a.action.replaceAll(/[-_]/g, ' '))),
  strong: new Set(tokenize(`${a.title.replace(/\([^)]*\)/g, '')} ${a.keywords.join(' ')}`)),
  weak: new Set(tokenize(a.summary)),
  phrases: a.keywords.map(tokenize).filter((p) => p.length > 1),
  // Only phrases the stemmed words cannot match (a stop word in them: "which tool").
  loose: a.keywords
    .filter((k) => tokenize(k).length < 2)
    .map(words)
    .filter((p) => p.length > 1),
}));

/** Inverse document frequency of each term over names, titles and keywords: rare words decide. */
const IDF: ReadonlyMap<string, number> = (() => {
  const df = new Map<string, number>();
  for (const i of INDEX)
    for (const t of new Set([...i.name, ...i.strong, ...i.weak])) df.set(t, (df.get(t) ?? 0) + 1);
  const n = INDEX.length;
  return new Map([...df].map(([t, d]) => [t, Math.log(1 + n / d)]));
})();

function containsPhrase(terms: string[], phrase: string[], typos = false): boolean {
  const same = (a: string, b: string) =>
    a === b || (typos && a.length >= 4 && b.length >= 4 && oneTypo(a, b));
  outer: for (let i = 0; i + phrase.length <= terms.length; i++) {
    for (let j = 0; j < phrase.length; j++)
      if (!same(terms[i + j] as string, phrase[j] as string)) continue outer;
    return true;
  }
  return false;
}

/** How many actions' names, titles, keywords or summaries carry a (stemmed) term. */
export function docFreq(term: string): number {
  const idf = IDF.get(term);
  return idf === undefined ? 0 : Math.round(INDEX.length / (Math.exp(idf) - 1));
}

/** One typo apart (Damerau-Levenshtein distance 1: a letter missing, extra, wrong, or two swapped). */
function oneTypo(a: string, b: string): boolean {
  if (a === b || Math.abs(a.length - b.length) > 1) return false;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  if (a.length === b.length) {
    if (a.slice(i + 1) === b.slice(i + 1)) return true; // substitution
    return a[i] === b[i + 1] && a[i + 1] === b[i] && a.slice(i + 2) === b.slice(i + 2); // transposition
  }
  const [long, short] = a.length > b.length ? [a, b] : [b, a];
  return long.slice(i + 1) === short.slice(i); // insertion / deletion
}

/** Terms of the catalog one typo away from `t` ("estimte" → "estimate", "uplaod" → "upload"), from five letters on. */
function typoForms(t: string): string[] {
  if (t.length < 5 || IDF.has(t)) return [];
  return [...IDF.keys()].filter((s) => s.length >= 5 && s[0] === t[0] && oneTypo(t, s));
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
  const raw = words(query);
  // Only a word the catalog does not know is read as a typo of one it does.
  const typos = new Map(terms.map((t) => [t, typoForms(t)]));
  for (const { action, name, strong, weak, phrases, loose } of INDEX) {
    let score = 0;
    for (const t of terms) {
      const idf = IDF.get(t) ?? 0;
      if (name.has(t)) score += 3 * idf;
      else if (strong.has(t)) score += 2 * idf;
      else if (weak.has(t)) score += 0.6 * idf;
      else {
        // A near form ("list"/"listing", "rent"/"rental", "scrap"/"scrape") counts for less.
        const near = nearForm(t, name) ?? nearForm(t, strong);
        const forms = near ? [] : (typos.get(t) ?? []);
        const typo = forms.find((f) => name.has(f)) ?? forms.find((f) => strong.has(f));
        if (near) score += 1.2 * (IDF.get(near) ?? idf);
        else if (typo) score += (name.has(typo) ? 2 : 1.2) * (IDF.get(typo) ?? idf);
      }
    }
    for (const p of phrases) if (containsPhrase(seq, p)) score += 1.5 * p.length;
    // A phrase the stemmed words miss ("which tool", or "wich tools" with a typo) still counts, a little less.
    for (const p of loose)
      if (tokenize(p.join(' ')).length < 2 && containsPhrase(raw, p, true)) score += 1.2 * p.length;
    // Of two actions sharing a word ("crawl"), the one the query names whole wins over its status poll.
    if (score > 0 && name.size > 0) score += [...name].filter((t) => terms.includes(t)).length / name.size;
    out.push({ action, score: score / Math.sqrt(terms.length) });
  }
  out.sort((x, y) => y.score - x.score || x.action.priceCents - y.action.priceCents);
  return out;
}
