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

const STAGE2 = decodeBase64(STAGE2_BASE64);
const STAGE1: Uint8Array | Uint16Array = (() => {
  const bytes = decodeBase64(STAGE1_BASE64);
  if (!STAGE1_WIDE) return bytes;
  const out = new Uint16Array(bytes.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = bytes[2 * i] | (bytes[2 * i + 1] << 8);
  return out;
})();
const MASK = (1 << TABLE_SHIFT) - 1;

/**
 * @internal The BMP expanded to one flat 64 KiB array: one load per UTF-16 unit on the hot path
 * instead of two dependent loads.
 */
export const BMP: Uint8Array = (() => {
  const out = new Uint8Array(0x10000);
  for (let cp = 0; cp < 0x10000; cp++) out[cp] = STAGE2[(STAGE1[cp >> TABLE_SHIFT] << TABLE_SHIFT) | (cp & MASK)];
  return out;
})();

/** @internal The property byte of any code point (0..0x10FFFF). */
export function propOf(cp: number): number {
  return cp < 0x10000 ? BMP[cp] : STAGE2[(STAGE1[cp >> TABLE_SHIFT] << TABLE_SHIFT) | (cp & MASK)];
}
