import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { invalidInput } from '../../src/errors.js';
import { zodIssues } from '../../src/run/zod-issues.js';

const schema = z.strictObject({
  url: z.string(),
  n: z.number().optional(),
  format: z.enum(['a', 'b']),
  v: z.literal(1),
  tags: z.union([z.string(), z.array(z.string())]),
  place: z
    .object({ address: z.string().optional(), zip: z.string().optional() })
    .superRefine((p, ctx) => {
      if (p.address && !p.zip)
        ctx.addIssue({ code: 'custom', path: ['zip'], message: 'an address needs a zip' });
    })
    .optional(),
});

function issues(input: unknown, withInput = true) {
  const r = schema.safeParse(input);
  if (r.success) throw new Error('expected a failure');
  return zodIssues(r.error, withInput ? input : undefined);
}

describe('field issues', () => {
  it('[http:required-fields] an absent field is "required", whatever its schema', () => {
    expect(issues({})).toEqual([
      { path: 'url', message: 'required' },
      { path: 'format', message: 'required' },
      { path: 'v', message: 'required' },
      { path: 'tags', message: 'required' },
    ]);
  });

  it('[http:required-fields] without the input, zod\'s "received undefined" still tells (types and unions)', () => {
    const found = issues({}, false);
    expect(found).toContainEqual({ path: 'url', message: 'required' });
    expect(found).toContainEqual({ path: 'tags', message: 'required' });
  });

  it('a wrong value keeps what was expected, without zod\'s "Invalid input:" prefix; custom rules keep their words', () => {
    const found = issues({
      url: 3,
      n: 'x',
      format: 'c',
      v: 1,
      tags: 'x',
      place: { address: '1 Main St' },
      extra: 1,
    });
    expect(found).toEqual([
      { path: 'url', message: 'expected string, received number' },
      { path: 'n', message: 'expected number, received string' },
      { path: 'format', message: 'expected one of "a"|"b"' },
      { path: 'place.zip', message: 'an address needs a zip' },
      { path: 'extra', message: 'unknown field (this action accepts no extra fields)' },
    ]);
  });

  it('[http:required-fields] the summary reads "url is required"', () => {
    const e = invalidInput([
      { path: 'url', message: 'required' },
      { path: 'n', message: 'expected number, received string' },
    ]);
    expect(e.message).toBe('Invalid input: url is required; n: expected number, received string');
    expect(e.details).toEqual({
      issues: [
        { path: 'url', message: 'required' },
        { path: 'n', message: 'expected number, received string' },
      ],
    });
  });
});
