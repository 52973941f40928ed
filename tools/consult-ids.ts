import { type Action, actions, findAction } from '../catalog/index.js';

// Identifiers, learnt from the catalog rather than listed by hand. An action's example body shows the shape of
// each id it takes (`crawl_a_0mdx…`, `prj_0mdx…`, `rnd_…`, `file_…`, a numeric property id): the prefix before
// the random part names its kind. A field's description names the actions that produce it ("file_id from
// files/upload or files/upload_from_url", "job_id returned by videoasm/render"), and a poll is produced by the
// start it polls. So an id pasted into a goal finds the field that takes it, and a field the goal leaves empty
// finds the step that would produce it.

/** A poll: the half of a start + poll pair that reads a started job (it names the start it refunds). */
export const isPoll = (a: Action) => a.refundsStart !== undefined;
/** A start: returns a handle to poll. */
export const isStart = (a: Action) => a.jobHandle !== undefined && a.pollWith !== undefined;

/** A field that takes an id. */
export interface IdSlot {
  action: Action;
  /** Dotted path in the body (`id`, `job_id`, `tracks.0.contents.0.source.mediaId`). */
  path: string;
  /** Prefix of the ids it takes (`crawl_a`, `rnd`), when the example shows a prefixed handle. */
  prefix?: string;
  /** Takes numbers (or numeric strings): a record id such as a property id. */
  numeric: boolean;
  /** Actions whose output holds such an id. */
  producers: Action[];
}

/** An id-shaped token in a goal. */
export interface GoalId {
  value: string;
  /** Everything before the random part (`crawl_a`, `crawl`, `rnd`); undefined for a bare number or UUID. */
  prefix?: string;
}

/** `prefix_random`: the random part has a digit and 3+ characters (tool names such as scraperA_crawl_status do not). */
const HANDLE = /^([a-z][a-z0-9]*(?:_[a-z][a-z0-9]*)*)_([0-9a-z]{3,})$/;
const HANDLE_IN_TEXT = /\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b/g;
const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;
const ACTION_ID = /\b([a-z]+[A-Z]?)\/([a-z_-]+)\b/g;

function splitHandle(v: string): { prefix: string; rest: string } | undefined {
  const m = HANDLE.exec(v);
  if (!m || !/\d/.test(m[2] as string)) return undefined;
  return { prefix: m[1] as string, rest: m[2] as string };
}

function describedProducers(action: Action, field: string): Action[] {
  const shape = action.input.shape as Record<string, { description?: string }>;
  const text = shape[field]?.description ?? '';
  const named = [...text.matchAll(ACTION_ID)]
    .map((m) => findAction(`${m[1]}/${m[2]}`))
    .filter((a): a is Action => a !== undefined && a !== action);
  const start = action.refundsStart?.start ? findAction(action.refundsStart.start) : undefined;
  if (start && action.refundsStart?.handleField === field && !named.includes(start)) named.push(start);
  return named;
}

function walkExample(action: Action, value: unknown, path: string, out: IdSlot[]): void {
  if (typeof value === 'string') {
    const h = splitHandle(value);
    const top = path.split('.')[0] as string;
    if (h)
      out.push({
        action,
        path,
        prefix: h.prefix,
        numeric: false,
        producers: describedProducers(action, top),
      });
    return;
  }
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) walkExample(action, v, `${path}.${i}`, out);
  } else if (value && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) walkExample(action, v, path ? `${path}.${k}` : k, out);
}

/** Top-level fields described as a record id ("Property id from …"): they take a number pasted into the goal. */
function recordIdSlots(action: Action): IdSlot[] {
  const shape = action.input.shape as Record<string, { description?: string }>;
  return Object.entries(shape)
    .filter(
      ([k, s]) =>
        /(^|_)id$/.test(k) &&
        /\bid\b/i.test(s.description ?? '') &&
        /\bproperty\b/i.test(s.description ?? ''),
    )
    .map(([k]) => ({ action, path: k, numeric: true, producers: describedProducers(action, k) }));
}

export const ID_SLOTS: readonly IdSlot[] = actions.flatMap((a) => {
  const out: IdSlot[] = [];
  walkExample(a, a.example, '', out);
  return [...out, ...recordIdSlots(a)];
});

/** Every id-shaped token of a goal: prefixed handles, UUIDs, and numbers introduced as ids. */
export function goalIds(text: string): GoalId[] {
  const out: GoalId[] = [];
  for (const m of text.matchAll(HANDLE_IN_TEXT)) {
    const h = splitHandle(m[0]);
    if (h && h.rest.length >= 4) out.push({ value: m[0], prefix: h.prefix });
  }
  for (const m of text.matchAll(UUID)) out.push({ value: m[0] });
  // A number introduced as an id ("id 185203947", "#4471", "property 30918842", "record no. 123456").
  const numbered =
    /\b(?:id|ID|Id|#|(?:property|record|parcel|listing)(?:\s+(?:id|number|no\.?|#))?)\s*(?:is\s+|=\s*|:\s*|no\.?\s*)?#?(\d{4,12})\b(?!\s*(?:[A-Z][a-z]|sq|square|bed|bath|acre))/g;
  for (const m of text.matchAll(numbered)) out.push({ value: m[1] as string });
  return out;
}

/** The words that describe what a slot holds: its action, its field, its description, its producers. */
function slotWords(slot: IdSlot): Set<string> {
  const shape = slot.action.input.shape as Record<string, { description?: string }>;
  const top = slot.path.split('.')[0] as string;
  const text = [
    slot.action.id,
    slot.path,
    shape[top]?.description ?? '',
    ...slot.producers.map((p) => p.id),
  ].join(' ');
  return new Set(
    text
      .toLowerCase()
      .split(/[^a-z]+/)
      .filter((w) => w.length >= 3),
  );
}
const WORDS = new Map<IdSlot, Set<string>>();

/**
 * How well an id fits a slot: 2 its own kind, 1 its family (a bare `crawl_…` for `crawl_a`) or a prefix that
 * names what the slot holds (`render_…` for the job_id of a render), 0 not at all.
 */
export function idFit(slot: IdSlot, id: GoalId): number {
  if (id.prefix === undefined) return slot.numeric ? (/^\d+$/.test(id.value) ? 2 : 0) : slot.prefix ? 0 : 1;
  if (slot.prefix && id.prefix === slot.prefix) return 2;
  if (slot.prefix && (slot.prefix.startsWith(`${id.prefix}_`) || id.prefix.startsWith(`${slot.prefix}_`)))
    return 1;
  if (ID_SLOTS.some((s) => s.prefix && (s.prefix === id.prefix || s.prefix.startsWith(`${id.prefix}_`))))
    return 0;
  let words = WORDS.get(slot);
  if (!words) {
    words = slotWords(slot);
    WORDS.set(slot, words);
  }
  const head = id.prefix.split('_')[0] as string;
  return head.length >= 3 && [...words].some((w) => w === head || (head.length >= 4 && w.startsWith(head)))
    ? 1
    : 0;
}

export function slotsOf(action: Action): IdSlot[] {
  return ID_SLOTS.filter((s) => s.action === action);
}

/** An id no slot's kind claims (a UUID, an unknown prefix): the one id of an action whose words ask for it. */
const unclaimed = (id: GoalId) => !ID_SLOTS.some((s) => idFit(s, id) > 0);

/** The goal's id for one field of an action (its own kind first), if any. */
export function idFor(action: Action, path: string, ids: readonly GoalId[]): string | undefined {
  const slot = ID_SLOTS.find((s) => s.action === action && s.path === path);
  if (!slot) return undefined;
  let best: GoalId | undefined;
  let bestFit = 0;
  for (const id of ids) {
    const fit = idFit(slot, id);
    if (fit > bestFit) [best, bestFit] = [id, fit];
  }
  if (best) return best.value;
  const loose = ids.filter((i) => unclaimed(i) && !/^\d+$/.test(i.value));
  const own = ID_SLOTS.filter((s) => s.action === action && !s.path.includes('.'));
  return loose.length === 1 && own.length === 1 && !slot.numeric ? loose[0]?.value : undefined;
}

/** Where a producer's output holds the id a slot takes: its job handle, a same-named field, `id`, or the first result's id. */
export function producedAt(producer: Action, slot: IdSlot): string | undefined {
  const out = producer.output.shape as Record<string, unknown>;
  const field = slot.path.split('.').pop() as string;
  if (producer.jobHandle) return producer.jobHandle;
  if (field in out) return field;
  const snake = field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  if (snake in out) return snake;
  if ('id' in out) return 'id';
  if ('results' in out) return 'results.0.id';
  return undefined;
}
