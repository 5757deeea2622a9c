// Layer 1 (bytes): per-stream UTF-8 state shared by every decoder kind: the carried incomplete tail and the BOM.
//
// Layout at the start of every state record (the frame kit's record extends it):
//   +ST_CARRY   u8[4]  carried bytes (an incomplete sequence, at most 3)
//   +ST_NCARRY  u8     number of carried bytes
//   +ST_FLAGS   u8     flags (F_*)
//   +6          u16    reserved
import { F_BOM_DONE, F_FATAL, F_IGNORE_BOM, IN_PTR, ST_CARRY, ST_FLAGS, ST_NCARRY } from './abi';
import { incompleteTail } from './utf8';

// @ts-ignore: decorator
@inline export function carried(st: usize): usize { return <usize>load<u8>(st, ST_NCARRY); }
// @ts-ignore: decorator
@inline export function setCarried(st: usize, n: usize): void { store<u8>(st, <u8>n, ST_NCARRY); }
// @ts-ignore: decorator
@inline export function flags(st: usize): u32 { return <u32>load<u8>(st, ST_FLAGS); }
// @ts-ignore: decorator
@inline export function setFlags(st: usize, f: u32): void { store<u8>(st, <u8>f, ST_FLAGS); }
// @ts-ignore: decorator
@inline export function isFatal(st: usize): bool { return (flags(st) & F_FATAL) != 0; }

/** Start of the run: the carried bytes are copied into the headroom before the input window. */
// @ts-ignore: decorator
@inline export function runStart(st: usize): usize {
  const n = carried(st);
  const start = IN_PTR - n;
  // at most 3 bytes: in place (V8 11 makes memory.copy a call out of the module)
  for (let i: usize = 0; i < n; i++) store<u8>(start + i, load<u8>(st + ST_CARRY + i));
  return start;
}

/**
 * Skips a leading BOM once per stream. A run that is still a proper prefix of EF BB BF is left
 * alone (it is an incomplete tail and will be carried), so a BOM split across chunks is found.
 */
export function skipBom(st: usize, start: usize, end: usize): usize {
  const f = flags(st);
  if (f & F_BOM_DONE) return start;
  const n = end - start;
  if (n == 0) return start;
  if (f & F_IGNORE_BOM) {
    setFlags(st, f | F_BOM_DONE);
    return start;
  }
  const b0 = load<u8>(start);
  if (n >= 3) {
    setFlags(st, f | F_BOM_DONE);
    if (b0 == 0xEF && load<u8>(start, 1) == 0xBB && load<u8>(start, 2) == 0xBF) return start + 3;
    return start;
  }
  if (b0 == 0xEF && (n == 1 || load<u8>(start, 1) == 0xBB)) return start; // maybe a BOM: wait
  setFlags(st, f | F_BOM_DONE);
  return start;
}

/** Stores the incomplete tail of [start, end) as the stream's carry; returns where it begins. */
export function keepTail(st: usize, start: usize, end: usize): usize {
  const tail = incompleteTail(start, end);
  setCarried(st, end - tail);
  // the 4 carry bytes at once; those past `end` (read from the window's slack or beyond) are
  // never used, as the count says how many are carried
  store<u32>(st + ST_CARRY, load<u32>(tail));
  return tail;
}

/** A new stream on the record: no carry, the BOM looked for again. */
export function carryReset(st: usize): void {
  setCarried(st, 0);
  setFlags(st, flags(st) & ~F_BOM_DONE);
}
