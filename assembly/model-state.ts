// Layer 4 (model streams): what a model stream holds besides its frame record, in a block of its
// own that the record points to (frames.ts, +144), made the first time it is needed: the stream's
// parts that the core read to the end and JS has not taken yet, and the call they are for. A frame
// stream of layers 2 and 3, and a model stream that has read only text, have none.
//
// Layout of the block:
//   +0  buf  KEEP: a raw model stream's text so far, UTF-16 units, for its report (model.ts)
//   +12 buf  REASON: reasoning of quiet events, JS has not taken it yet (escaped JSON string bodies)
//   +24 buf  ARGS: the current call's argument fragments of quiet events, not taken yet (escaped)
//   +36 i32  the current call's key + 1 (MR_CALL), 0 when there is none
//   +40 u32  bytes of arguments ARGS may still take (the stream's budget, set with the call)
//   +44 buf  TEXT: the UTF-8 of the answer's text since JS last hashed it (ME_TEXT: the report's
//            SHA-256 is of these bytes, not of a string made UTF-8 again; model.ts)
//   +56 u32  the high surrogate escape TEXT's last text ended in, its pair perhaps to come (0: none)
//   +60 buf  LAST: the last object read at the template's MR_LAST rule (its bytes as sent), kept
//            after the stream's end until JS takes it (modelHeld), given back at a failure
import { bAppend, bFree, bLen, bPtr, bSetLen } from './buffers';
import { LAST_CAP } from './abi';
import { allocZeroed, budgetFits, freeRecord, sameBytes } from './runtime';

/** Where a frame stream's record points to its block (frames.ts's layout: layer 4's part, +144). */
export const O_MODEL: usize = 144;

export const MODEL_STATE_BYTES: usize = 72;
export const MS_KEEP: usize = 0;
export const MS_REASON: usize = 12;
export const MS_ARGS: usize = 24;
export const MS_CALL: usize = 36;
export const MS_ARGS_LEFT: usize = 40;
export const MS_TEXT: usize = 44;
export const MS_HIGH: usize = 56;
export const MS_LAST: usize = 60;

/** The stream's block, or 0 when it has none. */
// @ts-ignore: decorator
@inline export function modelState(st: usize): usize {
  return <usize>load<u32>(st, O_MODEL);
}

/** The stream's block, made (zeroed: no call, nothing kept) when it has none. */
export function modelStateOf(st: usize): usize {
  let ms = modelState(st);
  if (ms == 0) {
    ms = allocZeroed(MODEL_STATE_BYTES);
    store<u32>(st, <u32>ms, O_MODEL);
  }
  return ms;
}

/** The key + 1 of the stream's current call (0: none). */
// @ts-ignore: decorator
@inline export function currentCall(st: usize): i32 {
  const ms = modelState(st);
  return ms == 0 ? 0 : load<i32>(ms, MS_CALL);
}

/** Bytes of arguments the core may still keep for the current call. */
// @ts-ignore: decorator
@inline export function argsLeft(st: usize): u32 {
  const ms = modelState(st);
  return ms == 0 ? 0 : load<u32>(ms, MS_ARGS_LEFT);
}

/** Gives the block and its buffers back (a new stream, or the record's end). */
export function modelStateFree(st: usize): void {
  const ms = modelState(st);
  if (ms == 0) return;
  bFree(ms, MS_KEEP);
  bFree(ms, MS_REASON);
  bFree(ms, MS_ARGS);
  bFree(ms, MS_TEXT);
  bFree(ms, MS_LAST);
  freeRecord(ms, MODEL_STATE_BYTES);
  store<u32>(st, 0, O_MODEL);
}

/**
 * After a stream ended or failed: the parts' buffers go back (JS took what they held), and the
 * block too when it holds nothing (no kept text, no call). The text's bytes stay after an end
 * (JS hashes the text it still held back) and go after a failure (JS hashed what it had committed).
 */
export function modelStateRelease(st: usize, failed: bool): void {
  const ms = modelState(st);
  if (ms == 0) return;
  if (bLen(ms, MS_REASON) == 0 || failed) bFree(ms, MS_REASON);
  if (bLen(ms, MS_ARGS) == 0 || failed) bFree(ms, MS_ARGS);
  if (failed) store<u32>(ms, 0, MS_HIGH);
  // (with a surrogate pending the buffer stays, with its room for U+FFFD: the text's end may still be asked for)
  if ((bLen(ms, MS_TEXT) == 0 && load<u32>(ms, MS_HIGH) == 0) || failed) bFree(ms, MS_TEXT);
  if (bLen(ms, MS_LAST) == 0 || failed) bFree(ms, MS_LAST);
  modelStateTrim(st);
}

/** Gives the block back when it holds nothing (no buffer, no call, no surrogate pending). */
export function modelStateTrim(st: usize): void {
  const ms = modelState(st);
  if (ms == 0) return;
  if (load<u32>(ms + MS_KEEP, 8) == 0 && load<u32>(ms + MS_REASON, 8) == 0 && load<u32>(ms + MS_ARGS, 8) == 0 && load<i32>(ms, MS_CALL) == 0
    && load<u32>(ms + MS_TEXT, 8) == 0 && load<u32>(ms, MS_HIGH) == 0 && load<u32>(ms + MS_LAST, 8) == 0) {
    freeRecord(ms, MODEL_STATE_BYTES);
    store<u32>(st, 0, O_MODEL);
  }
}

/** Bytes of heap the block and its buffers take (0 without one). */
export function modelStateRetained(st: usize): u32 {
  const ms = modelState(st);
  if (ms == 0) return 0;
  return <u32>MODEL_STATE_BYTES + load<u32>(ms + MS_KEEP, 8) + load<u32>(ms + MS_REASON, 8) + load<u32>(ms + MS_ARGS, 8) + load<u32>(ms + MS_TEXT, 8)
    + load<u32>(ms + MS_LAST, 8);
}

/** Set by keepLast when the object it keeps is not the one it kept (modelDocs clears it before each event: a quiet event that changed it is not empty). */
export let lastChanged = false;
/** Clears lastChanged (an exported global is read, not written, by the modules that import it). */
export function lastUnchanged(): void { lastChanged = false; }

/**
 * Keeps the n bytes at p as the stream's last MR_LAST object, in place of the one before; one
 * longer than LAST_CAP, or one the heap budget has no room for (a kept object is not worth
 * failing a push for), leaves none.
 */
export function keepLast(st: usize, p: usize, n: usize): void {
  if (n > <usize>LAST_CAP) {
    if (modelState(st) != 0) bSetLen(modelState(st), MS_LAST, 0);
    return;
  }
  const ms = modelStateOf(st);
  // (the object kept already: nothing to copy, and nothing new; another is new running usage)
  if (bLen(ms, MS_LAST) == n && sameBytes(bPtr(ms, MS_LAST), p, n)) return;
  lastChanged = true;
  bSetLen(ms, MS_LAST, 0);
  const cap = <usize>load<u32>(ms + MS_LAST, 8);
  if (n > cap && !budgetFits(n + (n >> 1) + 64)) return;
  bAppend(ms, MS_LAST, p, n, <usize>LAST_CAP);
}
