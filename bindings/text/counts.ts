// Counting a text in UTF-8 bytes, UTF-16 units, code points and graphemes (offsets.ts converts
// positions between those units).
//
// Unpaired surrogates count as one code point and as 3 UTF-8 bytes: the U+FFFD that
// TextEncoder (and every UTF-8 encoder on the web platform) writes in their place.

import { BREAK, START_STATE, step } from './grapheme.js';
import { notText } from './errors.js';
import { Gcb, bmpProps, propOf } from './unicode/props.js';

/** The sizes of a text in each unit, as {@link countText} returns them. */
export interface TextCounts {
  /** Bytes of the text's UTF-8 (an unpaired surrogate counts 3, as U+FFFD). */
  utf8Bytes: number;
  /** Unicode code points (an unpaired surrogate counts 1). */
  codePoints: number;
  /** UTF-16 code units: `text.length`. */
  utf16Units: number;
  /** Extended grapheme clusters (UAX #29, Unicode 17.0). */
  graphemes: number;
}

/** Counts `text` in UTF-8 bytes, code points, UTF-16 units and extended grapheme clusters, in one pass. Anything but a string is a `TypeError`. */
export function countText(text: string): TextCounts {
  if (typeof text !== 'string') throw notText(text, 'countText', 'text', (arg) => `countText(${arg})`, false);
  const len = text.length;
  let bytes = 0;
  let cps = 0;
  let graphemes = 0;
  let st = START_STATE;
  const bmp = bmpProps();
  for (let i = 0; i < len; i++) {
    let cp = text.charCodeAt(i);
    cps++;
    if (cp < 0x7f && cp >= 0x20 && st === Gcb.Other) {
      // Printable ASCII after a plain Other: one byte, one boundary, state unchanged.
      bytes++;
      graphemes++;
      continue;
    }
    if ((cp & 0xfc00) === 0xd800 && i + 1 < len) {
      const lo = text.charCodeAt(i + 1);
      if ((lo & 0xfc00) === 0xdc00) {
        cp = ((cp - 0xd800) << 10) + (lo - 0xdc00) + 0x10000;
        i++;
      }
    }
    bytes += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    st = step(st, cp < 0x10000 ? bmp[cp] : propOf(cp));
    if (st & BREAK) {
      graphemes++;
      st ^= BREAK;
    }
  }
  return { utf8Bytes: bytes, codePoints: cps, utf16Units: len, graphemes };
}

/** UTF-8 bytes of a string (a lone surrogate counts as U+FFFD, 3 bytes). */
export function utf8Length(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 2; // a pair: 4 bytes for 2 units
      i++;
    } else n += 2;
  }
  return n;
}
