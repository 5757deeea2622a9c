// Errors of the text layer (graphemes, NFC, offsets).

/** Codes of {@link TextRangeError}. */
export type TextRangeErrorCode =
  /** The offset is negative, not an integer, or past the end of the text in its unit. */
  | 'ERR_OFFSET_OUT_OF_RANGE'
  /** The offset falls inside a character: between the bytes of one UTF-8 sequence or between the two halves of a surrogate pair. */
  | 'ERR_OFFSET_INSIDE_CHARACTER'
  /** The offset falls inside an extended grapheme cluster while converting to or from `'grapheme'`. */
  | 'ERR_OFFSET_INSIDE_GRAPHEME'
  /** The unit is not one of `'utf8'`, `'utf16'`, `'codePoint'`, `'grapheme'`. */
  | 'ERR_INVALID_UNIT'
  /** An option is out of its range (for example `maxPendingBytes: 0`). */
  | 'ERR_INVALID_OPTION'
  /** A {@link TextAssembler} passed its `maxTextBytes` of committed text. */
  | 'ERR_TEXT_TOO_LONG';

/** A bad offset, unit or option given to the text layer, or a text past its limit. Never a silent rounding. */
export class TextRangeError extends RangeError {
  readonly code: TextRangeErrorCode;
  constructor(code: TextRangeErrorCode, message: string) {
    super(message);
    this.name = 'TextRangeError';
    this.code = code;
  }
}
