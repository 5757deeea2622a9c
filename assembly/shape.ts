// Layer 4 (model streams): shapes of quiet events. Within a stream, a quiet event (a text delta: see abi.ts, "Templates")
// repeats the one before it byte for byte except inside some values: its text, and the string and
// number values no path asks for (an ID, a timestamp, padding, a counter). After the reader read
// a quiet event in full, its shape is kept in the stream's record (buffer SHAPE): the bytes
// between those values, which of them are numbers, and which one is the text. The next event is
// first matched against it: its bytes between the values are compared, and the values themselves
// scanned and validated as the reader would.
//
// Why a match is the same event to the reader: the reader's records and errors depend on the
// document's bytes outside those values only. A string body or a number the program does not
// record is validated and skipped whatever it holds; the text's body only gives its record's span
// and flags, and no template rule looks at the text's content. Keys, every recorded value other
// than the text (the literals a template compares) and all other tokens are among the compared
// bytes, so the same structure, the same records (spans aside) and the same verdict follow; the
// one record a quiet event with a shape has, its text, is rebuilt from the scan. A value that
// fails the scan or bytes that differ fall back to the full read, which reports any error.
//
// Layout of SHAPE (bytes):
//   +0  u32  the template       +4  u32 the path program     +8  i32 the choice
//   +12 u32  the text record's head word, without its flags   +16 i32 its element index
//   +20 u16  segments           +22 u16 the text's hole (after segment k, k < segments − 1)
//   +24 u16  misses since the last match
//   +26 u8   the content's channel (CH_*, 0xFF: none)   +27 u8 its kind (0xFF: none)
//   +28 u32  bit k set: the hole after segment k is a number (else a string body)
//   +32 i32  the key of the call it names (−1: none)
//   +36 u16  the segment the template's MR_LAST object begins in (0xFFFF: none), u16 where in it,
//   +40 u16  the segment it ends in, u16 where in it its last byte lies
//   +44 u16  lengths of the segments, then their bytes, then 16 bytes of slack for the compares
// A segment ends with the opening quote of a hole's string, or right before its number; the next
// begins with the string's closing quote, or right after the number. A kept object (MR_LAST: its
// braces are tokens, in segments) is kept from a matched event where those segments lie in it.
import {
  CH_ARGS, CH_REASONING, CH_TEXT, JF_ASCII, JF_ESCAPED, JK_OBJECT, JK_STRING, JREC_BYTES, JREC_FLAGS_SHIFT, JREC_KIND_SHIFT, JR_END, JR_INDEX, JR_START,
  ME_ARGS, ME_CHUNKS, ME_GATHER, ME_NO_TEXT, ME_PASS, ME_REASONING, MJREC_PTR, MR_LAST, MR_TEXT, MT_HEAD_BYTES, MT_LAST, MT_RULE_BYTES,
} from './abi';
import { bEnsure, bLen, bPtr, bSetLen, copy } from './buffers';
import { B_SHAPE, O_QUIET } from './frames';
import { argsLeft, currentCall, keepLast } from './model-state';
import { jsonAscii, jsonEscaped, jsonNumberEnd, jsonStringEnd } from './json';
import { budgetFits } from './runtime';

/** Documents longer than this get no shape (the bytes a stream keeps for it stay small). */
const SHAPE_MAX_DOC: usize = 768;
/** At most this many segments (holes + 1). */
const SHAPE_MAX_SEGS: u32 = 24;
const H_SEGS: usize = 20;
const H_HOLE: usize = 22;
const H_MISSES: usize = 24;
const H_CHANNEL: usize = 26;
const H_KIND: usize = 27;
const H_NUMBERS: usize = 28;
const H_CALL: usize = 32;
const H_LAST: usize = 36;
const H_LENS: usize = 44;
/** After this many misses in a row, a new shape is learned only every 16th quiet event. */
const RELEARN_FREELY: u32 = 3;

/** What the last quiet event read (quietText or shapeMatch) was: its channel (CH_*, −1: no content), its kind (−1: none), the key of its call (−1: none). */
const QUIET: usize = memory.data(12, 4);

// @ts-ignore: decorator
@inline export function setQuiet(channel: i32, kind: i32, call: i32): void {
  store<i32>(QUIET, channel);
  store<i32>(QUIET, kind, 4);
  store<i32>(QUIET, call, 8);
}
// @ts-ignore: decorator
@inline export function quietChannel(): i32 { return load<i32>(QUIET); }
// @ts-ignore: decorator
@inline export function quietKind(): i32 { return load<i32>(QUIET, 4); }
// @ts-ignore: decorator
@inline export function quietCall(): i32 { return load<i32>(QUIET, 8); }

/**
 * Whether a quiet event of channel `ch` may be read to the end by the core in `mode` (ME_*): text
 * unless ME_NO_TEXT; reasoning and arguments with their bits, when written for a client or kept.
 */
// @ts-ignore: decorator
@inline export function channelOn(ch: i32, mode: i32): bool {
  if (ch < 0) return true;
  if (ch == CH_TEXT) return (mode & ME_NO_TEXT) == 0;
  return (mode & (ch == CH_REASONING ? ME_REASONING : ME_ARGS)) != 0 && (mode & (ME_PASS | ME_CHUNKS | ME_GATHER)) != 0;
}

/** Whether the n bytes at a and b are equal (whole blocks are read: both have slack). */
// @ts-ignore: decorator
@inline function same(a: usize, b: usize, n: usize): bool {
  let i: usize = 0;
  if (ASC_FEATURE_SIMD) {
    for (; i + 16 <= n; i += 16) {
      if (v128.any_true(v128.xor(v128.load(a + i), v128.load(b + i)))) return false;
    }
    if (i < n) {
      const m = i8x16.bitmask(i8x16.eq(v128.load(a + i), v128.load(b + i)));
      const want = (1 << <i32>(n - i)) - 1;
      if ((m & want) != want) return false;
    }
  } else {
    for (; i + 8 <= n; i += 8) {
      if (load<u64>(a + i) != load<u64>(b + i)) return false;
    }
    if (i < n) {
      const x = load<u64>(a + i) ^ load<u64>(b + i);
      if ((x << (<u64>(8 - (n - i)) << 3)) != 0) return false;
    }
  }
  return true;
}

/**
 * Matches the document [p, p + n) against the stream's shape for template `t`, program `prog` and
 * `choice`: when it has it, and its channel is on in `mode` (an argument fragment's call is the
 * current one, and fits the budget when kept), writes its one record (the content) at MJREC_PTR,
 * sets what the quiet event is (setQuiet) and returns true.
 */
export function shapeMatch(st: usize, t: usize, prog: usize, choice: i32, p: usize, n: usize, mode: i32): bool {
  if (bLen(st, B_SHAPE) == 0) return false;
  const s = bPtr(st, B_SHAPE);
  if (load<u32>(s) != <u32>t || load<u32>(s, 4) != <u32>prog || load<i32>(s, 8) != choice) return false;
  const c8 = <i32>load<u8>(s, H_CHANNEL);
  const channel = c8 == 0xFF ? -1 : c8;
  const call = load<i32>(s, H_CALL);
  if (!channelOn(channel, mode)) return false;
  if (channel == CH_ARGS && call + 1 != currentCall(st)) return false;
  const segs = <u32>load<u16>(s, H_SEGS);
  const hole = <u32>load<u16>(s, H_HOLE);
  const numbers = load<u32>(s, H_NUMBERS);
  const ls = <u32>load<u16>(s, H_LAST), le = <u32>load<u16>(s, H_LAST + 4);
  let ks: usize = 0, ke: usize = 0;
  const end = p + n;
  const saved = load<u8>(end);
  store<u8>(end, 0); // the reader's sentinel: a scan stops at the end
  let f = s + H_LENS + (<usize>segs << 1);
  let q = p;
  let ts: usize = 0, te: usize = 0;
  let escaped = false;
  let ok = true;
  for (let k: u32 = 0; k < segs; k++) {
    const len = <usize>load<u16>(s + H_LENS + (<usize>k << 1));
    if (q + len > end || !same(q, f, len)) {
      ok = false;
      break;
    }
    if (k == ls) ks = q + <usize>load<u16>(s, H_LAST + 2);
    if (k == le) ke = q + <usize>load<u16>(s, H_LAST + 6) + 1;
    q += len;
    f += len;
    if (k + 1 == segs) break;
    const e = ((numbers >>> k) & 1) != 0 ? jsonNumberEnd(q) : jsonStringEnd(q);
    if (e == 0) {
      ok = false;
      break;
    }
    if (k == hole) {
      ts = q;
      te = e;
      escaped = jsonEscaped();
    }
    q = e;
  }
  if (ok && q != end) ok = false;
  store<u8>(end, saved);
  if (!ok) {
    const m = <u32>load<u16>(s, H_MISSES);
    store<u16>(s, <u16>(m < 0xFFF0 ? m + 1 : 16), H_MISSES); // (wraps to a count that relearns next)
    return false;
  }
  store<u16>(s, 0, H_MISSES);
  if (channel == CH_ARGS && (mode & (ME_PASS | ME_CHUNKS)) == 0 && <u32>(te - ts) > argsLeft(st)) return false;
  setQuiet(channel, <i32>load<u8>(s, H_KIND) == 0xFF ? -1 : <i32>load<u8>(s, H_KIND), call);
  if (ls != 0xFFFF) keepLast(st, ks, ke - ks);
  let flags: u32 = escaped ? JF_ESCAPED : 0;
  if (jsonAscii(ts, te)) flags |= JF_ASCII;
  const w = MJREC_PTR;
  store<u32>(w, load<u32>(s, 12) | (flags << JREC_FLAGS_SHIFT));
  store<i32>(w, load<i32>(s, 16), JR_INDEX << 2);
  store<i32>(w, <i32>(ts - p), JR_START << 2);
  store<i32>(w, <i32>(te - p), JR_END << 2);
  return true;
}

/** The record of the object at template `t`'s MR_LAST rule among the `nrec` records at MJREC_PTR (its first), or 0 (none, or no such rule: MT_LAST). */
export function lastRecord(t: usize, nrec: i32): usize {
  if ((load<u16>(t, 4) & MT_LAST) == 0) return 0;
  const nrules = <u32>load<u16>(t);
  for (let j = 0; j < nrec; j++) {
    const w = MJREC_PTR + (<usize>j * JREC_BYTES);
    const head = load<u32>(w);
    const id = head & 0xFFFF;
    if (id < nrules && <i32>load<u8>(t + MT_HEAD_BYTES + <usize>id * MT_RULE_BYTES) == MR_LAST && ((head >>> JREC_KIND_SHIFT) & 0xFF) == JK_OBJECT) return w;
  }
  return 0;
}

/** Whether any of the `nrec` records starts at offset `off` (a string value the program records). */
function recordedAt(nrec: i32, off: i32): bool {
  for (let j = 0; j < nrec; j++) {
    if (load<i32>(MJREC_PTR + (<usize>j * JREC_BYTES), JR_START << 2) == off) return true;
  }
  return false;
}

/** Where the segments of the document being learned begin and end (two words each). */
const SEGS: usize = memory.data(<i32>SHAPE_MAX_SEGS * 8, 16);

/** Segment k of the document being learned is [a, b). */
// @ts-ignore: decorator
@inline function segment(k: u32, a: usize, b: usize): void {
  store<u32>(SEGS + (<usize>k << 3), <u32>a);
  store<u32>(SEGS + (<usize>k << 3), <u32>b, 4);
}

/** Whether the record with head word `head` is text by template `t` (a string at a text rule). */
// @ts-ignore: decorator
@inline export function isTextRecord(t: usize, head: u32): bool {
  const rule = t + MT_HEAD_BYTES + <usize>(head & 0xFFFF) * MT_RULE_BYTES;
  return load<u8>(rule) == <u8>MR_TEXT && ((head >>> JREC_KIND_SHIFT) & 0xFF) == JK_STRING;
}

/**
 * After the full read of a quiet event [p, p + n) with one text record and `nrec` records in all:
 * keeps its shape (see above). Not at the stream's first quiet event (a stream that goes idle
 * after one holds no shape; an OpenAI stream's first delta, with its role, has a shape of its
 * own), and only 1 time in 16 once the stream keeps missing its shapes.
 */
export function shapeLearn(st: usize, t: usize, prog: usize, choice: i32, p: usize, n: usize, nrec: i32): void {
  if (load<u32>(st, O_QUIET) < 2) {
    store<u32>(st, load<u32>(st, O_QUIET) + 1, O_QUIET);
    if (load<u32>(st, O_QUIET) < 2) return;
  }
  let misses: u32 = 0;
  if (bLen(st, B_SHAPE) != 0) {
    misses = <u32>load<u16>(bPtr(st, B_SHAPE), H_MISSES);
    if (misses > RELEARN_FREELY && (misses & 15) != 0) return;
  }
  if (n > SHAPE_MAX_DOC) return;
  // the text record
  let textHead: u32 = 0, textIdx: i32 = 0, textOff: i32 = -1;
  for (let j = 0; j < nrec; j++) {
    const w = MJREC_PTR + (<usize>j * JREC_BYTES);
    const head = load<u32>(w);
    if (!isTextRecord(t, head) || load<i32>(w, JR_END << 2) == load<i32>(w, JR_START << 2)) continue;
    textHead = head & ((1 << JREC_FLAGS_SHIFT) - 1);
    textIdx = load<i32>(w, JR_INDEX << 2);
    textOff = load<i32>(w, JR_START << 2);
  }
  if (textOff < 0) return;
  // the holes: every string or number value with no record, and the text (the document is valid
  // JSON, so the reader's own scanners find where each value ends)
  const end = p + n;
  let segs: u32 = 0;
  let hole: u32 = 0xFFFF;
  let fixed: usize = 0;
  let from = p;
  let q = p;
  let numbers: u32 = 0;
  while (q < end) {
    const c0 = <u32>load<u8>(q);
    if (c0 == 0x2D || c0 - 0x30 < 10) {
      // a number (outside strings, a `-` or a digit starts one): a hole unless it is recorded
      const e = jsonNumberEnd(q);
      if (!recordedAt(nrec, <i32>(q - p))) {
        if (segs + 1 >= SHAPE_MAX_SEGS) return;
        numbers |= <u32>1 << segs;
        segment(segs, from, q);
        fixed += q - from;
        segs++;
        from = e;
      }
      q = e;
      continue;
    }
    if (c0 != 0x22) {
      q++;
      continue;
    }
    const b = q + 1;
    const e = jsonStringEnd(b);
    let a = e + 1;
    while (a < end && (load<u8>(a) == 0x20 || load<u8>(a) == 0x0A || load<u8>(a) == 0x0D || load<u8>(a) == 0x09)) a++;
    const isKey = a < end && load<u8>(a) == 0x3A;
    const off = <i32>(b - p);
    if (!isKey && (off == textOff || !recordedAt(nrec, off))) {
      if (segs + 1 >= SHAPE_MAX_SEGS) return;
      if (off == textOff) hole = segs;
      segment(segs, from, b);
      fixed += b - from;
      segs++;
      from = e;
    }
    q = e + 1;
  }
  if (hole == 0xFFFF) return;
  segment(segs, from, end);
  fixed += end - from;
  segs++;
  // the kept object: the segments its first and last bytes (its braces) lie in
  let ls: u32 = 0xFFFF, lo: usize = 0, le: u32 = 0xFFFF, leo: usize = 0;
  const lw = lastRecord(t, nrec);
  if (lw != 0) {
    const a = p + <usize>load<i32>(lw, JR_START << 2), b = p + <usize>load<i32>(lw, JR_END << 2) - 1;
    for (let k: u32 = 0; k < segs; k++) {
      const sa = <usize>load<u32>(SEGS + (<usize>k << 3)), sb = <usize>load<u32>(SEGS + (<usize>k << 3), 4);
      if (a >= sa && a < sb) {
        ls = k;
        lo = a - sa;
      }
      if (b >= sa && b < sb) {
        le = k;
        leo = b - sa;
      }
    }
    if (ls == 0xFFFF || le == 0xFFFF) return; // (never: braces are tokens)
  }
  const size = H_LENS + (<usize>segs << 1) + fixed;
  // a shape is worth keeping, not worth failing a push for: none past the budget (setCoreMemoryLimit)
  const cap = <usize>load<u32>(st + B_SHAPE, 8);
  if (size + 16 > cap && !budgetFits(size + 16 + (cap >> 1) + 48)) return;
  const s = bEnsure(st, B_SHAPE, size + 16);
  store<u32>(s, <u32>t);
  store<u32>(s, <u32>prog, 4);
  store<i32>(s, choice, 8);
  store<u32>(s, textHead, 12);
  store<i32>(s, textIdx, 16);
  store<u16>(s, <u16>segs, H_SEGS);
  store<u16>(s, <u16>hole, H_HOLE);
  store<u16>(s, <u16>misses, H_MISSES);
  store<u8>(s, <u8>quietChannel(), H_CHANNEL);
  store<u8>(s, <u8>quietKind(), H_KIND);
  store<u32>(s, numbers, H_NUMBERS);
  store<i32>(s, quietCall(), H_CALL);
  store<u16>(s, <u16>ls, H_LAST);
  store<u16>(s, <u16>lo, H_LAST + 2);
  store<u16>(s, <u16>le, H_LAST + 4);
  store<u16>(s, <u16>leo, H_LAST + 6);
  let o = s + H_LENS + (<usize>segs << 1);
  for (let k: u32 = 0; k < segs; k++) {
    const a = <usize>load<u32>(SEGS + (<usize>k << 3));
    const len = <usize>load<u32>(SEGS + (<usize>k << 3), 4) - a;
    store<u16>(s + H_LENS + (<usize>k << 1), <u16>len);
    copy(o, a, len);
    o += len;
  }
  bSetLen(st, B_SHAPE, size);
}
