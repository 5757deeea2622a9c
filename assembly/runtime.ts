// Every layer: what every stream kind of the core uses besides the contract: the result record's words, a
// byte comparison, the heap's budget, zeroed state records on the heap, and the runtime's abort.
import { RES_PTR } from './abi';

/** Writes result word `i` of the last call. */
// @ts-ignore: decorator
@inline export function res(i: i32, value: i32): void {
  store<i32>(RES_PTR + (<usize>i << 2), value);
}

/**
 * True when the n bytes at a and b are equal, compared a word at a time and never read past either
 * end (memory.compare goes byte by byte unless both have the same alignment).
 */
// @ts-ignore: decorator
@inline export function sameBytes(a: usize, b: usize, n: usize): bool {
  while (n >= 8) {
    if (load<u64>(a) != load<u64>(b)) return false;
    a += 8;
    b += 8;
    n -= 8;
  }
  if (n >= 4) {
    if (load<u32>(a) != load<u32>(b)) return false;
    a += 4;
    b += 4;
    n -= 4;
  }
  while (n != 0) {
    if (load<u8>(a) != load<u8>(b)) return false;
    a++;
    b++;
    n--;
  }
  return true;
}

// The budget: bytes of heap blocks the streams of the realm hold (state records, buffers, the
// raw scratch), counted as they are taken and given back. WebAssembly memory never shrinks, so a
// gateway caps it before a burst of large events grows the process for good.
let heapUsed: usize = 0;
let heapBudget: usize = <usize>-1;
let budgetHit: bool = false;

/** Whether `n` more bytes fit the budget (for what is worth keeping only when it does). */
// @ts-ignore: decorator
@inline export function budgetFits(n: usize): bool {
  return n <= heapBudget - heapUsed;
}

/**
 * Takes `n` more bytes of the budget before a block is allocated or grown. Past the budget the
 * call traps (the bindings turn it into CoreMemoryError) before anything changed.
 */
export function reserve(n: usize): void {
  if (!budgetFits(n)) { // unlikely
    budgetHit = true;
    unreachable();
  }
  heapUsed += n;
}

/** Gives `n` bytes of the budget back, after a block was freed or shrunk. */
// @ts-ignore: decorator
@inline export function release(n: usize): void {
  heapUsed -= n;
}

/** Sets the budget in bytes (0: none). */
export function heapLimit(bytes: usize): void {
  heapBudget = bytes == 0 ? <usize>-1 : bytes;
}

/** Bytes of the budget in use. */
export function heapInUse(): usize {
  return heapUsed;
}

/** 1 when the last trap was the budget (then cleared), 0 when memory could not grow. */
export function heapBudgetHit(): i32 {
  const hit = budgetHit;
  budgetHit = false;
  return hit ? 1 : 0;
}

/** Allocates a zeroed record of `size` bytes on the heap. */
export function allocZeroed(size: usize): usize {
  reserve(size);
  const p = heap.alloc(size);
  memory.fill(p, 0, size);
  return p;
}

/** Frees a state record of `size` bytes. */
export function freeRecord(st: usize, size: usize): void {
  heap.free(st);
  release(size);
}

/**
 * The runtime's abort (only the allocator can reach it, when memory cannot grow): a trap, which
 * JS sees as a RuntimeError, so that the module needs no imports. Wired in asconfig.json ("use").
 */
export function coreAbort(msg: usize, file: usize, line: u32, col: u32): void {
  unreachable();
}
