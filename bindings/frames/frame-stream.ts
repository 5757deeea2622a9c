// What the line decoders, the SSE parser and the model readers share: the frame stream (a piece
// of input into the window, the core's batches drained until the run is done, errors and traps,
// the platform's validation of long reads), raw text for lines or events too long for the output
// window, and the byte limit option.
import { Utf8DecodeError } from '../bytes/errors.js';
import { incompleteTail } from '../bytes/utf8.js';
import {
  FR_ERR, FR_NREC, M_ASCII, M_SPLIT, M_UTF16_POS, M_UTF8_OUT, M_VALID, RAW_PTR, R_LIMIT, R_MORE, R_TRUNC, R_UTF8, ST_CARRY, ST_NCARRY,
} from '../core/generated/abi.js';
import { byteLimitOption } from '../core/options.js';
import { CoreStream, type StateKind } from '../core/stream.js';
import { type NodeUtf8, nodeUtf8Functions, stringRoutes } from '../core/strings.js';
import { type Core, type CoreExports, forPieces } from '../core/wasm.js';

const EMPTY = /* @__PURE__ */ new Uint8Array(0);

/**
 * A decoder over the frame kit of the core (assembly/frames.ts). A push copies each window-sized
 * piece of the chunk into the input window and calls the core, which returns a batch of records
 * and status bits; with R_MORE the run is not done and `more()` returns the next batch.
 */
export abstract class FrameStream extends CoreStream {
  /** Absolute byte offset of the piece being framed (offsets in the result are relative to it). */
  protected base = 0;
  /** During a flush: the incomplete character the stream held before it (a strict flush reports it). */
  protected carried: Uint8Array = EMPTY;

  /** Reads of at least this many bytes may be validated by the platform first (see platformValid). */
  private readonly validFrom: number;
  private readonly node: NodeUtf8 | null;

  protected constructor(what: string, kind: StateKind, create: (x: CoreExports) => number) {
    super(what, kind, create);
    const node = nodeUtf8Functions();
    this.node = node !== null && node.isAscii !== undefined ? node : null;
    this.validFrom = this.node !== null ? stringRoutes(this.core).sseValidFrom : Infinity;
  }

  /** The core's push for this kind of stream. */
  protected abstract pushCore(len: number, mode: number): number;
  /** The core's continuation after R_MORE. */
  protected abstract more(): number;
  /** Takes the batch of the last call (`piece`: the bytes the run was written from, if any). */
  protected abstract collect(r: number, piece: Uint8Array | null): void;
  /**
   * After a push with no status bits: takes the batch when it is the usual one for this kind of
   * stream, with none of the general path's calls, and returns true; false leaves it to `collect`.
   */
  protected quick(): boolean { return false; }
  /** The typed error for a status with R_LIMIT or R_UTF8 (or R_TRUNC at the end). */
  protected abstract errorOf(r: number): Error;

  /**
   * M_VALID (and M_ASCII) when the platform finds a read of at least the runtime's `sseValidFrom`
   * bytes valid UTF-8 on its own (`buffer.isAscii`, then `buffer.isUtf8`: simdutf), with nothing
   * carried into it, no character cut at its end and one piece of the input window; else 0, and
   * the core validates it (and places any error) as always. Called after `open`.
   */
  protected platformValid(chunk: Uint8Array): number {
    if (chunk.length < this.validFrom || chunk.length > this.core.inCap) return 0;
    const core = this.core;
    core.sync();
    if (core.u8[this.st + ST_NCARRY] !== 0 || incompleteTail(chunk, chunk.length) !== chunk.length) return 0;
    const node = this.node!;
    if (node.isAscii!(chunk)) return M_VALID | M_ASCII;
    return node.isUtf8(chunk) ? M_VALID : 0;
  }

  /** Frames a chunk of any size; a trap of the core becomes the stream's CoreMemoryError. */
  protected frameAll(chunk: Uint8Array, mode: number): void {
    try {
      if (chunk.length <= this.core.inCap) this.frame(chunk, mode);
      else forPieces(this.core, chunk, (piece) => this.frame(piece, mode));
    } catch (e) {
      throw this.trapped(e, this.base);
    }
  }

  /** Frames one piece that fits the input window, drained of its batches. */
  private frame(piece: Uint8Array, mode: number): void {
    const core = this.core;
    core.sync();
    core.u8.set(piece, core.inPtr);
    this.frameIn(piece.length, piece, mode);
  }

  /**
   * Frames the `len` bytes the caller put at the input window (`piece`: the same bytes as a view,
   * for a stream whose collect reads them; null for one whose collect does not), drained of its
   * batches. A trap of the core is the caller's to turn into the stream's error.
   */
  protected frameIn(len: number, piece: Uint8Array | null, mode: number): void {
    this.base = this.bytesIn;
    this.bytesIn += len;
    this.drain(this.pushCore(len, mode), piece);
  }

  /** After the core's first call on a piece (status `r`): its batches taken, errors raised, continuations called. */
  protected drain(r: number, piece: Uint8Array | null): void {
    const core = this.core;
    if (r === 0 && this.quick()) return;
    for (;;) {
      if (r !== 0 || core.i32[core.res + FR_NREC] !== 0) this.collect(r, piece);
      if (r & (R_LIMIT | R_UTF8)) this.stop(this.errorOf(r));
      if (!(r & R_MORE)) return;
      r = this.more();
    }
  }

  /**
   * Bytes of core memory the stream holds now: its record and buffers, that is the unfinished
   * line or event, and a large event buffer kept for reuse (it is returned after four times its
   * size of input has gone by without a large event).
   */
  get retainedBytes(): number {
    return this.st === 0 ? 0 : this.core.x.frameRetained(this.st);
  }

  /** With R_LIMIT, R_UTF8 or R_TRUNC: the absolute byte offset the status concerns. */
  protected errorOffset(): number {
    return this.base + this.core.word(FR_ERR);
  }

  /**
   * The Utf8DecodeError of an R_UTF8 status (the bad bytes from its offset, of the piece in the
   * input window) or an R_TRUNC one (the incomplete character held at the end), carrying `output`
   * as its `lines` or `events` when given.
   */
  protected utf8Error(r: number, name?: 'lines' | 'events', output?: unknown): Utf8DecodeError {
    const trunc = (r & R_TRUNC) !== 0;
    const e = new Utf8DecodeError(trunc ? 'ERR_TRUNCATED_UTF8' : 'ERR_INVALID_UTF8', this.errorOffset(), '',
      trunc ? this.carried : this.core.errorBytes(this.core.word(FR_ERR), this.bytesIn - this.base));
    if (name !== undefined) Object.defineProperty(e, name, { value: output, enumerable: true });
    return e;
  }

  /**
   * Calls the core's flush (`f`) as the end of the stream, with the incomplete character it holds
   * (its carried bytes) read before, for the error; a trap becomes CoreMemoryError.
   */
  protected flushCore(f: () => number): number {
    this.base = this.bytesIn;
    const core = this.core;
    core.sync();
    const n = core.u8[this.st + ST_NCARRY];
    this.carried = n === 0 ? EMPTY : core.u8.slice(this.st + ST_CARRY, this.st + ST_CARRY + n);
    try {
      const r = f();
      this.collect(r, null);
      this.core.x.frameRelease(this.st, 0); // a new stream starts small
      return r;
    } catch (e) {
      throw this.trapped(e, this.base);
    }
  }

  protected override released(): void {
    if (this.st !== 0) this.core.x.frameRelease(this.st, 1);
  }
}

/**
 * The text mode of line and SSE pushes on this runtime (core/strings.ts chooses). The core route:
 * 0, the core writes UTF-16 (or ASCII bytes) and each batch becomes one string by a Buffer copy.
 * The textdecoder route (browsers; SEAM_STRINGS=textdecoder or textdecoder-whole): the core copies UTF-8 and reports
 * each span's UTF-16 offset, so that one TextDecoder call makes the batch's string, which is sliced
 * per line or event (docs/frames.md).
 */
export function frameTextMode(core: Core): number {
  return stringRoutes(core).frames === 'textdecoder' ? M_UTF8_OUT | M_UTF16_POS : 0;
}

/**
 * `M_SPLIT` where SSE data with non-ASCII text is made in pieces on this runtime (the textdecoder
 * route in V8: core/strings.ts, `sseData`, which is `pieces` only on that route), else 0.
 */
export function sseSplitMode(core: Core): number {
  return stringRoutes(core).sseData === 'pieces' ? M_SPLIT : 0;
}

/** Raw scratch blocks above this size are returned to the heap right after use. */
export const KEEP_SCRATCH = 1 << 20;

/**
 * Text of `len` UTF-8 bytes at `addr` in WASM memory (a line or event too large for the output
 * window): Latin-1 when ASCII, else a UTF-16 transcode in the core where the runtime has a UTF-16
 * copy route, else TextDecoder. `dirty`: the bytes may be invalid (replacement as TextDecoder).
 */
export function rawText(core: Core, addr: number, len: number, ascii: boolean, dirty: boolean): string {
  if (len === 0) return '';
  if (ascii) return core.latin1(addr, len);
  if (frameTextMode(core) !== 0) return core.utf8(addr, len);
  const units = core.x.rawUtf16(addr, len, dirty ? 1 : 0);
  core.sync();
  const s = core.utf16(core.word(RAW_PTR), units);
  if (len > KEEP_SCRATCH) core.x.rawFree();
  return s;
}

/**
 * The largest byte limit accepted, 512 MiB: the most `maxLineBytes`, `maxEventBytes`,
 * `maxMessageBytes`, `maxArgumentBytes`, `maxReasoningBytes` and `maxMediaBytes` take
 * (`maxTextBytes` and `maxPendingBytes` take Infinity). One buffer of the core's allocator holds at
 * most 1 GiB, and growing a buffer to its limit needs the old and the new block at once.
 */
export const MAX_LIMIT_BYTES = 512 * 1024 * 1024;

/** A frame stream's byte limit option (`maxLineBytes`, `maxEventBytes`). */
export function frameLimit(value: unknown, name: string, where: string, def: number): number {
  return byteLimitOption(value, name, where, def, MAX_LIMIT_BYTES);
}
