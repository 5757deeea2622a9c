// Layer 2 (frames): line framing over carry + chunk (the frame kit, frames.ts): LF, CRLF and lone CR, strict UTF-8,
// the unfinished line held in the stream's LINE buffer (appended to, never re-scanned), and complete
// lines copied into the OUT window as one text run per call (ASCII bytes, UTF-16 or UTF-8) with one
// line record (LINE_REC_WORDS) per line.
import {
  ENC_UTF8, FR_ERR, FR_ENC, IN_PTR, FR_RAW_ASCII, FR_RAW_PTR, LINE_REC_WORDS, LR_END, LR_START, R_LIMIT, R_MORE, R_RAW,
  R_TRUNC, R_UTF8, SPAN_BYTES, SPAN_PTR,
} from './abi';
import { modelStateFree } from './model-state';
import { carried, isFatal, setFlags } from './carry';
import { NO_LIMIT, bAppend, bFree, bPtr, bLen, bSetLen } from './buffers';
import {
  A_LINE, B_LINE, FRAME_STATE_BYTES, L_DIRTY, L_ERRPEND, L_RUNASCII, O_ERR, O_END, O_FL, O_LASTLEN, O_LINEREL, O_MAX,
  O_MODE, O_POS, bShrink, batchStart, emit, finish, frameResetCommon, nextNl, nlStart, nrec, outFits, outUsed,
  pastTerminator, runBegin, setNrec, setOutUsed,
} from './frames';
import { allocZeroed, res } from './runtime';

const LINE_REC_BYTES: usize = <usize>LINE_REC_WORDS << 2;
const LINE_REC_MAX: usize = SPAN_BYTES / LINE_REC_BYTES;

export function linesNew(flags: u8, max: u32): usize {
  const st = allocZeroed(FRAME_STATE_BYTES);
  setFlags(st, flags);
  store<u32>(st, max, O_MAX);
  return st;
}

// @ts-ignore: decorator
@inline function lineRecord(end: usize, rel: i32): void {
  const r = SPAN_PTR + nrec * LINE_REC_BYTES;
  store<i32>(r, <i32>end, LR_END << 2);
  store<i32>(r, rel, LR_START << 2);
  setNrec(nrec + 1);
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
      // the unfinished line (with an invalid byte pending, the run ends at it: a line that passed
      // its limit before it is the first error, as when the same bytes come a few at a time)
      const n = end - p;
      if (n == 0) break;
      if (held == 0) store<i32>(st, <i32>(p - IN_PTR), O_LINEREL);
      if (held + n > max) {
        res(FR_ERR, load<i32>(st, O_LINEREL));
        return finish(R_LIMIT);
      }
      if (load<u32>(st, O_FL) & L_ERRPEND) break;
      bAppend(st, B_LINE, p, n, max);
      if ((load<u32>(st, O_FL) & L_RUNASCII) == 0) store<u32>(st, load<u32>(st, O_FL) | A_LINE, O_FL);
      break;
    }
    const n = held + (nl - p);
    const rel = held != 0 ? load<i32>(st, O_LINEREL) : <i32>(p - IN_PTR);
    if (n > max) {
      res(FR_ERR, rel);
      return finish(R_LIMIT);
    }
    if (nrec == LINE_REC_MAX || !outFits(n)) {
      if (nrec != 0) {
        store<u32>(st, <u32>p, O_POS);
        return finish(R_MORE);
      }
      // unlikely: one line longer than OUT: hand it over as raw UTF-8 from LINE
      bAppend(st, B_LINE, p, nl - p, max);
      res(FR_RAW_PTR, <i32>bPtr(st, B_LINE));
      lineRecord(n, rel);
      bSetLen(st, B_LINE, 0);
      const fl = load<u32>(st, O_FL);
      store<u32>(st, fl & ~A_LINE, O_FL);
      const q = pastTerminator(st, nl, end);
      store<u32>(st, <u32>q, O_POS);
      res(FR_RAW_ASCII, (fl & A_LINE) != 0 || (fl & L_RUNASCII) == 0 ? 0 : 1);
      setOutUsed(n);
      const status = finish(R_RAW | R_MORE);
      res(FR_ENC, ENC_UTF8);
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
    res(FR_ERR, load<i32>(st, O_ERR));
    return finish(R_UTF8);
  }
  return finish(0);
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
 * A held incomplete character is U+FFFD, or in strict mode R_TRUNC (FR_ERR = −its bytes) after
 * the line before it.
 */
export function linesFlush(st: usize, mode: u32): i32 {
  store<u32>(st, mode, O_MODE);
  const pending = carried(st);
  let fl = load<u32>(st, O_FL);
  // strict: an incomplete character at the end is an error, reported after the line before it
  const trunc = pending != 0 && isFatal(st);
  if (pending != 0 && !trunc) {
    if (bLen(st, B_LINE) == 0) store<i32>(st, load<i32>(st, O_LASTLEN) - <i32>pending, O_LINEREL);
    bAppend(st, B_LINE, st, pending, NO_LIMIT);
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
      res(FR_RAW_PTR, <i32>bPtr(st, B_LINE));
      res(FR_RAW_ASCII, (fl & A_LINE) != 0 ? 0 : 1);
      lineRecord(held, rel);
      setOutUsed(held);
      status = R_RAW;
    }
  }
  if (trunc) {
    status |= R_TRUNC;
    res(FR_ERR, -<i32>pending);
  }
  finish(status);
  if (status & R_RAW) res(FR_ENC, ENC_UTF8);
  frameResetCommon(st, false);
  store<u32>(st, 0, O_FL);
  return status;
}

/** A new stream on the same record. */
export function linesReset(st: usize): void {
  frameResetCommon(st, true);
  modelStateFree(st);
  store<u32>(st, 0, O_FL);
}

