import { describe, expect, it } from 'vitest';
import { editDistance, nearest, unknownName } from '../../src/lib/did-you-mean.js';

describe('did you mean', () => {
  it('[cli:did-you-mean] finds the one near name, a swap counting as one edit; nothing for a far or tied guess', () => {
    expect(editDistance('alcie', 'alice')).toBe(1);
    expect(editDistance('balanse', 'balance')).toBe(1);
    expect(nearest('balanse', ['balance', 'credit', 'tx'])).toBe('balance');
    expect(nearest('scraperC/markdwn', ['scraperC/markdown', 'scraperC/scrape'])).toBe('scraperC/markdown');
    expect(nearest('BALANCE', ['balance'])).toBe('balance');
    expect(nearest('zzz', ['balance', 'credit'])).toBeUndefined();
    // "tz" is one edit from both: no guess.
    expect(nearest('tz', ['tx', 'ty'])).toBeUndefined();
    expect(
      unknownName('action', 'scraperC/markdwn', ['scraperC/markdown'], 'GET /api/run lists the catalog'),
    ).toBe(
      'Unknown action "scraperC/markdwn" — did you mean scraperC/markdown? GET /api/run lists the catalog.',
    );
    expect(unknownName('action', 'nope/x', ['scraperC/markdown'], 'GET /api/run lists the catalog')).toBe(
      'Unknown action "nope/x". GET /api/run lists the catalog.',
    );
  });
});
