import type { Action } from '../catalog/index.js';
import { docFreq, tokenize } from './catalog-search.js';
import type { Extracted } from './consult-extract.js';
import { wantsVideoPipeline } from './consult-flows.js';
import { idFit, isPoll, isStart, slotsOf } from './consult-ids.js';

// Signals a goal's own values and wording give about which action it wants, shared by platform/discover and
// platform/consult. They come from the catalog (which fields take which ids, which action polls which, the
// "Use it only …" clause of a description), so a plain keyword query ranks by the catalog's words alone.

const URLS = /\bhttps?:\/\/\S+/g;
/** The goal asks about work already started: its state, its progress, its results so far. */
const STATUS =
  /\b(?:status|poll(?:ing)?|progress|done|finished|ready|completed?|how far|check (?:on|the|my|in on)|so far|still running|yet|results? of|has it|is it|(?:i|we) (?:started|kicked off|launched|ran)|earlier|where is)\b/;
/** The goal asks which actions or tools exist, not for the work itself. */
const META =
  /\b(?:wh?ich|what|any|list(?: the)?|available)\s+(?:actions?|tools?|endpoints?|apis?|capabilities)\b|\bis there an? (?:action|tool|endpoint)\b/;
/** The goal asks for a whole site rather than one page. */
const SCOPE =
  /\b(?:crawl(?:ing)?|all (?:of )?(?:its |the |their )?(?:pages|subpages|docs)|every (?:single )?page|(?:whole|entire|full) (?:site|website|domain|docs)|site-?wide|each page|all pages)\b/;

/** The goal opens by asking to keep something: actions that only read (readOnlyHint) are not it. */
const STORE =
  /^(?:please\s+|can you\s+|could you\s+|i (?:want|need|would like|'d like) to\s+|go ahead and\s+)?(?:keep|save|store|copy|upload|import|stash|archive|back ?up|mirror|add)\b/;

/** Rare words (≤ 4 actions) of an action's "Use it only …" clause, name and keywords: a goal with none is not its case. */
const ONLY_WORDS: ReadonlyMap<Action, Set<string>> = new Map();

function onlyWords(a: Action): Set<string> | undefined {
  const clause = /\bonly\s+(?:to|after|when|for|if)\b([^;.]*)/.exec(a.whenToUse)?.[1];
  if (!clause) return undefined;
  let words = ONLY_WORDS.get(a);
  if (!words) {
    const all = [
      ...tokenize(clause),
      ...tokenize(a.action.replaceAll(/[-_]/g, ' ')),
      ...a.keywords.flatMap(tokenize),
    ];
    words = new Set(all.filter((t) => docFreq(t) > 0 && docFreq(t) <= 4));
    (ONLY_WORDS as Map<Action, Set<string>>).set(a, words);
  }
  return words;
}

const looksLikeAddress = (q: string) => /^\d{1,6}[A-Za-z]?\s+[A-Za-z]/.test(q);
const partialField = (a: Action) =>
  Object.values(a.input.shape as Record<string, { description?: string }>).some((f) =>
    /^partial\b/i.test(f.description ?? ''),
  );

/** Per goal, computed once: its text without URLs, and its words. */
const PLAIN = new WeakMap<Extracted, { plain: string; words: string[]; status: boolean; scope: boolean }>();
function plainOf(x: Extracted) {
  let p = PLAIN.get(x);
  if (!p) {
    const plain = x.lower.replace(URLS, ' ');
    p = { plain, words: tokenize(plain), status: STATUS.test(plain), scope: SCOPE.test(plain) };
    PLAIN.set(x, p);
  }
  return p;
}

export function goalAdjustment(action: Action, x: Extracted): number {
  const shape = action.input.shape as Record<string, unknown>;
  const { plain, words, status, scope } = plainOf(x);
  let score = 0;
  // An id of the kind a field takes is the strongest sign of intent; an id of its family (a bare crawl_…) nearly so.
  let fit = 0;
  for (const slot of slotsOf(action)) for (const id of x.ids) fit = Math.max(fit, idFit(slot, id));
  if (fit === 2) score += 5;
  else if (fit === 1) score += 4;
  // A person's name, e-mail or phone in the goal: the actions that look people up by them.
  if (x.person && 'first_name' in shape && 'last_name' in shape) score += 3;
  if ((x.email && 'email' in shape) || (x.phone && 'phone' in shape)) score += 2;
  // The goal names pages or sites: actions that cannot take one are unlikely, one-page actions for many pages.
  if (x.urls.length > 0 && !('url' in shape) && !('urls' in shape)) score -= 2;
  if (x.urls.length > 1 && 'url' in shape && !('urls' in shape)) score -= 4;
  // Asking how started work is going: the poll, not a new start (which would start, and charge, again).
  if (status) {
    if (isPoll(action)) score += 2;
    else if (isStart(action)) score -= 1.5;
  }
  // "crawl", "all its pages", "the whole site": a crawl, not one page.
  if (!status && scope && 'url' in shape) {
    if (isStart(action) && action.pollWith) score += 3;
    else if (!isPoll(action) && action.action !== 'map') score -= 1.5;
  }
  // A finished video from media the goal names: video assembly, whatever else its URL could feed.
  if (action.service === 'videoasm' && wantsVideoPipeline(x)) score += 3;
  if (STORE.test(plain.trim()) && action.annotations.readOnlyHint) score -= 1.5;
  // One whole street address and no area words: not an area search ("Needs a location: …").
  if (
    x.address &&
    !/\b(?:near|around|within|nearby|area|neighbou?rhood)\b/.test(plain) &&
    /\bNeeds a location\b/.test(action.summary)
  )
    score -= 1;
  // A question about the catalog itself ("which actions can …", "is there a tool for …").
  if (META.test(plain) && action.keywords.some((k) => /^which /.test(k))) score += 3;
  // An action the catalog says is "only" for one case, when the goal says nothing of that case.
  const only = onlyWords(action);
  if (only && only.size > 0 && !words.some((t) => only.has(t))) score -= 2.5;
  // A partial address and nothing whole: the action that resolves partial text ("Partial text to resolve").
  if (!x.address && (x.partialAddress || x.quoted.some(looksLikeAddress)) && partialField(action))
    score += 1.5;
  return score;
}
