// Layer 2: lines and NDJSON. The core frames carry + chunk into lines (LF, CRLF, lone CR, a CR at
// the end of one chunk and its LF at the start of the next), validates UTF-8, and copies all
// complete lines of a call into one text run; this file builds one string per run and slices it.
import { LineLimitError, NdjsonParseError, Utf8DecodeError } from './errors.js';
import {
  ENC_LATIN1, ENC_UTF8, R_LIMIT, R_MORE, R_RAW, R_TRUNC, R_UTF8, coreTrap, limitOption, optionsObject, rawText,
} from './frames.js';
import { type Core, F_FATAL, expectBytes, forPieces, getCore, stateRegistry } from './wasm.js';

/** Default of `maxLineBytes`: 16 MiB. */
export const DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024;

/** Options of {@link LineDecoder}, {@link NdjsonDecoder} and {@link LineDecoderStream}. */
export interface LineDecoderOptions {
  /**
   * Strict decoding: invalid UTF-8 throws {@link Utf8DecodeError} with the absolute byte offset
   * (the lines completed before it are on the error as `lines`). With `false`, bad sequences
   * become U+FFFD exactly as `TextDecoder` does.
   * @defaultValue true
   */
  fatal?: boolean;
  /**
   * The longest line, in bytes of UTF-8 without its terminator. A longer line throws
   * {@link LineLimitError} before more than this many bytes of it are buffered.
   * @defaultValue 16 MiB (16 777 216)
   */
  maxLineBytes?: number;
}

/** A Utf8DecodeError thrown by a line decoder carries the lines completed before the bad byte. */
export interface LinesUtf8DecodeError extends Utf8DecodeError {
  readonly lines: unknown[];
}

/**
 * The framing machinery of {@link LineDecoder} and {@link NdjsonDecoder}: one state record in the
 * shared core, the lines of a call collected with their absolute byte offsets on request.
 */
abstract class LineFramer {
  readonly fatal: boolean;
  readonly maxLineBytes: number;
  /** Bytes consumed since the stream began. */
  bytesIn = 0;
  protected readonly core: Core;
  protected st: number;
  protected failure: Error | null = null;
  private readonly span: number;
  private base = 0;

  constructor(options: LineDecoderOptions | undefined, where: string) {
    optionsObject(options, where);
    this.fatal = options?.fatal ?? true;
    this.maxLineBytes = limitOption(options?.maxLineBytes, 'maxLineBytes', DEFAULT_MAX_LINE_BYTES);
    this.core = getCore();
    this.span = this.core.x.spanPtr() >> 2;
    this.st = this.core.x.linesNew(this.fatal ? F_FATAL : 0, this.maxLineBytes);
    stateRegistry?.register(this, this.st, this);
  }

  /** Bytes held for the next call: the unfinished line and an incomplete character. */
  get pendingBytes(): number {
    return this.failure ? 0 : this.core.x.framePending(this.st);
  }

  /** Bytes of core memory the decoder holds now: its record and its buffer (the unfinished line). */
  get retainedBytes(): number {
    return this.st === 0 ? 0 : this.core.x.frameRetained(this.st);
  }

  /** Starts a new stream: drops the unfinished line and a previous error. */
  reset(): void {
    if (this.st === 0) return; // disposed: stays so
    this.core.x.linesReset(this.st);
    this.bytesIn = 0;
    this.failure = null;
  }

  /** Returns the core memory now instead of when the decoder is garbage-collected. */
  dispose(): void {
    if (this.st === 0) return;
    stateRegistry?.unregister(this);
    this.core.x.frameFree(this.st);
    this.st = 0;
    this.failure = new TypeError('The decoder was disposed');
  }

  /** Collects the batch of the last call: lines into `out`, their absolute offsets into `offs`. */
  private collect(r: number, out: string[], offs: number[] | null): void {
    const core = this.core;
    core.sync();
    const i32 = core.i32;
    const res = core.res;
    const len = i32[res + 2];
    const n = i32[res + 3];
    const span = this.span;
    if (offs !== null) for (let i = 0; i < n; i++) offs.push(this.base + i32[span + 2 * i + 1]);
    if (r & R_RAW) {
      out.push(rawText(core, i32[res + 5], len, i32[res + 6] === 1, !this.fatal));
      return;
    }
    const enc = i32[res + 1];
    const outPtr = core.outPtr;
    if (enc === ENC_UTF8) {
      let prev = 0;
      for (let i = 0; i < n; i++) {
        const end = i32[span + 2 * i];
        out.push(core.utf8(outPtr + prev, end - prev));
        prev = end;
      }
      return;
    }
    if (n === 0) return;
    const text = enc === ENC_LATIN1 ? core.latin1(outPtr, len) : core.utf16(outPtr, len);
    if (n === 1) {
      out.push(text);
      return;
    }
    let prev = 0;
    for (let i = 0; i < n; i++) {
      const end = i32[span + 2 * i];
      out.push(text.slice(prev, end));
      prev = end;
    }
  }

  /** Turns an error status into the typed error (and remembers it). */
  private fail(r: number, out: unknown[]): never {
    const core = this.core;
    const rel = core.word(4);
    let err: Error;
    if (r & R_LIMIT) {
      err = new LineLimitError(this.base + rel, this.maxLineBytes, out);
    } else {
      const code = r & R_TRUNC ? 'ERR_TRUNCATED_UTF8' : 'ERR_INVALID_UTF8';
      const bytes = r & R_TRUNC ? core.u8.slice(this.st, this.st + Math.max(1, -rel)) : core.bytesAt(rel, 4);
      const e = new Utf8DecodeError(code, this.base + rel, '', bytes);
      Object.defineProperty(e, 'lines', { value: out, enumerable: true });
      err = e;
    }
    this.failure = err;
    throw err;
  }

  /** Frames a chunk; lines go to `out` (and offsets to `offs`). */
  protected run(chunk: Uint8Array, out: string[], offs: number[] | null, where: string, all: unknown[]): void {
    expectBytes(chunk, where);
    if (this.failure) throw this.failure;
    const core = this.core;
    const x = core.x;
    try {
      forPieces(core, chunk, (piece) => {
        core.sync();
        core.u8.set(piece, core.inPtr);
        this.base = this.bytesIn;
        this.bytesIn += piece.length;
        let r = x.linesPush(this.st, piece.length, core.textMode);
        for (;;) {
          this.collect(r, out, offs);
          if (r & (R_LIMIT | R_UTF8)) this.fail(r, all);
          if (!(r & R_MORE)) break;
          r = x.linesMore(this.st);
        }
      });
    } catch (e) {
      throw this.trapped(e);
    }
  }

  /** A core trap becomes the decoder's lasting CoreMemoryError. */
  private trapped(e: unknown): unknown {
    const err = coreTrap(this.core, e, this.base);
    if (err !== e) this.failure = err as Error;
    return err;
  }

  /** End of stream: the unterminated last line; then a new stream begins. */
  protected end(out: string[], offs: number[] | null, all: unknown[]): void {
    if (this.failure) throw this.failure;
    this.base = this.bytesIn;
    let r: number;
    try {
      r = this.core.x.linesFlush(this.st, this.core.textMode);
    } catch (e) {
      throw this.trapped(e);
    }
    if (r & R_TRUNC) {
      this.core.sync();
      const rel = this.core.word(4);
      const err = new Utf8DecodeError('ERR_TRUNCATED_UTF8', this.base + rel, '', new Uint8Array(0));
      Object.defineProperty(err, 'lines', { value: all, enumerable: true });
      this.bytesIn = 0;
      throw err;
    }
    try {
      this.collect(r, out, offs);
    } catch (e) {
      throw this.trapped(e);
    }
    this.bytesIn = 0;
  }
}

/**
 * Splits a byte stream into lines: LF, CRLF and lone CR end a line (a CR at the end of one chunk
 * and an LF at the start of the next are one terminator). Lines are returned without their
 * terminator. One leading BOM per stream is dropped. The unfinished line is held in the core
 * (appended to, never re-scanned), up to `maxLineBytes`.
 *
 * Errors: {@link Utf8DecodeError} (strict mode; the lines completed before the bad byte are on it
 * as `lines`), {@link LineLimitError}. After an error the decoder throws it again until `reset()`.
 */
export class LineDecoder extends LineFramer {
  constructor(options?: LineDecoderOptions) {
    super(options, 'LineDecoder');
  }

  /** Complete lines, without their terminator. */
  push(chunk: Uint8Array): string[] {
    const out: string[] = [];
    this.run(chunk, out, null, 'LineDecoder.push()', out);
    return out;
  }

  /** End of stream: the unterminated last line, if any; then a new stream begins. */
  flush(): string[] {
    const out: string[] = [];
    this.end(out, null, out);
    return out;
  }
}

/**
 * Newline-delimited JSON: each non-blank line (blank or whitespace-only lines are skipped) is
 * `JSON.parse`d. A bad line throws {@link NdjsonParseError} with its 1-based line number and
 * absolute byte offset; the values parsed before it by the same call are on the error as
 * `values`. Other errors as {@link LineDecoder}, with `lines` holding the parsed values.
 */
export class NdjsonDecoder extends LineFramer {
  private lineNo = 0;
  private readonly texts: string[] = [];
  private readonly offs: number[] = [];

  constructor(options?: LineDecoderOptions) {
    super(options, 'NdjsonDecoder');
  }

  private parse(values: unknown[]): void {
    const texts = this.texts;
    const offs = this.offs;
    for (let i = 0; i < texts.length; i++) {
      const line = texts[i];
      this.lineNo++;
      if (line.length === 0) continue;
      const c = line.charCodeAt(0);
      if ((c === 32 || c === 9) && line.trim() === '') continue;
      try {
        values.push(JSON.parse(line));
      } catch (cause) {
        const err = new NdjsonParseError(this.lineNo, offs[i], line, values, cause);
        texts.length = 0;
        offs.length = 0;
        this.failure = err;
        throw err;
      }
    }
    texts.length = 0;
    offs.length = 0;
  }

  /** The values of the complete lines of the chunk. */
  push(chunk: Uint8Array): unknown[] {
    const values: unknown[] = [];
    try {
      this.run(chunk, this.texts, this.offs, 'NdjsonDecoder.push()', values);
    } catch (err) {
      // The lines completed before a framing error are parsed into the error's `lines` (an
      // earlier bad JSON line is thrown instead: it comes first in the stream).
      const failure = this.failure;
      this.parse(values);
      this.failure = failure;
      throw err;
    }
    this.parse(values);
    return values;
  }

  /** End of stream: the value of an unterminated last line; then a new stream begins. */
  flush(): unknown[] {
    const values: unknown[] = [];
    this.end(this.texts, this.offs, values);
    this.parse(values);
    this.lineNo = 0;
    return values;
  }

  override reset(): void {
    super.reset();
    this.lineNo = 0;
    this.texts.length = 0;
    this.offs.length = 0;
  }
}
