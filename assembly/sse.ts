// Layer 2 (frames): Server-Sent Events, the WHATWG HTML "event stream interpretation", framed over the frame kit's
// run (frames.ts). Bytes in, records out; no strings.
//
// Per line: blank → dispatch; ':' → comment; else field/value split at the first colon with one
// leading space removed from the value; data (appended with a LF), event, id (ignored when it
// contains NUL), retry (only ASCII digits); other fields ignored. Dispatch: the last event ID
// string takes the buffer's value; an empty data buffer dispatches nothing (the buffers are reset
// all the same); else the trailing LF is removed and the event is reported.
//
// An unfinished line at the end of a chunk is classified as soon as its field name is known:
// a data value goes straight into DATA (one copy, counted once against the limit), an ignored
// line (unknown field, or a comment nobody listens to) is skipped without holding its bytes,
// and event/id/retry/comment lines wait in LINE.
//
// Records (SSE_REC_WORDS i32 words at SPAN_PTR, named SR_* in abi.ts): kind | flags, data start,
// data end, type start, type end, id start, id end, 0. Spans are text offsets in the batch (units or bytes), or with SF_RAW
// absolute addresses of UTF-8 bytes in the stream's buffers (a record too large for OUT; it is
// then the batch's last one).
import {
  FR_ERR, FR_JOIN, FR_NREC, FR_STATUS, F_BOM_DONE, IN_JOIN, IN_PTR, K_COMMENT, K_EVENT, K_ID, M_COMMENTS, M_EOF_DISPATCH,
  MIDS_OFF, M_IN_SPANS, R_LIMIT, R_MORE, R_RETRY, R_TRUNC, R_TRUNCATED, R_UTF8, SF_DA, SF_IA, SF_ID, SF_IN, SF_RAW, SF_SAME_TYPE, SF_SLACK, SF_TA, SF_TYPE, SPAN_BYTES,
  SPAN_PTR, SR_DATA0, SR_DATA1, SR_DSTART, SR_HEAD, SR_ID0, SR_ID1, SR_TYPE0, SR_TYPE1, SSE_REC_WORDS,
} from './abi';
import { modelStateFree } from './model-state';
import { carried, flags, isFatal, runStart, setCarried, setFlags } from './carry';
import { NO_LIMIT, bAppend, bFree, bLen, bPtr, bSetLen, copy, zero16 } from './buffers';
import {
  A_ANY, A_DATA, A_ID, A_IDS, A_LINE, A_TYPE, B_DATA, B_ID, B_IDS, B_LINE, B_TPREV, B_TYPE, C_COLON, C_CR, C_LF,
  C_NUL, C_SPACE, FRAME_STATE_BYTES, O_DSTART, L_CR, L_DIRTY, L_ERRPEND, L_RUNASCII, O_END, O_ERR, O_FL, O_IDLE,
  O_LASTLEN, O_LINEREL, O_MAX, O_MODE, O_POS, O_RETRY, P_DATA, P_DATA_SP, P_MASK, P_RAW, P_SKIP, S_ID_SET, S_INEVENT,
  S_TPREV, W_DATA, bAppendLf, bShrink, bShrinkIdle, batchStart, emit, emitData, emitData2, finish, frameResetCommon,
  isDataField, lineEndIn, nextNl, nlStart, noLineEnd, nrec, outFits, outPos, pastTerminator, rebase, runBegin, setNrec,
  takeSplit, validRun,
} from './frames';
import { allocZeroed, res, sameBytes } from './runtime';
import { runAscii } from './utf8';

const REC_BYTES: usize = <usize>SSE_REC_WORDS << 2;
const REC_MAX: usize = SPAN_BYTES / REC_BYTES;
const W_EVEN: u32 = 0x6E657665;   // 'even'
const W_RETR: u32 = 0x72746572;   // 'retr'
const H_ID: u16 = 0x6469;         // 'id'
const H_T_COLON: u16 = 0x3A74;    // 't:'
const LF_LF: u16 = 0x0A0A;
const CRLF_CRLF: u32 = 0x0A0D0A0D;
/** The field names that are held until their line ends, 5 bytes apart: data, event, id, retry. */
const NAMES: usize = memory.data<u8>([100, 97, 116, 97, 0, 101, 118, 101, 110, 116, 105, 100, 0, 0, 0, 114, 101, 116, 114, 121]);
const C_E: u8 = 101; // the first letter of 'event'
const C_T: u8 = 116; // the last letter of 'event'
const C_Y: u8 = 121; // the last letter of 'retry'

// A data value of the run not yet copied into DATA: an event whose only data line and blank
// line are both in the run is reported straight from the input window (one copy fewer). Any other
// use of DATA copies it there first (`materialize`), and so does the end of every run.
let hasPend: bool = false;
let pendV: usize = 0;
let pendN: usize = 0;
let pendNonAscii: bool = false;

let curRel: i32 = 0;      // start of the line being handled, relative to IN_PTR
let rawUsed: bool = false;
let retrySeen: bool = false;

export function sseNew(flags: u8, max: u32): usize {
  const st = allocZeroed(FRAME_STATE_BYTES);
  setFlags(st, flags);
  store<u32>(st, max, O_MAX);
  store<f64>(st, -1, O_RETRY);
  return st;
}

// @ts-ignore: decorator
@inline function fl(st: usize): u32 { return load<u32>(st, O_FL); }
// @ts-ignore: decorator
@inline function setFl(st: usize, v: u32): void { store<u32>(st, v, O_FL); }

/** Bytes the event holds (LINE unless excluded, DATA, TYPE, ID). */
// @ts-ignore: decorator
@inline function held(st: usize, withLine: bool): usize {
  return (withLine ? bLen(st, B_LINE) : 0) + bLen(st, B_DATA) + bLen(st, B_TYPE) + bLen(st, B_ID) + (hasPend ? pendN + 1 : 0);
}

/** Copies a pending data value of the run into DATA. */
function materialize(st: usize): void {
  if (!hasPend) return;
  hasPend = false;
  const max = <usize>load<u32>(st, O_MAX);
  bAppendLf(st, B_DATA, pendV, pendN, max);
  if (pendNonAscii && pendN != 0) setFl(st, fl(st) | A_DATA);
}

function limitHit(): bool {
  res(FR_ERR, curRel);
  return false;
}

/** Appends a data value (+ LF when `lf`) to DATA. */
function dataAppend(st: usize, v: usize, n: usize, lf: bool, nonAscii: bool, fromLine: bool): bool {
  const max = <usize>load<u32>(st, O_MAX);
  const add = n + (lf ? 1 : 0);
  if (held(st, !fromLine) + add > max) return limitHit();
  if (!hasPend && bLen(st, B_DATA) == 0) store<i32>(st, relOf(st, v), O_DSTART); // the event's first data
  if (lf && !fromLine && !hasPend && bLen(st, B_DATA) == 0) {
    hasPend = true;
    pendV = v;
    pendN = n;
    pendNonAscii = nonAscii;
    setFl(st, fl(st) | S_INEVENT);
    return true;
  }
  materialize(st);
  if (lf) bAppendLf(st, B_DATA, v, n, max);
  else bAppend(st, B_DATA, v, n, max);
  let f = fl(st) | S_INEVENT;
  if (nonAscii && n != 0) f |= A_DATA;
  setFl(st, f);
  return true;
}

/** Where v (in the run, or in LINE) lies in the stream, relative to IN_PTR of the call. */
function relOf(st: usize, v: usize): i32 {
  const lp = bPtr(st, B_LINE);
  if (lp != 0 && v >= lp && v <= lp + bLen(st, B_LINE)) return load<i32>(st, O_LINEREL) + <i32>(v - lp);
  return <i32>(v - IN_PTR);
}

/** Sets buffer b to [v, v + n). */
function setBuf(st: usize, b: usize, v: usize, n: usize, fromLine: bool): bool {
  const max = <usize>load<u32>(st, O_MAX);
  if (held(st, !fromLine) - bLen(st, b) + n > max) return limitHit();
  bSetLen(st, b, 0);
  bAppend(st, b, v, n, max);
  return true;
}

// @ts-ignore: decorator
@inline function record(w0: i32, d0: i32, d1: i32, t0: i32, t1: i32, i0: i32, i1: i32, ds: i32 = 0): void {
  const r = SPAN_PTR + nrec * REC_BYTES;
  store<i32>(r, w0 | takeSplit(), SR_HEAD << 2);
  store<i32>(r, d0, SR_DATA0 << 2);
  store<i32>(r, d1, SR_DATA1 << 2);
  store<i32>(r, t0, SR_TYPE0 << 2);
  store<i32>(r, t1, SR_TYPE1 << 2);
  store<i32>(r, i0, SR_ID0 << 2);
  store<i32>(r, i1, SR_ID1 << 2);
  store<i32>(r, ds, SR_DSTART << 2);
  setNrec(nrec + 1);
}

/** Dispatch (a blank line). */
function dispatch(st: usize): void {
  let f = fl(st);
  const idChanged = (f & S_ID_SET) != 0;
  if (idChanged) {
    bSetLen(st, B_IDS, 0);
    bAppend(st, B_IDS, bPtr(st, B_ID), bLen(st, B_ID), NO_LIMIT);
    f = (f & ~(S_ID_SET | A_IDS)) | ((f & A_ID) != 0 ? A_IDS : 0);
  }
  f &= ~S_INEVENT;
  let dl = bLen(st, B_DATA);
  let dp = bPtr(st, B_DATA);
  let dataAscii = (f & A_DATA) == 0;
  const fromRun = hasPend;
  const ds = hasPend ? <i32>(pendV - IN_PTR) : load<i32>(st, O_DSTART);
  if (hasPend) {
    hasPend = false;
    dp = pendV;
    dl = pendN + 1; // as if with its LF
    dataAscii = !pendNonAscii;
  }
  if (dl == 0) {
    bSetLen(st, B_TYPE, 0);
    setFl(st, f & ~A_TYPE);
    if (idChanged) {
      const ip = bPtr(st, B_IDS), il = bLen(st, B_IDS);
      if (outFits(il)) {
        const i0 = <i32>emit(0, 0);
        record(K_ID | SF_ID, 0, 0, 0, 0, i0, <i32>emit(ip, il));
      } else {
        rawUsed = true;
        record(K_ID | SF_ID | SF_RAW | ((f & A_IDS) == 0 ? SF_IA : 0), 0, 0, 0, 0, <i32>ip, <i32>(ip + il));
      }
    }
    return;
  }
  dl -= 1; // the trailing LF
  const tl = bLen(st, B_TYPE), tp = bPtr(st, B_TYPE);
  let w0 = K_EVENT;
  let sameType = false;
  if (tl != 0) {
    w0 |= SF_TYPE;
    if (typeRepeats(st, f)) {
      w0 |= SF_SAME_TYPE;
      sameType = true;
    } else {
      bSetLen(st, B_TPREV, 0);
      bAppend(st, B_TPREV, tp, tl, NO_LIMIT);
      f |= S_TPREV;
    }
  }
  const ip = bPtr(st, B_IDS), il = idChanged ? bLen(st, B_IDS) : 0;
  if (idChanged) w0 |= SF_ID;
  // On the byte-level path the binding copies the run itself: data still in it needs no copy here.
  const inRun = fromRun && dp >= IN_PTR && (load<u32>(st, O_MODE) & M_IN_SPANS) != 0;
  if (outFits((inRun ? 0 : dl) + (sameType ? 0 : tl) + il + 8)) {
    let d0: i32, d1: i32;
    if (inRun) {
      w0 |= SF_IN;
      d0 = <i32>(dp - IN_PTR);
      d1 = d0 + <i32>dl;
    } else {
      d0 = <i32>outPos();
      d1 = <i32>emitData(dp, dl);
    }
    const t0 = <i32>emit(0, 0);
    const t1 = tl != 0 && !sameType ? <i32>emit(tp, tl) : t0;
    const i1 = <i32>emit(ip, il);
    record(w0, d0, d1, t0, t1, t1, i1, ds);
  } else {
    // unlikely: an event larger than OUT (the batch is empty): hand over its buffers' bytes
    rawUsed = true;
    w0 |= SF_RAW | (dataAscii ? SF_DA : 0) | ((f & A_TYPE) == 0 ? SF_TA : 0) | ((f & A_IDS) == 0 ? SF_IA : 0);
    record(w0, <i32>dp, <i32>(dp + dl), <i32>tp, <i32>(tp + tl), <i32>ip, <i32>(ip + il), ds);
  }
  bSetLen(st, B_DATA, 0);
  bSetLen(st, B_TYPE, 0);
  setFl(st, f & ~(A_DATA | A_TYPE));
}

/** A comment's text [v, b). */
function comment(st: usize, v: usize, b: usize, nonAscii: bool): void {
  const n = b - v;
  if (outFits(n + 8)) {
    const c0 = <i32>emit(0, 0);
    record(K_COMMENT, c0, <i32>emit(v, n), 0, 0, 0, 0);
  } else {
    rawUsed = true;
    record(K_COMMENT | SF_RAW | (nonAscii ? 0 : SF_DA), <i32>v, <i32>b, 0, 0, 0, 0);
  }
}

/** One complete line [a, b), contiguous in the run or in LINE. False on a limit error. */
function sseLine(st: usize, a: usize, b: usize, fromLine: bool): bool {
  const f = fl(st);
  const nonAscii = fromLine ? (f & A_LINE) != 0 : (f & L_RUNASCII) == 0;
  if (a == b) {
    dispatch(st);
    return true;
  }
  // The common case first: "data:" at the start of the line.
  if (isDataField(a, b)) {
    let v = a + 5;
    if (v < b && load<u8>(v) == C_SPACE) v++;
    return dataAppend(st, v, b - v, true, nonAscii, fromLine);
  }
  if (load<u8>(a) == C_COLON) {
    if (load<u32>(st, O_MODE) & M_COMMENTS) {
      let v = a + 1;
      if (v < b && load<u8>(v) == C_SPACE) v++;
      // a comment that is listened to counts its text while it is read (it may be held in LINE)
      if (held(st, !fromLine) + (b - v) > <usize>load<u32>(st, O_MAX)) return limitHit();
      comment(st, v, b, nonAscii);
    }
    return true;
  }
  let c = a;
  while (c < b && load<u8>(c) != C_COLON) c++;
  let v = c;
  if (c < b) {
    v = c + 1;
    if (v < b && load<u8>(v) == C_SPACE) v++;
  }
  const name = c - a;
  setFl(st, f | S_INEVENT);
  if (name == 4) {
    if (load<u32>(a) == W_DATA) return dataAppend(st, v, b - v, true, nonAscii, fromLine);
  } else if (name == 5) {
    const w = load<u32>(a);
    const last = load<u8>(a, 4);
    if (w == W_EVEN && last == C_T) {
      if (!setBuf(st, B_TYPE, v, b - v, fromLine)) return false;
      setFl(st, nonAscii ? fl(st) | A_TYPE : fl(st) & ~A_TYPE);
    } else if (w == W_RETR && last == C_Y) {
      // counted while read, as when the line is held in LINE
      if (held(st, !fromLine) + (b - v) > <usize>load<u32>(st, O_MAX)) return limitHit();
      if (v < b) {
        let r: f64 = 0;
        let q = v;
        while (q < b) {
          const d = <u32>load<u8>(q) - 48;
          if (d > 9) break;
          r = r * 10 + <f64>d;
          q++;
        }
        if (q == b) {
          store<f64>(st, r, O_RETRY);
          retrySeen = true;
        }
      }
    }
  } else if (name == 2) {
    if (load<u16>(a) == H_ID) {
      // counted while read (held in LINE, its NUL may come last), ignored or not
      if (held(st, !fromLine) - bLen(st, B_ID) + (b - v) > <usize>load<u32>(st, O_MAX)) return limitHit();
      let q = v;
      while (q < b && load<u8>(q) != C_NUL) q++;
      if (q == b) {
        if (!setBuf(st, B_ID, v, b - v, fromLine)) return false;
        const g = fl(st) | S_ID_SET;
        setFl(st, nonAscii ? g | A_ID : g & ~A_ID);
      }
    }
  }
  return true;
}

/** Byte i of a line that is LINE's ll bytes at lp, then bytes of the run at p. */
// @ts-ignore: decorator
@inline function lineByte(lp: usize, ll: usize, p: usize, i: usize): u32 {
  return i < ll ? <u32>load<u8>(lp + i) : <u32>load<u8>(p + i - ll);
}

/**
 * Where the colon of a line is among its first 6 bytes (the line being LINE's ll bytes at lp and
 * then n bytes at p), or −1: a field name not complete yet.
 */
function colonAt(lp: usize, ll: usize, p: usize, n: usize): isize {
  const len = ll + n;
  const lim = len < 6 ? len : 6;
  for (let c: usize = 0; c < lim; c++) if (lineByte(lp, ll, p, c) == C_COLON) return <isize>c;
  return -1;
}

/**
 * What the event holds with a line that is held in LINE (an event, id, retry or comment line, or
 * a field name not complete yet) when it is LINE's ll bytes at lp and then n bytes at p: the
 * event's buffers, less the one an event or id line replaces, plus the line's value (after the
 * colon and one space). The same sum that the line, read whole, is checked with (sseLine), so
 * that the limit does not depend on where the stream was cut; field names and ignored lines are
 * never counted.
 */
function heldWith(st: usize, lp: usize, ll: usize, p: usize, n: usize): usize {
  const c = colonAt(lp, ll, p, n);
  if (c < 0) return held(st, false);
  const len = ll + n;
  let v = <usize>c + 1;
  if (v < len && lineByte(lp, ll, p, v) == C_SPACE) v++;
  let h = held(st, false) + (len - v);
  if (c == 5 && lineByte(lp, ll, p, 0) == C_E) h -= bLen(st, B_TYPE); // event (else retry)
  else if (c == 2) h -= bLen(st, B_ID); // id
  return h;
}

/**
 * A line held in LINE whose field name is not complete yet (a prefix of data, event, id or
 * retry, no colon) takes just enough bytes of the run [p, end) to decide what it is; when it
 * turns out to be data or an ignored field, that class is applied (its value moves to DATA, or it
 * is dropped). Returns the bytes it took, or −1 on a limit error.
 */
function decideHeld(st: usize, p: usize, end: usize, comments: bool): isize {
  const lp = bPtr(st, B_LINE), ll = bLen(st, B_LINE);
  if (ll >= 6 || colonAt(lp, ll, 0, 0) >= 0) return 0;
  let take: usize = 6 - ll;
  if (take > end - p) take = end - p;
  if (take == 0) return 0;
  bAppend(st, B_LINE, p, take, NO_LIMIT); // a field name: at most 6 bytes in all
  if ((fl(st) & L_RUNASCII) == 0) setFl(st, fl(st) | A_LINE);
  const np = bPtr(st, B_LINE), nl = bLen(st, B_LINE);
  const k = classify(np, nl, comments);
  if (k != C_RAW && !applyClass(st, k, np, nl, (fl(st) & A_LINE) != 0, true)) return -1;
  return <isize>take;
}

/** Whether [a, a + n) (n ≤ 5) is a prefix of data, event, id or retry. */
function knownPrefix(a: usize, n: usize): bool {
  for (let k: usize = 0; k < 4; k++) {
    const name = NAMES + k * 5;
    let ok = true;
    for (let i: usize = 0; i < n; i++) {
      if (load<u8>(a + i) != load<u8>(name + i)) { ok = false; break; }
    }
    if (ok) return true;
  }
  return false;
}

const C_RAW: i32 = -1;
const C_SKIP: i32 = -2;
const C_SKIP_FIELD: i32 = -3;

/**
 * Class of an unfinished line [a, a + n), n ≥ 1: C_RAW (hold it in LINE), C_SKIP/C_SKIP_FIELD
 * (ignore the rest of the line), or a data field: (value offset << 1) | (1 if a space may follow).
 */
function classify(a: usize, n: usize, comments: bool): i32 {
  if (load<u8>(a) == C_COLON) return comments ? C_RAW : C_SKIP;
  const lim = n < 6 ? n : 6;
  let c: usize = 0;
  while (c < lim && load<u8>(a + c) != C_COLON) c++;
  if (c == lim) {
    if (n >= 6) return C_SKIP_FIELD;
    return knownPrefix(a, n) ? C_RAW : C_SKIP_FIELD;
  }
  if (c == 4 && load<u32>(a) == W_DATA) {
    if (c + 1 == n) return <i32>((c + 1) << 1) | 1;
    return <i32>((load<u8>(a + c + 1) == C_SPACE ? c + 2 : c + 1) << 1);
  }
  if (c == 5 && ((load<u32>(a) == W_EVEN && load<u8>(a, 4) == C_T) || (load<u32>(a) == W_RETR && load<u8>(a, 4) == C_Y))) return C_RAW;
  if (c == 2 && load<u16>(a) == H_ID) return C_RAW;
  return C_SKIP_FIELD;
}

/** Applies class k to the unfinished line [a, a + n) (in the run, or LINE when fromLine). */
function applyClass(st: usize, k: i32, a: usize, n: usize, nonAscii: bool, fromLine: bool): bool {
  let f = fl(st) & ~P_MASK;
  if (k == C_SKIP || k == C_SKIP_FIELD) {
    if (k == C_SKIP_FIELD) f |= S_INEVENT;
    if (fromLine) { bSetLen(st, B_LINE, 0); f &= ~A_LINE; }
    setFl(st, f | P_SKIP);
    return true;
  }
  if (k == C_RAW) {
    if (!fromLine) {
      const max = <usize>load<u32>(st, O_MAX);
      if (heldWith(st, a, n, 0, 0) > max) return limitHit();
      bAppend(st, B_LINE, a, n, max);
      if (nonAscii) f |= A_LINE;
    }
    setFl(st, f | P_RAW);
    return true;
  }
  const v = <usize>(k >> 1);
  setFl(st, f | ((k & 1) != 0 ? P_DATA_SP : P_DATA));
  if (!dataAppend(st, a + v, n - v, false, nonAscii, fromLine)) return false;
  if (fromLine) {
    bSetLen(st, B_LINE, 0);
    setFl(st, fl(st) & ~A_LINE);
  }
  return true;
}

/** The unfinished line [p, end) at the end of the run. */
function ssePartial(st: usize, p: usize, end: usize): bool {
  if (p == end) return true;
  const f = fl(st);
  const nonAscii = (f & L_RUNASCII) == 0;
  let ps = f & P_MASK;
  const comments = (load<u32>(st, O_MODE) & M_COMMENTS) != 0;
  if (ps != 0) curRel = load<i32>(st, O_LINEREL);
  if (ps == P_DATA_SP) {
    if (load<u8>(p) == C_SPACE) p++;
    setFl(st, (f & ~P_MASK) | P_DATA);
    return dataAppend(st, p, end - p, false, nonAscii, true);
  }
  if (ps == P_DATA) return dataAppend(st, p, end - p, false, nonAscii, true);
  if (ps == P_SKIP) return true;
  if (ps == 0) {
    store<i32>(st, <i32>(p - IN_PTR), O_LINEREL);
    curRel = <i32>(p - IN_PTR);
    if (end - p >= 6 && isDataField(p, end)) {
      // the common case: the start of a data value
      const v = load<u8>(p, 5) == C_SPACE ? p + 6 : p + 5;
      setFl(st, (f & ~P_MASK) | P_DATA);
      return dataAppend(st, v, end - v, false, nonAscii, false);
    }
    return applyClass(st, classify(p, end - p, comments), p, end - p, nonAscii, false);
  }
  // P_RAW: a field name not complete yet is decided first; then grow LINE and look again
  curRel = load<i32>(st, O_LINEREL);
  const took = decideHeld(st, p, end, comments);
  if (took < 0) return false;
  p += <usize>took;
  if ((fl(st) & P_MASK) != P_RAW) return ssePartial(st, p, end);
  const max = <usize>load<u32>(st, O_MAX);
  if (heldWith(st, bPtr(st, B_LINE), bLen(st, B_LINE), p, end - p) > max) return limitHit();
  bAppend(st, B_LINE, p, end - p, max);
  if (nonAscii) setFl(st, fl(st) | A_LINE);
  const lp = bPtr(st, B_LINE), ll = bLen(st, B_LINE);
  const k = classify(lp, ll, comments);
  if (k == C_RAW) return true;
  return applyClass(st, k, lp, ll, (fl(st) & A_LINE) != 0, true);
}

/** A line that ends at nl, starting at p (or earlier, per the P_* state). */
function sseComplete(st: usize, p: usize, nl: usize): bool {
  let f = fl(st);
  let ps = f & P_MASK;
  if (ps == 0) {
    curRel = <i32>(p - IN_PTR);
    return sseLine(st, p, nl, false);
  }
  curRel = load<i32>(st, O_LINEREL);
  if (ps == P_RAW) {
    // a field name not complete yet: decide it first (it may be data or an ignored field)
    const took = decideHeld(st, p, nl, (load<u32>(st, O_MODE) & M_COMMENTS) != 0);
    if (took < 0) return false;
    p += <usize>took;
    f = fl(st);
    ps = f & P_MASK;
  }
  setFl(st, f & ~P_MASK);
  const nonAscii = (f & L_RUNASCII) == 0;
  if (ps == P_DATA || ps == P_DATA_SP) {
    if (ps == P_DATA_SP && p < nl && load<u8>(p) == C_SPACE) p++;
    return dataAppend(st, p, nl - p, true, nonAscii, true);
  }
  if (ps == P_SKIP) return true;
  // P_RAW
  const max = <usize>load<u32>(st, O_MAX);
  if (heldWith(st, bPtr(st, B_LINE), bLen(st, B_LINE), p, nl - p) > max) return limitHit();
  bAppend(st, B_LINE, p, nl - p, max);
  if (nonAscii) setFl(st, fl(st) | A_LINE);
  const lp = bPtr(st, B_LINE);
  const ok = sseLine(st, lp, lp + bLen(st, B_LINE), true);
  bSetLen(st, B_LINE, 0);
  setFl(st, fl(st) & ~A_LINE);
  return ok;
}

function status(st: usize, s: i32): i32 {
  materialize(st);
  if (retrySeen) s |= R_RETRY;
  return finish(s);
}

/** Where the line after the line end at nl begins (a CRLF is one line end; stays within the run). */
// @ts-ignore: decorator
@inline function lineAfter(nl: usize, end: usize): usize {
  const q = nl + 1;
  return load<u8>(nl) == C_CR && q < end && load<u8>(q) == C_LF ? q + 1 : q;
}

/** True when a blank line starts at q, in the run (its line end is at q). */
// @ts-ignore: decorator
@inline function blankAt(q: usize, end: usize): bool {
  return q < end && (load<u8>(q) == C_LF || load<u8>(q) == C_CR);
}

/**
 * Records an event whose data is [v, v + n) of the run, with word 0 `w0` and no type or ID span:
 * on the byte-level path in place (SF_IN), else copied into OUT. False when it does not fit OUT
 * (nothing is recorded; the general path reports it).
 */
function recordFromRun(st: usize, w0: i32, v: usize, n: usize): bool {
  if (v >= IN_PTR && (load<u32>(st, O_MODE) & M_IN_SPANS) != 0) {
    const o = <i32>outPos();
    record(w0 | SF_IN, <i32>(v - IN_PTR), <i32>(v + n - IN_PTR), o, o, o, o, <i32>(v - IN_PTR));
    return true;
  }
  if (!outFits(n + 8)) return false;
  const d0 = <i32>outPos();
  const d1 = <i32>emitData(v, n);
  record(w0, d0, d1, d1, d1, d1, d1, <i32>(v - IN_PTR));
  return true;
}

/** True when the event's type (TYPE, not empty) is the type of the last event that had one. */
function typeRepeats(st: usize, f: u32): bool {
  const tl = bLen(st, B_TYPE);
  return (f & S_TPREV) != 0 && bLen(st, B_TPREV) == tl && sameBytes(bPtr(st, B_TPREV), bPtr(st, B_TYPE), tl);
}

/**
 * Records the event whose line starts at p, of the type of the event before it, with data
 * [v, v + n) in the run, and leaves the stream between events (the caller checked the limit).
 */
// @ts-ignore: decorator
@inline function sameTypeEvent(st: usize, p: usize, v: usize, n: usize, f: u32): bool {
  if (!recordFromRun(st, K_EVENT | SF_TYPE | SF_SAME_TYPE, v, n)) return false;
  curRel = <i32>(p - IN_PTR);
  setFl(st, f & ~(S_INEVENT | A_DATA | A_TYPE));
  return true;
}

/**
 * The common typed event, all in the run: "event: T" at [p, nl) with T the type of the last event
 * that had one, then one "data:" line, then a blank line; no new ID, nothing held. Reported as
 * the general path would (same type, no span), without copying T or the data into buffers.
 * Returns where the run goes on, or 0 when the lines are not of that shape (nothing was changed).
 */
function typedEvent(st: usize, p: usize, nl: usize, end: usize, f: u32): usize {
  let tv = p + 6;
  if (tv < nl && load<u8>(tv) == C_SPACE) tv++;
  const tl = nl - tv;
  if (tl == 0 || bLen(st, B_TPREV) != tl || !sameBytes(bPtr(st, B_TPREV), tv, tl)) return 0;
  const q = lineAfter(nl, end);
  if (!isDataField(q, end)) return 0;
  const nl2 = nextNl(q, end);
  if (nl2 == end) return 0;
  const r = lineAfter(nl2, end);
  if (!blankAt(r, end)) return 0;
  let v = q + 5;
  if (v < nl2 && load<u8>(v) == C_SPACE) v++;
  const n = nl2 - v;
  if (held(st, true) + tl + n + 1 > <usize>load<u32>(st, O_MAX)) return 0; // the general path reports it
  if (!sameTypeEvent(st, p, v, n, f)) return 0;
  return pastTerminator(st, r, end);
}

/** A run's batch, empty, and the module's per-run state. */
// @ts-ignore: decorator
@inline function runBatch(st: usize, mode: u32): void {
  batchStart(st, mode, A_ANY);
  rawUsed = false;
  retrySeen = false;
  hasPend = false;
}

/** Frames the run from p. */
function sseRun(st: usize, p: usize): i32 {
  const end = <usize>load<u32>(st, O_END);
  runBatch(st, load<u32>(st, O_MODE));
  nlStart();
  while (true) {
    if (nrec == REC_MAX) {
      store<u32>(st, <u32>p, O_POS);
      return status(st, R_MORE);
    }
    const nl = nextNl(p, end);
    if (nl == end) {
      // (with an invalid byte pending, the run ends at it: an event that passed its limit before
      // it is the first error, as when the same bytes come a few at a time)
      if (!ssePartial(st, p, end)) return status(st, R_LIMIT);
      break;
    }
    if (nrec != 0 && !outFits((nl - p) + held(st, true) + bLen(st, B_IDS) + 16)) {
      store<u32>(st, <u32>p, O_POS);
      return status(st, R_MORE);
    }
    const f = fl(st);
    if ((f & P_MASK) == 0 && isDataField(p, nl) && !hasPend && bLen(st, B_DATA) == 0) {
      // The common case: an event's only data line, then the blank line that dispatches it,
      // both in the run. Reported straight from the run (see hasPend), with no second search.
      const q = lineAfter(nl, end);
      if (blankAt(q, end)) {
        let v = p + 5;
        if (v < nl && load<u8>(v) == C_SPACE) v++;
        curRel = <i32>(p - IN_PTR);
        const n = nl - v;
        if ((f & S_ID_SET) == 0 && bLen(st, B_TYPE) == 0 && held(st, true) + n + 1 <= <usize>load<u32>(st, O_MAX)) {
          // no type and no new ID: the event is its data span alone
          if (recordFromRun(st, K_EVENT, v, n)) {
            setFl(st, f & ~(S_INEVENT | A_DATA | A_TYPE));
          } else {
            // larger than OUT: the general dispatch reports it raw
            dataAppend(st, v, n, true, (f & L_RUNASCII) == 0, false);
            dispatch(st);
          }
        } else {
          if (!dataAppend(st, v, n, true, (f & L_RUNASCII) == 0, false)) return status(st, R_LIMIT);
          dispatch(st);
        }
        p = pastTerminator(st, q, end);
        if (rawUsed) {
          store<u32>(st, <u32>p, O_POS);
          return status(st, R_MORE);
        }
        continue;
      }
    }
    // (not tried near the run's end, where the data line rarely ends too: small reads would pay
    // for the look ahead and then frame the lines again)
    if ((f & (P_MASK | S_ID_SET)) == 0 && (f & S_TPREV) != 0 && end - nl >= 64 && nl - p >= 6 && load<u32>(p) == W_EVEN
      && load<u16>(p, 4) == H_T_COLON && !hasPend && bLen(st, B_DATA) == 0 && bLen(st, B_TYPE) == 0) {
      const q = typedEvent(st, p, nl, end, f);
      if (q != 0) {
        p = q;
        continue;
      }
    }
    if ((f & P_MASK) == P_DATA && (f & S_ID_SET) == 0 && (bLen(st, B_TYPE) == 0 || typeRepeats(st, f))) {
      // The end of a data value begun in an earlier run, then the blank line: an event whose
      // data is DATA + [p, nl), written to OUT from both without appending to DATA first. Its
      // type, if any, is the one of the event before (a typed stream read in small pieces).
      const q = lineAfter(nl, end);
      const dl = bLen(st, B_DATA), n = nl - p;
      const w0 = bLen(st, B_TYPE) == 0 ? K_EVENT : K_EVENT | SF_TYPE | SF_SAME_TYPE;
      if (blankAt(q, end)
        && held(st, false) + n + 1 <= <usize>load<u32>(st, O_MAX) && outFits(dl + n + 8)) {
        if (p == IN_PTR && dl <= IN_JOIN && (load<u32>(st, O_MODE) & M_IN_SPANS) != 0) {
          // Byte-level path, the run's first line: DATA goes right before the window, and the
          // event is one span there. The binding copies the RES[7] bytes before the window (a
          // power of two, from a view it keeps; zeros before DATA, never another stream's bytes),
          // then the chunk.
          const head: usize = dl <= 64 ? 64 : <usize>1 << (32 - clz(<u32>dl - 1));
          zero16(IN_PTR - head, head);
          copy(IN_PTR - dl, bPtr(st, B_DATA), dl);
          res(FR_JOIN, <i32>head);
          const o = <i32>outPos();
          record(w0 | SF_IN, -<i32>dl, <i32>n, o, o, o, o, load<i32>(st, O_DSTART));
        } else {
          const d0 = <i32>outPos();
          const d1 = <i32>emitData2(bPtr(st, B_DATA), dl, p, n);
          record(w0, d0, d1, d1, d1, d1, d1, load<i32>(st, O_DSTART));
        }
        bSetLen(st, B_DATA, 0);
        bSetLen(st, B_TYPE, 0);
        setFl(st, f & ~(P_MASK | S_INEVENT | A_DATA | A_TYPE));
        p = pastTerminator(st, q, end);
        continue;
      }
    }
    if (!sseComplete(st, p, nl)) return status(st, R_LIMIT);
    p = pastTerminator(st, nl, end);
    if (rawUsed) {
      store<u32>(st, <u32>p, O_POS);
      return status(st, R_MORE);
    }
  }
  if (fl(st) & L_ERRPEND) {
    res(FR_ERR, load<i32>(st, O_ERR));
    return status(st, R_UTF8);
  }
  return status(st, 0);
}

/**
 * For a read framed in one step (repeatEvent, oneDataEvent, dataEvents, sseEventsAt), validated whole: what
 * ssePush and runBegin do first (a change to either belongs here too: runBegin itself would carry
 * and skip a BOM, which such a read never needs, at a cost the one-event read feels). `f`: the
 * flags before.
 */
// @ts-ignore: decorator
@inline function oneReadBegin(st: usize, len: usize, mode: u32, f: u32): void {
  bShrink(st, B_LINE);
  bShrinkIdle(st, B_DATA, len);
  res(FR_JOIN, 0);
  store<u32>(st, mode, O_MODE);
  rebase(st);
  store<u32>(st, <u32>len, O_LASTLEN);
  store<u32>(st, <u32>(IN_PTR + len), O_END);
  setFl(st, (f & ~L_RUNASCII) | (runAscii ? L_RUNASCII : 0));
}

/** A read of data events framed in one step (oneDataEvent, dataEvents, sseEventsAt) begins: what sseRun's common case does before its records. */
// @ts-ignore: decorator
@inline function eventsBegin(st: usize, len: usize, mode: u32, f: u32): void {
  oneReadBegin(st, len, mode, f);
  runBatch(st, mode);
  curRel = 0;
}

/** ... and ends, its records written: the stream between events, the status 0. */
// @ts-ignore: decorator
@inline function eventsEnd(st: usize): void {
  setFl(st, fl(st) & ~(S_INEVENT | A_DATA | A_TYPE));
  status(st, 0);
}

/** For a read framed in one step: no carried bytes, the BOM settled, no line, data or type held. */
// @ts-ignore: decorator
@inline function nothingHeld(st: usize): bool {
  return carried(st) == 0 && (flags(st) & F_BOM_DONE) != 0 && (bLen(st, B_LINE) | bLen(st, B_DATA) | bLen(st, B_TYPE)) == 0;
}

/**
 * Whether a one-step read's data of `n` bytes is sure to fit OUT whatever the batch's encoding:
 * in place on the byte-level path; on the string path at two bytes a byte in OUT's lower half, the
 * least room a batch has (a split batch's middles take up to two bytes a byte in its upper half).
 * A larger one goes the general way, which records what does not fit as a raw span.
 */
// @ts-ignore: decorator
@inline function oneStepFits(mode: u32, n: usize): bool {
  return (mode & M_IN_SPANS) != 0 || (n << 1) + 64 <= MIDS_OFF;
}

/**
 * The usual read of a typed stream: the whole read is one event of the type of the event before
 * it ("event: T", one data line, a blank line; LF line ends), at an event's start with nothing
 * held or carried. Framed here as sseRun frames it (one record: its data in place on the
 * byte-level path, copied into OUT on the string path when sure to fit; the same state after),
 * with none of the run's machinery. False, with nothing changed, for any other read.
 */
function repeatEvent(st: usize, len: usize, mode: u32): bool {
  const f = fl(st);
  if (len < 16 || (f & (P_MASK | S_ID_SET | S_INEVENT | S_TPREV | L_CR | L_ERRPEND)) != S_TPREV) return false;
  if (!nothingHeld(st)) return false;
  const end = IN_PTR + len;
  if (load<u32>(IN_PTR) != W_EVEN || load<u16>(IN_PTR, 4) != H_T_COLON || load<u16>(end - 2) != LF_LF) return false;
  let tv = IN_PTR + 6;
  if (load<u8>(tv) == C_SPACE) tv++;
  const tl = bLen(st, B_TPREV);
  const q = tv + tl + 1; // the data line
  if (q + 5 > end - 2 || load<u8>(q - 1) != C_LF || !isDataField(q, end) || !sameBytes(bPtr(st, B_TPREV), tv, tl)) return false;
  let v = q + 5;
  if (load<u8>(v) == C_SPACE) v++;
  const nl = end - 2;
  if (v > nl || !noLineEnd(v, nl)) return false;
  const n = nl - v;
  if (held(st, true) + tl + n + 1 > <usize>load<u32>(st, O_MAX) || !oneStepFits(mode, n) || !validRun(IN_PTR, end, mode)) return false; // the general path reports it
  oneReadBegin(st, len, mode, f);
  // what sseRun and typedEvent do
  runBatch(st, mode);
  sameTypeEvent(st, IN_PTR, v, n, fl(st));
  status(st, 0);
  return true;
}

/** Events a read framed in one step by dataEvents may hold, and their data spans (v, n) meanwhile. */
const STEP_EVENTS: usize = 16;
const STEP_SPANS: usize = memory.data(<i32>STEP_EVENTS * 8);

/**
 * The usual read of an untyped stream (OpenAI's, Gemini's, the events the core writes from AWS's
 * event stream): the whole read is one or a few events of one data line each ("data: X", then a
 * blank line; LF LF or CRLF CRLF after each, and no other line end), at an event's start with
 * nothing held or carried, and no type or ID set. Framed here as sseRun's common case frames them
 * (one record each; the same state after), with none of the run's machinery: the events are found
 * first and recorded only when the whole read is of that shape. False, with nothing changed, for
 * any other read. Called by ssePush only for a read of 8 bytes or more that begins with "data"
 * while the stream's flags `f` have no line state, event, CR or pending error (it checks the rest).
 */
function oneDataEvent(st: usize, len: usize, mode: u32, f: u32): bool {
  if ((f & S_ID_SET) != 0 || load<u8>(IN_PTR, 4) != C_COLON) return false;
  if (!nothingHeld(st)) return false;
  const end = IN_PTR + len;
  let nl = end - 2;
  if (load<u16>(nl) != LF_LF) {
    if (load<u32>(end - 4) != CRLF_CRLF) return false;
    nl = end - 4;
  }
  let v = IN_PTR + 5;
  if (v < nl && load<u8>(v) == C_SPACE) v++;
  if (v > nl) return false;
  const first = lineEndIn(v, nl);
  if (first != nl) return dataEvents(st, len, mode, f, v, first);
  const n = nl - v;
  if (held(st, true) + n + 1 > <usize>load<u32>(st, O_MAX) || !oneStepFits(mode, n) || !validRun(IN_PTR, end, mode)) return false; // the general path reports it
  eventsBegin(st, len, mode, f);
  recordFromRun(st, K_EVENT, v, n);
  eventsEnd(st);
  return true;
}

/**
 * oneDataEvent's read of a few such events: the first one's data value [v, nl) ends before the
 * read's end. Each event is found first (at most STEP_EVENTS), and they are recorded only when
 * the whole read is of that shape.
 */
function dataEvents(st: usize, len: usize, mode: u32, f: u32, v: usize, nl: usize): bool {
  const end = IN_PTR + len;
  const max = <usize>load<u32>(st, O_MAX);
  const h = held(st, true);
  let k: usize = 0;
  let total: usize = 0;
  while (true) {
    let q = nl + 2;
    if (load<u16>(nl) != LF_LF) {
      if (load<u32>(nl) != CRLF_CRLF) return false;
      q = nl + 4;
    }
    const n = nl - v;
    if (q > end || h + n + 1 > max) return false; // the general path reports an event past the limit
    const e = STEP_SPANS + (k << 3);
    store<u32>(e, <u32>v);
    store<u32>(e, <u32>n, 4);
    total += n;
    k++;
    if (q == end) break;
    if (k == STEP_EVENTS || end - q < 8 || load<u32>(q) != W_DATA || load<u8>(q, 4) != C_COLON) return false;
    v = q + 5;
    if (load<u8>(v) == C_SPACE) v++;
    nl = lineEndIn(v, end);
  }
  if (!oneStepFits(mode, total + (k << 3)) || !validRun(IN_PTR, end, mode)) return false; // the general path reports it
  eventsBegin(st, len, mode, f);
  for (let e = STEP_SPANS, last = STEP_SPANS + (k << 3); e < last; e += 8) recordFromRun(st, K_EVENT, <usize>load<u32>(e), <usize>load<u32>(e, 4));
  eventsEnd(st);
  return true;
}

/**
 * A read of `k` whole events laid end to end in the `len` bytes at `at`, outside the input window,
 * each `data: `, its value and LF LF, with the JSON reader's slack after them (esModelPush: the
 * events of Bedrock's messages, written into the event stream framer's event buffer).
 * `spans` holds each value's offset from `at` and its length (none has a line break). Framed as
 * dataEvents frames the same bytes in the input window, with each value recorded where it lies
 * (SF_RAW | SF_SLACK; its DSTART relative to `at`, as to the window there): with no copy into the
 * window and no scan for line ends. False, with nothing changed, for a read that path would not
 * frame so (more than STEP_EVENTS events, anything held, an ID set, a value past the limit, bytes
 * that are not UTF-8): the caller copies it into the window and pushes it.
 */
export function sseEventsAt(st: usize, at: usize, len: usize, spans: usize, k: usize, mode: u32): bool {
  const f = fl(st);
  if (k == 0 || k > STEP_EVENTS || (mode & M_IN_SPANS) == 0 || (f & (P_MASK | S_INEVENT | L_CR | L_ERRPEND | S_ID_SET)) != 0 || !nothingHeld(st)) return false;
  const max = <usize>load<u32>(st, O_MAX);
  const h = held(st, true);
  const last = spans + (k << 3);
  for (let e = spans; e < last; e += 8) if (h + <usize>load<u32>(e, 4) + 1 > max) return false; // (the window's path reports it)
  if (!validRun(at, at + len, mode)) return false;
  eventsBegin(st, len, mode, f);
  const o = <i32>outPos();
  for (let e = spans; e < last; e += 8) {
    const v = <usize>load<u32>(e);
    const p = <i32>(at + v);
    record(K_EVENT | SF_RAW | SF_SLACK, p, p + load<i32>(e, 4), o, o, o, o, <i32>v);
  }
  eventsEnd(st);
  return true;
}

/** Parses carry + the `len` bytes at IN_PTR. Returns status bits (R_*). */
export function ssePush(st: usize, len: usize, mode: u32): i32 {
  // a read that is one whole event (the usual read of a live stream): tried only where the read
  // starts at an event's start with one of the two fields they begin with
  const f0 = fl(st);
  if (len >= 8 && (f0 & (P_MASK | S_INEVENT | L_CR | L_ERRPEND)) == 0) {
    const w = load<u32>(IN_PTR);
    if (w == W_EVEN ? repeatEvent(st, len, mode) : w == W_DATA && oneDataEvent(st, len, mode, f0)) return 0;
  }
  bShrink(st, B_LINE);
  bShrinkIdle(st, B_DATA, len);
  res(FR_JOIN, 0); // the join (see sseRun): none yet
  const p = runBegin(st, len, mode);
  // The common small read: more of a data value, no line end in the run. Appended to DATA with
  // none of the batch machinery.
  const f = fl(st);
  if ((f & (P_MASK | L_ERRPEND)) == P_DATA) {
    const end = <usize>load<u32>(st, O_END);
    const n = end - p;
    const max = <usize>load<u32>(st, O_MAX);
    if (noLineEnd(p, end) && held(st, false) + n <= max) {
      if (n != 0) {
        bAppend(st, B_DATA, p, n, max);
        if ((f & L_RUNASCII) == 0) setFl(st, f | A_DATA);
      }
      res(FR_STATUS, 0);
      res(FR_NREC, 0);
      return 0;
    }
  }
  return sseRun(st, p);
}

/** Continues a run after R_MORE. */
export function sseMore(st: usize): i32 {
  return sseRun(st, <usize>load<u32>(st, O_POS));
}

/** The reconnection time from the last valid retry field, −1 if none. */
export function sseRetry(st: usize): f64 {
  return load<f64>(st, O_RETRY);
}

/** A new stream (connection) on the record: keeps the last event ID string and the retry time. */
export function sseReset(st: usize): void {
  newStream(st, true);
  modelStateFree(st);
}

function newStream(st: usize, shrink: bool): void {
  frameResetCommon(st, shrink);
  bSetLen(st, B_DATA, 0);
  if (shrink) {
    bShrink(st, B_DATA);
    store<u32>(st, 0, O_IDLE);
  }
  bSetLen(st, B_TYPE, 0);
  bSetLen(st, B_ID, 0);
  bAppend(st, B_ID, bPtr(st, B_IDS), bLen(st, B_IDS), NO_LIMIT);
  const f = fl(st);
  setFl(st, (f & ~A_ID) | ((f & A_IDS) != 0 ? A_ID : 0));
}

/**
 * End of stream. A held incomplete character is R_TRUNC (strict) or U+FFFD. R_TRUNCATED when the
 * stream ended inside a line or an event; with M_EOF_DISPATCH that event is dispatched. Then a
 * new stream begins (as sseReset).
 */
export function sseFlush(st: usize, mode: u32): i32 {
  store<u32>(st, mode, O_MODE);
  rebase(st); // the offsets of the flush are relative to the end of the stream
  rawUsed = false;
  retrySeen = false;
  hasPend = false;
  const pending = carried(st);
  if (pending != 0) {
    if (isFatal(st)) {
      res(FR_ERR, -<i32>pending);
      batchStart(st, mode, A_ANY);
      const s = finish(R_TRUNC);
      newStream(st, true);
      return s;
    }
    // the incomplete character becomes U+FFFD: it continues the unfinished line
    const p = runStart(st);
    setCarried(st, 0);
    setFl(st, (fl(st) & ~L_RUNASCII) | L_DIRTY);
    if (!ssePartial(st, p, IN_PTR)) {
      batchStart(st, mode, A_ANY);
      return finish(R_LIMIT);
    }
  }
  batchStart(st, mode, A_ANY);
  const f = fl(st);
  const truncated = (f & (P_MASK | S_INEVENT)) != 0;
  let s: i32 = truncated ? R_TRUNCATED : 0;
  if (truncated && (mode & M_EOF_DISPATCH) != 0) {
    let ok = true;
    if ((f & P_MASK) != 0) ok = sseComplete(st, IN_PTR, IN_PTR);
    if (ok) dispatch(st);
    else s |= R_LIMIT;
  }
  s = status(st, s);
  newStream(st, false);
  return s;
}
