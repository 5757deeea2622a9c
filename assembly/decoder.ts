// Layer 1 (bytes): the UTF-8 decoder stream: carry + chunk in, text out as a span of the input window (ASCII or
// validated UTF-8) or of the output window (UTF-16). The result record: U8_* words (abi.ts).
import {
  ENC_LATIN1, ENC_UTF16, ENC_UTF8, IN_PTR, M_UTF8_OUT, M_VALIDATE, OUT_PTR, U8_ERR, U8_KIND, U8_LEN, U8_PTR,
  UTF8_ERROR, UTF8_STATE_BYTES,
} from './abi';
import { carried, carryReset, isFatal, keepTail, runStart, setCarried, setFlags, skipBom } from './carry';
import { allocZeroed, res } from './runtime';
import { decodeWhatwg, errAt, runAscii, transcode, validate } from './utf8';

export function utf8New(flags: u8): usize {
  const st = allocZeroed(UTF8_STATE_BYTES);
  setFlags(st, flags);
  return st;
}

/**
 * Decodes carry + the `len` bytes at IN_PTR. Returns the kind of the result record.
 * On a bad sequence in strict mode the text before it is reported with UTF8_ERROR added.
 */
export function utf8Push(st: usize, len: usize, mode: u32): i32 {
  const end = IN_PTR + len;
  let start = runStart(st);
  start = skipBom(st, start, end);
  const body = keepTail(st, start, end);
  if (validate(start, body)) {
    if (mode & M_VALIDATE) return report(ENC_LATIN1, start, 0);
    if (runAscii) return report(ENC_LATIN1, start, <i32>(body - start));
    if (mode & M_UTF8_OUT) return report(ENC_UTF8, start, <i32>(body - start));
    return report(ENC_UTF16, OUT_PTR, <i32>transcode(start, body, OUT_PTR));
  }
  // unlikely: a bad sequence somewhere in the run
  if (isFatal(st)) {
    const units = decodeWhatwg(start, body, OUT_PTR, true);
    const at = errAt;
    setCarried(st, 0);
    res(U8_ERR, <i32>(at - IN_PTR));
    if (mode & M_UTF8_OUT) return report(ENC_UTF8 + UTF8_ERROR, start, <i32>(at - start));
    return report(ENC_UTF16 + UTF8_ERROR, OUT_PTR, <i32>units);
  }
  if (mode & M_UTF8_OUT) return report(ENC_UTF8, start, <i32>(body - start)); // the runtime's decoder replaces
  return report(ENC_UTF16, OUT_PTR, <i32>decodeWhatwg(start, body, OUT_PTR, false));
}

// @ts-ignore: decorator
@inline function report(kind: i32, ptr: usize, len: i32): i32 {
  res(U8_KIND, kind);
  res(U8_PTR, <i32>ptr);
  res(U8_LEN, len);
  return kind;
}

/** Number of carried bytes (0..3). */
export function utf8Pending(st: usize): u32 {
  return <u32>carried(st);
}

/** Starts a new stream on the same record: drops the carry and the BOM flag. */
export function utf8Reset(st: usize): void {
  carryReset(st);
}
