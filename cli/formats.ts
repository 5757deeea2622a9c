// The formats the command reads: the library's model formats (what each one means is the
// library's, through its package: `describeFormat` and `ModelEventReader`), and the plain
// framings the command adds (SSE, NDJSON, lines, text).
import { MODEL_FORMATS, describeFormat, type ModelFormat } from 'seam-stream';

export type { ModelFormat } from 'seam-stream';
export const PLAIN_FORMATS = ['sse', 'ndjson', 'lines', 'text'] as const;
export type PlainFormat = (typeof PLAIN_FORMATS)[number];
export type Format = ModelFormat | PlainFormat;
export const FORMATS: readonly Format[] = [...MODEL_FORMATS, ...PLAIN_FORMATS];

export function isModelFormat(f: string): f is ModelFormat {
  return (MODEL_FORMATS as readonly string[]).includes(f);
}

/** How a format's bytes are framed. */
export function framingOf(f: Format): 'sse' | 'lines' | 'ndjson' | 'text' | 'eventstream' {
  if (isModelFormat(f)) return describeFormat(f).framing;
  return f;
}

/** Whether a format's stream goes on after its completion with what is still read (Bedrock's metadata, the usage). */
export function hasTrailer(f: Format): boolean {
  return isModelFormat(f) && describeFormat(f).trailer;
}

/** Whether a finish reason of the format says the model's turn failed (describeFormat's `failedTurn`): the stream's end is that error. */
export function turnFailed(f: Format, reason: string | undefined): boolean {
  return reason !== undefined && isModelFormat(f) && describeFormat(f).failedTurn(reason) !== undefined;
}

/** What completes a stream of a plain format, as messages name it. */
const PLAIN_COMPLETION: Readonly<Record<PlainFormat, string>> = {
  sse: 'the blank line that ends its last event',
  ndjson: 'none: it ends with the input',
  lines: 'none: it ends with the input',
  text: 'none: it ends with the input',
};

/** What completes a stream of each format, as messages name it. */
export function completionOf(f: Format): string {
  return isModelFormat(f) ? describeFormat(f).completion : PLAIN_COMPLETION[f];
}
