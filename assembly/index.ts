// The module's exports: the contract (every constant of abi.ts, as a global) and the streams'
// functions. Bytes only, no strings.
export * from './abi';
import { UTF8_STATE_BYTES } from './abi';
import { freeRecord } from './runtime';

/** 1 in the SIMD build: the tests assert which kernel they run. */
export function simd(): i32 { return ASC_FEATURE_SIMD ? 1 : 0; }

/** Returns a UTF-8 decoder's state record to the heap. */
export function stateFree(st: usize): void { freeRecord(st, UTF8_STATE_BYTES); }

// The heap's budget, for all streams of the realm
export { heapLimit, heapInUse, heapBudgetHit } from './runtime';

// Layer 1: bytes
export { utf8New, utf8Push, utf8Pending, utf8Reset } from './decoder';

// Layer 2: frames (lines, NDJSON, Server-Sent Events) on the frame kit
export { framePending, frameRetained, frameRelease, frameFree, rawUtf16, rawFree } from './frames';
export { linesNew, linesPush, linesMore, linesFlush, linesReset } from './lines';
export { sseNew, ssePush, sseMore, sseFlush, sseReset, sseRetry } from './sse';
export { crc32, esNew, esPush, esMore, esHeld, esReset, esFree, esClear, esEvents, esData, esModelPush, esIsChunk, esChunkBytes, b64Decode } from './eventstream';

// Layer 3's report where the runtime has no native SHA-256: the hash's block function
export { sha256Blocks } from './sha256';

// Layer 4: the JSON reader (each event's data, for the model streams)
export { jsonRead, jsonReadIn, jsonErrorAt, jsonUnescape, jsonUtf16 } from './json';
export { sameSpan, sseWrite } from './writer';
export {
  modelDocs, modelMore, modelPush, modelTextBytes, modelTextChars, modelGather, modelTextSpans, modelTextLog, modelTextDrop, modelKept, modelKeepFree, modelScratch, modelScratchFree,
  modelUnescape, modelValid, modelCheckArea, modelSetCall, modelPart, modelHeld,
} from './model';
