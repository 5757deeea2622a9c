// The realm's one core and its memory: a budget for what all streams hold in it. WebAssembly
// memory grows and never shrinks, so one burst of large events would keep the process large for
// good; a gateway sets a budget, past which the push that would need more throws CoreMemoryError
// (before anything grows) and only that stream stops.
import { byteLimitOption } from './options.js';
import { getCore } from './wasm.js';

let limit: number | undefined;

/**
 * Caps the bytes that all decoders of this realm together may hold in the core (their state
 * records and buffers: unfinished lines and events). A push that would take more throws
 * `CoreMemoryError` with `budget` set, and that decoder stops until `reset()`; the others go on.
 * `undefined` removes the cap (the default: the engine's limit, 4 GiB, applies).
 */
export function setCoreMemoryLimit(bytes: number | undefined): void {
  const value = bytes === undefined ? undefined : byteLimitOption(bytes, 'bytes', 'setCoreMemoryLimit', 0, 2 ** 32 - 1);
  getCore().x.heapLimit(value ?? 0);
  limit = value;
}

/** The budget set with {@link setCoreMemoryLimit}, or undefined. */
export function coreMemoryLimit(): number | undefined {
  return limit;
}

/** Bytes the decoders of this realm hold in the core now (what the budget counts). */
export function coreMemoryUsed(): number {
  return getCore().x.heapInUse() >>> 0;
}
