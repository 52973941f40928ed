import { z } from 'zod';
import { defineAction, inputObject, outputObject } from './define.js';
import { group } from './group.js';

// mediastage (docs/spec.md §2.4, §4.2): staging a media file on fal.ai storage before a generation.

const STRICT = true;

export const upload = defineAction({
  service: 'mediastage',
  action: 'upload',
  title: 'Stage a media file for a generation',
  summary:
    'Returns { upload_url, file_url } for one media file. PUT the raw bytes to upload_url with the same ' +
    'Content-Type header, then pass file_url as image_url, video_url or audio_url of a generation. Upload ' +
    'originals uncompressed.',
  whenToUse:
    'Use it only to hand an input file to a media generation (image_url, video_url or audio_url); to ' +
    'keep a file or to use it in video assembly, use files/upload instead.',
  priceCents: 1,
  strict: STRICT,
  input: inputObject(STRICT, {
    file_name: z.string().min(1).describe('Name of the file, e.g. "photo.png".'),
    content_type: z
      .string()
      .min(1)
      .describe('MIME type of the bytes you will PUT, e.g. "image/png"; send it as the PUT Content-Type.'),
  }),
  output: outputObject({
    upload_url: z
      .string()
      .describe('Presigned URL: HTTP PUT the raw bytes here, with the Content-Type given.'),
    file_url: z.string().describe('Public URL of the staged file, for image_url / video_url / audio_url.'),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  example: { file_name: 'photo.png', content_type: 'image/png' },
  keywords: [
    'upload',
    'stage',
    'image',
    'video',
    'audio',
    'media',
    'generation',
    'input file',
    'input image',
    'image generation',
    'model input',
  ],
});

export const mediastage = group(upload);
