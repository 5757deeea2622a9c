// The numeric contract between the core and bindings/wasm.ts: fixed windows in linear memory,
// one result record, and per-stream state records on the heap. No strings cross it.
//
// Linear memory (addresses grow downwards in this picture):
//   static data (tables)
//   IN window   [IN_HEAD bytes of headroom | IN_CAP bytes the caller writes | IN_SLACK zero bytes]
//               A stream's carried bytes (an incomplete UTF-8 tail, at most 3) are copied into the
//               headroom right before the window, so the core sees carry + chunk as one run.
//   OUT window  OUT_CAP bytes: UTF-16 text (2 bytes per unit, never more units than input bytes)
//               or span records, written by the core, read by JS.
//   RES record  RES_WORDS i32 results of the last call.
//   heap        state records and arenas (TLSF, `heap.alloc`/`heap.free`).

/** Bytes JS may write into the input window per call; larger chunks go in window-sized pieces. */
export const IN_CAP: usize = 65536;
/**
 * Bytes before the window where the SSE byte-level path may place the first part of an event's
 * data (held from earlier chunks), so that it and the rest, in the chunk, are one span.
 */
export const IN_JOIN: usize = 4096;
/** Headroom before the window: the join area, then the carried bytes (UTF-8 tail ≤ 3). */
export const IN_HEAD: usize = IN_JOIN + 64;
/** Zeroed slack after the window: SIMD loads of a final partial block never read foreign bytes. */
export const IN_SLACK: usize = 64;
/** UTF-16 output: one unit per input byte at most, plus the carry, plus slack for 16-byte stores. */
export const OUT_CAP: usize = (IN_CAP + IN_HEAD) * 2 + 128;
export const RES_WORDS: usize = 16;

const inBase: usize = memory.data(<i32>(IN_HEAD + IN_CAP + IN_SLACK), 16);
export const IN_PTR: usize = inBase + IN_HEAD;
export const OUT_PTR: usize = memory.data(<i32>OUT_CAP, 16);
export const RES_PTR: usize = memory.data(<i32>(RES_WORDS * 4), 16);

/** Writes result word `i` of the last call. */
// @ts-ignore: decorator
@inline export function res(i: usize, value: i32): void {
  store<i32>(RES_PTR + (i << 2), value);
}

/** Allocates a zeroed record of `size` bytes on the heap. */
export function allocZeroed(size: usize): usize {
  const p = heap.alloc(size);
  memory.fill(p, 0, size);
  return p;
}

/**
 * The runtime's abort (only the allocator can reach it, when memory cannot grow): a trap, which
 * JS sees as a RuntimeError, so that the module needs no imports. Wired in asconfig.json ("use").
 */
export function coreAbort(msg: usize, file: usize, line: u32, col: u32): void {
  unreachable();
}
