import type { z } from 'zod';
import type { Catalog } from '../catalog/index.js';
import type { GatewayError } from '../src/errors.js';
import type { HandlerContext, Services } from './context.js';

export type ActionId = keyof Catalog & string;
export type InputOf<K extends ActionId> = z.output<Catalog[K]['input']>;
/** Handlers return what the output schema accepts; the run path validates it before charging. */
export type OutputOf<K extends ActionId> = z.input<Catalog[K]['output']>;
export type HandlerFn<K extends ActionId> = (input: InputOf<K>, ctx: HandlerContext) => Promise<OutputOf<K>>;

/**
 * A handler, optionally with a precheck that runs before any hold is taken: it answers `not_configured` (or
 * another refusal) for a request this gateway cannot serve, so such calls never touch the ledger.
 */
export interface HandlerDef<K extends ActionId> {
  precheck?: (input: InputOf<K>, services: Services) => GatewayError | undefined;
  run: HandlerFn<K>;
  /** Which upstream served a call, for the transaction record (defaults to the vendor the precheck saw). */
  provider?: (input: InputOf<K>, services: Services) => string;
}

export type Handler<K extends ActionId> = HandlerFn<K> | HandlerDef<K>;

/** One service's handlers: exactly the ids under `${S}/`. */
export type ServiceHandlers<S extends string> = {
  [K in ActionId as K extends `${S}/${string}` ? K : never]: Handler<K>;
};

/** Every action has a handler; a missing one is a compile error in tools/index.ts. */
export type Handlers = { [K in ActionId]: Handler<K> };
