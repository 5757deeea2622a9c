// Every layer's growable byte buffers: (ptr, len, cap) triples inside a state record (a frame
// stream's LINE, DATA, TYPE, … in frames.ts; a model stream's KEEP, REASON and ARGS in
// model-state.ts), grown on the heap within the heap's budget and given back whole; and the short
// copies and zeroing of the hot path.
import { release, reserve } from './runtime';

/** A buffer limit that is never reached (the buffers the stream's limit does not cover). */
export const NO_LIMIT: usize = 0x7FFFFFFF;

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
@inline export function bRoom(st: usize, b: usize, need: usize, limit: usize): usize {
  let ptr = <usize>load<u32>(st + b);
  const cap = <usize>load<u32>(st + b, 8);
  if (need > cap) {
    let nc: usize = cap < 48 ? 48 : cap < 65536 ? cap + (cap >> 1) : cap << 1;
    if (nc < need) nc = need;
    if (nc > limit) nc = need > limit ? need : limit;
    reserve(nc - cap);
    ptr = ptr == 0 ? heap.alloc(nc) : heap.realloc(ptr, nc);
    store<u32>(st + b, <u32>ptr);
    store<u32>(st + b, <u32>nc, 8);
  }
  return ptr;
}

/** Buffer b's block with room for `need` bytes in all (its length unchanged). */
export function bEnsure(st: usize, b: usize, need: usize): usize {
  return bRoom(st, b, need, NO_LIMIT);
}

/** Appends n bytes at src to buffer b (see bRoom for `limit`). */
export function bAppend(st: usize, b: usize, src: usize, n: usize, limit: usize): void {
  if (n == 0) return;
  const len = <usize>load<u32>(st + b, 4);
  const ptr = bRoom(st, b, len + n, limit);
  copy(ptr + len, src, n);
  store<u32>(st + b, <u32>(len + n), 4);
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
  if (ptr != 0) {
    heap.free(ptr);
    release(<usize>load<u32>(st + b, 8));
  }
  store<u32>(st + b, 0);
  store<u32>(st + b, 0, 4);
  store<u32>(st + b, 0, 8);
}
