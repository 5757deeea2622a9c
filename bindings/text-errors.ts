// Errors of the text layer (graphemes, NFC, offsets).

import { describeValue } from './options.js';

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
  /**
   * An option's value is of the right type but not one it accepts (`maxPendingBytes: 0`,
   * `normalize: 'nfc'`). Options that are not an object, unknown options and values of the wrong
   * type are a `TypeError`.
   */
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

/** @internal Hints for option names that habits from other classes and libraries bring to the text layer. */
export const TEXT_OPTION_HINTS: Readonly<Record<string, string>> = {
  fatal: 'the text layer takes strings: fatal is an option of the decoder that makes them (Utf8Decoder, SseParser)',
  ignoreBOM: 'the text layer takes strings: ignoreBOM is an option of Utf8Decoder',
  encoding: 'the text layer takes strings: decode bytes first, with Utf8Decoder',
  granularity: 'clusters are always extended grapheme clusters (UAX #29, Unicode 17.0)',
  locale: 'clusters are the same in every locale (UAX #29, Unicode 17.0)',
  locales: 'clusters are the same in every locale (UAX #29, Unicode 17.0)',
};

/** @internal The hint for a number given where the options object belongs. */
export function limitInPlaceOfOptions(where: string, name: string): (value: unknown) => string | undefined {
  return (value) => (typeof value === 'number' ? `did you mean new ${where}({ ${name}: ${describeValue(value)} })?` : undefined);
}

/** @internal The error of an option value of the right type that the text layer does not accept. */
export const invalidOption = (message: string): TextRangeError => new TextRangeError('ERR_INVALID_OPTION', message);
