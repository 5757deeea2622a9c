// Layer 2: lines and NDJSON. The core frames carry + chunk into lines (LF, CRLF, lone CR, a CR at
// the end of one chunk and its LF at the start of the next), validates UTF-8, and copies all
// complete lines of a call into one text run; this file builds one string per run and slices it.
import { type StateKind } from '../core/stream.js';
import { LineLimitError, NdjsonParseError } from './errors.js';
import { Utf8DecodeError } from '../bytes/errors.js';
import { FrameStream, frameLimit, frameTextMode, rawText } from './frame-stream.js';
import { booleanOption, checkOptions } from '../core/options.js';
import {
  ENC_LATIN1, ENC_UTF8, FR_ENC, FR_ERR, FR_LEN, FR_NREC, FR_RAW_ASCII, FR_RAW_PTR, FR_UNITS, F_FATAL, LINE_REC_WORDS, LR_END,
  LR_START, R_LIMIT, R_RAW, R_TRUNC,
} from '../core/generated/abi.js';

/** Where no call is under way, its output goes nowhere (a decoder makes no arrays of its own). */
const NOTHING = /* @__PURE__ */ Object.freeze([]) as unknown as unknown[];

/** Habits that explain an unknown option of a line decoder. */
const LINE_HINTS = {
  keys: {
    maxEventBytes: 'maxEventBytes is an SseParser option; a line decoder limits each line with maxLineBytes',
    ignoreBOM: 'a line decoder always drops one leading BOM per stream',
  },
};

/** A frame stream's record (frame kit) run as a line framer. */
const LINES_STATE: StateKind = { reset: (x, st) => x.linesReset(st), free: (x, st) => x.frameFree(st) };

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
abstract class LineFramer extends FrameStream {
  readonly fatal: boolean;
  readonly maxLineBytes: number;
  /** Where this call's lines go, their offsets (or null), and the output an error carries. */
  private sink: string[] = NOTHING as string[];
  private sinkOffs: number[] | null = null;
  private sinkAll: unknown[] = NOTHING;

  constructor(options: LineDecoderOptions | undefined, where: string) {
    checkOptions(options, where, ['fatal', 'maxLineBytes'], LINE_HINTS);
    const fatal = booleanOption(options?.fatal, 'fatal', where, true);
    const max = frameLimit(options?.maxLineBytes, 'maxLineBytes', where, DEFAULT_MAX_LINE_BYTES);
    super(where, LINES_STATE, (x) => x.linesNew(fatal ? F_FATAL : 0, max));
    this.fatal = fatal;
    this.maxLineBytes = max;
  }

  /** Bytes held for the next call: the unfinished line and an incomplete character. */
  get pendingBytes(): number {
    return this.failure ? 0 : this.core.x.framePending(this.st);
  }

  protected pushCore(len: number, mode: number): number {
    return this.core.x.linesPush(this.st, len, mode);
  }

  protected more(): number {
    return this.core.x.linesMore(this.st);
  }

  /** Collects the batch of the last call: lines into `out`, their absolute offsets into `offs`. */
  protected collect(r: number): void {
    const core = this.core;
    core.sync();
    const i32 = core.i32;
    const res = core.res;
    const len = i32[res + FR_LEN];
    const n = i32[res + FR_NREC];
    const span = core.span;
    const out = this.sink;
    const offs = this.sinkOffs;
    if (offs !== null) for (let i = 0; i < n; i++) offs.push(this.base + i32[span + LINE_REC_WORDS * i + LR_START]);
    if (r & R_RAW) {
      out.push(rawText(core, i32[res + FR_RAW_PTR], len, i32[res + FR_RAW_ASCII] === 1, !this.fatal));
      return;
    }
    if (n === 0) return;
    const enc = i32[res + FR_ENC];
    const outPtr = core.outPtr;
    let text: string;
    if (enc === ENC_UTF8) {
      if (i32[res + FR_UNITS] < 0) {
        // a dirty batch: each line is decoded on its own, bad bytes replaced as TextDecoder does per line
        let prev = 0;
        for (let i = 0; i < n; i++) {
          const end = i32[span + LINE_REC_WORDS * i + LR_END];
          out.push(core.utf8(outPtr + prev, end - prev));
          prev = end;
        }
        return;
      }
      text = core.utf8(outPtr, len); // line ends are UTF-16 offsets into this string
    } else {
      text = enc === ENC_LATIN1 ? core.latin1(outPtr, len) : core.utf16(outPtr, len);
    }
    if (n === 1) {
      out.push(text);
      return;
    }
    let prev = 0;
    for (let i = 0; i < n; i++) {
      const end = i32[span + LINE_REC_WORDS * i + LR_END];
      out.push(text.slice(prev, end));
      prev = end;
    }
  }

  /** The typed error of an error status, carrying the output of the call so far. */
  protected errorOf(r: number): Error {
    if (r & R_LIMIT) return new LineLimitError(this.errorOffset(), this.maxLineBytes, this.sinkAll);
    return this.utf8Error(r, 'lines', this.sinkAll);
  }

  /** Frames a chunk; lines go to `out` (and offsets to `offs`), `all` is what an error carries. */
  protected run(chunk: Uint8Array, out: string[], offs: number[] | null, where: string, all: unknown[]): void {
    this.open(chunk, where);
    this.sink = out;
    this.sinkOffs = offs;
    this.sinkAll = all;
    this.frameAll(chunk, frameTextMode(this.core) | this.platformValid(chunk));
  }

  /** End of stream: the unterminated last line; then a new stream begins. */
  protected end(out: string[], offs: number[] | null, all: unknown[]): void {
    if (this.failure) this.rethrow();
    this.sink = out;
    this.sinkOffs = offs;
    this.sinkAll = all;
    const r = this.flushCore(() => this.core.x.linesFlush(this.st, frameTextMode(this.core)));
    this.bytesIn = 0;
    // the line before the incomplete character is on the error, as lines decoded before any error are
    if (r & R_TRUNC) this.stop(this.errorOf(r));
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
        this.stop(err);
      }
    }
    texts.length = 0;
    offs.length = 0;
  }

  /** The values of the complete lines of the chunk. */
  push(chunk: Uint8Array): unknown[] {
    const values: unknown[] = [];
    return this.framed(() => this.run(chunk, this.texts, this.offs, 'NdjsonDecoder.push()', values), values);
  }

  /** End of stream: the value of an unterminated last line; then a new stream begins. */
  flush(): unknown[] {
    const values: unknown[] = [];
    this.framed(() => this.end(this.texts, this.offs, values), values);
    this.lineNo = 0;
    return values;
  }

  /**
   * Frames, then parses the lines into `values`. The lines completed before a framing error are
   * parsed into the error's `lines` (an earlier bad JSON line is thrown instead: it comes first
   * in the stream).
   */
  private framed(frame: () => void, values: unknown[]): unknown[] {
    try {
      frame();
    } catch (err) {
      this.parse(values);
      throw err;
    }
    this.parse(values);
    return values;
  }

  protected override resetState(): void {
    this.lineNo = 0;
    this.texts.length = 0;
    this.offs.length = 0;
  }
}
