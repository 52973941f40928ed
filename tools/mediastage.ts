import { notConfigured } from '../src/errors.js';
import type { ServiceHandlers } from './types.js';

// mediastage: fal.ai storage. The gateway only asks fal for a presigned upload; the caller PUTs the bytes to
// fal directly, so the call is complete (and charged) once fal has issued the URLs.

const NOT_CONFIGURED = () => notConfigured('Media staging (mediastage/upload)', ['TOLLGATE_FAL_API_KEY']);

export const mediastageHandlers: ServiceHandlers<'mediastage'> = {
  'mediastage/upload': {
    precheck: (_input, services) => (services.vendors.fal ? undefined : NOT_CONFIGURED()),
    provider: () => 'fal',
    run: async (input, ctx) => {
      const fal = ctx.services.vendors.fal;
      if (!fal) throw NOT_CONFIGURED();
      return fal.initiateUpload(
        { file_name: input.file_name, content_type: input.content_type },
        { signal: ctx.signal },
      );
    },
  },
};
