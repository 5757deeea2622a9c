// Layer 2 (frames): the frame kit, what the line framer (lines.ts) and the SSE framer (sse.ts)
// stand on. The state record of a frame stream (its growable byte buffers: buffers.ts), the
// newline search (SIMD with a scalar twin), the batch being written (text in OUT, records in SPAN), the common
// start of a push (carry, BOM, validation) and raw text for lines or events too long for OUT.
//
// State record of a frame stream (lines and SSE):
//   +0   u8[8]  UTF-8 state (carry.ts: ST_CARRY, ST_NCARRY, ST_FLAGS)
//   +8   u32    frame flags (L_*, A_*, P_*, S_*)
//   +12  i32    start of the unfinished line, relative to IN_PTR of the current call
//   +16  u32    limit in bytes (maxLineBytes / maxEventBytes)
//   +20  u32    resume address in the run (a call that returned R_MORE continues there)
//   +24  u32    end of the run being framed
//   +28  u32    length of the previous chunk (to rebase +12)
//   +32  buf    LINE: the unfinished line            (buf = u32 ptr, u32 len, u32 cap)
//   +44  buf    DATA: SSE data buffer
//   +56  buf    TYPE: SSE event type buffer
//   +68  buf    ID:   SSE last event ID buffer
//   +80  buf    IDS:  SSE last event ID string (committed at dispatch)
//   +92  buf    TPREV: SSE type of the last dispatched event with a type
//   +104 f64    SSE reconnection time, −1 when none was given
//   +112 i32    pending UTF-8 error address − IN_PTR
//   +116 u32    mode of the current call
//   +120 u32    SSE: input bytes seen while a large DATA block stood idle (see bShrinkIdle)
//   +124 i32    SSE: where the event's first data value began, relative to IN_PTR of the current call
// Layer 4's part (a model stream is a frame stream with these; layers 2 and 3 leave them empty):
//   +128 buf    SHAPE: the shape of the stream's last quiet event (shape.ts)
//   +140 u32    quiet events read in full since the stream (re)started, up to 2 (shape.ts)
//   +144 u32    the stream's block of layer 4 (model-state.ts: kept text, reasoning and arguments,
//               the current call), 0 while it has none
import {
  ENC_LATIN1, ENC_UTF16, ENC_UTF8, FR_ENC, FR_LEN, FR_MIDS, FR_NREC, FR_STATUS, FR_UNITS, IN_PTR, M_ASCII, M_SPLIT,
  M_UTF16_POS, M_UTF8_OUT, M_VALID, MIDS_OFF, OUT_CAP, OUT_PTR, PATCH_PTR, PATCH_WORDS, RAW_PTR, SF_SPLIT, ST_FRAME_MAX,
} from './abi';
import { bFree, bLen, bRoom, bSetLen, copy } from './buffers';
import { carried, carryReset, isFatal, keepTail, runStart, setCarried, skipBom } from './carry';
import { modelStateFree, modelStateRelease, modelStateRetained } from './model-state';
import { freeRecord, release, res, reserve } from './runtime';
import { assumeValid, decodeWhatwg, firstErrorScalar, runAscii, transcode, validate } from './utf8';
import { bytes16 } from './vectors';

export const FRAME_STATE_BYTES: usize = 148;

// Record offsets
export const O_FL: usize = 8;
export const O_LINEREL: usize = 12;
export const O_MAX: usize = <usize>ST_FRAME_MAX;
export const O_POS: usize = 20;
export const O_END: usize = 24;
export const O_LASTLEN: usize = 28;
export const B_LINE: usize = 32;
export const B_DATA: usize = 44;
export const B_TYPE: usize = 56;
export const B_ID: usize = 68;
export const B_IDS: usize = 80;
export const B_TPREV: usize = 92;
export const O_RETRY: usize = 104;
export const O_ERR: usize = 112;
export const O_MODE: usize = 116;
export const O_IDLE: usize = 120;
export const O_DSTART: usize = 124;
// Layer 4's part of the record (model streams: shape.ts, model.ts)
export const B_SHAPE: usize = 128;
export const O_QUIET: usize = 140;

// Frame flags (+8)
export const L_CR: u32 = 1;          // the last byte framed was a CR: swallow one leading LF
export const L_ERRPEND: u32 = 2;     // the run was cut at a bad UTF-8 sequence: report it last
export const L_RUNASCII: u32 = 4;    // the current run is all ASCII
export const L_DIRTY: u32 = 8;       // invalid bytes were let through (fatal: false): decode with replacement
export const A_LINE: u32 = 16;       // buffer may hold non-ASCII bytes
export const A_DATA: u32 = 32;
export const A_TYPE: u32 = 64;
export const A_ID: u32 = 128;
export const A_IDS: u32 = 256;
export const A_ANY: u32 = A_LINE | A_DATA | A_TYPE | A_ID | A_IDS;
export const P_RAW: u32 = 512;       // SSE: the unfinished line is in LINE
export const P_DATA: u32 = 1024;     // SSE: inside a data value, appended straight to DATA
export const P_DATA_SP: u32 = 2048;  // SSE: as P_DATA, right after the colon (a space may follow)
export const P_SKIP: u32 = 4096;     // SSE: inside a line whose content is ignored
export const P_MASK: u32 = P_RAW | P_DATA | P_DATA_SP | P_SKIP;
export const S_ID_SET: u32 = 8192;   // SSE: an id field was accepted since the last dispatch
export const S_INEVENT: u32 = 16384; // SSE: a field line was seen since the last dispatch
export const S_TPREV: u32 = 32768;   // SSE: TPREV is valid


// Character codes
export const C_NUL: u8 = 0;
export const C_LF: u8 = 10;
export const C_CR: u8 = 13;
export const C_SPACE: u8 = 32;
export const C_COLON: u8 = 58;
/** 'data' as a little-endian word. */
export const W_DATA: u32 = 0x61746164;

/** True when [a, b) starts with "data:" (the common line of an event stream). */
// @ts-ignore: decorator
@inline export function isDataField(a: usize, b: usize): bool {
  return b - a >= 5 && load<u32>(a) == W_DATA && load<u8>(a, 4) == C_COLON;
}

/** Buffers larger than this are returned to the heap when they fall idle. */
const SHRINK_ABOVE: u32 = 65536;
/** Room kept free at the end of OUT for the 16/32-byte stores of the SIMD transcoder. */
const OUT_SLACK: usize = 64;

/** Appends n bytes at src and a LF to buffer b in one step (an SSE data line). */
export function bAppendLf(st: usize, b: usize, src: usize, n: usize, limit: usize): void {
  const len = <usize>load<u32>(st + b, 4);
  const ptr = bRoom(st, b, len + n + 1, limit);
  copy(ptr + len, src, n);
  store<u8>(ptr + len + n, C_LF);
  store<u32>(st + b, <u32>(len + n + 1), 4);
}

/**
 * The same with hysteresis, for a buffer that large events reuse (SSE DATA): a large block is
 * kept while it is more than a quarter used at the start of a push, and returned once four times
 * its size of input has gone by without that, so that a stream of large events does not grow it
 * again for each event, and growing it again costs a fraction of the input that went by.
 */
export function bShrinkIdle(st: usize, b: usize, incoming: usize): void {
  const cap = load<u32>(st + b, 8);
  if (cap <= SHRINK_ABOVE) return;
  const len = load<u32>(st + b, 4);
  let idle: u32 = 0;
  if (len <= (cap >> 2)) {
    idle = load<u32>(st, O_IDLE) + <u32>incoming;
    if (len == 0 && idle > (cap << 2)) {
      bFree(st, b);
      idle = 0;
    }
  }
  store<u32>(st, idle, O_IDLE);
}

/** Bytes of heap the stream's record and buffers take. */
export function frameRetained(st: usize): u32 {
  return <u32>FRAME_STATE_BYTES + load<u32>(st + B_LINE, 8) + load<u32>(st + B_DATA, 8) + load<u32>(st + B_TYPE, 8)
    + load<u32>(st + B_ID, 8) + load<u32>(st + B_IDS, 8) + load<u32>(st + B_TPREV, 8) + load<u32>(st + B_SHAPE, 8)
    + modelStateRetained(st);
}

/** Returns an idle (empty) buffer's block to the heap when it is large. */
// @ts-ignore: decorator
@inline export function bShrink(st: usize, b: usize): void {
  if (load<u32>(st + b, 4) == 0 && load<u32>(st + b, 8) > SHRINK_ABOVE) bFree(st, b);
}

// ---------------------------------------------------------------------------------------------
// Newline search

/** Address of the first CR or LF in [p, end), or end: the scalar build's search (`nextNl` is the
 *  SIMD build's). */
// @ts-ignore: decorator
@inline function findNlSwar(p: usize, end: usize): usize {
  // SWAR: the lowest flagged byte of the classic has-zero test is exact.
  while (p + 8 <= end) {
    const w = load<u64>(p);
    const x = w ^ 0x0A0A0A0A0A0A0A0A;
    const y = w ^ 0x0D0D0D0D0D0D0D0D;
    const t = (((x - 0x0101010101010101) & ~x) | ((y - 0x0101010101010101) & ~y)) & 0x8080808080808080;
    if (t != 0) return p + <usize>(ctz(t) >> 3);
    p += 8;
  }
  while (p < end) {
    const b = load<u8>(p);
    if (b == C_LF || b == C_CR) return p;
    p++;
  }
  return end;
}

/**
 * Line ends of one run, 64 bytes at a time: a bitmask of the CR and LF positions in
 * [nlBase, nlBase + 64), so that the short lines of an event stream ("data: …" and then a blank
 * line) cost a bit scan each instead of a fresh vector search. `nlStart` at the start of every
 * framing call (the bytes of the run are not the ones the mask was taken from).
 */
let nlBase: usize = 0;
let nlMask: u64 = 0;

// @ts-ignore: decorator
@inline export function nlStart(): void {
  nlBase = 0;
  nlMask = 0;
}

/**
 * Whether any of 64 bytes (four vectors) is below 14. Most blocks of text hold none (LF is 10,
 * CR 13): one saturating subtract per vector rules them out before exact compares.
 */
// @ts-ignore: decorator
@inline function anyBelow14(v0: v128, v1: v128, v2: v128, v3: v128): bool {
  const lim = bytes16(14);
  return v128.any_true(v128.or(v128.or(i8x16.sub_sat_u(lim, v0), i8x16.sub_sat_u(lim, v1)),
    v128.or(i8x16.sub_sat_u(lim, v2), i8x16.sub_sat_u(lim, v3))));
}

/** CR/LF bitmask of the 64 bytes at b (reads may pass the run's end; the caller clamps). */
// @ts-ignore: decorator
@inline function nlBlock(b: usize): u64 {
  const lf = bytes16(10);
  const cr = bytes16(13);
  const v0 = v128.load(b), v1 = v128.load(b, 16), v2 = v128.load(b, 32), v3 = v128.load(b, 48);
  if (!anyBelow14(v0, v1, v2, v3)) return 0;
  const m0 = <u64>i8x16.bitmask(v128.or(i8x16.eq(v0, lf), i8x16.eq(v0, cr)));
  const m1 = <u64>i8x16.bitmask(v128.or(i8x16.eq(v1, lf), i8x16.eq(v1, cr)));
  const m2 = <u64>i8x16.bitmask(v128.or(i8x16.eq(v2, lf), i8x16.eq(v2, cr)));
  const m3 = <u64>i8x16.bitmask(v128.or(i8x16.eq(v3, lf), i8x16.eq(v3, cr)));
  return m0 | (m1 << 16) | (m2 << 32) | (m3 << 48);
}

/** The same for 16 bytes (the mask's upper bits clear): runs that end within them. */
// @ts-ignore: decorator
@inline function nlBlock16(b: usize): u64 {
  const v = v128.load(b);
  return <u64>i8x16.bitmask(v128.or(i8x16.eq(v, bytes16(10)), i8x16.eq(v, bytes16(13))));
}

/**
 * Address of the first CR or LF in [p, end), or end, for positions p that only move forward in
 * the run (as `findNlSwar`, which the scalar build uses). The run must be in the input window: blocks
 * read up to 63 bytes past its end, into the window's slack and the output window after it.
 */
// @ts-ignore: decorator
@inline export function nextNl(p: usize, end: usize): usize {
  if (ASC_FEATURE_SIMD) {
    let off = p - nlBase; // wraps to a large value before the first block
    if (off >= 64) {
      nlBase = p;
      off = 0;
      nlMask = end - p <= 16 ? nlBlock16(p) : nlBlock(p); // tiny reads: one vector
    }
    let m = nlMask & (<u64>-1 << <u64>off);
    while (m == 0) {
      nlBase += 64;
      if (nlBase >= end) return end;
      m = nlMask = end - nlBase <= 16 ? nlBlock16(nlBase) : nlBlock(nlBase);
    }
    const q = nlBase + <usize>ctz(m);
    return q < end ? q : end;
  } else {
    return findNlSwar(p, end);
  }
}

/**
 * The first CR or LF in [p, end), or end, with no state kept (reads whole 16-byte blocks; lanes
 * past end are ignored): `noLineEnd` that says where.
 */
export function lineEndIn(p: usize, end: usize): usize {
  if (ASC_FEATURE_SIMD) {
    while (p + 64 <= end && !anyBelow14(v128.load(p), v128.load(p, 16), v128.load(p, 32), v128.load(p, 48))) p += 64;
    while (p < end) {
      const m = nlBlock16(p);
      if (m != 0) {
        const q = p + <usize>ctz(m);
        return q < end ? q : end;
      }
      p += 16;
    }
    return end;
  } else {
    return findNlSwar(p, end);
  }
}

/** True when [p, end) holds no CR or LF (reads whole 16-byte blocks; lanes past end are ignored). */
export function noLineEnd(p: usize, end: usize): bool {
  if (ASC_FEATURE_SIMD) {
    // 64 bytes per turn while none is below 14; from a block with one on, 16 at a time exactly
    while (p + 64 <= end && !anyBelow14(v128.load(p), v128.load(p, 16), v128.load(p, 32), v128.load(p, 48))) p += 64;
    while (p + 16 <= end) {
      if (nlBlock16(p) != 0) return false;
      p += 16;
    }
    return p == end || (nlBlock16(p) & ((<u64>1 << <u64>(end - p)) - 1)) == 0;
  } else {
    return findNlSwar(p, end) == end;
  }
}

// ---------------------------------------------------------------------------------------------
// The batch being written: text in OUT, records in SPAN (and, for split SSE data, the middles in
// OUT's upper half and their PATCH entries: see M_SPLIT)

export let outUsed: usize = 0;   // units (UTF-16) or bytes (Latin-1, UTF-8)
export let nrec: usize = 0;
export let batchEnc: i32 = ENC_LATIN1;
export let batchDirty: bool = false;
/** M_UTF16_POS on a clean UTF-8 batch: spans are UTF-16 offsets (outUnits), not bytes. */
let posUnits: bool = false;
/** ... and the batch's bytes are all ASCII: a unit per byte, nothing to count. */
let posAscii: bool = false;
/** With posUnits: UTF-16 units of the batch's text so far. */
let outUnits: usize = 0;
/** M_SPLIT on a UTF-16-offset batch that is not all ASCII: data spans give their middles to MIDS. */
let splitting: bool = false;
/** Bytes of MIDS (OUT's upper half), and the PATCH entries written. */
let midBytes: usize = 0;
let npatch: usize = 0;
/** SF_SPLIT when the span closed last was split: the next record takes it (see takeSplit). */
let splitFlag: i32 = 0;

// @ts-ignore: decorator
@inline export function setNrec(n: usize): void { nrec = n; }
// @ts-ignore: decorator
@inline export function setOutUsed(n: usize): void { outUsed = n; }

/** Where the next span of the batch's text begins, in the unit its spans are reported in. */
// @ts-ignore: decorator
@inline export function outPos(): usize { return posUnits ? outUnits : outUsed; }

/** Starts a batch: chooses the text encoding from the mode, the run and the held buffers. */
export function batchStart(st: usize, mode: u32, held: u32): void {
  outUsed = 0;
  outUnits = 0;
  nrec = 0;
  midBytes = 0;
  npatch = 0;
  splitFlag = 0;
  const fl = load<u32>(st, O_FL);
  batchDirty = (fl & L_DIRTY) != 0;
  const ascii = (fl & L_RUNASCII) != 0 && (fl & held) == 0 && !batchDirty;
  posUnits = false;
  if (mode & M_UTF8_OUT) {
    batchEnc = ENC_UTF8;
    posUnits = (mode & M_UTF16_POS) != 0 && !batchDirty;
    posAscii = ascii;
    splitting = posUnits && !ascii && (mode & M_SPLIT) != 0;
  } else {
    batchEnc = ascii ? ENC_LATIN1 : ENC_UTF16;
    splitting = false;
  }
}

/** Bytes of OUT that n source bytes may need. */
// @ts-ignore: decorator
@inline export function outNeed(n: usize): usize {
  return batchEnc == ENC_UTF16 ? n << 1 : n;
}

/**
 * True when n more source bytes surely fit in OUT. Splitting, the text has OUT's lower half and
 * MIDS the upper one, where a middle's UTF-16 takes up to two bytes per byte of it (ASCII between
 * its non-ASCII characters).
 */
// @ts-ignore: decorator
@inline export function outFits(n: usize): bool {
  if (splitting) return outUsed + n + OUT_SLACK <= MIDS_OFF && midBytes + (n << 1) + OUT_SLACK <= OUT_CAP - MIDS_OFF;
  const used = batchEnc == ENC_UTF16 ? outUsed << 1 : outUsed;
  return used + outNeed(n) + OUT_SLACK <= OUT_CAP;
}

/** Appends the text of [src, src + n) to OUT; returns the new end (see outPos). */
// @ts-ignore: decorator
@inline export function emit(src: usize, n: usize): usize {
  return n == 0 ? outPos() : emitText(src, n);
}

function emitText(src: usize, n: usize): usize {
  if (batchEnc == ENC_UTF16) {
    const o = OUT_PTR + (outUsed << 1);
    outUsed += batchDirty ? decodeWhatwg(src, src + n, o, false) : transcode(src, src + n, o);
    return outUsed;
  }
  const o = OUT_PTR + outUsed;
  outUsed += n;
  if (!posUnits || posAscii) {
    copy(o, src, n);
    if (!posUnits) return outUsed;
    outUnits += n;
  } else {
    outUnits += copyUnits(o, src, n);
  }
  return outUnits;
}

/** The flags the record being written takes from its span (SF_SPLIT or 0); cleared. */
// @ts-ignore: decorator
@inline export function takeSplit(): i32 {
  const f = splitFlag;
  splitFlag = 0;
  return f;
}

/** The first byte ≥ 0x80 in [p, end), or end when there is none. */
function firstHigh(p: usize, end: usize): usize {
  if (ASC_FEATURE_SIMD) {
    while (p + 16 <= end) {
      const m = i8x16.bitmask(v128.load(p));
      if (m != 0) return p + ctz(m);
      p += 16;
    }
  } else {
    while (p + 8 <= end) {
      const w = load<u64>(p) & 0x8080808080808080;
      if (w != 0) return p + <usize>(ctz(w) >> 3);
      p += 8;
    }
  }
  while (p < end && load<u8>(p) < 0x80) p++;
  return p;
}

/** The end of the last byte ≥ 0x80 in [p, end), which holds one. */
function lastHighEnd(p: usize, end: usize): usize {
  if (ASC_FEATURE_SIMD) {
    while (end - p >= 16) {
      const m = i8x16.bitmask(v128.load(end - 16));
      if (m != 0) return end - 15 + (31 - <usize>clz(m));
      end -= 16;
    }
  } else {
    while (end - p >= 8) {
      const w = load<u64>(end - 8) & 0x8080808080808080;
      if (w != 0) return end - <usize>(clz(w) >> 3);
      end -= 8;
    }
  }
  while (load<u8>(end - 1) < 0x80) end--;
  return end;
}

/**
 * Writes the non-ASCII middle [f, l) of a data span (valid UTF-8) to MIDS as UTF-16 and its PATCH
 * entry (`cutAt`: where it goes in the batch's text, a UTF-16 offset). outFits gave room for it
 * and for the SIMD transcode's whole blocks past its end.
 */
function toMids(f: usize, l: usize, cutAt: usize): void {
  const mu = transcode(f, l, OUT_PTR + MIDS_OFF + midBytes);
  const e = PATCH_PTR + ((npatch * <usize>PATCH_WORDS) << 2);
  store<i32>(e, <i32>cutAt);
  store<i32>(e, <i32>mu, 4);
  npatch++;
  midBytes += mu << 1;
  splitFlag = SF_SPLIT;
}

/**
 * Appends the data span [src, src + n) to the batch's text, as emit does; when splitting and it
 * holds non-ASCII text, its middle goes to MIDS instead (the record takes SF_SPLIT).
 */
// @ts-ignore: decorator
@inline export function emitData(src: usize, n: usize): usize {
  return splitting && n != 0 ? emitSplit(src, n) : emit(src, n);
}

function emitSplit(src: usize, n: usize): usize {
  const end = src + n;
  const o = OUT_PTR + outUsed;
  // The ASCII head is copied while its end is looked for (by whole blocks: bytes past it are
  // overwritten below, and outFits gave room for n).
  let f = src;
  let q = o;
  if (ASC_FEATURE_SIMD) {
    while (f + 16 <= end) {
      const v = v128.load(f);
      v128.store(q, v);
      const m = i8x16.bitmask(v);
      if (m != 0) {
        f += ctz(m);
        q = 0;
        break;
      }
      f += 16;
      q += 16;
    }
  }
  if (q != 0) {
    const t = f;
    f = firstHigh(t, end);
    copy(q, t, f - t);
  }
  if (f == end) {
    outUsed += n;
    outUnits += n;
    return outUnits;
  }
  const l = lastHighEnd(f, end);
  const pre = f - src, suf = end - l;
  toMids(f, l, outUnits + pre);
  copy(o + pre, l, suf);
  outUsed += pre + suf;
  outUnits += pre + suf;
  return outUnits;
}

/** As emitData, for a data span in two pieces (held DATA, then the run's end of it). */
// @ts-ignore: decorator
@inline export function emitData2(a: usize, an: usize, b: usize, bn: usize): usize {
  if (!splitting) {
    emit(a, an);
    return emit(b, bn);
  }
  return emitSplit2(a, an, b, bn);
}

/** Both pieces are copied into the text, then the middle moves from there to MIDS. */
function emitSplit2(a: usize, an: usize, b: usize, bn: usize): usize {
  const o = OUT_PTR + outUsed, end = o + an + bn;
  let n = an + bn;
  copy(o, a, an);
  copy(o + an, b, bn);
  const f = firstHigh(o, end);
  if (f != end) {
    const l = lastHighEnd(f, end);
    toMids(f, l, outUnits + (f - o));
    memory.copy(f, l, end - l);
    n -= l - f;
  }
  outUsed += n;
  outUnits += n;
  return outUnits;
}

/**
 * Copies the n bytes of valid UTF-8 at src to dst (as `copy`) and returns their UTF-16 units: one
 * per byte that is not a continuation byte (10xxxxxx), one more per 4-byte lead (11110xxx: a
 * surrogate pair). Valid input has no byte above F4, so "at least F0" is exactly a 4-byte lead.
 */
function copyUnits(dst: usize, src: usize, n: usize): usize {
  let units: usize = 0;
  if (ASC_FEATURE_SIMD) {
    // per-lane u8 counters (at most 2 per block): reduced every 127 blocks at the latest
    const notCont = bytes16(0xBF), lead4 = bytes16(0xF0);
    while (n >= 16) {
      let k = n >> 4;
      if (k > 127) k = 127;
      n -= k << 4;
      let acc = i8x16.splat(0);
      do {
        const v = v128.load(src);
        v128.store(dst, v);
        // signed, the continuation bytes 80..BF are −128..−65; the masks are −1 per lane
        acc = i8x16.sub(i8x16.sub(acc, i8x16.gt_s(v, notCont)), i8x16.ge_u(v, lead4));
        src += 16;
        dst += 16;
      } while (--k != 0);
      const w = i32x4.extadd_pairwise_i16x8_u(i16x8.extadd_pairwise_i8x16_u(acc));
      units += <usize>(i32x4.extract_lane(w, 0) + i32x4.extract_lane(w, 1) + i32x4.extract_lane(w, 2) + i32x4.extract_lane(w, 3));
    }
  }
  while (n >= 8) {
    const w = load<u64>(src);
    store<u64>(dst, w);
    // bytes with bit 7 clear or bit 6 set (a left shift moves each byte's bit 6 to its bit 7),
    // and bytes with bits 7..4 set
    const notCont = (~w | (w << 1)) & 0x8080808080808080;
    const lead4 = w & (w << 1) & (w << 2) & (w << 3) & 0x8080808080808080;
    units += <usize>(popcnt(notCont) + popcnt(lead4));
    src += 8;
    dst += 8;
    n -= 8;
  }
  while (n != 0) {
    const c = load<u8>(src);
    store<u8>(dst, c);
    units += ((c & 0xC0) != 0x80 ? 1 : 0) + (c >= 0xF0 ? 1 : 0);
    src++;
    dst++;
    n--;
  }
  return units;
}

/** Writes the batch's result words (FR_*) with `status`; returns it. */
export function finish(status: i32): i32 {
  res(FR_STATUS, status);
  res(FR_ENC, batchEnc);
  res(FR_LEN, <i32>outUsed);
  res(FR_NREC, <i32>nrec);
  res(FR_UNITS, posUnits ? <i32>outUnits : -1);
  res(FR_MIDS, <i32>(midBytes >> 1));
  return status;
}

/** Makes the offsets relative to the previous call's input window relative to the next one's. */
export function rebase(st: usize): void {
  const last = load<i32>(st, O_LASTLEN);
  store<i32>(st, load<i32>(st, O_LINEREL) - last, O_LINEREL);
  store<i32>(st, load<i32>(st, O_DSTART) - last, O_DSTART);
  store<u32>(st, 0, O_LASTLEN);
}

/**
 * `validate` of a push's run [p, end), unless the platform found the read valid (M_VALID in
 * `mode`, which JS sets only for a whole read with nothing carried in and no character cut at its
 * end): then `runAscii` as M_ASCII says, and true.
 */
// @ts-ignore: decorator
@inline export function validRun(p: usize, end: usize, mode: u32): bool {
  return (mode & M_VALID) != 0 ? assumeValid((mode & M_ASCII) != 0) : validate(p, end);
}

/**
 * Common start of a push: rebases the line start, validates carry + chunk, and cuts the run at a
 * bad sequence in strict mode. Returns the start of the run; O_END holds its end.
 */
export function runBegin(st: usize, len: usize, mode: u32): usize {
  store<u32>(st, mode, O_MODE);
  rebase(st);
  store<u32>(st, <u32>len, O_LASTLEN);
  const end = IN_PTR + len;
  let start = runStart(st);
  start = skipBom(st, start, end);
  let body = keepTail(st, start, end);
  let fl = load<u32>(st, O_FL) & ~(L_RUNASCII | L_ERRPEND);
  if (validRun(start, body, mode)) {
    if (runAscii) fl |= L_RUNASCII;
  } else if (isFatal(st)) {
    // unlikely: frame what comes before the bad sequence, then report it
    const at = firstErrorScalar(start, body);
    store<i32>(st, <i32>(at - IN_PTR), O_ERR);
    setCarried(st, 0);
    fl |= L_ERRPEND;
    body = at;
  } else {
    fl |= L_DIRTY;
  }
  // A CR at the end of the previous run: one LF at the start of this one belongs to it.
  if (fl & L_CR) {
    if (start < body) {
      if (load<u8>(start) == C_LF) start++;
      fl &= ~L_CR;
    }
  }
  store<u32>(st, fl, O_FL);
  store<u32>(st, <u32>body, O_END);
  return start;
}

/** Advances past the line terminator at nl (CR, LF or CRLF); a CR at the run's end sets L_CR. */
// @ts-ignore: decorator
@inline export function pastTerminator(st: usize, nl: usize, end: usize): usize {
  if (load<u8>(nl) == C_CR) {
    if (nl + 1 < end) return load<u8>(nl + 1) == C_LF ? nl + 2 : nl + 1;
    store<u32>(st, load<u32>(st, O_FL) | L_CR, O_FL);
  }
  return nl + 1;
}

/**
 * Resets the stream part of a record (carry, BOM, flags, LINE) for a new stream. `shrink` returns a
 * large idle LINE to the heap; a flush must not, as its raw record may still point into it (the
 * next push shrinks).
 */
export function frameResetCommon(st: usize, shrink: bool): void {
  carryReset(st);
  const fl = load<u32>(st, O_FL);
  store<u32>(st, fl & (A_ID | A_IDS | S_TPREV), O_FL);
  store<i32>(st, 0, O_LINEREL);
  store<u32>(st, 0, O_LASTLEN);
  bSetLen(st, B_LINE, 0);
  if (shrink) bShrink(st, B_LINE);
  bFree(st, B_SHAPE);
  store<u32>(st, 0, O_QUIET);
}

/** Bytes the stream holds: the unfinished line or event and the carry. */
export function framePending(st: usize): u32 {
  return <u32>(bLen(st, B_LINE) + bLen(st, B_DATA) + bLen(st, B_TYPE) + carried(st));
}

/**
 * Gives back the buffers a stream no longer needs: at the end of a stream (after JS has read the
 * flush's records) the empty LINE, DATA and TYPE; after a failure (the stream is dead until a
 * reset, which rebuilds ID from IDS) also ID and TPREV, whatever they held. IDS, the last event
 * ID a reconnection keeps, stays.
 */
export function frameRelease(st: usize, failed: bool): void {
  if (failed) {
    bSetLen(st, B_LINE, 0);
    bSetLen(st, B_DATA, 0);
    bSetLen(st, B_TYPE, 0);
    bFree(st, B_ID);
    bFree(st, B_TPREV);
    store<u32>(st, load<u32>(st, O_FL) & ~(S_TPREV | A_ID | A_LINE | A_DATA | A_TYPE), O_FL);
  }
  if (bLen(st, B_LINE) == 0) bFree(st, B_LINE);
  if (bLen(st, B_DATA) == 0) bFree(st, B_DATA);
  if (bLen(st, B_TYPE) == 0) bFree(st, B_TYPE);
  modelStateRelease(st, failed);
  bFree(st, B_SHAPE);
  store<u32>(st, 0, O_QUIET);
  store<u32>(st, 0, O_IDLE);
}

/** Frees a frame stream's buffers and its record. */
export function frameFree(st: usize): void {
  bFree(st, B_LINE);
  bFree(st, B_DATA);
  bFree(st, B_TYPE);
  bFree(st, B_ID);
  bFree(st, B_IDS);
  bFree(st, B_TPREV);
  bFree(st, B_SHAPE);
  modelStateFree(st);
  freeRecord(st, FRAME_STATE_BYTES);
}


// ---------------------------------------------------------------------------------------------
// Raw text (a line or event too long for OUT) → UTF-16 in a scratch block

let scratch: usize = 0;
let scratchCap: usize = 0;

/** Transcodes len bytes at ptr to UTF-16 in a scratch block (its address in RAW_PTR); returns units. */
export function rawUtf16(ptr: usize, len: usize, dirty: i32): usize {
  const need = (len << 1) + 64;
  if (need > scratchCap) {
    rawFree();
    reserve(need);
    scratch = heap.alloc(need);
    scratchCap = need;
  }
  res(RAW_PTR, <i32>scratch);
  return dirty ? decodeWhatwg(ptr, ptr + len, scratch, false) : transcode(ptr, ptr + len, scratch);
}

/** Returns the scratch block to the heap. */
export function rawFree(): void {
  if (scratch != 0) {
    heap.free(scratch);
    release(scratchCap);
  }
  scratch = 0;
  scratchCap = 0;
}
