// Offsets between UTF-8, UTF-16, code point and grapheme units, never rounded: an offset inside a
// character or a cluster is an error.
//
// Unpaired surrogates count as one code point and as 3 UTF-8 bytes: the U+FFFD that
// TextEncoder (and every UTF-8 encoder on the web platform) writes in their place.

import { BREAK, START_STATE, step } from './grapheme.js';
import { describeValue, numberHint, oneOf } from '../core/options.js';
import { TextRangeError, notText } from './errors.js';
import { bmpProps, propOf } from './unicode/props.js';

/** A unit for {@link convertOffset}. */
export type OffsetUnit = 'utf8' | 'utf16' | 'codePoint' | 'grapheme';

const UNITS: readonly OffsetUnit[] = ['utf8', 'utf16', 'codePoint', 'grapheme'];
const UNIT_HINTS: Readonly<Record<string, string>> = {
  byte: "did you mean 'utf8'?", bytes: "did you mean 'utf8'?",
  char: "a JavaScript string index is 'utf16'; a user-perceived character is 'grapheme'",
  chars: "a JavaScript string index is 'utf16'; a user-perceived character is 'grapheme'",
  character: "a JavaScript string index is 'utf16'; a user-perceived character is 'grapheme'",
  characters: "a JavaScript string index is 'utf16'; a user-perceived character is 'grapheme'",
  index: "did you mean 'utf16'? (a JavaScript string index)",
  length: "did you mean 'utf16'? (a JavaScript string length)",
  utf32: "did you mean 'codePoint'?", 'utf-32': "did you mean 'codePoint'?",
  cluster: "did you mean 'grapheme'?", clusters: "did you mean 'grapheme'?",
};
const invalidUnit = (message: string) => new TextRangeError('ERR_INVALID_UNIT', message);

/**
 * Converts an offset into `text` from one unit to another: `convertOffset('né', 3, 'utf8',
 * 'utf16')` is 2.
 *
 * Offsets are positions between characters, from 0 to the text's size in that unit. An offset
 * that falls inside a character (inside a UTF-8 sequence or between surrogate halves) throws
 * {@link TextRangeError} with code `ERR_OFFSET_INSIDE_CHARACTER`; when `from` or `to` is
 * `'grapheme'`, a position inside an extended grapheme cluster throws `ERR_OFFSET_INSIDE_GRAPHEME`.
 * Out-of-range or non-integer offsets throw `ERR_OFFSET_OUT_OF_RANGE`, a unit name not in
 * {@link OffsetUnit} `ERR_INVALID_UNIT`. Nothing is rounded. A text that is not a string, an
 * offset that is not a number or a unit that is not a string is a `TypeError`.
 */
export function convertOffset(text: string, offset: number, from: OffsetUnit, to: OffsetUnit): number {
  if (typeof text !== 'string') throw notText(text, 'convertOffset', 'text', (arg) => `convertOffset(${arg}, offset, from, to)`, false);
  if (typeof offset !== 'number') {
    const why = (UNITS as readonly unknown[]).includes(offset) ? 'the arguments are (text, offset, from, to)' : numberHint(offset);
    throw new TypeError(`convertOffset: offset must be a number, got ${describeValue(offset)}${why ? ` (${why})` : ''}`);
  }
  oneOf(from, 'from', 'convertOffset', UNITS, undefined, invalidUnit, UNIT_HINTS);
  oneOf(to, 'to', 'convertOffset', UNITS, undefined, invalidUnit, UNIT_HINTS);
  if (!Number.isInteger(offset) || offset < 0) {
    throw new TextRangeError('ERR_OFFSET_OUT_OF_RANGE', `convertOffset: offset must be a non-negative integer, got ${describeValue(offset)}`);
  }
  const needGrapheme = from === 'grapheme' || to === 'grapheme';
  if (from === 'utf16' && !needGrapheme) {
    // Cheap checks without a walk when possible.
    if (offset > text.length) throw outOfRange(offset, from, text.length);
    if (to === 'utf16') {
      if (insidePair(text, offset)) throw insideCharacter(offset, from);
      return offset;
    }
  }
  const len = text.length;
  let u8 = 0;
  let u16 = 0;
  let cps = 0;
  let g = 0;
  let st = START_STATE;
  for (let i = 0; i <= len; ) {
    // Position i (u16 === i) is before the code point at i, or the end of the text.
    let cp = -1;
    let w = 1;
    let boundary = true;
    if (i < len) {
      cp = text.charCodeAt(i);
      if ((cp & 0xfc00) === 0xd800 && i + 1 < len) {
        const lo = text.charCodeAt(i + 1);
        if ((lo & 0xfc00) === 0xdc00) {
          cp = ((cp - 0xd800) << 10) + (lo - 0xdc00) + 0x10000;
          w = 2;
        }
      }
      if (needGrapheme) {
        st = step(st, propOf(cp));
        boundary = (st & BREAK) !== 0;
        st &= ~BREAK;
      }
    }
    if (boundary && i > 0) g++; // a cluster ends here (the end of the text ends the last one)
    const at = from === 'utf8' ? u8 : from === 'utf16' ? u16 : from === 'codePoint' ? cps : g;
    if (at === offset && (from !== 'grapheme' || boundary)) {
      if (needGrapheme && !boundary) throw insideGrapheme(offset, from);
      return to === 'utf8' ? u8 : to === 'utf16' ? u16 : to === 'codePoint' ? cps : g;
    }
    if (at > offset) throw insideCharacter(offset, from);
    if (i === len) break;
    // Step over the code point.
    const size = cp < 0x80 ? 1 : cp < 0x800 ? 2 : w === 2 ? 4 : 3;
    if (from === 'utf8' && u8 + size > offset) throw insideCharacter(offset, from);
    if (from === 'utf16' && w === 2 && u16 + 1 === offset) throw insideCharacter(offset, from);
    u8 += size;
    u16 += w;
    cps++;
    i += w;
  }
  const total = from === 'utf8' ? u8 : from === 'utf16' ? u16 : from === 'codePoint' ? cps : g;
  throw outOfRange(offset, from, total);
}

function insidePair(text: string, offset: number): boolean {
  return (
    offset > 0 &&
    offset < text.length &&
    (text.charCodeAt(offset - 1) & 0xfc00) === 0xd800 &&
    (text.charCodeAt(offset) & 0xfc00) === 0xdc00
  );
}

function outOfRange(offset: number, unit: OffsetUnit, size: number): TextRangeError {
  return new TextRangeError('ERR_OFFSET_OUT_OF_RANGE', `${unit} offset ${offset} is past the end of the text (${size} ${unit} units)`);
}
function insideCharacter(offset: number, unit: OffsetUnit): TextRangeError {
  return new TextRangeError('ERR_OFFSET_INSIDE_CHARACTER', `${unit} offset ${offset} falls inside a character`);
}
function insideGrapheme(offset: number, unit: OffsetUnit): TextRangeError {
  return new TextRangeError('ERR_OFFSET_INSIDE_GRAPHEME', `${unit} offset ${offset} falls inside a grapheme cluster`);
}
