// Vectors of one byte repeated, read from memory. Written as constants (`i8x16.splat(10)`, which
// Binaryen makes a `v128.const`), they are built again by V8 at each use, in every turn of a loop:
// 3 to 5 instructions a constant, where a load from here is one. The kernels' other vectors
// (the UTF-8 and base64 tables) are read from memory for the same reason.

/** Byte b repeated 16 times at BYTES + 16·b, for every b: filled at instantiation (SIMD build). */
const BYTES: usize = memory.data(256 * 16, 16);

function fill(): void {
  for (let b: i32 = 0; b < 256; b++) v128.store(BYTES + (<usize>b << 4), i8x16.splat(<i8>b));
}
if (ASC_FEATURE_SIMD) fill();

/** Byte `b` (0..255) in every lane, from memory. */
// @ts-ignore: decorator
@inline export function bytes16(b: u32): v128 {
  return v128.load(BYTES + (<usize>(b & 0xFF) << 4));
}
