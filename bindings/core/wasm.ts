// The typed glue over the core's raw exports: one instance per realm, created synchronously on
// first use, its windows and views cached, and the fastest string routes this runtime offers.
import { ABI_VERSION, ENC_LATIN1, ENC_MASK, ENC_UTF16, IN_CAP, M_UTF8_OUT, U8_LEN, U8_PTR } from './generated/abi.js';
import { SCALAR_WASM_BASE64, SIMD_WASM_BASE64 } from './generated/wasm-binaries.js';
import { runtimeName } from './runtime.js';

/**
 * The raw exports of assembly/index.ts: the functions, and every constant of assembly/abi.ts as
 * a global (bindings/generated/abi.ts holds their values; the addresses are read here).
 * Addresses and lengths are byte counts (i32).
 */
export interface CoreExports {
  readonly memory: WebAssembly.Memory;
  readonly ABI_VERSION: WebAssembly.Global;
  readonly IN_PTR: WebAssembly.Global;
  readonly OUT_PTR: WebAssembly.Global;
  readonly RES_PTR: WebAssembly.Global;
  readonly SPAN_PTR: WebAssembly.Global;
  readonly PATCH_PTR: WebAssembly.Global;
  readonly HASH_PTR: WebAssembly.Global;
  readonly JSON_PROG_PTR: WebAssembly.Global;
  readonly MHEAD_PTR: WebAssembly.Global;
  readonly SW_STR_PTR: WebAssembly.Global;
  sseWrite(n: number, data: number, table: number, nTypes: number): number;
  sameSpan(a: number, b: number, n: number): number;
  readonly JSON_REC_PTR: WebAssembly.Global;
  readonly MDOC_PTR: WebAssembly.Global;
  readonly MJREC_PTR: WebAssembly.Global;
  readonly MGATHER_PTR: WebAssembly.Global;
  simd(): number;
  stateFree(st: number): void;
  heapLimit(bytes: number): void;
  heapInUse(): number;
  heapBudgetHit(): number;
  utf8New(flags: number): number;
  utf8Push(st: number, len: number, mode: number): number;
  utf8Pending(st: number): number;
  utf8Reset(st: number): void;
  // Layer 2: frames (assembly/frames.ts, lines.ts, sse.ts)
  linesNew(flags: number, max: number): number;
  linesPush(st: number, len: number, mode: number): number;
  linesMore(st: number): number;
  linesFlush(st: number, mode: number): number;
  linesReset(st: number): void;
  framePending(st: number): number;
  frameRelease(st: number, failed: number): void;
  frameRetained(st: number): number;
  frameFree(st: number): void;
  rawUtf16(ptr: number, len: number, dirty: number): number;
  rawFree(): void;
  sseNew(flags: number, max: number): number;
  ssePush(st: number, len: number, mode: number): number;
  sseMore(st: number): number;
  sseFlush(st: number, mode: number): number;
  sseReset(st: number): void;
  sseRetry(st: number): number;
  // Layer 2: AWS's event stream (assembly/eventstream.ts)
  readonly ES_HDR_PTR: WebAssembly.Global;
  crc32(p: number, n: number, crc: number): number;
  esNew(max: number): number;
  esPush(st: number, len: number): number;
  esMore(st: number): number;
  esHeld(st: number): number;
  esReset(st: number): void;
  esFree(st: number): void;
  esClear(st: number): void;
  esEvents(st: number, from: number, base: number): number;
  esData(st: number, p: number, n: number, at: number): void;
  esModelPush(es: number, len: number, base: number, st: number, mode: number, framing: number, prog: number, t: number, choice: number, emitMode: number, chunks: number): number;
  esIsChunk(p: number, n: number): number;
  esChunkBytes(prog: number, p: number, n: number): number;
  b64Decode(src: number, len: number, dst: number): number;
  // Layer 3: SHA-256's block function (assembly/sha256.ts), for the report without a native hash
  sha256Blocks(st: number, p: number, n: number): void;
  // Layer 4: the JSON reader (assembly/json.ts)
  jsonRead(prog: number, p: number, len: number, out: number, maxRecs: number): number;
  jsonReadIn(prog: number, len: number): number;
  jsonErrorAt(): number;
  jsonUnescape(p: number, len: number, out: number): number;
  jsonUtf16(p: number, len: number, out: number): number;
  // Layer 4: model streams (assembly/model.ts)
  modelDocs(st: number, first: number, nrec: number, framing: number, prog: number, tmpl: number, choice: number, gathered: number, mode: number): number;
  modelPush(st: number, len: number, mode: number, framing: number, prog: number, tmpl: number, choice: number, read: number): number;
  modelMore(st: number, framing: number, prog: number, tmpl: number, choice: number, read: number): number;
  modelTextBytes(ptr: number, len: number, high: number): number;
  modelTextChars(ptr: number, len: number, flags: number, high: number): number;
  modelGather(st: number, n: number, flags: number): number;
  modelTextSpans(st: number, n: number): void;
  modelTextLog(st: number, n: number): number;
  modelTextDrop(st: number, n: number): void;
  modelKept(st: number): number;
  modelKeepFree(st: number): void;
  modelSetCall(st: number, key: number, argsLeft: number): void;
  modelPart(st: number, which: number): number;
  modelHeld(st: number, which: number, free: number): number;
  modelScratch(n: number): number;
  modelUnescape(p: number, len: number): number;
  modelValid(p: number, len: number): number;
  modelCheckArea(n: number): number;
  modelScratchFree(): void;
}

export type Backend = 'simd' | 'scalar';

interface NodeBuffer extends Uint8Array {
  latin1Slice(start: number, end: number): string;
  ucs2Slice(start: number, end: number): string;
  compare(target: Uint8Array, targetStart: number, targetEnd: number, sourceStart: number, sourceEnd: number): number;
}
interface NodeBufferCtor {
  from(ab: ArrayBuffer): NodeBuffer;
  prototype: NodeBuffer;
}

function base64Bytes(b64: string): Uint8Array {
  const B = (globalThis as { Buffer?: { from(s: string, enc: string): Uint8Array } }).Buffer;
  if (B) return new Uint8Array(B.from(b64, 'base64'));
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function requestedBackend(): Backend | undefined {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  const v = env?.SEAM_WASM;
  if (v === undefined || v === '') return undefined;
  if (v !== 'simd' && v !== 'scalar') throw new TypeError(`SEAM_WASM must be "simd" or "scalar", got ${JSON.stringify(v)}`);
  return v;
}


/** Without Node's Buffer, strings of more UTF-16 units than this are made by a UTF-16LE TextDecoder. */
const UTF16_DECODE = 256;

/**
 * The string of UTF-16 units, by String.fromCharCode on 8,192 units at a time: on Node 20 and 24
 * a 120,000-unit text in 0.5–0.7 ms, where ucs2Slice or a UTF-16LE TextDecoder take 1.0–1.3 ms
 * (the pieces make a rope, which V8 flattens when it is read).
 */
export function unitsString(u16: Uint16Array): string {
  let s = '';
  for (let i = 0; i < u16.length; i += 8192) s += String.fromCharCode.apply(null, u16.subarray(i, i + 8192) as unknown as number[]);
  return s;
}

/** The most units `short` makes a string of. */
export const SHORT_MAX = 32;
/** The most ASCII bytes `short` makes a string of. */
const SHORT_BYTES = 16;

/**
 * Up to how many UTF-16 units a string is made by `short`, on a runtime by its name and whether it
 * copies strings out of WebAssembly memory natively (Node's Buffer). Measured per runtime
 * (docs/runtimes.md, "Short strings"):
 * - Node and Deno: a Buffer copy (`ucs2Slice`, `latin1Slice`) costs 50–60 ns at any length, a call
 *   into C++; V8's String.fromCharCode with one argument a unit costs less up to 20–28 units alone,
 *   and a model stream's reads were fastest with it up to 32 (4–13% in raw mode against 16);
 * - Bun: its Buffer copies cost 27–32 ns at any length, less than JavaScriptCore's call from 2 units
 *   (34–210 ns): 0.95–1.15× in raw mode by median (three runs), 1.03–1.19× by minimum;
 * - without a Buffer (browsers, workerd without nodejs_compat): 16, as before, against `copied`
 *   above: faster alone up to 64 units in Firefox and from 20 in Chromium, but no faster in a model
 *   stream's reads in either. (workerd with a Buffer takes 32, as Node; not measured against 16 there.)
 */
export function shortUnits(name: string, bufferCopy: boolean): number {
  if (!bufferCopy) return 16;
  return name === 'bun' ? 1 : SHORT_MAX;
}

/**
 * Without Node's Buffer, strings of more than `shortUnits` units (`shortBytes` ASCII bytes) and up to
 * this many are made by `copied` (or `copiedBytes`). A TextDecoder call costs a fixed 180–500 ns in Chromium and
 * Firefox, more than `copiedBytes` up to here: at 34 bytes 90 against 440 ns in Chromium and 105
 * against 207 in Firefox, at 128 bytes 275 against 435 and 313 against 379.
 */
export const COPIED = 128;
/** The arrays of `copied` and `copiedBytes`: one of each length they have made a string of (made on first use; at most 8,120 numbers in all). */
const copies: number[][] = [];
const copiesOf = (n: number): number[] => (copies[n] ??= new Array<number>(n).fill(0));

/**
 * The string of the `n` units of `u` from `p` (`shortUnits` < n ≤ COPIED), by String.fromCharCode.apply
 * on a plain array of exactly that length: where strings come from WebAssembly memory without
 * Node's Buffer (browsers, workerd without nodejs_compat), applying the function to a typed array
 * costs a fixed 200–400 ns in Chromium and Firefox, this 2.5–3× less at 24 units and 1.3–1.7× less
 * at 96. One call makes a flat string (not a rope of `short` pieces, which the text layer would
 * flatten).
 */
function copied(u: Uint16Array, p: number, n: number): string {
  const a = copiesOf(n);
  for (let i = 0; i < n; i++) a[i] = u[p + i];
  return String.fromCharCode.apply(null, a);
}

/** As `copied`, for `n` ASCII bytes of `u` from `p` (`shortBytes` < n ≤ COPIED; its own loop: one kind of array a call site). */
function copiedBytes(u: Uint8Array, p: number, n: number): string {
  const a = copiesOf(n);
  for (let i = 0; i < n; i++) a[i] = u[p + i];
  return String.fromCharCode.apply(null, a);
}

/**
 * Without Node's Buffer, a frame batch's text (`batchLatin1`, `batchUtf16`) of more than COPIED and
 * up to this many units is made by `padded` (or `paddedBytes`). More than `sseCoreTo`'s 384: the
 * batch of a short read also holds the part of an event begun in the reads before it.
 */
export const PADDED = 1024;
/** The arrays of `padded` and `paddedBytes`, one of each length they use (multiples of 16: at most 56, 32,704 numbers in all). */
const pads: number[][] = [];

/**
 * The string of the `n` units of `u` from `p` (COPIED < n ≤ PADDED), as `copied` makes it but on a
 * plain array whose length is `n` rounded up to 16 (the rest of it whatever an earlier call left
 * there), and then the string's first `n` units (a V8 sliced string: no copy). An array of each
 * exact length would be up to 516,000 numbers, and a new array per call costs more: in Chromium,
 * `SseParser.push` at one event per read against its peer, the same page, 1.50× with an array of
 * each exact length, 1.04× with a new array per call; 1.51× with these against the first.
 */
function padded(u: Uint16Array, p: number, n: number): string {
  const m = (n + 15) & ~15;
  const a = (pads[m >> 4] ??= new Array<number>(m).fill(0));
  for (let i = 0; i < n; i++) a[i] = u[p + i];
  const s = String.fromCharCode.apply(null, a);
  return m === n ? s : s.slice(0, n);
}

/** As `padded`, for `n` ASCII bytes of `u` from `p` (its own loop: one kind of array a call site). */
function paddedBytes(u: Uint8Array, p: number, n: number): string {
  const m = (n + 15) & ~15;
  const a = (pads[m >> 4] ??= new Array<number>(m).fill(0));
  for (let i = 0; i < n; i++) a[i] = u[p + i];
  const s = String.fromCharCode.apply(null, a);
  return m === n ? s : s.slice(0, n);
}

/**
 * The string of `b` when all of it is ASCII and it has at most COPIED bytes, made as `copiedBytes`
 * makes strings; null otherwise, found at one of every 16 bytes or else at its first other byte.
 * For the browsers' `Utf8Decoder`: a short ASCII read without a `TextDecoder` call.
 */
export function asciiString(b: Uint8Array): string | null {
  const n = b.length;
  if (n > COPIED) return null;
  if (n === 0) return '';
  // (every 16th byte first: text with non-ASCII characters mostly has one there)
  for (let i = n - 1; i >= 0; i -= 16) if (b[i] >= 0x80) return null;
  const a = copiesOf(n);
  for (let i = 0; i < n; i++) {
    const c = b[i];
    if (c >= 0x80) return null;
    a[i] = c;
  }
  return String.fromCharCode.apply(null, a);
}

/**
 * The string of the `n` ≤ SHORT_MAX units of `u` from `p`, by one call of String.fromCharCode with
 * that many arguments: where it costs less than a Buffer copy or `copied` (`shortUnits`), and a
 * model stream's deltas are mostly this short. One call makes a flat string (not a rope of pieces,
 * which the text layer would flatten).
 */
function short(u: Uint8Array | Uint16Array, p: number, n: number): string {
  const F = String.fromCharCode;
  switch (n) {
    case 0: return '';
    case 1: return F(u[p]);
    case 2: return F(u[p], u[p + 1]);
    case 3: return F(u[p], u[p + 1], u[p + 2]);
    case 4: return F(u[p], u[p + 1], u[p + 2], u[p + 3]);
    case 5: return F(u[p], u[p + 1], u[p + 2], u[p + 3], u[p + 4]);
    case 6: return F(u[p], u[p + 1], u[p + 2], u[p + 3], u[p + 4], u[p + 5]);
    case 7: return F(u[p], u[p + 1], u[p + 2], u[p + 3], u[p + 4], u[p + 5], u[p + 6]);
    case 8: return F(u[p], u[p + 1], u[p + 2], u[p + 3], u[p + 4], u[p + 5], u[p + 6], u[p + 7]);
    case 9: return F(u[p], u[p + 1], u[p + 2], u[p + 3], u[p + 4], u[p + 5], u[p + 6], u[p + 7], u[p + 8]);
    case 10: return F(u[p], u[p + 1], u[p + 2], u[p + 3], u[p + 4], u[p + 5], u[p + 6], u[p + 7], u[p + 8], u[p + 9]);
    case 11: return F(u[p], u[p + 1], u[p + 2], u[p + 3], u[p + 4], u[p + 5], u[p + 6], u[p + 7], u[p + 8], u[p + 9], u[p + 10]);
    case 12: return F(u[p], u[p + 1], u[p + 2], u[p + 3], u[p + 4], u[p + 5], u[p + 6], u[p + 7], u[p + 8], u[p + 9], u[p + 10], u[p + 11]);
    case 13: return F(u[p], u[p + 1], u[p + 2], u[p + 3], u[p + 4], u[p + 5], u[p + 6], u[p + 7], u[p + 8], u[p + 9], u[p + 10], u[p + 11], u[p + 12]);
    case 14: return F(u[p], u[p + 1], u[p + 2], u[p + 3], u[p + 4], u[p + 5], u[p + 6], u[p + 7], u[p + 8], u[p + 9], u[p + 10], u[p + 11], u[p + 12], u[p + 13]);
    case 15: return F(u[p], u[p + 1], u[p + 2], u[p + 3], u[p + 4], u[p + 5], u[p + 6], u[p + 7], u[p + 8], u[p + 9], u[p + 10], u[p + 11], u[p + 12], u[p + 13], u[p + 14]);
    case 16: return F(u[p], u[p + 1], u[p + 2], u[p + 3], u[p + 4], u[p + 5], u[p + 6], u[p + 7], u[p + 8], u[p + 9], u[p + 10], u[p + 11], u[p + 12], u[p + 13], u[p + 14], u[p + 15]);
    case 17: return F(u[p], u[p + 1], u[p + 2], u[p + 3], u[p + 4], u[p + 5], u[p + 6], u[p + 7], u[p + 8], u[p + 9], u[p + 10], u[p + 11], u[p + 12], u[p + 13], u[p + 14], u[p + 15], u[p + 16]);
    case 18: return F(u[p], u[p + 1], u[p + 2], u[p + 3], u[p + 4], u[p + 5], u[p + 6], u[p + 7], u[p + 8], u[p + 9], u[p + 10], u[p + 11], u[p + 12], u[p + 13], u[p + 14], u[p + 15], u[p + 16], u[p + 17]);
    case 19: return F(u[p], u[p + 1], u[p + 2], u[p + 3], u[p + 4], u[p + 5], u[p + 6], u[p + 7], u[p + 8], u[p + 9], u[p + 10], u[p + 11], u[p + 12], u[p + 13], u[p + 14], u[p + 15], u[p + 16], u[p + 17], u[p + 18]);
    case 20: return F(u[p], u[p + 1], u[p + 2], u[p + 3], u[p + 4], u[p + 5], u[p + 6], u[p + 7], u[p + 8], u[p + 9], u[p + 10], u[p + 11], u[p + 12], u[p + 13], u[p + 14], u[p + 15], u[p + 16], u[p + 17], u[p + 18], u[p + 19]);
    case 21: return F(u[p], u[p + 1], u[p + 2], u[p + 3], u[p + 4], u[p + 5], u[p + 6], u[p + 7], u[p + 8], u[p + 9], u[p + 10], u[p + 11], u[p + 12], u[p + 13], u[p + 14], u[p + 15], u[p + 16], u[p + 17], u[p + 18], u[p + 19], u[p + 20]);
    case 22: return F(u[p], u[p + 1], u[p + 2], u[p + 3], u[p + 4], u[p + 5], u[p + 6], u[p + 7], u[p + 8], u[p + 9], u[p + 10], u[p + 11], u[p + 12], u[p + 13], u[p + 14], u[p + 15], u[p + 16], u[p + 17], u[p + 18], u[p + 19], u[p + 20], u[p + 21]);
    case 23: return F(u[p], u[p + 1], u[p + 2], u[p + 3], u[p + 4], u[p + 5], u[p + 6], u[p + 7], u[p + 8], u[p + 9], u[p + 10], u[p + 11], u[p + 12], u[p + 13], u[p + 14], u[p + 15], u[p + 16], u[p + 17], u[p + 18], u[p + 19], u[p + 20], u[p + 21], u[p + 22]);
    case 24: return F(u[p], u[p + 1], u[p + 2], u[p + 3], u[p + 4], u[p + 5], u[p + 6], u[p + 7], u[p + 8], u[p + 9], u[p + 10], u[p + 11], u[p + 12], u[p + 13], u[p + 14], u[p + 15], u[p + 16], u[p + 17], u[p + 18], u[p + 19], u[p + 20], u[p + 21], u[p + 22], u[p + 23]);
    case 25: return F(u[p], u[p + 1], u[p + 2], u[p + 3], u[p + 4], u[p + 5], u[p + 6], u[p + 7], u[p + 8], u[p + 9], u[p + 10], u[p + 11], u[p + 12], u[p + 13], u[p + 14], u[p + 15], u[p + 16], u[p + 17], u[p + 18], u[p + 19], u[p + 20], u[p + 21], u[p + 22], u[p + 23], u[p + 24]);
    case 26: return F(u[p], u[p + 1], u[p + 2], u[p + 3], u[p + 4], u[p + 5], u[p + 6], u[p + 7], u[p + 8], u[p + 9], u[p + 10], u[p + 11], u[p + 12], u[p + 13], u[p + 14], u[p + 15], u[p + 16], u[p + 17], u[p + 18], u[p + 19], u[p + 20], u[p + 21], u[p + 22], u[p + 23], u[p + 24], u[p + 25]);
    case 27: return F(u[p], u[p + 1], u[p + 2], u[p + 3], u[p + 4], u[p + 5], u[p + 6], u[p + 7], u[p + 8], u[p + 9], u[p + 10], u[p + 11], u[p + 12], u[p + 13], u[p + 14], u[p + 15], u[p + 16], u[p + 17], u[p + 18], u[p + 19], u[p + 20], u[p + 21], u[p + 22], u[p + 23], u[p + 24], u[p + 25], u[p + 26]);
    case 28: return F(u[p], u[p + 1], u[p + 2], u[p + 3], u[p + 4], u[p + 5], u[p + 6], u[p + 7], u[p + 8], u[p + 9], u[p + 10], u[p + 11], u[p + 12], u[p + 13], u[p + 14], u[p + 15], u[p + 16], u[p + 17], u[p + 18], u[p + 19], u[p + 20], u[p + 21], u[p + 22], u[p + 23], u[p + 24], u[p + 25], u[p + 26], u[p + 27]);
    case 29: return F(u[p], u[p + 1], u[p + 2], u[p + 3], u[p + 4], u[p + 5], u[p + 6], u[p + 7], u[p + 8], u[p + 9], u[p + 10], u[p + 11], u[p + 12], u[p + 13], u[p + 14], u[p + 15], u[p + 16], u[p + 17], u[p + 18], u[p + 19], u[p + 20], u[p + 21], u[p + 22], u[p + 23], u[p + 24], u[p + 25], u[p + 26], u[p + 27], u[p + 28]);
    case 30: return F(u[p], u[p + 1], u[p + 2], u[p + 3], u[p + 4], u[p + 5], u[p + 6], u[p + 7], u[p + 8], u[p + 9], u[p + 10], u[p + 11], u[p + 12], u[p + 13], u[p + 14], u[p + 15], u[p + 16], u[p + 17], u[p + 18], u[p + 19], u[p + 20], u[p + 21], u[p + 22], u[p + 23], u[p + 24], u[p + 25], u[p + 26], u[p + 27], u[p + 28], u[p + 29]);
    case 31: return F(u[p], u[p + 1], u[p + 2], u[p + 3], u[p + 4], u[p + 5], u[p + 6], u[p + 7], u[p + 8], u[p + 9], u[p + 10], u[p + 11], u[p + 12], u[p + 13], u[p + 14], u[p + 15], u[p + 16], u[p + 17], u[p + 18], u[p + 19], u[p + 20], u[p + 21], u[p + 22], u[p + 23], u[p + 24], u[p + 25], u[p + 26], u[p + 27], u[p + 28], u[p + 29], u[p + 30]);
    default: return F(u[p], u[p + 1], u[p + 2], u[p + 3], u[p + 4], u[p + 5], u[p + 6], u[p + 7], u[p + 8], u[p + 9], u[p + 10], u[p + 11], u[p + 12], u[p + 13], u[p + 14], u[p + 15], u[p + 16], u[p + 17], u[p + 18], u[p + 19], u[p + 20], u[p + 21], u[p + 22], u[p + 23], u[p + 24], u[p + 25], u[p + 26], u[p + 27], u[p + 28], u[p + 29], u[p + 30], u[p + 31]);
  }
}

/**
 * The shared instance. Views over its memory are cached; a memory growth (only the heap grows,
 * when arenas need room) detaches them, which `sync()` notices by their zero length.
 */
export class Core {
  readonly x: CoreExports;
  readonly backend: Backend;
  readonly inPtr: number;
  readonly inCap: number;
  readonly outPtr: number;
  /** Index of the result record in `i32`. */
  readonly res: number;
  /** Index of the span records in `i32`. */
  readonly span: number;
  /** Index in `i32` of a split batch's PATCH entries (M_SPLIT). */
  readonly patch: number;
  /** Address of the hash window (SHA-256's state, then its input: sha256Blocks). */
  readonly hash: number;
  /** Indexes in `i32` of the model streams' areas: document entries, JSON records, gather entries. */
  readonly mdoc: number;
  readonly mjrec: number;
  readonly mgather: number;
  /** Push mode for text: UTF-16 copies where the runtime has them, else UTF-8 for TextDecoder. */
  readonly textMode: number;
  /** Strings of up to this many UTF-16 units are made by `short` (`shortUnits`). */
  readonly shortUnits: number;
  /**
   * Strings of up to this many ASCII bytes are made by `short`: 16, or fewer where `shortUnits` is
   * (Bun). On Node 24 `latin1Slice` costs about what the call does from 20 bytes (53 against 45 ns
   * at 20, 54 against 61 at 32), so ASCII stays at 16.
   */
  readonly shortBytes: number;
  u8!: Uint8Array;
  u16!: Uint16Array;
  i32!: Int32Array;
  private nodeBuf: NodeBuffer | null = null;
  /** The browsers' string route (made with the core, not at import: no top-level work to keep). */
  private readonly utf8Text = new TextDecoder('utf-8', { ignoreBOM: true });
  private utf16Text: TextDecoder | null = null;
  private readonly NodeBuffer: NodeBufferCtor | null;

  /**
   * From the module's bytes (compiled synchronously) or from an instance of it; `short`, for tests,
   * another runtime's `shortUnits`.
   */
  constructor(backend: Backend, source: Uint8Array | WebAssembly.Instance, short?: number) {
    const instance = source instanceof Uint8Array ? new WebAssembly.Instance(new WebAssembly.Module(source as BufferSource), {}) : source;
    const x = instance.exports as unknown as CoreExports;
    const version = x.ABI_VERSION instanceof WebAssembly.Global ? x.ABI_VERSION.value as number : undefined;
    if (version !== ABI_VERSION) {
      throw new Error(`seam: stale build: the WebAssembly core speaks ABI version ${String(version)} and the bindings `
        + `version ${ABI_VERSION}; rebuild both with npm run build`);
    }
    this.x = x;
    this.backend = backend;
    this.inPtr = x.IN_PTR.value as number;
    this.inCap = IN_CAP;
    this.outPtr = x.OUT_PTR.value as number;
    this.res = (x.RES_PTR.value as number) >> 2;
    this.span = (x.SPAN_PTR.value as number) >> 2;
    this.patch = (x.PATCH_PTR.value as number) >> 2;
    this.hash = x.HASH_PTR.value as number;
    // (a global's value is read through a call: read once)
    this.mdoc = (x.MDOC_PTR.value as number) >> 2;
    this.mjrec = (x.MJREC_PTR.value as number) >> 2;
    this.mgather = (x.MGATHER_PTR.value as number) >> 2;
    const B = (globalThis as unknown as { Buffer?: NodeBufferCtor }).Buffer;
    this.NodeBuffer = B && typeof B.prototype.latin1Slice === 'function' && typeof B.prototype.ucs2Slice === 'function' ? B : null;
    this.textMode = this.NodeBuffer ? 0 : M_UTF8_OUT;
    this.shortUnits = short ?? shortUnits(runtimeName().name, this.NodeBuffer !== null);
    this.shortBytes = Math.min(SHORT_BYTES, this.shortUnits);
    // Grow once up front so that the first streams do not detach the views.
    this.x.memory.grow(16);
    this.sync();
  }

  /** Re-creates the views after a memory growth. Cheap when nothing changed. */
  sync(): void {
    if (this.u8 !== undefined && this.u8.length !== 0) return;
    const ab = this.x.memory.buffer as ArrayBuffer;
    this.u8 = new Uint8Array(ab);
    this.u16 = new Uint16Array(ab);
    this.i32 = new Int32Array(ab);
    this.nodeBuf = this.NodeBuffer ? this.NodeBuffer.from(ab) : null;
    this.heads.length = 0;
  }

  private readonly heads: Uint8Array[] = [];

  /**
   * A view of the `n` bytes right before the input window (n a power of two from 64 to 4096),
   * made once: copying from a view at hand costs a fraction of making one per copy.
   */
  head(n: number): Uint8Array {
    const k = 31 - Math.clz32(n);
    return (this.heads[k] ??= this.u8.subarray(this.inPtr - n, this.inPtr));
  }

  /** ASCII bytes at [ptr, ptr + len) as a string. */
  latin1(ptr: number, len: number): string {
    if (len <= this.shortBytes) return short(this.u8, ptr, len);
    if (this.nodeBuf) return this.nodeBuf.latin1Slice(ptr, ptr + len);
    if (len <= COPIED) return copiedBytes(this.u8, ptr, len);
    return this.utf8Text.decode(this.u8.subarray(ptr, ptr + len));
  }

  /** UTF-16 units at [ptr, ptr + 2·units) as a string. */
  utf16(ptr: number, units: number): string {
    // (not two `short` strings joined above `shortUnits`: that makes a rope, which the text layer flattens
    // again as it reads it: Gemini's deltas with the defaults 0.6× as fast on Node 24)
    if (units <= this.shortUnits && (ptr & 1) === 0) return short(this.u16, ptr >>> 1, units);
    if (this.nodeBuf) return this.nodeBuf.ucs2Slice(ptr, ptr + 2 * units);
    // (at an odd address, from a copy: a typed array of units must be aligned)
    if ((ptr & 1) !== 0) return unitsString(new Uint16Array(this.u8.slice(ptr, ptr + 2 * units).buffer));
    if (units <= COPIED) return copied(this.u16, ptr >>> 1, units);
    return unitsString(new Uint16Array(this.u8.buffer, ptr, units));
  }

  /**
   * As `latin1`, for a frame batch's text (`SseParser`): without a Buffer, up to PADDED bytes by
   * `paddedBytes`, no `TextDecoder` call (whose fixed cost is most of a short batch's in the browsers).
   */
  batchLatin1(ptr: number, len: number): string {
    if (len <= COPIED || this.nodeBuf) return this.latin1(ptr, len);
    if (len <= PADDED) return paddedBytes(this.u8, ptr, len);
    return this.utf8Text.decode(this.u8.subarray(ptr, ptr + len));
  }

  /**
   * As `wellFormed16`, for a frame batch's text (`SseParser`; the core transcodes valid UTF-8, or
   * replaces what is not): without a Buffer, up to PADDED units by `padded`, then by a UTF-16LE
   * `TextDecoder`.
   */
  batchUtf16(ptr: number, units: number): string {
    if (units <= COPIED || this.nodeBuf || (ptr & 1) !== 0) return this.utf16(ptr, units);
    if (units <= PADDED) return padded(this.u16, ptr >>> 1, units);
    return this.decoded16(ptr, units);
  }

  /**
   * As `utf16`, for units transcoded from valid UTF-8 (no lone surrogate, which a UTF-16LE
   * TextDecoder would replace): in Chromium such a call costs more than String.fromCharCode.apply
   * on a few hundred units, and less above.
   */
  wellFormed16(ptr: number, units: number): string {
    return this.decodes16(units) ? this.decoded16(ptr, units) : this.utf16(ptr, units);
  }

  /** Whether strings of `units` well-formed units are made by a UTF-16 TextDecoder here (no Buffer, past UTF16_DECODE). */
  private decodes16(units: number): boolean {
    return units > UTF16_DECODE && this.nodeBuf === null;
  }

  private decoded16(ptr: number, units: number): string {
    return (this.utf16Text ??= new TextDecoder('utf-16le', { ignoreBOM: true })).decode(this.u8.subarray(ptr, ptr + 2 * units));
  }

  /**
   * As `utf16`, for units that may hold a lone surrogate (text unescaped from JSON's `\ud800`) but
   * seldom do: `wellFormed16`'s decoder, and `utf16` again where its string holds a U+FFFD, which
   * the decoder makes of a lone surrogate (one scan of the string: a U+FFFD of the text's own is
   * made twice, and is right either way).
   */
  units16(ptr: number, units: number): string {
    if (!this.decodes16(units)) return this.utf16(ptr, units);
    const s = this.decoded16(ptr, units);
    return s.indexOf('\ufffd') < 0 ? s : this.utf16(ptr, units);
  }

  /**
   * Whether the `len` bytes at `ptr` are those of `bytes` from `start`, where the runtime compares
   * memory natively (Node's Buffer); false elsewhere, so that the caller copies as it would without
   * the answer.
   */
  sameAt(ptr: number, bytes: Uint8Array, start: number, len: number): boolean {
    return this.nodeBuf !== null && start + len <= bytes.length
      && this.nodeBuf.compare(bytes, start, start + len, ptr, ptr + len) === 0;
  }

  /** Whether core memory at [a, a + len) and [b, b + len) hold the same bytes (compared in the core). */
  sameIn(a: number, b: number, len: number): boolean {
    return this.x.sameSpan(a, b, len) !== 0;
  }

  /** UTF-8 bytes at [ptr, ptr + len) (validated, or to be replaced as TextDecoder does). */
  utf8(ptr: number, len: number): string {
    if (len === 0) return '';
    return this.utf8Text.decode(this.u8.subarray(ptr, ptr + len));
  }

  /** The text a UTF-8 push reported in the result record (U8_* words), of the kind it returned. */
  text(kind: number): string {
    const i32 = this.i32;
    const ptr = i32[this.res + U8_PTR];
    const len = i32[this.res + U8_LEN];
    switch (kind & ENC_MASK) {
      case ENC_LATIN1: return this.latin1(ptr, len);
      case ENC_UTF16: return this.utf16(ptr, len);
      default: return this.utf8(ptr, len);
    }
  }

  /** Result word `i` of the last call. */
  word(i: number): number {
    return this.i32[this.res + i];
  }

  /**
   * The bytes an invalid byte's error shows, from the input window + `rel` (rel may be negative:
   * carried bytes): up to 4, and none past the `len` bytes of the read in the window (what lies
   * after them there is an earlier read's, perhaps another stream's).
   */
  errorBytes(rel: number, len: number): Uint8Array {
    const p = this.inPtr + rel;
    return this.u8.slice(p, p + Math.max(1, Math.min(4, len - rel)));
  }
}

/** Why this realm cannot run the core: the code says what to change. */
export type SeamWasmErrorCode =
  /** A Content Security Policy forbids compiling WebAssembly: add `'wasm-unsafe-eval'` to `script-src`. */
  | 'ERR_WASM_BLOCKED'
  /** The engine refuses to compile this module synchronously here: call `await ready()` once first. */
  | 'ERR_WASM_SYNC'
  /**
   * The runtime compiles no WebAssembly from bytes at all (Cloudflare's workerd, Vercel's edge
   * runtime): load seam through its `workerd` or `edge-light` export condition, or hand it the
   * compiled module with `setCoreModule`.
   */
  | 'ERR_WASM_CODEGEN'
  /** The runtime has no WebAssembly (a JIT-less mode, a locked-down browser). */
  | 'ERR_WASM_UNAVAILABLE';

/**
 * The WebAssembly core cannot be compiled in this realm. Every use of a decoder (Utf8Decoder,
 * LineDecoder, SseParser, ModelStream, SseRelay…) throws it, with the engine's own error as
 * `cause`; the text layer (TextAssembler, GraphemeCommitter, NfcCommitter, countText) needs no
 * WebAssembly and keeps working.
 */
export class SeamWasmError extends Error {
  readonly code: SeamWasmErrorCode;

  constructor(code: SeamWasmErrorCode, cause: unknown) {
    const engine = cause instanceof Error ? cause.message : String(cause);
    super(
      code === 'ERR_WASM_BLOCKED'
        ? `seam: the page's Content Security Policy blocks WebAssembly; add 'wasm-unsafe-eval' to its script-src `
          + `directive (Content-Security-Policy: script-src 'self' 'wasm-unsafe-eval'). The engine said: ${engine}`
        : code === 'ERR_WASM_SYNC'
          ? `seam: this engine refuses to compile the WebAssembly core synchronously here; call \`await ready()\` `
            + `(exported by seam-stream) once before the first decoder. The engine said: ${engine}`
          : code === 'ERR_WASM_CODEGEN'
            ? `seam: this runtime compiles no WebAssembly from bytes (as Cloudflare Workers and Vercel's edge runtime do); `
              + `import seam-stream through its "workerd" or "edge-light" export condition, which loads the core as a .wasm `
              + `module, or hand seam the compiled module before the first decoder: import core from `
              + `'seam-stream/seam.simd.wasm'; setCoreModule(core). The engine said: ${engine}`
            : `seam: this runtime has no WebAssembly, which the decoders need (the text layer does not). ${engine}`,
      { cause },
    );
    this.name = 'SeamWasmError';
    this.code = code;
  }
}

/** The engine's refusal as seam's error, or undefined when `err` is something else. */
function refusal(err: unknown): SeamWasmError | undefined {
  const message = err instanceof Error ? err.message : '';
  // Chromium: CompileError "…'unsafe-eval' is not an allowed source of script…"; Firefox: "…blocked by
  // CSP"; Safari: "…'unsafe-eval' or 'wasm-unsafe-eval' is not an allowed source…" (an EvalError).
  if (/unsafe-eval|Content Security Policy|\bCSP\b/i.test(message)) return new SeamWasmError('ERR_WASM_BLOCKED', err);
  // workerd (V8 with code generation from bytes disallowed by the embedder): "WebAssembly.Module():
  // Wasm code generation disallowed by embedder"; the async compile says the same.
  if (/code generation disallowed|disallowed by embedder/i.test(message)) return new SeamWasmError('ERR_WASM_CODEGEN', err);
  // Chromium's limit on synchronous compiles on the main thread (4 KB once, 8 MB today), a RangeError.
  if (err instanceof RangeError && /WebAssembly\.(compile|instantiate)|main thread/i.test(message)) {
    return new SeamWasmError('ERR_WASM_SYNC', err);
  }
  return undefined;
}

let core: Core | undefined;
/** The refusal of the first attempt, thrown again by every later one (a policy does not change). */
let refused: SeamWasmError | undefined;
/** The compiled module handed over by setCoreModule, instantiated on first use. */
let provided: WebAssembly.Module | undefined;
/** The module the realm's core was instantiated from, when it came from setCoreModule. */
let coreModule: WebAssembly.Module | undefined;

/** Which build to run, and its bytes. */
function pick(): { backend: Backend; bytes: Uint8Array } {
  if (typeof WebAssembly !== 'object' || WebAssembly === null) {
    throw (refused = new SeamWasmError('ERR_WASM_UNAVAILABLE', new ReferenceError('WebAssembly is not defined')));
  }
  if ((SIMD_WASM_BASE64 as string) === '') {
    // (the workerd and edge-light entries carry no bytes: they hand over the compiled module at import)
    throw new Error('seam: this entry embeds no WebAssembly core; hand it the compiled module with setCoreModule() first');
  }
  const want = requestedBackend();
  const simd = base64Bytes(SIMD_WASM_BASE64);
  const simdOk = WebAssembly.validate(simd as BufferSource);
  if (want === 'simd' && !simdOk) throw new Error('SEAM_WASM=simd, but this runtime does not validate the SIMD build');
  const backend = want ?? (simdOk ? 'simd' : 'scalar');
  return { backend, bytes: backend === 'simd' ? simd : base64Bytes(SCALAR_WASM_BASE64) };
}

/** Which build a module's instance is (its `simd()` export says how it was compiled). */
const backendOf = (instance: WebAssembly.Instance): Backend =>
  (instance.exports as unknown as CoreExports).simd() === 1 ? 'simd' : 'scalar';

/** The realm's core, instantiated synchronously on first use (or by {@link ready}). */
export function getCore(): Core {
  if (core !== undefined) return core;
  if (refused !== undefined) throw refused;
  if (provided !== undefined) {
    // Instantiating a compiled module generates no code: allowed where compiling bytes is not.
    const instance = new WebAssembly.Instance(provided, {});
    core = new Core(backendOf(instance), instance);
    coreModule = provided;
    return core;
  }
  const { backend, bytes } = pick();
  try {
    core = new Core(backend, bytes);
  } catch (err) {
    const e = refusal(err);
    if (e === undefined) throw err;
    // A refusal of sync compiles is not final: ready() may still compile asynchronously.
    if (e.code === 'ERR_WASM_BLOCKED' || e.code === 'ERR_WASM_CODEGEN') refused = e;
    throw e;
  }
  return core;
}

/**
 * Hands seam its core as a compiled `WebAssembly.Module`, for runtimes that compile no WebAssembly
 * from bytes (Cloudflare Workers, Vercel's edge runtime, a Content Security Policy without
 * `'wasm-unsafe-eval'` that allows a module compiled elsewhere) or that compile it themselves (a
 * bundler's `.wasm` import, `WebAssembly.compileStreaming(fetch(url))`). The module is one of the
 * package's own builds, `seam-stream/seam.simd.wasm` or `seam-stream/seam.scalar.wasm` (the
 * package's `workerd` and `edge-light` entries call this at import with the SIMD build). Call it
 * before the first decoder; the instance is made on first use, as usual. Handing over the module
 * in use again is a no-op; another module once a core is in use is an `Error` (the decoders hold
 * state in the instance's memory). Returns nothing; {@link wasmBackend} tells which build it is.
 */
export function setCoreModule(module: WebAssembly.Module): void {
  if (typeof WebAssembly !== 'object' || !(module instanceof WebAssembly.Module)) {
    throw new TypeError(`setCoreModule expects a WebAssembly.Module (a compiled .wasm module), got ${module === null ? 'null' : typeof module}`);
  }
  if (module === provided || (core !== undefined && module === coreModule)) return;
  if (core !== undefined) {
    throw new Error('seam: the core is already in use in this realm; call setCoreModule before the first decoder');
  }
  const names = new Set(WebAssembly.Module.exports(module).map((e) => e.name));
  if (!names.has('ABI_VERSION') || !names.has('simd') || WebAssembly.Module.imports(module).length !== 0) {
    throw new TypeError('setCoreModule expects seam\'s own core (seam-stream/seam.simd.wasm or seam.scalar.wasm), not another module');
  }
  provided = module;
  refused = undefined;
}

let readying: Promise<Backend> | undefined;

/**
 * Compiles and instantiates the core asynchronously (`WebAssembly.compile`, `WebAssembly.instantiate`)
 * and installs it, so that every later use is synchronous as usual. Optional: without it the core
 * is compiled synchronously on first use, which works in Node and in current browsers. Call it
 * where an engine refuses synchronous compiles (of more than 4 KB on a page's main thread) or to
 * take the compile off the first push. Resolves with the backend; rejects with a
 * {@link SeamWasmError} where WebAssembly is blocked (a Content Security Policy without
 * `'wasm-unsafe-eval'`) or missing.
 */
export function ready(): Promise<Backend> {
  if (core !== undefined) return Promise.resolve(core.backend);
  return (readying ??= (async () => {
    if (refused !== undefined) throw refused;
    if (provided !== undefined) return getCore().backend;
    const { backend, bytes } = pick();
    let instance: WebAssembly.Instance;
    try {
      instance = await WebAssembly.instantiate(await WebAssembly.compile(bytes as BufferSource), {});
    } catch (err) {
      const e = refusal(err);
      if (e === undefined) throw err;
      throw (refused = e);
    }
    // A synchronous first use may have won the race while this compiled: keep the one in use.
    core ??= new Core(backend, instance);
    return core.backend;
  })().finally(() => { readying = undefined; }));
}

/** Which build of the core this realm runs: `'simd'`, or `'scalar'` where SIMD does not validate. */
export function wasmBackend(): Backend {
  return getCore().backend;
}

/** Calls `each` on window-sized pieces of `chunk` (one piece when it fits). */
export function forPieces(core: Core, chunk: Uint8Array, each: (piece: Uint8Array) => void): void {
  const cap = core.inCap;
  if (chunk.length <= cap) {
    each(chunk);
    return;
  }
  for (let i = 0; i < chunk.length; i += cap) each(chunk.subarray(i, i + cap));
}

/** Throws a TypeError unless `chunk` is a Uint8Array (a Node Buffer is one). */
export function expectBytes(chunk: unknown, where: string): asserts chunk is Uint8Array {
  if (!(chunk instanceof Uint8Array)) throw notBytes(chunk, `${where} expects a Uint8Array (or Buffer) of bytes`);
}

/** The TypeError for a `chunk` that is not bytes: `expected`, then what it got (and, for a string, what to do). */
export function notBytes(chunk: unknown, expected: string): TypeError {
  const got = chunk === null ? 'null' : Array.isArray(chunk) ? 'an array' : typeof chunk === 'string' ? 'a string' : typeof chunk;
  const hint = typeof chunk === 'string' ? ' Encode it first (new TextEncoder().encode(text)), or skip decoding: it is already text.' : '';
  return new TypeError(`${expected}, got ${got}.${hint}`);
}

/**
 * The bytes of a BufferSource, as a view (no copy), as the platform reads one: a detached
 * buffer, or a view of one (its producer gave it away), as no bytes (copying it would throw); null
 * for anything else. What the streams take, as the platform's byte streams (TextDecoderStream,
 * CompressionStream) take any BufferSource.
 */
export function bufferBytes(input: unknown): Uint8Array | null {
  if (input instanceof Uint8Array) return input.length !== 0 ? input : new Uint8Array(0);
  if (ArrayBuffer.isView(input)) {
    const b = input.buffer;
    return b.byteLength === 0 ? new Uint8Array(0) : new Uint8Array(b, input.byteOffset, input.byteLength);
  }
  if (input instanceof ArrayBuffer || (typeof SharedArrayBuffer === 'function' && input instanceof SharedArrayBuffer)) {
    return input.byteLength === 0 ? new Uint8Array(0) : new Uint8Array(input);
  }
  return null;
}
