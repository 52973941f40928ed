import { filesHandlers } from './files.js';
import { mediastageHandlers } from './mediastage.js';
import { platformHandlers } from './platform.js';
import { propdataHandlers } from './propdata.js';
import { propstatsHandlers } from './propstats.js';
import { scraperAHandlers } from './scraperA.js';
import { scraperBHandlers } from './scraperB.js';
import { scraperCHandlers } from './scraperC.js';
import type { Handlers } from './types.js';
import { videoasmHandlers } from './videoasm.js';

/** Every catalog action's handler. A missing one is a type error here. */
export const handlers: Handlers = {
  ...mediastageHandlers,
  ...videoasmHandlers,
  ...platformHandlers,
  ...filesHandlers,
  ...propstatsHandlers,
  ...propdataHandlers,
  ...scraperAHandlers,
  ...scraperBHandlers,
  ...scraperCHandlers,
};
