import { z } from 'zod';

// Field shapes used by more than one service. Every field is `.describe()`d: agents read these.

/** An absolute http(s) URL. Other schemes (file:, gopher:, data:) are refused at validation already. */
export const httpUrl = (description: string) => z.url({ protocol: /^https?$/ }).describe(description);

/** Every poll answers whether the job is over, and while it is not, when to ask again. */
export const pollFields = {
  finished: z
    .boolean()
    .describe('true once the job reached a final state: polling again returns the same answer, so stop.'),
  next_poll_seconds: z
    .number()
    .int()
    .optional()
    .describe('While the job runs: seconds to wait before polling again.'),
};
