// Shared glue of the framers (lines and SSE): constants mirrored from assembly/lines.ts and
// assembly/sse.ts, input in window-sized pieces, and text for raw spans.
import { CoreMemoryError } from './errors.js';
import { type Core } from './wasm.js';

/** Status bits (RES[0]); mirrors assembly/lines.ts. */
export const R_MORE = 1;
export const R_UTF8 = 2;
export const R_LIMIT = 4;
export const R_TRUNC = 8;
export const R_RETRY = 16;
export const R_TRUNCATED = 32;
export const R_RAW = 64;
/** Text encodings of a batch (RES[1]). */
export const ENC_LATIN1 = 0;
export const ENC_UTF16 = 1;
export const ENC_UTF8 = 2;
/** Modes. */
export const M_UTF8_OUT = 1;
export const M_COMMENTS = 4;
export const M_EOF_DISPATCH = 8;
export const M_IN_SPANS = 16;
/** SSE record kinds and flags; mirrors assembly/sse.ts. */
export const K_EVENT = 1;
export const K_ID = 2;
export const K_COMMENT = 3;
export const SF_TYPE = 16;
export const SF_SAME_TYPE = 32;
export const SF_ID = 64;
export const SF_RAW = 128;
export const SF_DA = 256;
export const SF_TA = 512;
export const SF_IA = 1024;
export const SF_IN = 2048;

/** Raw scratch blocks above this size are returned to the heap right after use. */
const KEEP_SCRATCH = 1 << 20;

/**
 * Text of `len` UTF-8 bytes at `addr` in WASM memory (a line or event too large for the output
 * window): Latin-1 when ASCII, else a UTF-16 transcode in the core where the runtime has a UTF-16
 * copy route, else TextDecoder. `dirty`: the bytes may be invalid (replacement as TextDecoder).
 */
export function rawText(core: Core, addr: number, len: number, ascii: boolean, dirty: boolean): string {
  if (len === 0) return '';
  if (ascii) return core.latin1(addr, len);
  if (core.textMode !== 0) return core.utf8(addr, len);
  const units = core.x.rawUtf16(addr, len, dirty ? 1 : 0);
  core.sync();
  const s = core.utf16(core.word(1), units);
  if (len > KEEP_SCRATCH) core.x.rawFree();
  return s;
}

/**
 * The largest byte limit accepted: one buffer of the core's allocator holds at most 1 GiB, and
 * growing a buffer to its limit needs the old and the new block at once.
 */
export const MAX_LIMIT_BYTES = 512 * 1024 * 1024;

/** Validates a byte limit option. */
export function limitOption(value: unknown, name: string, def: number): number {
  if (value === undefined) return def;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_LIMIT_BYTES) {
    throw new TypeError(`${name} must be an integer number of bytes between 1 and ${MAX_LIMIT_BYTES} (512 MiB), got ${String(value)}`);
  }
  return value;
}

/**
 * A trap of the core (its allocator's only failure: the shared memory cannot grow) as the typed
 * error the decoder keeps until reset; any other error passes through.
 */
export function coreTrap(core: Core, e: unknown, offset: number): unknown {
  if (!(e instanceof WebAssembly.RuntimeError)) return e;
  return new CoreMemoryError(offset, core.x.memory.buffer.byteLength);
}

/** Validates an options argument. */
export function optionsObject<T>(options: T | undefined, where: string): T | undefined {
  if (options !== undefined && (options === null || typeof options !== 'object')) {
    throw new TypeError(`${where} options must be an object, got ${options === null ? 'null' : typeof options}`);
  }
  return options;
}
