// Layer 1 (bytes): UTF-8 kernels over byte runs in linear memory: validation (Unicode Table 3-7), the incomplete
// tail that a stream carries to its next chunk, the WHATWG decoder (the reference, used for
// replacement and to place errors exactly) and the UTF-8 → UTF-16 transcoder.
//
// Every kernel has a scalar twin. The scalar code is the reference and the fallback build; the
// SIMD code is chosen at compile time (ASC_FEATURE_SIMD) and tested against it.

import { bytes16 } from './vectors';

// ---------------------------------------------------------------------------------------------
// Scalar reference

/** Set by `validate`: the run held only ASCII bytes. */
export let runAscii: bool = true;
/** Set by `decodeWhatwg`: address of the first byte of the first bad sequence, or 0 if none. */
export let errAt: usize = 0;

/**
 * Length of the sequence that `lead` starts, 0 when it can start none (continuation byte,
 * C0, C1, F5..FF), with the allowed range of the second byte packed as `lo | hi << 8 | n << 16`.
 */
// @ts-ignore: decorator
@inline function leadInfo(lead: u32): u32 {
  if (lead < 0xC2) return 0; // continuation, or an overlong C0/C1 lead
  if (lead < 0xE0) return 0x01BF80;
  if (lead < 0xF0) {
    if (lead == 0xE0) return 0x02BFA0; // E0 A0..BF: no overlongs
    if (lead == 0xED) return 0x029F80; // ED 80..9F: no surrogates
    return 0x02BF80;
  }
  if (lead == 0xF0) return 0x03BF90;   // F0 90..BF: no overlongs
  if (lead < 0xF4) return 0x03BF80;
  if (lead == 0xF4) return 0x038F80;   // F4 80..8F: nothing above U+10FFFF
  return 0;
}

/** Scalar validation of [p, end): returns the address of the first bad sequence, or 0. */
export function firstErrorScalar(p: usize, end: usize): usize {
  let ascii = true;
  while (p < end) {
    while (p + 8 <= end && (load<u64>(p) & 0x8080808080808080) == 0) p += 8;
    if (p >= end) break;
    const b = <u32>load<u8>(p);
    if (b < 0x80) { p++; continue; }
    ascii = false;
    const info = leadInfo(b);
    if (info == 0) return p;
    const n = <usize>(info >> 16);
    if (end - p <= n) return p; // truncated
    const c1 = <u32>load<u8>(p, 1);
    if (c1 < (info & 0xFF) || c1 > ((info >> 8) & 0xFF)) return p;
    if (n >= 2 && (<u32>load<u8>(p, 2) & 0xC0) != 0x80) return p;
    if (n == 3 && (<u32>load<u8>(p, 3) & 0xC0) != 0x80) return p;
    p += n + 1;
  }
  runAscii = ascii;
  return 0;
}

// A shift DFA for the scalar build's validation: one 64-bit row per byte value, holding the next
// state for every current state, each state being a bit offset into the row (6 bits apart):
//   next = (ROW[byte] >> state) & 63
// The row load does not depend on the state, so the loop carries only a shift and a mask.
// States: the error state is 0, so a missing transition is an error.
const S_ERROR: u64 = 0;
const S_ACCEPT: u64 = 6;
const S_CONT1: u64 = 12;  // one more continuation 80..BF
const S_CONT2: u64 = 18;  // two more
const S_CONT3: u64 = 24;  // three more
const S_E0: u64 = 30;     // after E0: A0..BF, then one more
const S_ED: u64 = 36;     // after ED: 80..9F, then one more (no surrogates)
const S_F0: u64 = 42;     // after F0: 90..BF, then two more
const S_F4: u64 = 48;     // after F4: 80..8F, then two more (nothing above U+10FFFF)
const DFA: usize = memory.data(256 * 8, 8);

function dfaInit(): void {
  for (let b: u32 = 0; b < 256; b++) {
    let row: u64 = 0;
    // from ACCEPT
    let fromAccept = S_ERROR;
    if (b < 0x80) fromAccept = S_ACCEPT;
    else if (b >= 0xC2 && b <= 0xDF) fromAccept = S_CONT1;
    else if (b == 0xE0) fromAccept = S_E0;
    else if (b == 0xED) fromAccept = S_ED;
    else if (b >= 0xE1 && b <= 0xEF) fromAccept = S_CONT2;
    else if (b == 0xF0) fromAccept = S_F0;
    else if (b >= 0xF1 && b <= 0xF3) fromAccept = S_CONT3;
    else if (b == 0xF4) fromAccept = S_F4;
    row |= fromAccept << S_ACCEPT;
    if (b >= 0x80 && b <= 0xBF) {
      row |= (S_ACCEPT << S_CONT1) | (S_CONT1 << S_CONT2) | (S_CONT2 << S_CONT3);
      if (b >= 0xA0) row |= S_CONT1 << S_E0;
      if (b <= 0x9F) row |= S_CONT1 << S_ED;
      if (b >= 0x90) row |= S_CONT2 << S_F0;
      if (b <= 0x8F) row |= S_CONT2 << S_F4;
    }
    store<u64>(DFA + (<usize>b << 3), row);
  }
}
dfaInit();

/** Scalar validation by the shift DFA: true when [p, end) is valid and complete; sets `runAscii`. */
function validScalar(p: usize, end: usize): bool {
  let state = S_ACCEPT;
  let seen: u32 = 0;
  while (p < end) {
    // ASCII eight bytes at a time, between characters
    if (state == S_ACCEPT) {
      while (p + 8 <= end && (load<u64>(p) & 0x8080808080808080) == 0) p += 8;
    }
    // then 16 bytes through the DFA without a branch per byte
    const stop = min(p + 16, end);
    while (p < stop) {
      const b = <u32>load<u8>(p);
      seen |= b;
      state = (load<u64>(DFA + (<usize>b << 3)) >> state) & 63;
      p++;
    }
    if (state == S_ERROR) return false;
  }
  runAscii = seen < 0x80;
  return state == S_ACCEPT;
}

/**
 * Start of the incomplete sequence at the end of [p, end) that a stream must carry to its next
 * chunk: a lead byte followed by fewer continuation bytes than it needs, each in its allowed
 * range, so that more input could still complete it. Returns `end` when there is none.
 * A tail that can never become valid is left in the run, where validation reports it.
 */
export function incompleteTail(p: usize, end: usize): usize {
  for (let i: usize = 1; i <= 3 && end - i >= p; i++) {
    const at = end - i;
    const b = <u32>load<u8>(at);
    if ((b & 0xC0) == 0x80) continue;
    if (b < 0x80) return end;
    const info = leadInfo(b);
    if (info == 0 || <usize>(info >> 16) < i) return end;
    if (i >= 2) {
      const c1 = <u32>load<u8>(at, 1);
      if (c1 < (info & 0xFF) || c1 > ((info >> 8) & 0xFF)) return end;
    }
    return at;
  }
  return end;
}

// @ts-ignore: decorator
@inline function putCodePoint(o: usize, cp: u32): usize {
  if (cp < 0x10000) {
    store<u16>(o, <u16>cp);
    return o + 2;
  }
  const c = cp - 0x10000;
  store<u32>(o, (0xD800 | (c >> 10)) | ((0xDC00 | (c & 0x3FF)) << 16));
  return o + 4;
}

/**
 * The WHATWG UTF-8 decoder over a complete run [p, end), writing UTF-16 at `out`. A sequence
 * cut off by `end` is an error like any other. With `stop`, decoding stops at the first error
 * (`errAt` holds its address); otherwise each maximal subpart becomes one U+FFFD, exactly as
 * `TextDecoder` does. Returns the number of UTF-16 units written.
 */
export function decodeWhatwg(p: usize, end: usize, out: usize, stop: bool): usize {
  let o = out;
  errAt = 0;
  while (p < end) {
    const b = <u32>load<u8>(p);
    if (b < 0x80) {
      store<u16>(o, <u16>b);
      o += 2;
      p++;
      continue;
    }
    const info = leadInfo(b);
    let q = p + 1;
    let ok = info != 0;
    if (ok) {
      const n = <usize>(info >> 16);
      let cp = b & (0x7F >> <u32>n);
      let lo = info & 0xFF, hi = (info >> 8) & 0xFF;
      for (let k: usize = 0; k < n; k++) {
        if (q >= end) { ok = false; break; }
        const c = <u32>load<u8>(q);
        if (c < lo || c > hi) { ok = false; break; }
        lo = 0x80; hi = 0xBF;
        cp = (cp << 6) | (c & 0x3F);
        q++;
      }
      if (ok) {
        o = putCodePoint(o, cp);
        p = q;
        continue;
      }
    }
    // unlikely: a bad sequence [p, q); the byte at q (if any) is decoded afresh
    if (errAt == 0) errAt = p;
    if (stop) break;
    store<u16>(o, 0xFFFD);
    o += 2;
    p = q;
  }
  return (o - out) >> 1;
}

/** Scalar UTF-8 → UTF-16 for a run already known to be valid. Returns units written. */
export function transcodeScalar(p: usize, end: usize, out: usize): usize {
  let o = out;
  while (p < end) {
    // Eight ASCII bytes at a time, widened with two 64-bit stores.
    if (p + 8 <= end) {
      const w = load<u64>(p);
      if ((w & 0x8080808080808080) == 0) {
        store<u64>(o, widen4(<u32>w));
        store<u64>(o, widen4(<u32>(w >> 32)), 8);
        p += 8;
        o += 16;
        continue;
      }
    }
    const b = <u32>load<u8>(p);
    if (b < 0x80) {
      store<u16>(o, <u16>b);
      o += 2;
      p++;
    } else if (b < 0xE0) {
      store<u16>(o, <u16>(((b & 0x1F) << 6) | (<u32>load<u8>(p, 1) & 0x3F)));
      o += 2;
      p += 2;
    } else if (b < 0xF0) {
      store<u16>(o, <u16>(((b & 0x0F) << 12) | ((<u32>load<u8>(p, 1) & 0x3F) << 6) | (<u32>load<u8>(p, 2) & 0x3F)));
      o += 2;
      p += 3;
    } else {
      const cp = ((b & 0x07) << 18) | ((<u32>load<u8>(p, 1) & 0x3F) << 12)
        | ((<u32>load<u8>(p, 2) & 0x3F) << 6) | (<u32>load<u8>(p, 3) & 0x3F);
      o = putCodePoint(o, cp);
      p += 4;
    }
  }
  return (o - out) >> 1;
}

/**
 * The transcoder's vectors, read from memory where they are used, a load each (assembly/vectors.ts
 * says why): Node 24 transcodes text that is not ASCII 1.75–2× as fast so, Node 20 1.0–1.3×, Bun
 * 1.1–1.2×. Named by their offsets below.
 */
const TVEC: usize = memory.data<u8>([
  0x02, 0x01, 0x00, 0xFF, 0x05, 0x04, 0x03, 0xFF, 0x08, 0x07, 0x06, 0xFF, 0x0B, 0x0A, 0x09, 0xFF, // T_CJK: four 3-byte characters to [b2, b1, b0, 0]
  0x3F, 0x00, 0x00, 0x00, 0x3F, 0x00, 0x00, 0x00, 0x3F, 0x00, 0x00, 0x00, 0x3F, 0x00, 0x00, 0x00, // T_CJK_LO
  0xC0, 0x0F, 0x00, 0x00, 0xC0, 0x0F, 0x00, 0x00, 0xC0, 0x0F, 0x00, 0x00, 0xC0, 0x0F, 0x00, 0x00, // T_CJK_MID
  0x00, 0xF0, 0x00, 0x00, 0x00, 0xF0, 0x00, 0x00, 0x00, 0xF0, 0x00, 0x00, 0x00, 0xF0, 0x00, 0x00, // T_CJK_HI
  0x03, 0x02, 0x01, 0x00, 0x07, 0x06, 0x05, 0x04, 0x0B, 0x0A, 0x09, 0x08, 0x0F, 0x0E, 0x0D, 0x0C, // T_FOUR: four 4-byte characters to [b3, b2, b1, b0]
  0x00, 0xF0, 0x03, 0x00, 0x00, 0xF0, 0x03, 0x00, 0x00, 0xF0, 0x03, 0x00, 0x00, 0xF0, 0x03, 0x00, // T_FOUR_B
  0x00, 0x00, 0x1C, 0x00, 0x00, 0x00, 0x1C, 0x00, 0x00, 0x00, 0x1C, 0x00, 0x00, 0x00, 0x1C, 0x00, // T_FOUR_A
  0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, // T_PLANE: surrogate pairs
  0x00, 0xD8, 0x00, 0x00, 0x00, 0xD8, 0x00, 0x00, 0x00, 0xD8, 0x00, 0x00, 0x00, 0xD8, 0x00, 0x00, // T_HIGH
  0xFF, 0x03, 0x00, 0x00, 0xFF, 0x03, 0x00, 0x00, 0xFF, 0x03, 0x00, 0x00, 0xFF, 0x03, 0x00, 0x00, // T_TEN
  0x00, 0xDC, 0x00, 0x00, 0x00, 0xDC, 0x00, 0x00, 0x00, 0xDC, 0x00, 0x00, 0x00, 0xDC, 0x00, 0x00, // T_LOW
  0x01, 0x00, 0x03, 0x02, 0x05, 0x04, 0x07, 0x06, 0x09, 0x08, 0x0B, 0x0A, 0x0D, 0x0C, 0x0F, 0x0E, // T_TWO: eight 2-byte characters to [b1, b0]
  0x3F, 0x00, 0x3F, 0x00, 0x3F, 0x00, 0x3F, 0x00, 0x3F, 0x00, 0x3F, 0x00, 0x3F, 0x00, 0x3F, 0x00, // T_SIX: units(): 16-bit lanes
  0xC0, 0x07, 0xC0, 0x07, 0xC0, 0x07, 0xC0, 0x07, 0xC0, 0x07, 0xC0, 0x07, 0xC0, 0x07, 0xC0, 0x07, // T_TWO_HI
  0xFF, 0x07, 0xFF, 0x07, 0xFF, 0x07, 0xFF, 0x07, 0xFF, 0x07, 0xFF, 0x07, 0xFF, 0x07, 0xFF, 0x07, // T_ELEVEN
  0xC0, 0xD7, 0xC0, 0xD7, 0xC0, 0xD7, 0xC0, 0xD7, 0xC0, 0xD7, 0xC0, 0xD7, 0xC0, 0xD7, 0xC0, 0xD7, // T_HIGH16
  0x00, 0xDC, 0x00, 0xDC, 0x00, 0xDC, 0x00, 0xDC, 0x00, 0xDC, 0x00, 0xDC, 0x00, 0xDC, 0x00, 0xDC, // T_LOW16
  0xE0, 0x00, 0xE0, 0x00, 0xE0, 0x00, 0xE0, 0x00, 0xE0, 0x00, 0xE0, 0x00, 0xE0, 0x00, 0xE0, 0x00, // T_E0
  0xC0, 0x00, 0xC0, 0x00, 0xC0, 0x00, 0xC0, 0x00, 0xC0, 0x00, 0xC0, 0x00, 0xC0, 0x00, 0xC0, 0x00, // T_C0
  0x7F, 0x00, 0x7F, 0x00, 0x7F, 0x00, 0x7F, 0x00, 0x7F, 0x00, 0x7F, 0x00, 0x7F, 0x00, 0x7F, 0x00, // T_7F
  0xEF, 0x00, 0xEF, 0x00, 0xEF, 0x00, 0xEF, 0x00, 0xEF, 0x00, 0xEF, 0x00, 0xEF, 0x00, 0xEF, 0x00, // T_EF
], 16);
const T_CJK: usize = 0;
const T_CJK_LO: usize = 16;
const T_CJK_MID: usize = 32;
const T_CJK_HI: usize = 48;
const T_FOUR: usize = 64;
const T_FOUR_B: usize = 80;
const T_FOUR_A: usize = 96;
const T_PLANE: usize = 112;
const T_HIGH: usize = 128;
const T_TEN: usize = 144;
const T_LOW: usize = 160;
const T_TWO: usize = 176;
const T_SIX: usize = 192;
const T_TWO_HI: usize = 208;
const T_ELEVEN: usize = 224;
const T_HIGH16: usize = 240;
const T_LOW16: usize = 256;
const T_E0: usize = 272;
const T_C0: usize = 288;
const T_7F: usize = 304;
const T_EF: usize = 320;
// @ts-ignore: decorator
@inline function tv(at: usize): v128 { return v128.load(TVEC + at); }

/** Code points ≥ U+10000 in 32-bit lanes → [high surrogate, low surrogate] in each lane. */
// @ts-ignore: decorator
@inline function surrogatePairs(cp: v128): v128 {
  const c = i32x4.sub(cp, tv(T_PLANE));
  return v128.or(
    v128.or(i32x4.shr_u(c, 10), tv(T_HIGH)),
    i32x4.shl(v128.or(v128.and(c, tv(T_TEN)), tv(T_LOW)), 16));
}

/** 3-byte characters gathered as [b2, b1, b0, 0] in 32-bit lanes → their code points. */
// @ts-ignore: decorator
@inline function cjk(x: v128): v128 {
  return v128.or(v128.or(
    v128.and(x, tv(T_CJK_LO)),
    v128.and(i32x4.shr_u(x, 2), tv(T_CJK_MID))),
    v128.and(i32x4.shr_u(x, 4), tv(T_CJK_HI)));
}

/** Four ASCII bytes → four UTF-16 units (zero-extends each byte to 16 bits). */
// @ts-ignore: decorator
@inline function widen4(x: u32): u64 {
  const y = <u64>x;
  return (y & 0xFF) | ((y & 0xFF00) << 8) | ((y & 0xFF0000) << 16) | ((y & 0xFF000000) << 24);
}

// ---------------------------------------------------------------------------------------------
// SIMD (compiled only into the SIMD build)
//
// Validation is the lookup method of Keiser and Lemire ("Validating UTF-8 in less than one
// instruction per byte", 2021): three 16-entry tables indexed by the high and low nibble of the
// previous byte and the high nibble of the current byte; their AND is non-zero exactly where a
// two-byte pattern is illegal. Bits of the table entries:
//   0x01 TOO_SHORT   lead or ASCII followed by lead or ASCII where a continuation was due
//   0x02 TOO_LONG    ASCII followed by a continuation
//   0x04 OVERLONG_3  E0 80..9F
//   0x08 TOO_LARGE   F4 90..BF, F5.. 
//   0x10 SURROGATE   ED A0..BF
//   0x20 OVERLONG_2  C0/C1 lead
//   0x40 TOO_LARGE_1000 / OVERLONG_4   F5.. 80..8F / F0 80..8F
//   0x80 TWO_CONTS   continuation after continuation (legal only inside a 3- or 4-byte sequence,
//                    which the prev2/prev3 check below accounts for)


// Compaction of 16-bit lanes: for each 8-bit mask of lanes to keep, a swizzle vector that moves
// them, in order, to the front. 256 entries of 16 bytes, filled at instantiation.
const PACK8: usize = memory.data(256 * 16, 16);

function packInit(): void {
  for (let m: u32 = 0; m < 256; m++) {
    const e = PACK8 + (<usize>m << 4);
    let k: usize = 0;
    for (let lane: u32 = 0; lane < 8; lane++) {
      if ((m & (1 << lane)) == 0) continue;
      store<u16>(e + (k << 1), <u16>((lane << 1) | ((lane << 1) + 1) << 8));
      k++;
    }
    for (; k < 8; k++) store<u16>(e + (k << 1), 0x8080); // unused lanes: zeros
  }
}
if (ASC_FEATURE_SIMD) packInit();

/**
 * The validator's vectors, read from memory where a run begins and handed to each block
 * (assembly/vectors.ts says why): Node 24 and Deno validate text that is not ASCII 2.5× as fast so.
 * (Loaded in each block instead: 0.85–0.9× of that.) By the high nibble of the byte before, its low
 * nibble, and the high nibble of the byte itself: a bit for each kind of error that pair can be.
 */
const CHECK: usize = memory.data<u8>([
  0x02, 0x02, 0x02, 0x02, 0x02, 0x02, 0x02, 0x02, 0x80, 0x80, 0x80, 0x80, 0x21, 0x01, 0x15, 0x49, // byte 1, high nibble
  0xE7, 0xA3, 0x83, 0x83, 0x8B, 0xCB, 0xCB, 0xCB, 0xCB, 0xCB, 0xCB, 0xCB, 0xCB, 0xDB, 0xCB, 0xCB, // byte 1, low nibble
  0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0xE6, 0xAE, 0xBA, 0xBA, 0x01, 0x01, 0x01, 0x01, // byte 2, high nibble
  0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xEF, 0xDF, 0xBF, // a lead in the last 3 bytes
], 16);

/** Error bits for the 16 bytes of `input`, given the 16 bytes before them. */
// @ts-ignore: decorator
@inline function checkBlock(input: v128, prev: v128, hi1: v128, lo1: v128, hi2: v128, nib: v128, e0: v128, f0: v128, bit: v128): v128 {
  const prev1 = i8x16.shuffle(prev, input, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30);
  const prev2 = i8x16.shuffle(prev, input, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29);
  const prev3 = i8x16.shuffle(prev, input, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28);
  // High nibbles by a 16-bit shift and the nibble mask: V8 has no byte shift and would build
  // its mask anew for every i8x16.shr_u.
  const special = v128.and(
    v128.and(
      i8x16.swizzle(hi1, v128.and(i16x8.shr_u(prev1, 4), nib)),
      i8x16.swizzle(lo1, v128.and(prev1, nib))),
    i8x16.swizzle(hi2, v128.and(i16x8.shr_u(input, 4), nib)));
  // 0x80 where a continuation is required: two bytes after a 3/4-byte lead, three after a 4-byte lead.
  const must23 = v128.or(i8x16.sub_sat_u(prev2, e0), i8x16.sub_sat_u(prev3, f0));
  return v128.xor(v128.and(must23, bit), special);
}

function validSimd(p: usize, end: usize): bool {
  const hi1 = v128.load(CHECK), lo1 = v128.load(CHECK, 16), hi2 = v128.load(CHECK, 32), last = v128.load(CHECK, 48);
  // a nibble; E0 − 80 and F0 − 80, a 3/4-byte lead two back and a 4-byte lead three back; the bit of a missing continuation
  const nib = bytes16(0x0F), e0 = bytes16(0x60), f0 = bytes16(0x70), bit = bytes16(0x80);
  let err = i8x16.splat(0);
  let prev = i8x16.splat(0);
  let prevIncomplete = i8x16.splat(0);
  let seen = i8x16.splat(0);
  while (p + 64 <= end) {
    // ASCII is skipped 64 bytes at a time; the rest is checked by a loop of one block per turn, so
    // that V8, which schedules a whole loop body at once, keeps its vectors in registers (with four
    // blocks in one body it spilled most of them).
    const any = v128.or(v128.or(v128.load(p), v128.load(p, 16)), v128.or(v128.load(p, 32), v128.load(p, 48)));
    if (i8x16.bitmask(any) == 0) {
      err = v128.or(err, prevIncomplete);
      prevIncomplete = i8x16.splat(0);
      prev = v128.load(p, 48);
      p += 64;
      continue;
    }
    seen = v128.or(seen, any);
    const stop = p + 64;
    do {
      const a = v128.load(p);
      err = v128.or(err, checkBlock(a, prev, hi1, lo1, hi2, nib, e0, f0, bit));
      prev = a;
      p += 16;
    } while (p < stop);
    prevIncomplete = i8x16.sub_sat_u(prev, last);
  }
  while (p + 16 <= end) {
    const a = v128.load(p);
    if (i8x16.bitmask(a) == 0) {
      err = v128.or(err, prevIncomplete);
      prevIncomplete = i8x16.splat(0);
    } else {
      seen = v128.or(seen, a);
      err = v128.or(err, checkBlock(a, prev, hi1, lo1, hi2, nib, e0, f0, bit));
      prevIncomplete = i8x16.sub_sat_u(a, last);
    }
    prev = a;
    p += 16;
  }
  if (p < end) {
    // The last partial block, its bytes from `end` on zeroed: a sequence cut off by `end` meets an
    // ASCII byte. (The load may pass `end`; memory always extends 16 bytes past a run.)
    const lane = i8x16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const keep = i8x16.lt_u(lane, i8x16.splat(<i8>(end - p)));
    const a = v128.and(v128.load(p), keep);
    seen = v128.or(seen, a);
    err = v128.or(err, checkBlock(a, prev, hi1, lo1, hi2, nib, e0, f0, bit));
    prevIncomplete = i8x16.splat(0);
  }
  err = v128.or(err, prevIncomplete);
  runAscii = i8x16.bitmask(seen) == 0;
  return !v128.any_true(err);
}

/**
 * The UTF-16 unit that each of 8 bytes would start, in 16-bit lanes, from that byte (a), the
 * next (b) and the one after (c):
 *   ASCII a; 2-byte lead: its character; 3-byte lead: its character;
 *   4-byte lead: the high surrogate; first continuation of a 4-byte character: the low surrogate
 *   (its payload is in the two bytes after it). Other continuations give garbage, never kept.
 */
// @ts-ignore: decorator
@inline function units(a: v128, b: v128, c: v128): v128 {
  const six = tv(T_SIX);
  const b6 = v128.and(b, six);
  // 6 + 6 payload bits from b and c: the low 12 bits of a 3-byte character
  const bc = v128.or(i16x8.shl(b6, 6), v128.and(c, six));
  // a's low nibble on top (a << 12 drops the length bits)
  const t3 = v128.or(i16x8.shl(a, 12), bc);
  const t2 = v128.and(v128.or(i16x8.shl(a, 6), b6), tv(T_ELEVEN));
  // 4-byte lead (F0..F4, so a's low nibble is the top 3 bits): D800 + (cp >> 10) - 0x40
  const high = i16x8.add(i16x8.shr_u(t3, 4), tv(T_HIGH16));
  // at the first continuation, bc's low 10 bits are the character's low 10 bits; bits 10 and 11
  // are set in DC00, so OR-ing them in changes nothing
  const low = v128.or(bc, tv(T_LOW16));
  // (a is 0..255, so signed compares, one instruction each, do)
  let r = v128.bitselect(t2, t3, i16x8.lt_s(a, tv(T_E0)));
  r = v128.bitselect(low, r, i16x8.lt_s(a, tv(T_C0)));
  // ASCII: a itself, by an unsigned min with the low surrogate there (any other lane takes
  // a | FFFF, so keeps r): one instruction fewer than a select
  r = i16x8.min_u(r, v128.or(a, i16x8.gt_s(a, tv(T_7F))));
  return v128.bitselect(high, r, i16x8.gt_s(a, tv(T_EF)));
}

/**
 * Writes the units `lo` (bytes 0..7 of a block) and `hi` (bytes 8..15) that start a character
 * (`starts`: the block's bytes that are no continuation), and the low surrogate after each
 * 4-byte lead (`before` is the block one byte earlier), for
 * the byte positions in `lanes`. Returns the new end of the output.
 */
// @ts-ignore: decorator
@inline function packBlock(starts: u32, before: v128, lo: v128, hi: v128, o: usize, lanes: u32): usize {
  // a unit starts at every byte that is not a continuation (`starts`), and at the byte after a
  // 4-byte lead (F0..F4: signed > -17, one compare)
  const after4 = i8x16.bitmask(i8x16.gt_s(before, bytes16(0xEF)));
  const keep = (starts | after4) & lanes;
  const k0 = keep & 0xFF, k1 = keep >> 8;
  v128.store(o, i8x16.swizzle(lo, v128.load(PACK8 + (<usize>k0 << 4))));
  o += <usize>popcnt(k0) << 1;
  v128.store(o, i8x16.swizzle(hi, v128.load(PACK8 + (<usize>k1 << 4))));
  return o + (<usize>popcnt(k1) << 1);
}

/** Bit i set when byte i of `v` is no continuation byte (80..BF are signed < -64). */
// @ts-ignore: decorator
@inline function startBits(v: v128): u32 {
  return i8x16.bitmask(i8x16.gt_s(v, bytes16(0xBF)));
}

/**
 * Every character that starts in the 16 bytes at p (and the low surrogate of one that started at
 * p - 1), for the positions in `lanes`. Reads p - 1 .. p + 17. Branch-free: the cost does not
 * depend on the mix of lengths.
 */
// @ts-ignore: decorator
@inline function anyBlock(p: usize, starts: u32, o: usize, lanes: u32): usize {
  const lo = units(v128.load8x8_u(p), v128.load8x8_u(p, 1), v128.load8x8_u(p, 2));
  const hi = units(v128.load8x8_u(p, 8), v128.load8x8_u(p, 9), v128.load8x8_u(p, 10));
  return packBlock(starts, v128.load(p - 1), lo, hi, o, lanes);
}

/**
 * The same for the block that ends at `end`, without reading past it: the bytes after it are
 * taken as zeros (a character that starts in the run ends in it, so they are never needed).
 */
// @ts-ignore: decorator
@inline function lastBlock(end: usize, o: usize, lanes: u32): usize {
  const v = v128.load(end - 16);
  const z = i8x16.splat(0);
  const b = i8x16.shuffle(v, z, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);
  const c = i8x16.shuffle(v, z, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17);
  const lo = units(i16x8.extend_low_i8x16_u(v), i16x8.extend_low_i8x16_u(b), i16x8.extend_low_i8x16_u(c));
  const hi = units(i16x8.extend_high_i8x16_u(v), i16x8.extend_high_i8x16_u(b), i16x8.extend_high_i8x16_u(c));
  return packBlock(startBits(v), v128.load(end - 17), lo, hi, o, lanes);
}

/** SIMD UTF-8 → UTF-16 for a valid run: whole blocks of ASCII, of 3-byte or of 4-byte characters
 *  go through shuffles; anything else takes the scalar path one character at a time. */
function transcodeSimd(p: usize, end: usize, out: usize): usize {
  // unlikely: the last block's loads reach up to 32 bytes before `end`
  if (p < 32) return transcodeScalar(p, end, out);
  let o = out;
  const start = p;
  // 18: the block step reads two bytes past the block
  while (p + 18 <= end) {
    const v = v128.load(p);
    const m = i8x16.bitmask(v);
    if (m == 0) {
      v128.store(o, i16x8.extend_low_i8x16_u(v));
      v128.store(o, i16x8.extend_high_i8x16_u(v), 16);
      p += 16;
      o += 32;
      continue;
    }
    // The run is valid, so the pattern of continuations alone fixes the lengths: a byte followed
    // by exactly two continuations (byte 12 is not one) is a 3-byte lead. The same bits serve
    // the mixed step below.
    const starts = startBits(v);
    if ((starts & 0x1FFF) == 0b1001001001001) {
      // Four 3-byte characters (CJK) in bytes 0..11: lanes [b2, b1, b0, 0]; eight when the next
      // twelve bytes are four more.
      const shuf = tv(T_CJK);
      const cp = cjk(i8x16.swizzle(v, shuf));
      if (p + 28 <= end) {
        const w = v128.load(p, 12);
        if ((startBits(w) & 0x1FFF) == 0b1001001001001) {
          v128.store(o, i16x8.narrow_i32x4_u(cp, cjk(i8x16.swizzle(w, shuf))));
          p += 24;
          o += 16;
          continue;
        }
      }
      v128.store64_lane(o, i16x8.narrow_i32x4_u(cp, cp), 0);
      p += 12;
      o += 8;
      continue;
    }
    if (starts == 0b0001000100010001) {
      // Four 4-byte characters: lanes [b3, b2, b1, b0] → surrogate pairs.
      const x = i8x16.swizzle(v, tv(T_FOUR));
      const cp = v128.or(v128.or(
        v128.and(x, tv(T_CJK_LO)),
        v128.and(i32x4.shr_u(x, 2), tv(T_CJK_MID))), v128.or(
        v128.and(i32x4.shr_u(x, 4), tv(T_FOUR_B)),
        v128.and(i32x4.shr_u(x, 6), tv(T_FOUR_A))));
      v128.store(o, surrogatePairs(cp));
      p += 16;
      o += 16;
      continue;
    }
    // Every even byte a lead and followed by one continuation: 2-byte characters, except that the
    // lead at byte 14 may start a longer one that goes on past the block.
    if (starts == 0b0101010101010101) {
      if (<u32>load<u8>(p, 14) < 0xE0) {
        // Eight 2-byte characters: lanes [b1, b0].
        const x = i8x16.swizzle(v, tv(T_TWO));
        const cp = v128.or(
          v128.and(x, tv(T_SIX)),
          v128.and(i16x8.shr_u(x, 2), tv(T_TWO_HI)));
        v128.store(o, cp);
        p += 16;
        o += 16;
        continue;
      }
    }
    // Any other mix: every character that starts in the block, at once.
    o = anyBlock(p, starts, o, 0xFFFF);
    p += 16;
  }
  // The last bytes (fewer than 18; p may be inside a character) through the same step on the
  // block that ends at `end`, its positions before p masked off; a 17th byte through a block
  // that ends 15 bytes later, of which only the last position counts.
  const n = end - p;
  if (n != 0) {
    const t = v128.load(end - 16);
    if (n <= 16 && end - 16 >= start && i8x16.bitmask(t) == 0) {
      // An ASCII last block within the run (the usual end of a JSON document): its bytes before p,
      // ASCII too, were written a unit each at the same places, so it is widened whole.
      const e = o + (n << 1) - 32;
      v128.store(e, i16x8.extend_low_i8x16_u(t));
      v128.store(e, i16x8.extend_high_i8x16_u(t), 16);
      return (o + (n << 1) - out) >> 1;
    }
    if (n > 16) o = anyBlock(end - 32, startBits(v128.load(end - 32)), o, 0x8000);
    o = lastBlock(end, o, 0xFFFF << (16 - <u32>min(n, 16)));
  }
  return (o - out) >> 1;
}

// ---------------------------------------------------------------------------------------------
// The kernels the streams use

/** A run the platform found valid (M_VALID): `runAscii` as it says; true. */
export function assumeValid(ascii: bool): bool {
  runAscii = ascii;
  return true;
}

/**
 * True when [p, end) is valid and complete UTF-8; sets `runAscii`. The run is in the input window
 * (the SIMD kernel's last load may read up to 15 bytes past `end`).
 */
export function validate(p: usize, end: usize): bool {
  if (ASC_FEATURE_SIMD) return validSimd(p, end);
  return validScalar(p, end);
}

/** UTF-8 → UTF-16 of a valid run. Returns units written at `out`. */
export function transcode(p: usize, end: usize, out: usize): usize {
  if (ASC_FEATURE_SIMD) return transcodeSimd(p, end, out);
  return transcodeScalar(p, end, out);
}
