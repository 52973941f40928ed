// platform/consult: the words of a goal rather than its values. What it quotes (said exactly), its subject with
// instructions, sources and recency removed (what a search should send), and a list of named fields to extract.

const URL_RE = /\bhttps?:\/\/[^\s<>"'`]+/gi;

/** Words that instruct, name sources or recency: removed from the topic, with connectors next to them. */
const INSTRUCTION = new Set(
  (
    'find search look lookup up get show give tell research gather collect evidence latest recent recently ' +
    'news articles article papers paper academic scholarly studies tweets tweet threads thread posts post ' +
    'reddit twitter github repositories repos repo images image pictures photos web internet online results ' +
    'sources citations cited please i we want need would like can could you my me some all info ' +
    'information what whats is are was how which who when where do does query google bing top best-of ' +
    'discussions discussion mentions coverage headlines'
  ).split(' '),
);
const CONNECTORS = new Set('about on for of from with in and or the a an to by at into regarding'.split(' '));

/** Text in double, typographic or single quotes (an apostrophe in "owner's" is not a quote). */
export function quotedText(text: string): string[] {
  const out: string[] = [];
  const re =
    /"([^"\n]{2,200})"|“([^”\n]{2,200})”|‘([^’\n]{2,200})’|`([^`\n]{2,200})`|(?<![\p{L}\d])'([^'\n]{2,200}?)'(?![\p{L}\d])/gu;
  for (const m of text.matchAll(re)) {
    const q = (m[1] ?? m[2] ?? m[3] ?? m[4] ?? m[5] ?? '').trim();
    if (q.length >= 2) out.push(q);
  }
  return out;
}

export function topicOf(text: string): string {
  // "what X, Y and Z say about T": the subject follows "about" when sources or instructions come before it.
  const about = /^(.*?)\babout\s+(.+)$/i.exec(text);
  const before = about?.[1] ?? '';
  const reported =
    /,|\band\b|\b(?:write|wrote|written|say|said|saying|think|report(?:ed|ing)?|post(?:ed|s)?|news|articles?)\b/i;
  if (about && reported.test(before) && (about[2] as string).split(/\s+/).length <= 10) {
    return topicOf(about[2] as string);
  }
  const stripped = text
    .replace(URL_RE, ' ')
    .replace(
      /\b(?:in|from|over|during|within)?\s*(?:the\s+)?(?:last|past|previous|this)\s+(?:\d+\s+)?(?:hours?|days?|weeks?|months?|years?)\b/gi,
      ' ',
    )
    .replace(/\b(?:today|yesterday|right now|these days|nowadays)\b/gi, ' ')
    .replace(/\b(?:with|and)\s+(?:citations|sources|links|references)\b/gi, ' ')
    .replace(/\b(?:top|first|up to)\s+\d+\b/gi, ' ');
  const words = stripped.split(/[\s,;:!?()"“”]+/).filter(Boolean);
  const drop = words.map((w) => INSTRUCTION.has(w.toLowerCase().replace(/[.']+$/, '')));
  // Connectors go when they touch something dropped (or an edge), repeatedly: "images of the X" → "X".
  for (let changed = true; changed; ) {
    changed = false;
    words.forEach((w, i) => {
      if (drop[i] || !CONNECTORS.has(w.toLowerCase())) return;
      const prevGone = i === 0 || drop[i - 1];
      const nextGone = i === words.length - 1 || drop[i + 1];
      if (prevGone || nextGone) {
        drop[i] = true;
        changed = true;
      }
    });
  }
  const kept = words.filter((_, i) => !drop[i]).join(' ');
  return kept.replace(/[.]+$/, '').trim() || text.trim();
}

export function fieldList(text: string): string[] | undefined {
  const item = "[a-z][a-z'-]*(?: [a-z][a-z'-]*){0,2}";
  const re = new RegExp(`(${item}(?:,\\s*${item})+(?:,?\\s+(?:and|&)\\s+${item})?)`, 'i');
  const m = re.exec(text.replace(URL_RE, ' '));
  if (!m) return undefined;
  const parts = (m[1] as string)
    .split(/,\s*|\s+(?:and|&)\s+/i)
    .map((p) =>
      p
        .trim()
        .replace(/^(?:the|fields?|pull|extract|get|scrape)\s+/i, '')
        .replace(/^(?:the|fields?)\s+/i, ''),
    )
    .filter((p) => p.length > 0 && !/^(?:news|github|reddit|twitter)$/i.test(p));
  return parts.length >= 2 ? parts : undefined;
}
