import { platformHandlers } from './platform.js';
import { scraperCHandlers } from './scraperC.js';
import type { Handlers } from './types.js';

/** Every catalog action's handler. A missing one is a type error here. */
export const handlers: Handlers = {
  ...platformHandlers,
  ...scraperCHandlers,
};
