// Layer 2: Server-Sent Events. The core runs the WHATWG "event stream interpretation" over bytes
// and writes the dispatched events of a call as spans into one text run; this file builds one
// string per run and slices it per event, or (the byte-level path) copies the run's UTF-8 bytes
// and exposes the events through a reader without a JS string or object per event.
import { type StateKind } from '../core/stream.js';
import { ReentrantCallError, SseCallbackError, SseLimitError } from './errors.js';
import { Utf8DecodeError } from '../bytes/errors.js';
import { FrameStream, frameLimit, frameTextMode, rawText, sseSplitMode } from './frame-stream.js';
import { booleanOption, checkOptions, functionOption, oneOf } from '../core/options.js';
import { stringRoutes } from '../core/strings.js';
import {
  ENC_LATIN1, ENC_UTF16, ENC_UTF8, EV_DATA0, EV_DATA1, EV_ID, EV_ID_CHANGED, EV_TYPE, EV_WORDS, FR_ENC, FR_ERR, FR_JOIN, FR_LEN,
  FR_MIDS, FR_NREC, FR_UNITS, F_FATAL, K_COMMENT, K_EVENT, K_MASK, MIDS_OFF, M_COMMENTS, M_EOF_DISPATCH, M_IN_SPANS,
  M_SPLIT, M_UTF8_OUT, PATCH_WORDS, R_LIMIT, R_RETRY, R_TRUNC, R_TRUNCATED, SF_DA, SF_IA, SF_ID, SF_IN, SF_RAW,
  SF_SAME_TYPE, SF_SPLIT, SF_TA, SF_TYPE, SR_DATA0, SR_DATA1, SR_HEAD, SR_ID0, SR_ID1, SR_TYPE0, SR_TYPE1, SSE_REC_WORDS,
} from '../core/generated/abi.js';
import { SseByteEvents } from './sse-bytes.js';
import type { SseEvent } from './types.js';

export { SseByteEvents } from './sse-bytes.js';
export type { SseEvent } from './types.js';
export { encodeSse } from './sse-encode.js';

/** Habits (eventsource-parser's createParser callbacks, EventSource) that explain an unknown option. */
const SSE_HINTS = {
  keys: {
    onEvent: 'events are returned by push(chunk), not passed to a callback (an eventsource-parser habit)',
    onError: 'errors are thrown by push(chunk) as typed errors, with the events before them on the error',
    onRetry: 'read parser.retry after a push',
    maxLineBytes: 'an SseParser limits each event, its unfinished line included, with maxEventBytes',
    withCredentials: 'SseParser parses bytes; it opens no connection',
  },
};

/** A frame stream's record (frame kit) run as an SSE parser. */
const SSE_STATE: StateKind = { reset: (x, st) => x.sseReset(st), free: (x, st) => x.frameFree(st) };

/** Default of `maxEventBytes`: 16 MiB. */
export const DEFAULT_MAX_EVENT_BYTES = 16 * 1024 * 1024;

/** Options of {@link SseParser} and {@link SseDecoderStream}. */
export interface SseParserOptions {
  /**
   * Strict decoding: invalid UTF-8 throws {@link Utf8DecodeError} with the absolute byte offset
   * (the events dispatched before it are on the error as `events`). With `false`, bad sequences
   * become U+FFFD exactly as `TextDecoder` (and so `EventSource`) does.
   * @defaultValue true
   */
  fatal?: boolean;
  /**
   * The most bytes one event may hold while it is being assembled: its data, event type and ID
   * fields plus its unfinished line. A larger event throws {@link SseLimitError} before the
   * memory is spent; the parser then stays failed until `reset()`.
   * @defaultValue 16 MiB (16 777 216)
   */
  maxEventBytes?: number;
  /**
   * Called with the text of each comment line (`:` and one following space removed). Comment
   * strings are built only when this is given. Called after the chunk's events are framed,
   * before `push` returns.
   * @defaultValue undefined (comments are skipped without being decoded)
   */
  onComment?: (text: string) => void;
  /**
   * What `flush()` does with an event that was not ended by a blank line: `'discard'` it (the
   * standard), or `'dispatch'` it.
   * @defaultValue 'discard'
   */
  eof?: 'discard' | 'dispatch';
}

/** Split batches with at most this many units of middles make each middle on its own (see collect). */
const FEW_MIDS = 256;

/** A Utf8DecodeError or SseLimitError thrown by a parser carries the events dispatched before it. */
export interface SseUtf8DecodeError extends Utf8DecodeError {
  readonly events: SseEvent[] | SseByteEvents;
}

/**
 * Server-Sent Events, exactly as the WHATWG HTML "event stream interpretation" states: one
 * leading BOM per stream, LF/CRLF/CR line ends (split anywhere), comments, `data` joined with LF,
 * `event` (empty ⇒ `message`), `id` (ignored when it contains NUL; persists across events),
 * `retry` (ASCII digits only), dispatch on a blank line when data is non-empty, and an event not
 * ended by a blank line dropped at end of stream (or delivered with `eof: 'dispatch'`).
 *
 * Parsing runs in WebAssembly over the bytes; events held across chunks live in the parser's
 * buffers in the shared core, up to `maxEventBytes`.
 *
 * Errors: {@link Utf8DecodeError} (strict mode) and {@link SseLimitError}, each with the absolute
 * byte offset and the events dispatched before it by the same call as `events`. After an error
 * the parser throws it again until `reset()`.
 */
export class SseParser extends FrameStream {
  readonly fatal: boolean;
  readonly maxEventBytes: number;
  readonly eof: 'discard' | 'dispatch';
  private readonly onComment: ((text: string) => void) | undefined;
  private readonly mode: number;
  private readonly bytesMode: number;
  /** Reads of up to this many bytes (`sseCoreTo`: the browsers' short reads) are framed in `shortMode`. */
  private readonly shortTo: number;
  private readonly shortMode: number;
  /** Where the current piece was copied into the byte reader, −1 before it is needed. */
  private pieceAt = -1;
  /** The events of the current `push`/`flush` (made at the first batch's size) and their count. */
  private evs: SseEvent[] | null = null;
  private nEvs = 0;
  /** Where this call's events go: the byte-level reader, or null for string events. */
  private target: SseByteEvents | null = null;
  /** True while onComment runs: calls on the parser are refused then. */
  private delivering = false;
  private _lastEventId = '';
  private _retry: number | undefined = undefined;
  private _truncated = false;
  private prevType = 'message';
  private comments: string[] | null = null;
  private byteEvents: SseByteEvents | null = null;

  constructor(options?: SseParserOptions) {
    if (typeof options === 'function') {
      throw new TypeError('SseParser expects an options object, got a function. Events are returned by push(chunk); for comments use new SseParser({ onComment: fn }).');
    }
    checkOptions(options, 'SseParser', ['fatal', 'maxEventBytes', 'onComment', 'eof'], SSE_HINTS);
    const fatal = booleanOption(options?.fatal, 'fatal', 'SseParser', true);
    const max = frameLimit(options?.maxEventBytes, 'maxEventBytes', 'SseParser', DEFAULT_MAX_EVENT_BYTES);
    const eof = oneOf(options?.eof, 'eof', 'SseParser', ['discard', 'dispatch'], 'discard');
    const onComment = functionOption<(text: string) => void>(options?.onComment, 'onComment', 'SseParser');
    super('SseParser', SSE_STATE, (x) => x.sseNew(fatal ? F_FATAL : 0, max));
    this.fatal = fatal;
    this.maxEventBytes = max;
    this.eof = eof;
    this.onComment = onComment;
    const comments = onComment ? M_COMMENTS : 0;
    // the browsers' route, in V8: data with non-ASCII text gives its middle apart (see collect)
    this.mode = frameTextMode(this.core) | sseSplitMode(this.core) | comments;
    this.bytesMode = comments | M_UTF8_OUT | M_IN_SPANS; // byte spans: no M_UTF16_POS
    // the browsers' short reads: the core's route, Latin-1 or UTF-16 text (core/strings.ts, sseCoreTo)
    this.shortTo = stringRoutes(this.core).sseCoreTo;
    this.shortMode = comments;
  }

  /** The last event ID string (set when an event is dispatched; kept across `reset()`). */
  get lastEventId(): string { return this._lastEventId; }
  /** The last valid `retry` value in milliseconds, kept across `reset()`. */
  get retry(): number | undefined { return this._retry; }
  /** After `flush()`: true if the stream ended inside a line or an event (cleared by the next push). */
  get truncated(): boolean { return this._truncated; }
  /** Bytes held for the next call: the unfinished line and event, and an incomplete character. */
  get pendingBytes(): number { return this.failure ? 0 : this.core.x.framePending(this.st); }


  /** A new connection: drops the unfinished event and a previous error; keeps `lastEventId` and `retry`. */
  override reset(): void {
    if (this.delivering) throw new ReentrantCallError('SseParser.reset()');
    super.reset();
  }

  override dispose(): void {
    if (this.delivering) throw new ReentrantCallError('SseParser.dispose()');
    super.dispose();
  }

  protected override resetState(): void {
    this._truncated = false;
  }

  /** The events dispatched by the chunk. */
  push(chunk: Uint8Array): SseEvent[] {
    if (this.delivering) throw new ReentrantCallError('SseParser.push()');
    this.evs = null;
    this.run(chunk, 'SseParser.push()');
    const out = this.takeEvents();
    if (this.comments !== null) this.deliverComments(out);
    return out;
  }

  /** End of stream: with `eof: 'dispatch'` an unterminated event; sets `truncated`; then a new stream begins. */
  flush(): SseEvent[] {
    if (this.delivering) throw new ReentrantCallError('SseParser.flush()');
    this.evs = null;
    this.end(null);
    const out = this.takeEvents();
    if (this.comments !== null) this.deliverComments(out);
    return out;
  }

  /**
   * The byte-level path for gateways: like `push`, but the events' data stay UTF-8 bytes
   * (validated in strict mode), read through the returned {@link SseByteEvents}, which the parser
   * reuses on its next `pushBytes`/`flushBytes` call. Requires `fatal: true`.
   */
  pushBytes(chunk: Uint8Array): SseByteEvents {
    if (this.delivering) throw new ReentrantCallError('SseParser.pushBytes()');
    this.open(chunk, 'SseParser.pushBytes()');
    const b = this.bytesReader(chunk.length);
    this._truncated = false;
    this.target = b;
    this.frameAll(chunk, this.bytesMode | this.platformValid(chunk));
    if (this.comments !== null) this.deliverComments(b);
    return b;
  }

  /** `flush()` for the byte-level path. */
  flushBytes(): SseByteEvents {
    if (this.delivering) throw new ReentrantCallError('SseParser.flushBytes()');
    const b = this.bytesReader(0);
    this.end(b);
    if (this.comments !== null) this.deliverComments(b);
    return b;
  }

  private bytesReader(incoming: number): SseByteEvents {
    if (!this.fatal) throw new TypeError('SseParser.pushBytes() delivers validated UTF-8 and needs fatal: true');
    const b = (this.byteEvents ??= new SseByteEvents());
    b.clear(incoming);
    return b;
  }

  /**
   * Calls onComment with the call's comments, after its events were framed. A handler that throws
   * stops the parser with an SseCallbackError that carries the call's events (nothing is lost);
   * a call on the parser from inside the handler is refused (ReentrantCallError).
   */
  private deliverComments(events: SseEvent[] | SseByteEvents): void {
    const c = this.comments!;
    this.comments = null;
    this.delivering = true;
    try {
      for (const text of c) this.onComment!(text);
    } catch (cause) {
      this.stop(new SseCallbackError(cause, events));
    } finally {
      this.delivering = false;
    }
  }

  /** The events collected by this call, as a fresh array. */
  private takeEvents(): SseEvent[] {
    const out = this.evs;
    if (out === null) return [];
    this.evs = null;
    if (out.length !== this.nEvs) out.length = this.nEvs;
    return out;
  }

  /**
   * Collects the batch of the last call: events with strings into `evs`, or into `bytes` (with
   * `piece`, the chunk the run was written from, for the events still in it). The
   * array is made at the batch's size (an empty array literal would be grown by V8 on its first
   * store, a runtime call that cost more than the rest of this loop).
   */
  protected collect(r: number, piece: Uint8Array | null): void {
    const bytes = this.target;
    if (bytes !== null) {
      this.collectBytes(r, bytes, piece);
      return;
    }
    const core = this.core;
    core.sync();
    const i32 = core.i32;
    const res = core.res;
    const n = i32[res + FR_NREC];
    if (r & R_RETRY) this._retry = core.x.sseRetry(this.st);
    if (n === 0) return;
    let enc = i32[res + FR_ENC];
    const len = i32[res + FR_LEN];
    const outPtr = core.outPtr;
    if (n === 1 && this.evs === null && enc !== ENC_UTF8) {
      // A read that is one event of the type 'message' or the one before (the usual read of a
      // live stream, which the core frames in one step), with none of the loop's set-up.
      const s = core.span;
      const w0 = i32[s + SR_HEAD];
      if (w0 === K_EVENT || w0 === (K_EVENT | SF_TYPE | SF_SAME_TYPE)) {
        const text = enc === ENC_LATIN1 ? core.batchLatin1(outPtr, len) : core.batchUtf16(outPtr, len);
        const d0 = i32[s + SR_DATA0], d1 = i32[s + SR_DATA1];
        this.evs = [{ type: w0 === K_EVENT ? 'message' : this.prevType, data: d0 === 0 && d1 === len ? text : text.slice(d0, d1), id: this._lastEventId }];
        this.nEvs = 1;
        return;
      }
    }
    let text = '';
    // M_SPLIT: the middles of the batch's non-ASCII data spans, in order (see M_SPLIT)
    let mids = '';
    let nm = 0;
    if (enc !== ENC_UTF8) {
      text = enc === ENC_LATIN1 ? core.batchLatin1(outPtr, len) : core.batchUtf16(outPtr, len);
    } else if (i32[res + FR_UNITS] >= 0) {
      // the browser route: spans are UTF-16 offsets into the batch's one decoded string
      text = core.utf8(outPtr, len);
      enc = ENC_UTF16;
      nm = i32[res + FR_MIDS];
      // a few middles (a small read) are made one by one, with no second call for the batch
      if (nm > FEW_MIDS) mids = core.wellFormed16(outPtr + MIDS_OFF, nm);
    } // else a dirty batch: each span is decoded on its own (bad bytes replaced per span)
    const midsPtr = outPtr + MIDS_OFF;
    let s = core.span;
    let pk = core.patch; // the next PATCH entry
    let mAt = 0; // where the next middle begins in `mids`
    const plain = enc !== ENC_UTF8;
    let out = this.evs;
    if (out === null) {
      out = this.evs = new Array<SseEvent>(n);
      this.nEvs = 0;
    }
    let e = this.nEvs;
    for (let k = 0; k < n; k++, s += SSE_REC_WORDS) {
      const w0 = i32[s + SR_HEAD];
      const d0 = i32[s + SR_DATA0], d1 = i32[s + SR_DATA1];
      if (plain && (w0 === K_EVENT || w0 === (K_EVENT | SF_TYPE | SF_SAME_TYPE))) {
        // the common case: an event with the type 'message' or the previous one, the same id
        out[e++] = { type: w0 === K_EVENT ? 'message' : this.prevType, data: d0 === 0 && d1 === text.length ? text : text.slice(d0, d1), id: this._lastEventId };
        continue;
      }
      let data: string | null = null;
      if (w0 & SF_SPLIT) {
        // a data value with its middle apart (M_SPLIT): the head, the middle (at `cut`), the tail
        const cut = i32[pk], mu = i32[pk + 1];
        pk += PATCH_WORDS;
        data = text.slice(d0, cut) + (nm > FEW_MIDS ? mids.slice(mAt, mAt + mu) : core.utf16(midsPtr + 2 * mAt, mu)) + text.slice(cut, d1);
        mAt += mu;
        if (w0 === (K_EVENT | SF_SPLIT) || w0 === (K_EVENT | SF_TYPE | SF_SAME_TYPE | SF_SPLIT)) {
          // ... of the common case's kind
          out[e++] = { type: w0 === (K_EVENT | SF_SPLIT) ? 'message' : this.prevType, data, id: this._lastEventId };
          continue;
        }
      }
      if (w0 & SF_RAW) {
        this.nEvs = e;
        this.rawRecord(w0, d0, d1, i32[s + SR_TYPE0], i32[s + SR_TYPE1], i32[s + SR_ID0], i32[s + SR_ID1], null);
        e = this.nEvs;
        continue;
      }
      this.typeAndId(w0, enc, text, i32[s + SR_TYPE0], i32[s + SR_TYPE1], i32[s + SR_ID0], i32[s + SR_ID1]);
      const kind = w0 & K_MASK;
      if (kind === K_EVENT) {
        data ??= d0 === 0 && d1 === text.length ? text : this.piece(enc, text, d0, d1);
        out[e++] = { type: w0 & SF_TYPE ? this.prevType : 'message', data, id: this._lastEventId };
      } else if (kind === K_COMMENT) {
        (this.comments ??= []).push(this.piece(enc, text, d0, d1));
      }
    }
    this.nEvs = e;
  }

  /**
   * The byte-level twin of `collect`. The batch's text is UTF-8; an event whose data is still in
   * the run (SF_IN: its span is relative to the input window) is read from the `piece` the run was
   * written from, which is copied into `bytes` once for all its events.
   */
  private collectBytes(r: number, bytes: SseByteEvents, piece: Uint8Array | null): void {
    const core = this.core;
    core.sync();
    const i32 = core.i32;
    const res = core.res;
    if (r & R_RETRY) this._retry = core.x.sseRetry(this.st);
    const n = i32[res + FR_NREC];
    if (n === 0) return;
    const len = i32[res + FR_LEN];
    const outPtr = core.outPtr;
    const base = len === 0 ? 0 : bytes.append(core.u8.subarray(outPtr, outPtr + len));
    // The common records (type 'message' or the previous event's, the ID unchanged) are written
    // straight into the table; the indices of their type and ID are looked up when the type
    // changes, and again after any other record.
    let t = bytes.room(n);
    let k = bytes.n;
    let curType: string | null = null;
    let typeIx = 0;
    let idIx = -1;
    let pieceAt = this.pieceAt;
    let s = core.span;
    for (let q = 0; q < n; q++, s += SSE_REC_WORDS) {
      const w0 = i32[s + SR_HEAD];
      const plain = w0 & ~SF_IN;
      if (plain === K_EVENT || plain === (K_EVENT | SF_TYPE | SF_SAME_TYPE)) {
        let at = base;
        if (w0 !== plain) {
          if (pieceAt < 0) pieceAt = this.appendRun(bytes, piece!);
          at = pieceAt;
        }
        const type = plain === K_EVENT ? 'message' : this.prevType;
        if (type !== curType) {
          curType = type;
          typeIx = bytes.typeIndex(type);
          if (idIx < 0) idIx = bytes.idIndex(this._lastEventId);
        }
        const w = EV_WORDS * k++;
        t[w + EV_DATA0] = at + i32[s + SR_DATA0];
        t[w + EV_DATA1] = at + i32[s + SR_DATA1];
        t[w + EV_TYPE] = typeIx;
        t[w + EV_ID] = idIx;
        t[w + EV_ID_CHANGED] = 0;
        continue;
      }
      bytes.n = k;
      this.pieceAt = pieceAt;
      this.byteRecord(w0, i32[s + SR_DATA0], i32[s + SR_DATA1], i32[s + SR_TYPE0], i32[s + SR_TYPE1], i32[s + SR_ID0],
        i32[s + SR_ID1], base, bytes, piece);
      k = bytes.n;
      pieceAt = this.pieceAt;
      t = bytes.table;
      curType = null;
      idIx = -1;
    }
    bytes.n = k;
    this.pieceAt = pieceAt;
  }

  /**
   * Copies the run into the reader: the piece, after the bytes the core placed right before it
   * (FR_JOIN of them, a power of two: the first part of an event whose data continues in the
   * piece, zeros before it). Returns where the piece begins (SF_IN spans are relative to it, the
   * joined event's start is negative).
   */
  private appendRun(bytes: SseByteEvents, piece: Uint8Array): number {
    const core = this.core;
    const head = core.i32[core.res + FR_JOIN];
    if (head !== 0) bytes.append(core.head(head));
    return bytes.append(piece);
  }

  /** Any other record of the byte-level path: a type or ID, a raw span, a comment. */
  private byteRecord(w0: number, d0: number, d1: number, t0: number, t1: number, i0: number, i1: number,
    base: number, bytes: SseByteEvents, piece: Uint8Array | null): void {
    if (w0 & SF_RAW) {
      this.rawRecord(w0, d0, d1, t0, t1, i0, i1, bytes);
      return;
    }
    if (w0 & (SF_ID | SF_TYPE)) this.typeAndId(w0, ENC_UTF8, '', t0, t1, i0, i1);
    const kind = w0 & K_MASK;
    if (kind === K_EVENT) {
      let at = base;
      if (w0 & SF_IN) {
        if (this.pieceAt < 0) this.pieceAt = this.appendRun(bytes, piece!);
        at = this.pieceAt;
      }
      bytes.add(at + d0, at + d1, w0 & SF_TYPE ? this.prevType : 'message', this._lastEventId, (w0 & SF_ID) !== 0);
    } else if (kind === K_COMMENT) {
      (this.comments ??= []).push(this.piece(ENC_UTF8, '', d0, d1));
    }
  }

  /** Takes a record's type (into `prevType`) and its new last event ID, when it has them. */
  private typeAndId(w0: number, enc: number, text: string, t0: number, t1: number, i0: number, i1: number): void {
    if ((w0 & (SF_TYPE | SF_SAME_TYPE)) === SF_TYPE) this.prevType = this.piece(enc, text, t0, t1);
    if (w0 & SF_ID) this._lastEventId = this.piece(enc, text, i0, i1);
  }

  /** A string out of the batch text (UTF-8 in the output window when `enc` says so). */
  private piece(enc: number, text: string, a: number, b: number): string {
    if (a === b) return '';
    if (enc === ENC_UTF8) return this.core.utf8(this.core.outPtr + a, b - a);
    return text.slice(a, b);
  }

  /** A record whose spans are addresses of UTF-8 bytes in the parser's buffers. */
  private rawRecord(w0: number, d0: number, d1: number, t0: number, t1: number, i0: number, i1: number,
    bytes: SseByteEvents | null): void {
    const core = this.core;
    const dirty = !this.fatal;
    let type = 'message';
    if (w0 & SF_TYPE) type = this.prevType = rawText(core, t0, t1 - t0, (w0 & SF_TA) !== 0, dirty);
    if (w0 & SF_ID) this._lastEventId = rawText(core, i0, i1 - i0, (w0 & SF_IA) !== 0, dirty);
    const kind = w0 & K_MASK;
    if (kind === K_EVENT) {
      if (bytes !== null) {
        const at = bytes.append(core.u8.subarray(d0, d1));
        bytes.add(at, at + d1 - d0, type, this._lastEventId, (w0 & SF_ID) !== 0);
      } else {
        (this.evs ??= [])[this.nEvs++] = { type, data: rawText(core, d0, d1 - d0, (w0 & SF_DA) !== 0, dirty), id: this._lastEventId };
      }
    } else if (kind === K_COMMENT) {
      (this.comments ??= []).push(rawText(core, d0, d1 - d0, (w0 & SF_DA) !== 0, dirty));
    }
  }

  /**
   * The typed error of an error status, carrying the events of the call so far; the comments
   * before it go to onComment first, as they would have without the error (a handler that throws
   * stops the parser with that instead).
   */
  protected errorOf(r: number): Error {
    const events = this.target ?? this.takeEvents();
    // (made before the handler runs: it may use another decoder of the realm's core)
    const err = r & R_LIMIT ? new SseLimitError(this.errorOffset(), this.maxEventBytes, events) : this.utf8Error(r, 'events', events);
    if (this.comments !== null) this.deliverComments(events);
    return err;
  }

  private run(chunk: Uint8Array, where: string): void {
    this.open(chunk, where);
    this._truncated = false;
    this.target = null;
    this.frameAll(chunk, (chunk.length <= this.shortTo ? this.shortMode : this.mode) | this.platformValid(chunk));
  }

  protected override released(): void {
    super.released();
    this.byteEvents = null; // the error may carry it; the parser makes a new one after reset()
  }

  protected override trapped(e: unknown, offset: number): unknown {
    const err = super.trapped(e, offset);
    if (err !== e) this.comments = null;
    return err;
  }

  protected pushCore(len: number, mode: number): number {
    this.pieceAt = -1;
    return this.core.x.ssePush(this.st, len, mode);
  }

  protected more(): number {
    return this.core.x.sseMore(this.st);
  }

  private end(bytes: SseByteEvents | null): void {
    if (this.failure) this.rethrow();
    const mode = (bytes !== null ? this.bytesMode : this.mode) | (this.eof === 'dispatch' ? M_EOF_DISPATCH : 0);
    this.target = bytes;
    const r = this.flushCore(() => this.core.x.sseFlush(this.st, mode));
    this.bytesIn = 0;
    if (r & (R_LIMIT | R_TRUNC)) {
      this._truncated = true;
      this.stop(this.errorOf(r));
    }
    this._truncated = (r & R_TRUNCATED) !== 0;
  }
}
