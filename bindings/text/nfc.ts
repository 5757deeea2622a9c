// Streaming NFC: normalizing each delta separately is wrong (a combining mark in the next delta
// can compose with, or reorder against, the end of this one). A boundary is NFC-stable when the
// code point after it is a starter that never combines backward (ccc = 0 and
// NFC_Quick_Check = Yes): NFC(a + b) === NFC(a) + NFC(b) whenever b starts with such a code point
// (UAX #15, "Stable Code Points"). So we commit only up to the last such boundary and normalize
// the committed piece with the runtime's String.prototype.normalize.
//
// Stability comes from our Unicode 17.0 tables; normalization itself from the runtime. On a
// runtime whose Unicode version is older than 17.0 the output still equals that runtime's
// (all inputs joined).normalize('NFC') for every cutting, because a code point that is stable in
// 17.0 was stable (or unassigned, which normalization leaves alone) in every earlier version. What
// such a runtime does not do is compose or reorder characters it does not know yet, so the text is
// its NFC, not Unicode 17.0 NFC.

import { DEFAULT_MAX_PENDING_BYTES } from './grapheme.js';
import { byteLimitOption, checkOptions } from '../core/options.js';
import { TEXT_OPTION_HINTS, invalidOption, limitInPlaceOfOptions, notText } from './errors.js';
import { Prop, bmpProps, propOf } from './unicode/props.js';

/** Options for {@link NfcCommitter}. */
export interface NfcCommitterOptions {
  /**
   * The most UTF-8 bytes held back while waiting for an NFC-stable boundary. Text that grows past
   * it without one (say, 10,000 combining marks) is normalized and committed anyway;
   * {@link NfcCommitter.forcedCommits} counts those, and after one the output may differ from
   * NFC of the whole input at that cut. No text is dropped.
   * @defaultValue 65536 (64 KiB)
   */
  maxPendingBytes?: number;
}

const OPTIONS = ['maxPendingBytes'] as const;
const ALWAYS_NFC = "NfcCommitter always normalizes to NFC; TextAssembler's normalize: false turns NFC off";
const KEY_HINTS: Readonly<Record<string, string>> = {
  normalize: ALWAYS_NFC,
  normalization: ALWAYS_NFC,
  form: ALWAYS_NFC,
  maxTextBytes: 'a limit of TextAssembler; NfcCommitter holds only text that may still change, up to maxPendingBytes',
  maxBytes: "did you mean 'maxPendingBytes'?",
  maxLength: "did you mean 'maxPendingBytes'? (it counts UTF-8 bytes)",
};
const OPTION_HINTS = {
  keys: [KEY_HINTS, TEXT_OPTION_HINTS],
  notObject: (value: unknown) =>
    typeof value === 'string' ? 'NfcCommitter always normalizes to NFC: new NfcCommitter()' : limitInPlaceOfOptions('NfcCommitter', 'maxPendingBytes')(value),
};

/**
 * Normalizes a stream of text to NFC: the concatenation of everything `push` and `flush` return
 * equals `(all inputs joined).normalize('NFC')` for every way of cutting the input (unless
 * `maxPendingBytes` forced a commit).
 *
 * Commit points come from seam's Unicode 17.0 tables; the normalization itself is the runtime's
 * `String.prototype.normalize`. On a runtime with an older Unicode version the guarantee above
 * still holds against that runtime's `normalize('NFC')` (a code point stable in 17.0 is stable or
 * unassigned in every earlier version), but characters the runtime does not know are left as they
 * are, so the result is that runtime's NFC rather than Unicode 17.0 NFC. Unpaired surrogates pass
 * through unchanged; a high surrogate at the end of a delta is held until its pair arrives.
 */
export class NfcCommitter {
  /** The byte limit of the hold-back, from the options. */
  readonly maxPendingBytes: number;
  #held = '';
  #scan = 0;
  #heldBytes = 0;
  /** The held text contains an NFC-unstable code point (so it needs normalize()). */
  #heldDirty = false;
  #forced = 0;
  /** The BMP's property bytes, fetched once by the constructor (see GraphemeCommitter). */
  #bmp: Uint8Array;

  /**
   * Options that are not an object, unknown options and values of the wrong type throw a
   * `TypeError`; a value out of range throws `TextRangeError` (`ERR_INVALID_OPTION`).
   */
  constructor(options?: NfcCommitterOptions) {
    checkOptions(options, 'NfcCommitter', OPTIONS, OPTION_HINTS);
    this.maxPendingBytes = byteLimitOption(options?.maxPendingBytes, 'maxPendingBytes', 'NfcCommitter', DEFAULT_MAX_PENDING_BYTES, Infinity, invalidOption);
    this.#bmp = bmpProps();
  }

  /** Raw (not yet normalized) text held back. */
  get pending(): string {
    return this.#held;
  }

  /** How many times the hold-back passed `maxPendingBytes` and was committed at an unstable boundary. */
  get forcedCommits(): number {
    return this.#forced;
  }

  /** Adds text; returns NFC text that can no longer change. Anything but a string is a `TypeError` and changes nothing. */
  push(text: string): string {
    if (typeof text !== 'string') throw notText(text, 'NfcCommitter.push', 'text', (arg) => `push(${arg})`);
    if (text.length === 0) return '';
    // Scan only `text` (see GraphemeCommitter.push): a trailing unscanned lone high surrogate
    // of the held text moves to the front of `text`.
    let held = this.#held;
    if (this.#scan < held.length) {
      text = held.slice(this.#scan) + text;
      held = held.slice(0, this.#scan);
    }
    const n = text.length;
    const max = this.maxPendingBytes;
    let i = 0;
    let cut = -1;
    let bytes = this.#heldBytes;
    let dirty = this.#heldDirty; // the text from the last cut to i has an unstable code point
    let cutDirty = false; // held + text[0..cut) has one
    const bmp = this.#bmp;
    while (i < n) {
      let cp = text.charCodeAt(i);
      let w = 1;
      if (cp < 0x300) {
        // Below U+0300 every code point is an NFC-stable starter.
        cutDirty = cutDirty || dirty;
        dirty = false;
        cut = i++;
        bytes = cp < 0x80 ? 1 : 2;
        continue;
      }
      if ((cp & 0xfc00) === 0xd800) {
        if (i + 1 === n) break; // a lone high surrogate at the end: wait for its pair
        const lo = text.charCodeAt(i + 1);
        if ((lo & 0xfc00) === 0xdc00) {
          cp = ((cp - 0xd800) << 10) + (lo - 0xdc00) + 0x10000;
          w = 2;
        }
      }
      if ((cp < 0x10000 ? bmp[cp] : propOf(cp)) & Prop.NfcUnstable) {
        dirty = true;
      } else {
        cutDirty = cutDirty || dirty;
        dirty = false;
        cut = i;
        bytes = 0;
      }
      bytes += cp < 0x800 ? 2 : w === 2 ? 4 : 3;
      i += w;
      if (bytes > max) {
        cutDirty = cutDirty || dirty;
        dirty = false;
        cut = i;
        bytes = 0;
        this.#forced++;
      }
    }
    this.#heldBytes = bytes;
    this.#heldDirty = dirty;
    if (cut < 0) {
      this.#held = held + text;
      this.#scan = held.length + i;
      return '';
    }
    this.#held = cut === n ? '' : text.slice(cut);
    this.#scan = i - cut;
    const piece = cut === 0 ? held : held + text.slice(0, cut);
    return cutDirty ? piece.normalize('NFC') : piece;
  }

  /** End of stream: returns the rest, normalized, and resets for a new stream. */
  flush(): string {
    const rest = this.#held;
    const dirty = this.#heldDirty || this.#scan < rest.length;
    this.reset();
    return dirty ? rest.normalize('NFC') : rest;
  }

  /** Drops held text, for a new stream. `forcedCommits` keeps counting. */
  reset(): void {
    this.#held = '';
    this.#scan = 0;
    this.#heldBytes = 0;
    this.#heldDirty = false;
  }
}
