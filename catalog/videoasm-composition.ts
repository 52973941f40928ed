import { z } from 'zod';

// The video-assembly composition (docs/spec.md §2.5), CueFrame's canonical wire shape. Objects are loose: CueFrame adds
// fields (markers, captions, playbackRate, audioRole, …) and we pass them on. Where the spec names values we
// enforce them; where it says other values exist (focus modes) or leaves a type unshown (the optional clip
// fields), we stay tolerant and let the provider's validator judge.

export const ASPECT_RATIOS = ['16:9', '9:16', '1:1', '4:5'] as const;
export const RESOLUTIONS = ['hd', 'fhd', '4k'] as const;
export const TRACK_KINDS = ['video', 'audio', 'image', 'overlay', 'effect'] as const;

const fps = z
  .union([z.literal(24), z.literal(30), z.literal(60)])
  .describe('Frames per second: 24, 30 or 60.');
const aspectRatio = z.enum(ASPECT_RATIOS).describe('Aspect ratio: 16:9, 9:16, 1:1 or 4:5.');
const resolution = z.enum(RESOLUTIONS).describe('Output resolution: hd (720p), fhd (1080p) or 4k.');

/** A format where each field may be left to the provider's default (create_project, render override). */
export const partialFormat = z
  .strictObject({
    aspectRatio: aspectRatio.optional(),
    fps: fps.optional(),
    resolution: resolution.optional(),
  })
  .describe('Video format: { aspectRatio, fps, resolution }; omitted fields keep the default.');

const compositionFormat = z
  .looseObject({ aspectRatio, fps, resolution })
  .describe('Video format of the composition: { aspectRatio, fps, resolution }, all three required.');

const seconds = (what: string) => z.number().min(0).describe(`${what}, in seconds (>= 0).`);
const params = z
  .record(z.string(), z.unknown())
  .describe('Parameters of the primitive, as its registry defines.');

const focus = z
  .looseObject({
    mode: z
      .string()
      .min(1)
      .describe('point (needs x and y), frame-center, face, or another mode the provider supports.'),
    x: z.number().optional().describe('Horizontal focus point (mode point).'),
    y: z.number().optional().describe('Vertical focus point (mode point).'),
  })
  .superRefine((f, ctx) => {
    if (f.mode !== 'point') return;
    for (const k of ['x', 'y'] as const) {
      if (f[k] === undefined)
        ctx.addIssue({ code: 'custom', path: [k], message: 'required when mode is point' });
    }
  })
  .describe('Where the reframe looks: {mode: "point", x, y}, {mode: "frame-center"} or {mode: "face"}.');

const reframeSegment = z
  .looseObject({
    startSec: seconds('Segment start within the clip'),
    endSec: seconds('Segment end within the clip'),
    // docs/spec.md §2.5: a zoom above 1.0 fails validation.
    zoom: z.number().positive().max(1).optional().describe('Zoom factor, > 0 and at most 1.0.'),
    focus,
    ease: z
      .looseObject({
        in: z.number().optional().describe('Ease-in amount.'),
        out: z.number().optional().describe('Ease-out amount.'),
      })
      .optional()
      .describe('Easing into and out of the segment: { in, out }.'),
    bias: z
      .looseObject({
        x: z.number().optional().describe('Horizontal bias.'),
        y: z.number().optional().describe('Vertical bias.'),
      })
      .optional()
      .describe('Framing bias: { x, y }.'),
  })
  .refine((s) => s.endSec > s.startSec, { path: ['endSec'], message: 'must be greater than startSec' });

const mediaSource = z.looseObject({
  kind: z.literal('media').describe('A media item imported with videoasm/upload.'),
  mediaId: z.string().min(1).describe('media_id returned by videoasm/upload.'),
  trim: z
    .looseObject({ start: seconds('Trim start'), end: seconds('Trim end') })
    .optional()
    .describe('Part of the media to use: { start, end } in seconds.'),
  volume: z.number().min(0).max(4).optional().describe('Volume multiplier, 0 to 4 (1 = unchanged).'),
  muted: z.boolean().optional().describe('Mute the clip audio.'),
  loop: z.boolean().optional().describe('Loop the media to fill the clip.'),
  fadeInMs: z.number().int().min(0).optional().describe('Audio fade-in, milliseconds.'),
  fadeOutMs: z.number().int().min(0).optional().describe('Audio fade-out, milliseconds.'),
  kenBurns: z.unknown().optional().describe('Ken Burns pan/zoom, e.g. "in" or "out".'),
  excludedRanges: z.array(z.unknown()).optional().describe('Ranges of the media to skip.'),
  reframe: z
    .looseObject({ segments: z.array(reframeSegment).describe('Reframe segments, in time order.') })
    .optional()
    .describe(
      'Reframing for another aspect ratio: { segments: [{ startSec, endSec, zoom, focus, ease, bias }] }.',
    ),
});

const componentSource = z.looseObject({
  kind: z.literal('component').describe('A template component.'),
  componentId: z.string().min(1).describe('Component id.'),
  props: z.record(z.string(), z.unknown()).optional().describe('Component props.'),
});

const effectSource = z.looseObject({
  kind: z.literal('effect').describe('An effect primitive.'),
  primitiveId: z.string().min(1).describe('Effect primitive id.'),
  params: params.optional(),
});

const overlaySource = z.looseObject({
  kind: z
    .literal('overlay')
    .describe('An overlay primitive (primitiveId plus params, not type/at/position).'),
  primitiveId: z.string().min(1).describe("Overlay primitive id from the provider's overlay registry."),
  params: params.optional(),
  zPlane: z.string().min(1).optional().describe('Depth plane, e.g. "behind-subject" or "front".'),
  anchor: z.unknown().optional().describe('Anchor of the overlay.'),
  parallax: z.unknown().optional().describe('Parallax of the overlay.'),
});

export const clipSource = z
  .discriminatedUnion('kind', [mediaSource, componentSource, effectSource, overlaySource])
  .describe('What the clip shows: kind media, component, effect or overlay.');

export const clip = z.looseObject({
  id: z.string().min(1).describe('Clip id, unique in the composition.'),
  startTime: seconds('Start on the timeline'),
  duration: z.number().positive().describe('Length on the timeline, in seconds (> 0).'),
  source: clipSource,
  // Types of the optional clip fields are not shown by the spec; the provider validates them.
  opacity: z.unknown().optional().describe('Opacity, 0 to 1.'),
  scale: z.unknown().optional().describe('Scale factor.'),
  rotation: z.unknown().optional().describe('Rotation, degrees.'),
  position: z.unknown().optional().describe('Position, e.g. { x: 0.5, y: 0.5 } (frame fractions).'),
  region: z.unknown().optional().describe('Region of the frame the clip occupies.'),
  fit: z.unknown().optional().describe('How media fits the frame, e.g. "cover" or "contain".'),
  effects: z
    .array(
      z.looseObject({
        primitiveId: z.string().min(1).describe('Effect primitive id.'),
        params: params.optional(),
      }),
    )
    .optional()
    .describe('Effects applied to the clip: [{ primitiveId, params }].'),
  transitionIn: z.unknown().optional().describe('Transition into the clip.'),
});

export const track = z.looseObject({
  id: z.string().min(1).describe('Track id.'),
  kind: z.enum(TRACK_KINDS).describe('Track kind: video, audio, image, overlay or effect.'),
  contents: z.array(clip).describe('Clips on this track.'),
});

/** The fields of a composition, for actions that take them at the top level of the body. */
export const compositionFields = {
  v: z.literal(1).describe('Composition wire version; always 1.'),
  format: compositionFormat,
  tracks: z.array(track).describe('Tracks, bottom to top; each holds clips.'),
};

export const composition = z
  .looseObject(compositionFields)
  .describe('A composition: { v: 1, format: { aspectRatio, fps, resolution }, tracks: [...] }.');

export type Composition = z.output<typeof composition>;
