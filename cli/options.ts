// The values of the options shared by decode and check: the format and the limits.
import { DEFAULT_MAX_EVENT_BYTES, DEFAULT_MAX_LINE_BYTES, DEFAULT_MAX_TEXT_BYTES } from 'seam-stream';
import type { Values } from './args.js';
import type { Format } from './formats.js';

export interface Limits {
  maxEventBytes: number;
  maxLineBytes: number;
  maxTextBytes: number;
}

export function limitsOf(v: Values): Limits {
  return {
    maxEventBytes: (v['max-event-bytes'] as number | undefined) ?? DEFAULT_MAX_EVENT_BYTES,
    maxLineBytes: (v['max-line-bytes'] as number | undefined) ?? DEFAULT_MAX_LINE_BYTES,
    maxTextBytes: (v['max-text-bytes'] as number | undefined) ?? DEFAULT_MAX_TEXT_BYTES,
  };
}

export function formatOf(v: Values): Format | undefined {
  return v.format as Format | undefined;
}
