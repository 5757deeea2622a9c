// Typed errors. Each carries a stable `code` and, where bytes are involved, the absolute byte
// offset from the start of the stream.

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).toUpperCase().padStart(2, '0')).join(' ');
}

/** Invalid or truncated UTF-8 in a strict (`fatal: true`) stream. */
export class Utf8DecodeError extends TypeError {
  /** `ERR_INVALID_UTF8`: a bad sequence; `ERR_TRUNCATED_UTF8`: the stream ended inside a character. */
  readonly code: 'ERR_INVALID_UTF8' | 'ERR_TRUNCATED_UTF8';
  /** Absolute byte offset of the first byte of the bad sequence. */
  readonly offset: number;
  /** The valid text decoded by this call before the bad sequence: nothing returned is lost. */
  readonly text: string;
  /** The bad bytes (at most 4), for the message and for logs. */
  readonly bytes: Uint8Array;

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
}
