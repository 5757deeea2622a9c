// The Unicode 17.0 property byte of a code point: Grapheme_Cluster_Break, Indic_Conjunct_Break,
// Extended_Pictographic and NFC stability, for the grapheme, NFC and counting code of the text
// layer. The only module that reads the generated tables (./generated-tables.ts, written by
// scripts/gen-unicode-tables.mjs, which documents the byte layout).

import { STAGE1_BASE64, STAGE1_WIDE, STAGE2_BASE64, TABLE_SHIFT } from './generated-tables.js';

export { UNICODE_VERSION } from './generated-tables.js';

/** @internal Grapheme_Cluster_Break values (bits 0-3 of a property byte). */
export const enum Gcb {
  Other = 0, CR = 1, LF = 2, Control = 3, Extend = 4, ZWJ = 5, RI = 6, Prepend = 7,
  SpacingMark = 8, L = 9, V = 10, T = 11, LV = 12, LVT = 13,
  /** Not a property value: the state before the first code point (GB1). */
  Start = 15,
}
/** @internal Property byte bits. */
export const enum Prop {
  GcbMask = 0x0f,
  InCBMask = 0x30, InCBConsonant = 0x10, InCBLinker = 0x20, InCBExtend = 0x30,
  ExtPict = 0x40,
  /** Set unless the code point is an NFC-stable starter (ccc = 0 and NFC_Quick_Check = Yes). */
  NfcUnstable = 0x80,
}

function decodeBase64(b64: string): Uint8Array {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

const MASK = (1 << TABLE_SHIFT) - 1;

interface Tables {
  /** The BMP expanded to one flat 64 KiB array (see {@link bmpProps}). */
  readonly bmp: Uint8Array;
  readonly stage1: Uint8Array | Uint16Array;
  readonly stage2: Uint8Array;
}

// Built on first use, not at import: a bundle that never looks up a property (one that uses
// only the byte or frame layers) keeps neither the work nor, once tree-shaken, the tables.
let tables: Tables | undefined;

function buildTables(): Tables {
  const stage2 = decodeBase64(STAGE2_BASE64);
  let stage1: Uint8Array | Uint16Array = decodeBase64(STAGE1_BASE64);
  if (STAGE1_WIDE) {
    const bytes = stage1;
    stage1 = new Uint16Array(bytes.length >> 1);
    for (let i = 0; i < stage1.length; i++) stage1[i] = bytes[2 * i] | (bytes[2 * i + 1] << 8);
  }
  const bmp = new Uint8Array(0x10000);
  for (let cp = 0; cp < 0x10000; cp++) bmp[cp] = stage2[(stage1[cp >> TABLE_SHIFT] << TABLE_SHIFT) | (cp & MASK)];
  return (tables = { bmp, stage1, stage2 });
}

/**
 * @internal The property bytes of the BMP as one flat 64 KiB array, built on the first call: one
 * load per UTF-16 unit on the hot path instead of two dependent loads. Hot code fetches it ahead
 * into a local and looks up `cp < 0x10000 ? bmp[cp] : propOf(cp)`; the committers fetch it in
 * their constructors, as a call in every push measured 5% slower on short ASCII deltas.
 */
export function bmpProps(): Uint8Array {
  return (tables ?? buildTables()).bmp;
}

let plain: Uint8Array | undefined;

/**
 * @internal For each BMP unit, the UTF-8 bytes of a plain Other (property byte 0: a grapheme
 * boundary on both sides after another, an NFC-stable starter; not a surrogate), else 0: a run of
 * them is scanned with one load per unit (64 KiB, built on the first call).
 */
export function plainUtf8(): Uint8Array {
  if (plain !== undefined) return plain;
  const bmp = bmpProps();
  const t = new Uint8Array(0x10000);
  for (let cp = 0; cp < 0x10000; cp++) if (bmp[cp] === 0 && (cp & 0xf800) !== 0xd800) t[cp] = cp < 0x80 ? 1 : cp < 0x800 ? 2 : 3;
  return (plain = t);
}

/** @internal The property byte of any code point (0..0x10FFFF). */
export function propOf(cp: number): number {
  const t = tables ?? buildTables();
  return cp < 0x10000 ? t.bmp[cp] : t.stage2[(t.stage1[cp >> TABLE_SHIFT] << TABLE_SHIFT) | (cp & MASK)];
}
