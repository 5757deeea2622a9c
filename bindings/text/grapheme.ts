// Extended grapheme clusters (UAX #29, Unicode 17.0) without Intl.Segmenter: Intl.Segmenter's
// Unicode version differs between runtimes, and on Node 20 every segment object copies the whole
// input, so long strings are quadratic.
//
// The rules need the left context and exactly one code point after a boundary, so an incremental
// committer that holds back only the last cluster is exact.

import { byteLimitOption, checkOptions } from '../core/options.js';
import { TEXT_OPTION_HINTS, invalidOption, limitInPlaceOfOptions, notText } from './errors.js';
import { Gcb, Prop, bmpProps, propOf } from './unicode/props.js';

// ---- the rule machine --------------------------------------------------------------------------
// State is one small integer so it lives in a register:
//   bits 0-3  Grapheme_Cluster_Break of the previous code point (Gcb.Start before the first)
//   bits 4-5  GB11: 0 none, 1 ExtPict Extend*, 2 ExtPict Extend* ZWJ
//   bits 6-7  GB9c: 0 none, 1 Consonant [Extend|Linker]* without a Linker yet, 2 with a Linker
//   bit  8    GB12/13: the run of Regional_Indicators ending at the previous code point is odd
//   bit  9    output only: there is a boundary before the code point just stepped over

/** @internal */
export const START_STATE = Gcb.Start;
/** @internal Set in the value returned by {@link step} when a boundary precedes the code point. */
export const BREAK = 0x200;
const PICT = 0x10, PICT_ZWJ = 0x20, EMOJI_MASK = 0x30;
const CONS = 0x40, CONS_LINKER = 0x80, INCB_MASK = 0xc0;
const RI_ODD = 0x100;

/**
 * @internal Advances the rule machine over one code point with property byte `p`. Returns the new
 * state, with {@link BREAK} set when there is an extended grapheme cluster boundary before it.
 */
export function step(state: number, p: number): number {
  const prev = state & 15;
  const cls = p & Prop.GcbMask;
  let brk: boolean;
  if (prev === Gcb.CR) brk = cls !== Gcb.LF; // GB3, GB4
  else if (prev === Gcb.LF || prev === Gcb.Control || prev === Gcb.Start) brk = true; // GB1, GB4
  else if (cls === Gcb.CR || cls === Gcb.LF || cls === Gcb.Control) brk = true; // GB5
  else if (cls === Gcb.Extend || cls === Gcb.ZWJ || cls === Gcb.SpacingMark || prev === Gcb.Prepend) brk = false; // GB9, GB9a, GB9b
  else if (prev === Gcb.L) brk = !(cls === Gcb.L || cls === Gcb.V || cls === Gcb.LV || cls === Gcb.LVT); // GB6
  else if (prev === Gcb.LV || prev === Gcb.V) brk = !(cls === Gcb.V || cls === Gcb.T); // GB7
  else if (prev === Gcb.LVT || prev === Gcb.T) brk = cls !== Gcb.T; // GB8
  else if ((p & Prop.InCBMask) === Prop.InCBConsonant && (state & INCB_MASK) === CONS_LINKER) brk = false; // GB9c
  else if ((p & Prop.ExtPict) !== 0 && (state & EMOJI_MASK) === PICT_ZWJ) brk = false; // GB11
  else if (cls === Gcb.RI && prev === Gcb.RI) brk = (state & RI_ODD) === 0; // GB12, GB13
  else brk = true; // GB999

  let next = cls;
  // GB11 context
  if ((p & Prop.ExtPict) !== 0) next |= PICT;
  else if ((state & EMOJI_MASK) === PICT) {
    if (cls === Gcb.Extend) next |= PICT;
    else if (cls === Gcb.ZWJ) next |= PICT_ZWJ;
  }
  // GB9c context
  const incb = p & Prop.InCBMask;
  if (incb === Prop.InCBConsonant) next |= CONS;
  else if ((state & INCB_MASK) !== 0) {
    if (incb === Prop.InCBLinker) next |= CONS_LINKER;
    else if (incb === Prop.InCBExtend) next |= state & INCB_MASK;
  }
  // GB12/13 context
  if (cls === Gcb.RI && !(prev === Gcb.RI && (state & RI_ODD) !== 0)) next |= RI_ODD;
  return brk ? next | BREAK : next;
}

// ---- GraphemeCommitter -------------------------------------------------------------------------

/** Default {@link GraphemeCommitterOptions.maxPendingBytes}: 64 KiB. */
export const DEFAULT_MAX_PENDING_BYTES = 64 * 1024;

/** Options for {@link GraphemeCommitter}. */
export interface GraphemeCommitterOptions {
  /**
   * The most UTF-8 bytes of text the committer holds back while it waits for the end of a
   * cluster. A cluster that grows past it (say, 10,000 combining marks) is committed anyway, cut
   * inside the cluster, and {@link GraphemeCommitter.forcedCommits} counts it; no text is ever
   * dropped. The rule machine keeps its state across the cut, so later boundaries stay exact. A
   * trailing lone high surrogate (≤ 3 bytes) may be held on top of the limit.
   * @defaultValue 65536 (64 KiB)
   */
  maxPendingBytes?: number;
}

const OPTIONS = ['maxPendingBytes'] as const;
const KEY_HINTS: Readonly<Record<string, string>> = {
  normalize: 'GraphemeCommitter does not normalize: TextAssembler commits whole graphemes in NFC',
  maxTextBytes: 'a limit of TextAssembler; GraphemeCommitter holds only its last cluster, up to maxPendingBytes',
  maxBytes: "did you mean 'maxPendingBytes'?",
  maxLength: "did you mean 'maxPendingBytes'? (it counts UTF-8 bytes)",
};
const OPTION_HINTS = {
  keys: [KEY_HINTS, TEXT_OPTION_HINTS],
  notObject: (value: unknown) =>
    typeof value === 'string' ? 'GraphemeCommitter takes no locale: clusters are the same in every locale (UAX #29, Unicode 17.0)'
      : limitInPlaceOfOptions('GraphemeCommitter', 'maxPendingBytes')(value),
};

/**
 * Commits text only at final extended grapheme cluster boundaries (UAX #29, Unicode 17.0 on every
 * runtime), for a model's text deltas that can end inside an emoji ZWJ sequence, a flag, a Hangul
 * syllable, an Indic conjunct or between a letter and its combining accent.
 *
 * A boundary is final once the code point after it is known, so `push` returns everything up to
 * the last boundary in the text seen so far and holds back only the last cluster.
 *
 * Surrogates: a delta that ends in a high surrogate holds it until its pair arrives. Unpaired
 * surrogates are passed through unchanged as single code points of Grapheme_Cluster_Break Other
 * (as the UCD assigns them); a lone high surrogate still held at {@link flush} is returned as is.
 */
export class GraphemeCommitter {
  /** The byte limit of the hold-back, from the options. */
  readonly maxPendingBytes: number;
  #held = '';
  /** Index in #held of the first code unit the rule machine has not stepped over (a lone high surrogate). */
  #scan = 0;
  #heldBytes = 0;
  #state = START_STATE;
  #forced = 0;
  /**
   * The BMP's property bytes, fetched once by the constructor: `bmpProps()` in push cost 5% on
   * English in 1-20 character deltas (in-process A/B), although V8 inlines it there.
   */
  #bmp: Uint8Array;

  /**
   * Options that are not an object, unknown options and values of the wrong type throw a
   * `TypeError`; a value out of range throws `TextRangeError` (`ERR_INVALID_OPTION`).
   */
  constructor(options?: GraphemeCommitterOptions) {
    checkOptions(options, 'GraphemeCommitter', OPTIONS, OPTION_HINTS);
    this.maxPendingBytes = byteLimitOption(options?.maxPendingBytes, 'maxPendingBytes', 'GraphemeCommitter', DEFAULT_MAX_PENDING_BYTES, Infinity, invalidOption);
    this.#bmp = bmpProps();
  }

  /** Text held back: the last, possibly incomplete, cluster. */
  get pending(): string {
    return this.#held;
  }

  /** How many times the hold-back passed `maxPendingBytes` and was committed inside a cluster. */
  get forcedCommits(): number {
    return this.#forced;
  }

  /**
   * Adds a delta; returns the longest prefix of the text so far that ends on a final boundary and
   * has not been returned yet. Anything but a string is a `TypeError` and changes nothing.
   */
  push(text: string): string {
    if (typeof text !== 'string') throw notText(text, 'GraphemeCommitter.push', 'text', (arg) => `push(${arg})`);
    if (text.length === 0) return '';
    // Only `text` is scanned: the held text was scanned by earlier calls, except a trailing lone
    // high surrogate, which moves over to the front of `text`. Not concatenating first keeps
    // V8 from flattening held + text on every call.
    let held = this.#held;
    if (this.#scan < held.length) {
      text = held.slice(this.#scan) + text;
      held = held.slice(0, this.#scan);
    }
    const n = text.length;
    const max = this.maxPendingBytes;
    let st = this.#state;
    let i = 0;
    let cut = -1; // the last final boundary found in text
    let bytes = this.#heldBytes;
    const bmp = this.#bmp;
    while (i < n) {
      let cp = text.charCodeAt(i);
      if (st === Gcb.Other && (cp < 0x7f ? cp >= 0x20 : (cp & 0xf800) !== 0xd800 && (bmp[cp] & ~Prop.NfcUnstable) === 0)) {
        // Fast path: a plain Other after a plain Other (printable ASCII, and most letters and
        // ideographs: no Extend, ExtPict, InCB or RI property) is always a boundary and leaves
        // the state plain Other.
        cut = i++;
        bytes = cp < 0x80 ? 1 : cp < 0x800 ? 2 : 3;
        if (bytes > max) {
          cut = i;
          bytes = 0;
          this.#forced++;
        }
        continue;
      }
      let w = 1;
      if ((cp & 0xfc00) === 0xd800) {
        if (i + 1 === n) break; // a lone high surrogate at the end: wait for its pair
        const lo = text.charCodeAt(i + 1);
        if ((lo & 0xfc00) === 0xdc00) {
          cp = ((cp - 0xd800) << 10) + (lo - 0xdc00) + 0x10000;
          w = 2;
        }
      }
      st = step(st, cp < 0x10000 ? bmp[cp] : propOf(cp));
      if (st & BREAK) {
        st ^= BREAK;
        cut = i;
        bytes = 0;
      }
      bytes += cp < 0x80 ? 1 : cp < 0x800 ? 2 : w === 2 ? 4 : 3;
      i += w;
      if (bytes > max) {
        // Runaway cluster: commit inside it (documented on maxPendingBytes).
        cut = i;
        bytes = 0;
        this.#forced++;
      }
    }
    this.#state = st;
    this.#heldBytes = bytes;
    if (cut < 0) {
      this.#held = held + text;
      this.#scan = held.length + i;
      return '';
    }
    this.#held = cut === n ? '' : text.slice(cut);
    this.#scan = i - cut;
    return cut === 0 ? held : held + text.slice(0, cut);
  }

  /** End of stream: returns everything still held and resets for a new stream. */
  flush(): string {
    const out = this.#held;
    this.reset();
    return out;
  }

  /** Drops held text and state, for a new stream. `forcedCommits` keeps counting. */
  reset(): void {
    this.#held = '';
    this.#scan = 0;
    this.#heldBytes = 0;
    this.#state = START_STATE;
  }
}
