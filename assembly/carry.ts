// Per-stream UTF-8 state shared by every decoder kind: the carried incomplete tail and the BOM.
//
// Layout at the start of every state record (the lines and SSE records extend it):
//   +0  u8[4]  carried bytes (an incomplete sequence, at most 3)
//   +4  u8     number of carried bytes
//   +5  u8     flags (F_*)
//   +6  u16    reserved
import { IN_PTR } from './abi';
import { incompleteTail } from './utf8';

export const F_FATAL: u8 = 1;      // strict: the first bad sequence stops the stream
export const F_IGNORE_BOM: u8 = 2; // keep a leading U+FEFF as text
export const F_BOM_DONE: u8 = 4;   // the first character of the stream has been seen
export const F_FAILED: u8 = 8;     // a fatal error happened; cleared by reset
export const UTF8_STATE_BYTES: usize = 8;

/** Start of the run: the carried bytes are copied into the headroom before the input window. */
// @ts-ignore: decorator
@inline export function runStart(st: usize): usize {
  const n = <usize>load<u8>(st, 4);
  const start = IN_PTR - n;
  // at most 3 bytes: in place (V8 11 makes memory.copy a call out of the module)
  for (let i: usize = 0; i < n; i++) store<u8>(start + i, load<u8>(st + i));
  return start;
}

/**
 * Skips a leading BOM once per stream. A run that is still a proper prefix of EF BB BF is left
 * alone (it is an incomplete tail and will be carried), so a BOM split across chunks is found.
 */
export function skipBom(st: usize, start: usize, end: usize): usize {
  let flags = load<u8>(st, 5);
  if (flags & F_BOM_DONE) return start;
  const n = end - start;
  if (n == 0) return start;
  if (flags & F_IGNORE_BOM) {
    store<u8>(st, flags | F_BOM_DONE, 5);
    return start;
  }
  const b0 = load<u8>(start);
  if (n >= 3) {
    store<u8>(st, flags | F_BOM_DONE, 5);
    if (b0 == 0xEF && load<u8>(start, 1) == 0xBB && load<u8>(start, 2) == 0xBF) return start + 3;
    return start;
  }
  if (b0 == 0xEF && (n == 1 || load<u8>(start, 1) == 0xBB)) return start; // maybe a BOM: wait
  store<u8>(st, flags | F_BOM_DONE, 5);
  return start;
}

/** Stores the incomplete tail of [start, end) as the stream's carry; returns where it begins. */
export function keepTail(st: usize, start: usize, end: usize): usize {
  const tail = incompleteTail(start, end);
  const n = end - tail;
  store<u8>(st, <u8>n, 4);
  // the 4 carry bytes at once; those past `end` (read from the window's slack or beyond) are
  // never used, as the count says how many are carried
  store<u32>(st, load<u32>(tail));
  return tail;
}
