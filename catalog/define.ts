import { z } from 'zod';

// What is sold. Each action is data: id, price, input/output schemas, MCP annotations. No I/O here.

/** All four MCP tool annotations are required: an undefined hint is a silent gap for hosts. */
export interface Annotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/**
 * Who may call an action.
 * - `paid`: a price > 0; an API key, OAuth token or x402 payment pays for it.
 * - `account`: free, but acts on the caller's own account (balance, transactions, files list): needs a key/token.
 * - `public`: free and anonymous (discover).
 */
export type Access = 'paid' | 'account' | 'public';

export interface ActionSpec<
  S extends string = string,
  A extends string = string,
  I extends z.ZodObject = z.ZodObject,
  O extends z.ZodObject = z.ZodObject,
> {
  service: S;
  action: A;
  title: string;
  /** What it does and what it returns. */
  summary: string;
  /**
   * When to use it rather than its siblings, starting "Use it …" (a contract test holds the form). Agents pick
   * between similar actions (three scrapers, two valuation services) by this sentence.
   */
  whenToUse: string;
  /** Integer cents; 0 for free actions. */
  priceCents: number;
  /** true: unknown fields rejected; false: additional properties passed through to the handler. */
  strict: boolean;
  input: I;
  output: O;
  annotations: Annotations;
  access?: Access;
  /** Longest time the handler may run before it is aborted (and nothing is charged). */
  timeoutMs?: number;
  /** The other half of a start + poll pair, by action id. */
  pollWith?: string;
  /**
   * A start action whose work finishes later (a render, a crawl, an extract job): the output field that holds
   * the handle its poll action takes. If a poll later reports that work failed, this call's charge is refunded.
   */
  jobHandle?: string;
  /**
   * A poll action: the start action it polls, the input field carrying the handle, and when the polled work
   * counts as failed (then the start call is refunded, once). Pure: it reads the poll's output only.
   */
  refundsStart?: { start: string; handleField: string; failed: (output: Record<string, unknown>) => boolean };
  /** Example request body, shown in descriptors; the contract test checks it validates. */
  example: z.input<I>;
  /** Extra search words for platform/discover and consult. */
  keywords?: readonly string[];
}

export interface Action<
  S extends string = string,
  A extends string = string,
  I extends z.ZodObject = z.ZodObject,
  O extends z.ZodObject = z.ZodObject,
> extends Required<Omit<ActionSpec<S, A, I, O>, 'pollWith' | 'keywords' | 'jobHandle' | 'refundsStart'>> {
  id: `${S}/${A}`;
  /** MCP tool name: `${service}_${action}`. */
  toolName: `${S}_${A}`;
  /** Summary, when to use it, and the price sentence; what agents read. */
  description: string;
  /** The input's own field names (for naming extra fields passed through by a non-strict action). */
  fields: ReadonlySet<string>;
  pollWith: string | undefined;
  jobHandle: string | undefined;
  refundsStart: ActionSpec['refundsStart'];
  keywords: readonly string[];
}

export function priceSentence(cents: number): string {
  if (cents === 0) return 'Free.';
  return `$${(cents / 100).toFixed(2)} per successful call; nothing is charged on failure.`;
}

export function defineAction<
  const S extends string,
  const A extends string,
  I extends z.ZodObject,
  O extends z.ZodObject,
>(spec: ActionSpec<S, A, I, O>): Action<S, A, I, O> {
  const access: Access = spec.access ?? (spec.priceCents > 0 ? 'paid' : 'account');
  return {
    ...spec,
    id: `${spec.service}/${spec.action}`,
    toolName: `${spec.service}_${spec.action}`,
    description: `${spec.summary.trim()} ${spec.whenToUse.trim()} ${priceSentence(spec.priceCents)}`,
    fields: new Set(Object.keys(spec.input.shape)),
    access,
    timeoutMs: spec.timeoutMs ?? 60_000,
    pollWith: spec.pollWith,
    jobHandle: spec.jobHandle,
    refundsStart: spec.refundsStart,
    keywords: spec.keywords ?? [],
  };
}

/**
 * The object kind an action's `strict` flag asks for. Service files build inputs with this so the flag and
 * the schema cannot disagree.
 */
export function inputObject<T extends z.core.$ZodLooseShape>(
  strict: true,
  shape: T,
): z.ZodObject<T, z.core.$strict>;
export function inputObject<T extends z.core.$ZodLooseShape>(
  strict: false,
  shape: T,
): z.ZodObject<T, z.core.$loose>;
export function inputObject<T extends z.core.$ZodLooseShape>(strict: boolean, shape: T) {
  return strict ? z.strictObject(shape) : z.looseObject(shape);
}

/** Output objects accept fields beyond those the spec names: vendors add fields, and we pass them on. */
export function outputObject<T extends z.core.$ZodLooseShape>(shape: T) {
  return z.looseObject(shape);
}
