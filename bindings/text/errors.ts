// Errors of the text layer (graphemes, NFC, offsets).

import { describeValue } from '../core/options.js';

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

/** Where a provider's objects keep their text, for the hint of {@link notText}. */
const TEXT_PATHS: readonly (readonly (string | number)[])[] = [
  ['content'], ['text'], ['delta'], ['delta', 'content'], ['delta', 'text'], ['choices', 0, 'delta', 'content'],
  ['choices', 0, 'text'], ['message', 'content'], ['response'],
];

/** The hint for an object given in place of its text (a getter or a proxy that throws gives none). */
function objectHint(value: object, call: (arg: string) => string): string | undefined {
  try {
    for (const path of TEXT_PATHS) {
      let v: unknown = value;
      for (const k of path) v = v !== null && typeof v === 'object' ? (v as Record<string | number, unknown>)[k] : undefined;
      if (typeof v === 'string') return `did you mean ${call(`x${path.map((k) => (typeof k === 'number' ? `[${k}]` : `.${k}`)).join('')}`)}?`;
    }
    if (typeof (value as { data?: unknown }).data === 'string' && 'type' in value) {
      return "an SseEvent: its data is the provider's JSON, and the text is inside it";
    }
  } catch {
    // no hint
  }
  return undefined;
}

/**
 * @internal The TypeError for a text argument that is not a string, with a hint where one helps:
 * `call` writes the call with a suggested argument, as `(arg) => \`push(${arg})\``; `chunk` says
 * that the text comes from a provider's chunk (so a missing one may mean a chunk without text).
 */
export function notText(value: unknown, where: string, name: string, call: (arg: string) => string, chunk = true): TypeError {
  let why: string | undefined;
  if (value === undefined || value === null) {
    // a delta read from a provider's chunk that has no text (OpenAI's first and last chunks)
    if (chunk) why = `a chunk without text has none: ${call(`${name} ?? ''`)}`;
  } else if (value instanceof String) {
    why = `a String object: ${call(`String(${name})`)}`;
  } else if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) {
    why = 'bytes: decode them first, with Utf8Decoder, or SseParser for an event stream';
  } else if (Array.isArray(value)) {
    why = `one string at a time, or ${call(`${name}.join('')`)}`;
  } else if (typeof value === 'object') {
    why = objectHint(value, call);
  }
  return new TypeError(`${where}: ${name} must be a string, got ${describeValue(value)}${why ? ` (${why})` : ''}`);
}
