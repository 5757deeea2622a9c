// What every stream kind of the core uses besides the contract: the result record's words,
// zeroed state records on the heap, and the runtime's abort.
import { RES_PTR } from './abi';

/** Writes result word `i` of the last call. */
// @ts-ignore: decorator
@inline export function res(i: i32, value: i32): void {
  store<i32>(RES_PTR + (<usize>i << 2), value);
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
