// The module's exports: the contract (every constant of abi.ts, as a global) and the streams'
// functions. Bytes only, no strings.
export * from './abi';

/** 1 in the SIMD build: the tests assert which kernel they run. */
export function simd(): i32 { return ASC_FEATURE_SIMD ? 1 : 0; }

/** Returns a state record (of any decoder kind) to the heap. */
export function stateFree(st: usize): void { heap.free(st); }

// Layer 1: bytes
export { utf8New, utf8Push, utf8Pending, utf8Reset } from './decoder';

// Layer 2: frames (lines, NDJSON, Server-Sent Events) on the frame kit
export { framePending, frameRetained, frameFree, rawUtf16, rawFree } from './frames';
export { linesNew, linesPush, linesMore, linesFlush, linesReset } from './lines';
export { sseNew, ssePush, sseMore, sseFlush, sseReset, sseRetry } from './sse';
