// Line framing over carry + chunk: LF, CRLF and lone CR, strict UTF-8, the unfinished line held in
// a per-stream buffer on the heap (appended to, never re-scanned), and complete lines copied into
// the OUT window as one text run per call (ASCII bytes, UTF-16 or UTF-8) with one span per line.
//
// Also the pieces the SSE framer (sse.ts) shares: growable byte buffers inside the state record,
// the newline search (SIMD with a scalar twin), text emission and the batch result record.
//
// State record of a frame stream (lines and SSE):
//   +0   u8[8]  UTF-8 state (carry.ts)
//   +8   u32    frame flags (L_*, P_*, S_*)
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
import { IN_PTR, OUT_CAP, OUT_PTR, res, allocZeroed } from './abi';
import { F_FAILED, F_FATAL, F_BOM_DONE, keepTail, runStart, skipBom } from './carry';
import { decodeWhatwg, firstErrorScalar, runAscii, transcode, validate } from './utf8';

export const FRAME_STATE_BYTES: usize = 124;

// Record offsets
export const O_FL: usize = 8;
export const O_LINEREL: usize = 12;
export const O_MAX: usize = 16;
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

// Modes
export const M_UTF8_OUT: u32 = 1;    // text as UTF-8 bytes (browsers, the byte-level path)
export const M_COMMENTS: u32 = 4;    // SSE: report comments
export const M_EOF_DISPATCH: u32 = 8; // SSE flush: dispatch an unterminated event
export const M_IN_SPANS: u32 = 16;   // SSE byte-level path: data still in the run is not copied (SF_IN)

// Result record: RES[0] status bits, RES[1] text encoding, RES[2] text length (units or bytes),
// RES[3] number of records, RES[4] error offset relative to IN_PTR, RES[5] raw address.
export const R_MORE: i32 = 1;        // call the *More function again: the run is not finished
export const R_UTF8: i32 = 2;        // a bad UTF-8 sequence (fatal); RES[4] = its address − IN_PTR
export const R_LIMIT: i32 = 4;       // the limit was hit; RES[4] = the line's start − IN_PTR
export const R_TRUNC: i32 = 8;       // flush: the stream ended inside a character; RES[4] = its start
export const R_RETRY: i32 = 16;      // SSE: a valid retry field was seen (read sseRetry)
export const R_TRUNCATED: i32 = 32;  // SSE flush: the stream ended inside a line or an event
export const R_RAW: i32 = 64;        // lines: the single line is raw UTF-8 at RES[5], RES[2] bytes

export const ENC_LATIN1: i32 = 0;
export const ENC_UTF16: i32 = 1;
export const ENC_UTF8: i32 = 2;

/** Span records written by the framers (i32 words). */
export const SPAN_BYTES: usize = 65536;
export const SPAN_PTR: usize = memory.data(<i32>SPAN_BYTES, 16);

/** Buffers larger than this are returned to the heap when they fall idle. */
const SHRINK_ABOVE: u32 = 65536;
/** Room kept free at the end of OUT for the 16/32-byte stores of the SIMD transcoder. */
const OUT_SLACK: usize = 64;

// ---------------------------------------------------------------------------------------------
// Buffers: (ptr, len, cap) triples inside the state record

// @ts-ignore: decorator
@inline export function bPtr(st: usize, b: usize): usize { return <usize>load<u32>(st + b); }
// @ts-ignore: decorator
@inline export function bLen(st: usize, b: usize): usize { return <usize>load<u32>(st + b, 4); }
// @ts-ignore: decorator
@inline export function bSetLen(st: usize, b: usize, n: usize): void { store<u32>(st + b, <u32>n, 4); }

/**
 * Makes room in buffer b for `need` bytes in all; returns its block. Capacity grows by half
 * (amortized linear appends) but never past `limit`: the caller has checked that need ≤ limit.
 */
// @ts-ignore: decorator
@inline function bRoom(st: usize, b: usize, need: usize, limit: usize): usize {
  let ptr = <usize>load<u32>(st + b);
  const cap = <usize>load<u32>(st + b, 8);
  if (need > cap) {
    let nc: usize = cap < 48 ? 48 : cap < 65536 ? cap + (cap >> 1) : cap << 1;
    if (nc < need) nc = need;
    if (nc > limit) nc = need > limit ? need : limit;
    ptr = ptr == 0 ? heap.alloc(nc) : heap.realloc(ptr, nc);
    store<u32>(st + b, <u32>ptr);
    store<u32>(st + b, <u32>nc, 8);
  }
  return ptr;
}

/** Appends n bytes at src to buffer b (see bRoom for `limit`). */
export function bAppend(st: usize, b: usize, src: usize, n: usize, limit: usize): void {
  if (n == 0) return;
  const len = <usize>load<u32>(st + b, 4);
  const ptr = bRoom(st, b, len + n, limit);
  copy(ptr + len, src, n);
  store<u32>(st + b, <u32>(len + n), 4);
}

/** Appends n bytes at src and a LF to buffer b in one step (an SSE data line). */
export function bAppendLf(st: usize, b: usize, src: usize, n: usize, limit: usize): void {
  const len = <usize>load<u32>(st + b, 4);
  const ptr = bRoom(st, b, len + n + 1, limit);
  copy(ptr + len, src, n);
  store<u8>(ptr + len + n, 10);
  store<u32>(st + b, <u32>(len + n + 1), 4);
}

/**
 * memory.copy for the short runs of the hot path: V8 11 (Node 20) implements `memory.copy` as a
 * call out of the module, which costs more than copying a few dozen bytes in place.
 */
// @ts-ignore: decorator
@inline export function copy(dst: usize, src: usize, n: usize): void {
  if (n > 512) {
    memory.copy(dst, src, n);
    return;
  }
  if (ASC_FEATURE_SIMD) {
    while (n >= 16) {
      v128.store(dst, v128.load(src));
      dst += 16;
      src += 16;
      n -= 16;
    }
  }
  while (n >= 8) {
    store<u64>(dst, load<u64>(src));
    dst += 8;
    src += 8;
    n -= 8;
  }
  while (n != 0) {
    store<u8>(dst, load<u8>(src));
    dst++;
    src++;
    n--;
  }
}

/** Zeroes n bytes at dst, n a multiple of 16 (in place, as `copy`). */
// @ts-ignore: decorator
@inline export function zero16(dst: usize, n: usize): void {
  const end = dst + n;
  while (dst < end) {
    if (ASC_FEATURE_SIMD) {
      v128.store(dst, i64x2.splat(0));
    } else {
      store<u64>(dst, 0);
      store<u64>(dst, 0, 8);
    }
    dst += 16;
  }
}

/** Frees buffer b's block. */
export function bFree(st: usize, b: usize): void {
  const ptr = bPtr(st, b);
  if (ptr != 0) heap.free(ptr);
  store<u32>(st + b, 0);
  store<u32>(st + b, 0, 4);
  store<u32>(st + b, 0, 8);
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
    + load<u32>(st + B_ID, 8) + load<u32>(st + B_IDS, 8) + load<u32>(st + B_TPREV, 8);
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
    if (b == 10 || b == 13) return p;
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
  const lim = i8x16.splat(14);
  return v128.any_true(v128.or(v128.or(i8x16.sub_sat_u(lim, v0), i8x16.sub_sat_u(lim, v1)),
    v128.or(i8x16.sub_sat_u(lim, v2), i8x16.sub_sat_u(lim, v3))));
}

/** CR/LF bitmask of the 64 bytes at b (reads may pass the run's end; the caller clamps). */
// @ts-ignore: decorator
@inline function nlBlock(b: usize): u64 {
  const lf = i8x16.splat(10);
  const cr = i8x16.splat(13);
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
  return <u64>i8x16.bitmask(v128.or(i8x16.eq(v, i8x16.splat(10)), i8x16.eq(v, i8x16.splat(13))));
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
// The batch being written: text in OUT, records in SPAN

export let outUsed: usize = 0;   // units (UTF-16) or bytes (Latin-1, UTF-8)
export let nrec: usize = 0;
export let batchEnc: i32 = ENC_LATIN1;
export let batchDirty: bool = false;

// @ts-ignore: decorator
@inline export function setNrec(n: usize): void { nrec = n; }

/** Starts a batch: chooses the text encoding from the mode, the run and the held buffers. */
export function batchStart(st: usize, mode: u32, held: u32): void {
  outUsed = 0;
  nrec = 0;
  const fl = load<u32>(st, O_FL);
  batchDirty = (fl & L_DIRTY) != 0;
  if (mode & M_UTF8_OUT) batchEnc = ENC_UTF8;
  else if ((fl & L_RUNASCII) != 0 && (fl & held) == 0 && !batchDirty) batchEnc = ENC_LATIN1;
  else batchEnc = ENC_UTF16;
}

/** Bytes of OUT that n source bytes may need. */
// @ts-ignore: decorator
@inline export function outNeed(n: usize): usize {
  return batchEnc == ENC_UTF16 ? n << 1 : n;
}

/** True when n more source bytes surely fit in OUT. */
// @ts-ignore: decorator
@inline export function outFits(n: usize): bool {
  const used = batchEnc == ENC_UTF16 ? outUsed << 1 : outUsed;
  return used + outNeed(n) + OUT_SLACK <= OUT_CAP;
}

/** Appends the text of [src, src + n) to OUT; returns the new end offset. */
// @ts-ignore: decorator
@inline export function emit(src: usize, n: usize): usize {
  return n == 0 ? outUsed : emitText(src, n);
}

function emitText(src: usize, n: usize): usize {
  if (batchEnc == ENC_UTF16) {
    const o = OUT_PTR + (outUsed << 1);
    outUsed += batchDirty ? decodeWhatwg(src, src + n, o, false) : transcode(src, src + n, o);
  } else {
    copy(OUT_PTR + outUsed, src, n);
    outUsed += n;
  }
  return outUsed;
}

export function finish(st: usize, status: i32): i32 {
  res(0, status);
  res(1, batchEnc);
  res(2, <i32>outUsed);
  res(3, <i32>nrec);
  return status;
}

/**
 * Common start of a push: rebases the line start, validates carry + chunk, and cuts the run at a
 * bad sequence in strict mode. Returns the start of the run; O_END holds its end.
 */
export function runBegin(st: usize, len: usize, mode: u32): usize {
  store<u32>(st, mode, O_MODE);
  store<i32>(st, load<i32>(st, O_LINEREL) - load<i32>(st, O_LASTLEN), O_LINEREL);
  store<u32>(st, <u32>len, O_LASTLEN);
  const end = IN_PTR + len;
  let start = runStart(st);
  start = skipBom(st, start, end);
  let body = keepTail(st, start, end);
  let fl = load<u32>(st, O_FL) & ~(L_RUNASCII | L_ERRPEND);
  if (validate(start, body)) {
    if (runAscii) fl |= L_RUNASCII;
  } else if (load<u8>(st, 5) & F_FATAL) {
    // unlikely: frame what comes before the bad sequence, then report it
    const at = firstErrorScalar(start, body);
    store<i32>(st, <i32>(at - IN_PTR), O_ERR);
    store<u8>(st, load<u8>(st, 5) | F_FAILED, 5);
    store<u8>(st, 0, 4);
    fl |= L_ERRPEND;
    body = at;
  } else {
    fl |= L_DIRTY;
  }
  // A CR at the end of the previous run: one LF at the start of this one belongs to it.
  if (fl & L_CR) {
    if (start < body) {
      if (load<u8>(start) == 10) start++;
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
  if (load<u8>(nl) == 13) {
    if (nl + 1 < end) return load<u8>(nl + 1) == 10 ? nl + 2 : nl + 1;
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
  store<u8>(st, 0, 4);
  store<u8>(st, load<u8>(st, 5) & ~(F_BOM_DONE | F_FAILED), 5);
  const fl = load<u32>(st, O_FL);
  store<u32>(st, fl & (A_ID | A_IDS | S_TPREV), O_FL);
  store<i32>(st, 0, O_LINEREL);
  store<u32>(st, 0, O_LASTLEN);
  bSetLen(st, B_LINE, 0);
  if (shrink) bShrink(st, B_LINE);
}

// ---------------------------------------------------------------------------------------------
// Lines

const LINE_REC_MAX: usize = SPAN_BYTES >> 3; // records of 2 words: text end, start − IN_PTR

export function linesNew(flags: u8, max: u32): usize {
  const st = allocZeroed(FRAME_STATE_BYTES);
  store<u8>(st, flags, 5);
  store<u32>(st, max, O_MAX);
  return st;
}

// @ts-ignore: decorator
@inline function lineRecord(end: usize, rel: i32): void {
  const r = SPAN_PTR + (nrec << 3);
  store<i32>(r, <i32>end);
  store<i32>(r, rel, 4);
  nrec++;
}

/** Frames the run from `p`. Returns the status of the batch. */
function linesRun(st: usize, p: usize): i32 {
  const end = <usize>load<u32>(st, O_END);
  const max = <usize>load<u32>(st, O_MAX);
  batchStart(st, load<u32>(st, O_MODE), A_LINE);
  nlStart();
  while (true) {
    const nl = nextNl(p, end);
    const held = bLen(st, B_LINE);
    if (nl == end) {
      // the unfinished line
      if (load<u32>(st, O_FL) & L_ERRPEND) break;
      const n = end - p;
      if (n == 0) break;
      if (held == 0) store<i32>(st, <i32>(p - IN_PTR), O_LINEREL);
      if (held + n > max) {
        res(4, load<i32>(st, O_LINEREL));
        return finish(st, R_LIMIT);
      }
      bAppend(st, B_LINE, p, n, max);
      if ((load<u32>(st, O_FL) & L_RUNASCII) == 0) store<u32>(st, load<u32>(st, O_FL) | A_LINE, O_FL);
      break;
    }
    const n = held + (nl - p);
    const rel = held != 0 ? load<i32>(st, O_LINEREL) : <i32>(p - IN_PTR);
    if (n > max) {
      res(4, rel);
      return finish(st, R_LIMIT);
    }
    if (nrec == LINE_REC_MAX || !outFits(n)) {
      if (nrec != 0) {
        store<u32>(st, <u32>p, O_POS);
        return finish(st, R_MORE);
      }
      // unlikely: one line longer than OUT: hand it over as raw UTF-8 from LINE
      bAppend(st, B_LINE, p, nl - p, max);
      res(5, <i32>bPtr(st, B_LINE));
      lineRecord(n, rel);
      bSetLen(st, B_LINE, 0);
      const fl = load<u32>(st, O_FL);
      store<u32>(st, fl & ~A_LINE, O_FL);
      const q = pastTerminator(st, nl, end);
      store<u32>(st, <u32>q, O_POS);
      res(6, (fl & A_LINE) != 0 || (fl & L_RUNASCII) == 0 ? 0 : 1);
      outUsed = n;
      const status = finish(st, R_RAW | R_MORE);
      res(1, ENC_UTF8);
      return status;
    }
    if (held != 0) {
      emit(bPtr(st, B_LINE), held);
      bSetLen(st, B_LINE, 0);
      store<u32>(st, load<u32>(st, O_FL) & ~A_LINE, O_FL);
    }
    lineRecord(emit(p, nl - p), rel);
    p = pastTerminator(st, nl, end);
  }
  if (load<u32>(st, O_FL) & L_ERRPEND) {
    res(4, load<i32>(st, O_ERR));
    return finish(st, R_UTF8);
  }
  return finish(st, 0);
}

/** Frames carry + the `len` bytes at IN_PTR. Returns status bits (R_*); see the result record. */
export function linesPush(st: usize, len: usize, mode: u32): i32 {
  bShrink(st, B_LINE);
  return linesRun(st, runBegin(st, len, mode));
}

/** Continues a run after R_MORE. */
export function linesMore(st: usize): i32 {
  return linesRun(st, <usize>load<u32>(st, O_POS));
}

/**
 * End of stream: the unterminated last line (one record, or none), then a new stream begins.
 * A held incomplete character is R_TRUNC in strict mode and U+FFFD otherwise.
 */
export function linesFlush(st: usize, mode: u32): i32 {
  store<u32>(st, mode, O_MODE);
  const pending = <usize>load<u8>(st, 4);
  let fl = load<u32>(st, O_FL);
  if (pending != 0) {
    if (load<u8>(st, 5) & F_FATAL) {
      res(4, -<i32>pending);
      res(1, ENC_LATIN1); res(2, 0); res(3, 0);
      frameResetCommon(st, true);
      res(0, R_TRUNC);
      return R_TRUNC;
    }
    if (bLen(st, B_LINE) == 0) store<i32>(st, load<i32>(st, O_LASTLEN) - <i32>pending, O_LINEREL);
    bAppend(st, B_LINE, st, pending, 0x7FFFFFFF);
    fl |= L_DIRTY | A_LINE;
  }
  fl &= ~L_RUNASCII;
  store<u32>(st, fl, O_FL);
  batchStart(st, mode, A_LINE);
  const held = bLen(st, B_LINE);
  let status: i32 = 0;
  if (held != 0) {
    const rel = load<i32>(st, O_LINEREL) - load<i32>(st, O_LASTLEN);
    if (outFits(held)) {
      lineRecord(emit(bPtr(st, B_LINE), held), rel);
    } else {
      res(5, <i32>bPtr(st, B_LINE));
      res(6, (fl & A_LINE) != 0 ? 0 : 1);
      lineRecord(held, rel);
      outUsed = held;
      status = R_RAW;
    }
  }
  finish(st, status);
  if (status & R_RAW) res(1, ENC_UTF8);
  frameResetCommon(st, false);
  store<u32>(st, 0, O_FL);
  return status;
}

/** A new stream on the same record. */
export function linesReset(st: usize): void {
  frameResetCommon(st, true);
  store<u32>(st, 0, O_FL);
}

/** Bytes the stream holds: the unfinished line and the carry. */
export function framePending(st: usize): u32 {
  return load<u32>(st + B_LINE, 4) + load<u32>(st + B_DATA, 4) + load<u32>(st + B_TYPE, 4) + <u32>load<u8>(st, 4);
}

/** Frees a frame stream's buffers and its record. */
export function frameFree(st: usize): void {
  bFree(st, B_LINE);
  bFree(st, B_DATA);
  bFree(st, B_TYPE);
  bFree(st, B_ID);
  bFree(st, B_IDS);
  bFree(st, B_TPREV);
  heap.free(st);
}

// ---------------------------------------------------------------------------------------------
// Raw text (a line or event too long for OUT) → UTF-16 in a scratch block

let scratch: usize = 0;
let scratchCap: usize = 0;

/** Transcodes len bytes at ptr to UTF-16 in a scratch block; RES[1] = its address. Returns units. */
export function rawUtf16(ptr: usize, len: usize, dirty: i32): usize {
  const need = (len << 1) + 64;
  if (need > scratchCap) {
    if (scratch != 0) heap.free(scratch);
    scratch = heap.alloc(need);
    scratchCap = need;
  }
  res(1, <i32>scratch);
  return dirty ? decodeWhatwg(ptr, ptr + len, scratch, false) : transcode(ptr, ptr + len, scratch);
}

/** Returns the scratch block to the heap. */
export function rawFree(): void {
  if (scratch != 0) heap.free(scratch);
  scratch = 0;
  scratchCap = 0;
}
