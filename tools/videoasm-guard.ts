import { composition as compositionSchema } from '../catalog/videoasm-composition.js';
import { GatewayError } from '../src/errors.js';
import { fingerprint } from '../src/lib/hash.js';
import type { HandleRecord, HandlerContext } from './context.js';

// docs/spec.md §4.2: "Validation is required before put_composition and render, repeated until `valid` is true": clips
// that fail validation are silently dropped and an invalid edit wastes a paid render. The gateway holds callers
// to it. videoasm/validate records the fingerprint of each composition it found valid (per account, as a handle
// of kind `vld`); videoasm/put_composition records the fingerprint of what it stored on the project's handle;
// videoasm/render refuses, before anything is charged, a project whose stored composition has no valid
// validation on record.

const VALIDATED = 'vld';

type Json = Record<string, unknown>;

/** Key-order independent, and the same whether the composition came wrapped or at the top level. */
export function compositionFingerprint(composition: Json): string {
  const parsed = compositionSchema.safeParse(composition);
  return fingerprint(parsed.success ? parsed.data : composition);
}

export async function recordValidated(ctx: HandlerContext, composition: Json): Promise<void> {
  const fp = compositionFingerprint(composition);
  if (await ctx.services.handles.findByRef(ctx.owner, VALIDATED, fp)) return;
  await ctx.services.handles.mint(ctx.owner, VALIDATED, fp);
}

export async function recordStored(ctx: HandlerContext, project: HandleRecord, composition: Json) {
  await ctx.services.handles.update(project.handle, {
    ...project.data,
    composition_fp: compositionFingerprint(composition),
  });
}

/** Throws (uncharged) unless the project's stored composition passed videoasm/validate. */
export async function requireValidated(ctx: HandlerContext, project: HandleRecord): Promise<void> {
  const fp = project.data.composition_fp;
  const stored = typeof fp === 'string';
  if (stored && (await ctx.services.handles.findByRef(ctx.owner, VALIDATED, fp))) return;
  const message = stored
    ? 'The composition stored in this project has not passed videoasm/validate: validate exactly that ' +
      'composition (repeat until valid is true), store it again with videoasm/put_composition if you changed ' +
      'it, then render. Nothing was charged.'
    : 'This project has no composition yet: run videoasm/validate until valid is true, store it with ' +
      'videoasm/put_composition, then render. Nothing was charged.';
  throw new GatewayError('invalid_input', message, {
    details: {
      issues: [{ path: 'project_id', message: 'its composition has not passed videoasm/validate' }],
      run_first: stored ? ['videoasm/validate'] : ['videoasm/validate', 'videoasm/put_composition'],
    },
  });
}
