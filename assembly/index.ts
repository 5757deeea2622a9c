// The module's exports: the numeric ABI that bindings/wasm.ts mirrors. Bytes only, no strings.
import { IN_CAP, IN_PTR, OUT_CAP, OUT_PTR, RES_PTR } from './abi';

export { utf8New, utf8Push, utf8Pending, utf8Reset } from './decoder';

/** Address and size of the windows and of the result record. */
export function inPtr(): usize { return IN_PTR; }
export function inCap(): usize { return IN_CAP; }
export function outPtr(): usize { return OUT_PTR; }
export function outCap(): usize { return OUT_CAP; }
export function resPtr(): usize { return RES_PTR; }
/** 1 in the SIMD build: the tests assert which kernel they run. */
export function simd(): i32 { return ASC_FEATURE_SIMD ? 1 : 0; }

/** Returns a state record (of any decoder kind) to the heap. */
export function stateFree(st: usize): void { heap.free(st); }

// Layer 2: frames (lines, NDJSON, Server-Sent Events)
export {
  linesNew, linesPush, linesMore, linesFlush, linesReset, framePending, frameRetained, frameFree, rawUtf16, rawFree,
} from './lines';
export { sseNew, ssePush, sseMore, sseFlush, sseReset, sseRetry } from './sse';
import { SPAN_PTR } from './lines';
/** Address of the span records the framers write. */
export function spanPtr(): usize { return SPAN_PTR; }
export { jsonProgPtr, jsonRecPtr, jsonRead, jsonReadIn, jsonErrorAt, jsonUnescape, jsonUtf16 } from './json';
