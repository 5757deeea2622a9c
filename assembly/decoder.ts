// The UTF-8 decoder stream: carry + chunk in, text out as a span of the input window (ASCII or
// validated UTF-8) or of the output window (UTF-16).
import { IN_PTR, OUT_PTR, res, allocZeroed } from './abi';
import { F_BOM_DONE, F_FAILED, F_FATAL, UTF8_STATE_BYTES, keepTail, runStart, skipBom } from './carry';
import { decodeWhatwg, errAt, runAscii, transcode, validate } from './utf8';

/** What the result record describes (RES[0]); RES[1] = address, RES[2] = length. */
export const K_LATIN1: i32 = 0; // ASCII bytes: length in bytes
export const K_UTF16: i32 = 1;  // UTF-16 units: length in units
export const K_UTF8: i32 = 2;   // validated UTF-8 bytes: length in bytes
/** Added to the kind when a strict stream met a bad sequence: RES[3] = its address − IN_PTR. */
export const K_ERROR: i32 = 4;

/** `push` mode bits. */
export const M_UTF8_OUT: u32 = 1;   // leave valid text as UTF-8 (runtimes without a UTF-16 copy route)
export const M_VALIDATE: u32 = 2;   // validate only: report no text

export function utf8New(flags: u8): usize {
  const st = allocZeroed(UTF8_STATE_BYTES);
  store<u8>(st, flags, 5);
  return st;
}

/**
 * Decodes carry + the `len` bytes at IN_PTR. Returns the kind of the result record.
 * On a bad sequence in strict mode the text before it is reported with K_ERROR added.
 */
export function utf8Push(st: usize, len: usize, mode: u32): i32 {
  const end = IN_PTR + len;
  let start = runStart(st);
  start = skipBom(st, start, end);
  const body = keepTail(st, start, end);
  if (validate(start, body)) {
    if (mode & M_VALIDATE) return report(K_LATIN1, start, 0);
    if (runAscii) return report(K_LATIN1, start, <i32>(body - start));
    if (mode & M_UTF8_OUT) return report(K_UTF8, start, <i32>(body - start));
    return report(K_UTF16, OUT_PTR, <i32>transcode(start, body, OUT_PTR));
  }
  // unlikely: a bad sequence somewhere in the run
  const flags = load<u8>(st, 5);
  if (flags & F_FATAL) {
    const units = decodeWhatwg(start, body, OUT_PTR, true);
    const at = errAt;
    store<u8>(st, flags | F_FAILED, 5);
    store<u8>(st, 0, 4);
    res(3, <i32>(at - IN_PTR));
    if (mode & M_UTF8_OUT) return report(K_UTF8 + K_ERROR, start, <i32>(at - start));
    return report(K_UTF16 + K_ERROR, OUT_PTR, <i32>units);
  }
  if (mode & M_UTF8_OUT) return report(K_UTF8, start, <i32>(body - start)); // the runtime's decoder replaces
  return report(K_UTF16, OUT_PTR, <i32>decodeWhatwg(start, body, OUT_PTR, false));
}

// @ts-ignore: decorator
@inline function report(kind: i32, ptr: usize, len: i32): i32 {
  res(0, kind);
  res(1, <i32>ptr);
  res(2, len);
  return kind;
}

/** Number of carried bytes (0..3). */
export function utf8Pending(st: usize): u32 {
  return load<u8>(st, 4);
}

/** Starts a new stream on the same record: drops the carry, the BOM flag and a failure. */
export function utf8Reset(st: usize): void {
  store<u8>(st, 0, 4);
  store<u8>(st, load<u8>(st, 5) & ~(F_BOM_DONE | F_FAILED), 5);
}
