// Layer 4 (model streams): the core's writer, bytes for a client, written into one block that the next call reuses (JS
// copies them out once). The model streams' relay writes its events here, and the SSE writer
// below writes a byte reader's events in the wire format.
import {
  EMIT_CAP, EV_DATA0, EV_DATA1, EV_ID, EV_ID_CHANGED, EV_TYPE, EV_WORDS, MDR_EMIT_LEN, MDR_EMIT_PTR, MDR_SCRATCH, SW_STR_PTR,
} from './abi';
import { copy } from './buffers';
import { release, res, reserve, sameBytes } from './runtime';
import { bytes16 } from './vectors';

// A static area, or a heap block for the call when a call writes more (given back after it).
const EMIT_STATIC: usize = memory.data(EMIT_CAP, 16);
let emitPtr: usize = EMIT_STATIC;
let emitCap: usize = <usize>EMIT_CAP;
let emitLen: usize = 0;

/** A new run of bytes for a client (the last one is overwritten). */
// @ts-ignore: decorator
@inline export function emitReset(): void {
  emitLen = 0;
}

/** Where the run starts, how long it is, and the bytes of heap it holds (0 in the static area). */
// @ts-ignore: decorator
@inline export function emitStart(): usize { return emitPtr; }
// @ts-ignore: decorator
@inline export function emitLength(): usize { return emitLen; }
// @ts-ignore: decorator
@inline export function emitCapacity(): usize { return emitPtr == EMIT_STATIC ? 0 : emitCap; }

/** Room for `n` more bytes: the address to write them at (then `emitted(n)`). Grows the block by 2×. */
export function emitRoom(n: usize): usize {
  const need = emitLen + n;
  if (need > emitCap) {
    let nc: usize = emitCap << 1;
    if (nc < need) nc = need;
    reserve(nc);
    const np = heap.alloc(nc);
    copy(np, emitPtr, emitLen);
    if (emitPtr != EMIT_STATIC) {
      heap.free(emitPtr);
      release(emitCap);
    }
    emitPtr = np;
    emitCap = nc;
  }
  return emitPtr + emitLen;
}

/** `n` bytes were written at the address `emitRoom` gave. */
// @ts-ignore: decorator
@inline export function emitted(n: usize): void {
  emitLen += n;
}

/** Writes `n` bytes from `src`. */
// @ts-ignore: decorator
@inline export function emit(src: usize, n: usize): void {
  copy(emitRoom(n), src, n);
  emitLen += n;
}

/** Writes the byte `a`. */
// @ts-ignore: decorator
@inline export function emit1(a: u32): void {
  store<u8>(emitRoom(1), <u8>a);
  emitLen += 1;
}

/** Writes the bytes `a`, `b`. */
// @ts-ignore: decorator
@inline export function emit2(a: u32, b: u32): void {
  store<u16>(emitRoom(2), <u16>(a | (b << 8)));
  emitLen += 2;
}

/** Writes `data: `, the `n` bytes at `p`, and `lfs` line feeds (1 or 2). */
export function emitData(p: usize, n: usize, lfs: usize): void {
  const o = emitRoom(n + 8);
  store<u32>(o, 0x61746164); // "data"
  store<u16>(o, 0x203A, 4);   // ": "
  copy(o + 6, p, n);
  store<u16>(o + 6 + n, 0x0A0A); // (room for two; the second counts only when asked for)
  emitted(n + 6 + lfs);
}

/** Address of the first LF in [p, end), or end: 16 bytes at a time (SIMD build) or 8 (SWAR). */
// @ts-ignore: decorator
@inline function findLf(p: usize, end: usize): usize {
  if (ASC_FEATURE_SIMD) {
    const lf = bytes16(0x0A);
    while (p + 16 <= end) {
      const m = i8x16.bitmask(i8x16.eq(v128.load(p), lf));
      if (m != 0) return p + <usize>ctz(m);
      p += 16;
    }
  } else {
    while (p + 8 <= end) {
      const x = load<u64>(p) ^ 0x0A0A0A0A0A0A0A0A;
      const t = (x - 0x0101010101010101) & ~x & 0x8080808080808080;
      if (t != 0) return p + <usize>(ctz(t) >> 3);
      p += 8;
    }
  }
  while (p < end && load<u8>(p) != 0x0A) p++;
  return p;
}

/** Writes an event's data [p, p + n) as the wire format has it: a `data: ` line per LF-separated line, then a blank line. */
export function emitEvent(p: usize, n: usize): void {
  const end = p + n;
  for (;;) {
    const q = findLf(p, end);
    emitData(p, q - p, 1);
    if (q >= end) break;
    p = q + 1;
  }
  emit1(0x0A);
}

/** Gives a heap block back (the writer writes in its static area again). */
export function emitTrim(): void {
  if (emitPtr != EMIT_STATIC) {
    heap.free(emitPtr);
    release(emitCap);
    emitPtr = EMIT_STATIC;
    emitCap = <usize>EMIT_CAP;
  }
  emitLen = 0;
}

/** Writes the string `i` of the strings area (its bytes, at its offset). */
// @ts-ignore: decorator
@inline function emitString(i: i32): void {
  const e = SW_STR_PTR + (<usize>i << 3);
  emit(SW_STR_PTR + <usize>load<u32>(e), <usize>load<u32>(e, 4));
}

/**
 * A byte reader's `n` events in the SSE wire format (SseByteEvents.encode): for each, `event: T`
 * when its type is not `message` (its string's length is 0), `id: I` when it changed the last
 * event ID, one `data: ` line per LF-separated line of its data, and the blank line. `data` is
 * the reader's bytes, `table` its event table (EV_WORDS words per event), and the strings area
 * (SW_STR_PTR) holds the batch's types, then its IDs (`nTypes` of them first). The run's address
 * and length are in MDR_EMIT_PTR and MDR_EMIT_LEN; returns the length.
 */
export function sseWrite(n: i32, data: usize, table: usize, nTypes: i32): usize {
  emitReset();
  for (let i = 0; i < n; i++) {
    const w = table + (<usize>(i * EV_WORDS) << 2);
    const type = load<i32>(w, EV_TYPE << 2);
    if (load<u32>(SW_STR_PTR + (<usize>type << 3), 4) != 0) {
      const o = emitRoom(7);
      store<u32>(o, 0x6E657665); // "even"
      store<u16>(o, 0x3A74, 4);   // "t:"
      store<u8>(o, 0x20, 6);      // " "
      emitted(7);
      emitString(type);
      emit1(0x0A);
    }
    if (load<i32>(w, EV_ID_CHANGED << 2) != 0) {
      const o = emitRoom(4);
      store<u32>(o, 0x203A6469); // "id: "
      emitted(4);
      emitString(nTypes + load<i32>(w, EV_ID << 2));
      emit1(0x0A);
    }
    const d0 = <usize>load<i32>(w, EV_DATA0 << 2);
    emitEvent(data + d0, <usize>load<i32>(w, EV_DATA1 << 2) - d0);
  }
  res(MDR_EMIT_PTR, <i32>emitPtr);
  res(MDR_EMIT_LEN, <i32>emitLen);
  res(MDR_SCRATCH, emitPtr != EMIT_STATIC ? 1 : 0);
  return emitLen;
}

/**
 * Whether [a, a + n) and [b, b + n) hold the same bytes: a relay's check that what it would write
 * is the input's own bytes (then it hands back the input), without a call out of the core.
 */
export function sameSpan(a: usize, b: usize, n: usize): i32 {
  return sameBytes(a, b, n) ? 1 : 0;
}
