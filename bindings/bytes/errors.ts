// Errors of layer 1: invalid or truncated UTF-8.
import { hex } from '../core/errors.js';

/** Invalid or truncated UTF-8 in a strict (`fatal: true`) stream. */
export class Utf8DecodeError extends TypeError {
  /** `ERR_INVALID_UTF8`: a bad sequence; `ERR_TRUNCATED_UTF8`: the stream ended inside a character. */
  readonly code: 'ERR_INVALID_UTF8' | 'ERR_TRUNCATED_UTF8';
  /** Absolute byte offset of the first byte of the bad sequence. */
  readonly offset: number;
  /** The valid text decoded by this call before the bad sequence: nothing returned is lost. */
  readonly text: string;
  /**
   * The bytes from the bad sequence's start, for the message and for logs: at most 4, and none past
   * the end of the read that showed the error (so they may differ with how the input was cut).
   */
  readonly bytes: Uint8Array;
  /** From a LineDecoder or NdjsonDecoder: the lines (or values) completed before the bad bytes (typed by `LinesUtf8DecodeError`). */
  declare readonly lines?: unknown[];
  /** From an SseParser: the events dispatched before the bad bytes (typed by `SseUtf8DecodeError`). */
  declare readonly events?: unknown;

  constructor(code: 'ERR_INVALID_UTF8' | 'ERR_TRUNCATED_UTF8', offset: number, text: string, bytes: Uint8Array) {
    super(
      code === 'ERR_INVALID_UTF8'
        ? `Invalid UTF-8 at byte offset ${offset} (bytes from there: ${hex(bytes)})`
        : `Truncated UTF-8: the stream ended inside a character that starts at byte offset ${offset} (${hex(bytes)})`,
    );
    this.name = 'Utf8DecodeError';
    this.code = code;
    this.offset = offset;
    this.text = text;
    this.bytes = bytes;
  }

  /** @internal The same error without the output it carried (what a stopped decoder throws again). */
  withoutOutput(): Utf8DecodeError {
    const copy = new Utf8DecodeError(this.code, this.offset, '', this.bytes);
    if (this.lines !== undefined) Object.defineProperty(copy, 'lines', { value: [], enumerable: true });
    if (this.events !== undefined) Object.defineProperty(copy, 'events', { value: [], enumerable: true });
    return copy;
  }
}
