// Layer 2: Server-Sent Events. The core runs the WHATWG "event stream interpretation" over bytes
// and writes the dispatched events of a call as spans into one text run; this file builds one
// string per run and slices it per event, or (the byte-level path) copies the run's UTF-8 bytes
// and exposes the events through a reader without a JS string or object per event.
import { SseLimitError, Utf8DecodeError } from './errors.js';
import {
  ENC_LATIN1, ENC_UTF8, K_COMMENT, K_EVENT, M_COMMENTS, M_EOF_DISPATCH, M_IN_SPANS, M_UTF8_OUT, R_LIMIT, R_MORE,
  R_RETRY, R_TRUNC, R_TRUNCATED, R_UTF8, SF_DA, SF_IA, SF_ID, SF_IN, SF_RAW, SF_SAME_TYPE, SF_TA, SF_TYPE, coreTrap,
  limitOption,
  optionsObject, rawText,
} from './frames.js';
import { type Core, F_FATAL, expectBytes, forPieces, getCore, stateRegistry } from './wasm.js';

/** Default of `maxEventBytes`: 16 MiB. */
export const DEFAULT_MAX_EVENT_BYTES = 16 * 1024 * 1024;

/** A dispatched event. */
export interface SseEvent {
  /** The event type: `'message'` when no (or an empty) `event` field was given. */
  type: string;
  /** The `data` lines joined with `'\n'`. */
  data: string;
  /** The last event ID at dispatch time (it persists across events, per the standard). */
  id: string;
}

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

/** A Utf8DecodeError or SseLimitError thrown by a parser carries the events dispatched before it. */
export interface SseUtf8DecodeError extends Utf8DecodeError {
  readonly events: SseEvent[] | SseByteEvents;
}

const REC_WORDS = 8;

/**
 * The events of one `pushBytes`/`flushBytes` call, for gateways: their data as validated UTF-8
 * bytes, no JS string and no JS object per event. The reader and its `bytes` are owned by the
 * parser and overwritten by its next `pushBytes`/`flushBytes`; copy what you keep.
 *
 * Layout: `bytes[dataStart(i), dataEnd(i))` is event i's data. Other bytes of the stream may lie
 * between the events' data (the parser copies a chunk once rather than each event's data out of
 * it). `type(i)` and `id(i)` are strings, built once per distinct value (a stream's types repeat;
 * its ID changes rarely).
 */
export class SseByteEvents {
  /** Number of events. */
  length = 0;
  /** The bytes the events' data lie in (only `[0, byteLength)` is meaningful). */
  bytes: Uint8Array = new Uint8Array(0);
  /** Bytes used in `bytes`. */
  byteLength = 0;
  /** @internal Per event: data start, data end, type index, id index, id-changed flag. */
  table = new Int32Array(5 * 4);
  // Distinct types and ids of this batch; counters rather than array lengths (setting an array's
  // length is a runtime call in V8).
  private readonly types: string[] = [];
  private readonly ids: string[] = [];
  private nTypes = 0;
  private nIds = 0;

  /** Input bytes seen since `bytes` / the table were last more than a quarter used. */
  private idleBytes = 0;
  private idleTable = 0;

  /**
   * @internal Empties the reader for a call that brings `incoming` bytes. The buffers start small
   * (a gateway holds thousands of parsers) and grow with use. Once large, they are kept while
   * they are used (a stream of large events reuses them), and dropped after four times their
   * size has gone by without needing them, so that growing them again costs a small fraction of
   * the bytes that went by.
   */
  clear(incoming: number): void {
    if (this.bytes.length > READER_KEEP_BYTES) {
      this.idleBytes = this.byteLength > this.bytes.length >> 2 ? 0 : this.idleBytes + incoming;
      if (this.idleBytes > 4 * this.bytes.length) {
        this.bytes = new Uint8Array(0);
        this.idleBytes = 0;
      }
    }
    if (this.table.length > 5 * READER_KEEP_EVENTS) {
      // (a table of 4-byte words, 5 per event, against the input that goes by)
      this.idleTable = this.length * 20 > this.table.length ? 0 : this.idleTable + incoming;
      if (this.idleTable > 16 * this.table.length) {
        this.table = new Int32Array(5 * 4);
        this.idleTable = 0;
      }
    }
    this.length = 0;
    this.byteLength = 0;
    this.nTypes = 0;
    this.nIds = 0;
  }

  /** @internal Appends bytes; returns their offset. */
  append(src: Uint8Array): number {
    const at = this.byteLength;
    const need = at + src.length;
    if (need > this.bytes.length) {
      const grown = new Uint8Array(Math.max(need, this.bytes.length * 2, 256));
      grown.set(this.bytes.subarray(0, at));
      this.bytes = grown;
    }
    this.bytes.set(src, at);
    this.byteLength = need;
    return at;
  }

  /** @internal Appends an event. */
  add(d0: number, d1: number, type: string, id: string, idChanged: boolean): void {
    const k = this.length;
    const t = this.room(1);
    t[5 * k] = d0;
    t[5 * k + 1] = d1;
    t[5 * k + 2] = this.typeIndex(type);
    t[5 * k + 3] = this.idIndex(id);
    t[5 * k + 4] = idChanged ? 1 : 0;
    this.length = k + 1;
  }

  /** @internal The table, with room for n more events. */
  room(n: number): Int32Array {
    const need = (this.length + n) * 5;
    if (need <= this.table.length) return this.table;
    const grown = new Int32Array(Math.max(need, this.table.length * 2));
    grown.set(this.table);
    return (this.table = grown);
  }

  /** @internal Index of `type` in the batch's types. */
  typeIndex(type: string): number {
    this.nTypes = interned(this.types, this.nTypes, type);
    return this.nTypes - 1;
  }

  /** @internal Index of `id` in the batch's IDs. */
  idIndex(id: string): number {
    this.nIds = interned(this.ids, this.nIds, id);
    return this.nIds - 1;
  }

  /** Offset of event i's data in `bytes`. */
  dataStart(i: number): number { return this.table[5 * i]; }
  /** End offset of event i's data in `bytes`. */
  dataEnd(i: number): number { return this.table[5 * i + 1]; }
  /** Event i's data: a view into `bytes` (no copy). */
  data(i: number): Uint8Array { return this.bytes.subarray(this.table[5 * i], this.table[5 * i + 1]); }
  /** Event i's data as a string (decoded on request). */
  dataText(i: number): string { return textDecoder.decode(this.data(i)); }
  /** Event i's type (`'message'` when none was given). */
  type(i: number): string { return this.types[this.table[5 * i + 2]]; }
  /** The last event ID when event i was dispatched. */
  id(i: number): string { return this.ids[this.table[5 * i + 3]]; }

  /**
   * All events in the SSE wire format, as a gateway forwards them: `event:` when the type is not
   * `message`, `id:` when the event changed the last event ID, one `data:` line per line of data.
   */
  encode(): Uint8Array {
    let size = 0;
    const head: Uint8Array[] = [];
    for (let i = 0; i < this.length; i++) {
      const t = this.type(i);
      let h = t === 'message' ? '' : `event: ${t}\n`;
      if (this.table[5 * i + 4]) h += `id: ${this.id(i)}\n`;
      const hb = h === '' ? EMPTY : textEncoder.encode(h);
      head.push(hb);
      const d = this.data(i);
      let lines = 1;
      for (let j = d.indexOf(10); j !== -1; j = d.indexOf(10, j + 1)) lines++;
      size += hb.length + d.length - (lines - 1) + lines * 7 + 1; // each LF of the data becomes a line end
    }
    const out = new Uint8Array(size);
    let o = 0;
    for (let i = 0; i < this.length; i++) {
      out.set(head[i], o);
      o += head[i].length;
      const d = this.data(i);
      let s = 0;
      for (;;) {
        const j = d.indexOf(10, s);
        const e = j === -1 ? d.length : j;
        out.set(DATA_PREFIX, o);
        o += 6;
        out.set(d.subarray(s, e), o);
        o += e - s;
        out[o++] = 10;
        if (j === -1) break;
        s = j + 1;
      }
      out[o++] = 10;
    }
    return out;
  }
}

/**
 * Adds `s` to the first `n` strings of `list` unless it repeats the last of them (a stream's types
 * repeat and its ID changes rarely); returns the new count, `s` being at count − 1.
 */
function interned(list: string[], n: number, s: string): number {
  if (n === 0 || list[n - 1] !== s) list[n++] = s;
  return n;
}

const textDecoder = new TextDecoder('utf-8', { ignoreBOM: true });
const textEncoder = new TextEncoder();
/** A byte reader's buffers above these sizes are dropped when a call uses less than a quarter. */
const READER_KEEP_BYTES = 64 * 1024;
const READER_KEEP_EVENTS = 1024;
const EMPTY = new Uint8Array(0);
const DATA_PREFIX = new Uint8Array([100, 97, 116, 97, 58, 32]); // 'data: '

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
export class SseParser {
  readonly fatal: boolean;
  readonly maxEventBytes: number;
  readonly eof: 'discard' | 'dispatch';
  /** Bytes consumed since the stream began. */
  bytesIn = 0;
  private readonly core: Core;
  private st: number;
  private readonly span: number;
  private readonly onComment: ((text: string) => void) | undefined;
  private readonly mode: number;
  private readonly bytesMode: number;
  /** Where the current piece was copied into the byte reader, −1 before it is needed. */
  private pieceAt = -1;
  /** The events of the current `push`/`flush` (made at the first batch's size) and their count. */
  private evs: SseEvent[] | null = null;
  private nEvs = 0;
  private failure: Error | null = null;
  private base = 0;
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
    optionsObject(options, 'SseParser');
    this.fatal = options?.fatal ?? true;
    this.maxEventBytes = limitOption(options?.maxEventBytes, 'maxEventBytes', DEFAULT_MAX_EVENT_BYTES);
    const eof = options?.eof ?? 'discard';
    if (eof !== 'discard' && eof !== 'dispatch') throw new TypeError(`SseParser eof must be 'discard' or 'dispatch', got ${String(eof)}`);
    this.eof = eof;
    const onComment = options?.onComment;
    if (onComment !== undefined && typeof onComment !== 'function') throw new TypeError(`SseParser onComment must be a function, got ${typeof onComment}`);
    this.onComment = onComment;
    this.core = getCore();
    this.span = this.core.x.spanPtr() >> 2;
    this.mode = this.core.textMode | (onComment ? M_COMMENTS : 0);
    this.bytesMode = this.mode | M_UTF8_OUT | M_IN_SPANS;
    this.st = this.core.x.sseNew(this.fatal ? F_FATAL : 0, this.maxEventBytes);
    stateRegistry?.register(this, this.st, this);
  }

  /** The last event ID string (set when an event is dispatched; kept across `reset()`). */
  get lastEventId(): string { return this._lastEventId; }
  /** The last valid `retry` value in milliseconds, kept across `reset()`. */
  get retry(): number | undefined { return this._retry; }
  /** After `flush()`: true if the stream ended inside a line or an event (cleared by the next push). */
  get truncated(): boolean { return this._truncated; }
  /** Bytes held for the next call: the unfinished line and event, and an incomplete character. */
  get pendingBytes(): number { return this.failure ? 0 : this.core.x.framePending(this.st); }

  /**
   * Bytes of core memory the parser holds now: its record and buffers, that is the unfinished
   * event and line, and a large event buffer kept for reuse (it is returned after four times its
   * size of input has gone by without a large event).
   */
  get retainedBytes(): number { return this.st === 0 ? 0 : this.core.x.frameRetained(this.st); }

  /** A new connection: drops the unfinished event and a previous error; keeps `lastEventId` and `retry`. */
  reset(): void {
    if (this.st === 0) return;
    this.core.x.sseReset(this.st);
    this.bytesIn = 0;
    this.failure = null;
    this._truncated = false;
  }

  /** Returns the core memory now instead of when the parser is garbage-collected. */
  dispose(): void {
    if (this.st === 0) return;
    stateRegistry?.unregister(this);
    this.core.x.frameFree(this.st);
    this.st = 0;
    this.failure = new TypeError('The parser was disposed');
  }

  /** The events dispatched by the chunk. */
  push(chunk: Uint8Array): SseEvent[] {
    this.evs = null;
    this.run(chunk, 'SseParser.push()');
    const out = this.takeEvents();
    this.deliverComments();
    return out;
  }

  /** End of stream: with `eof: 'dispatch'` an unterminated event; sets `truncated`; then a new stream begins. */
  flush(): SseEvent[] {
    this.evs = null;
    this.end(null);
    const out = this.takeEvents();
    this.deliverComments();
    return out;
  }

  /**
   * The byte-level path for gateways: like `push`, but the events' data stay UTF-8 bytes
   * (validated in strict mode), read through the returned {@link SseByteEvents}, which the parser
   * reuses on its next `pushBytes`/`flushBytes` call. Requires `fatal: true`.
   */
  pushBytes(chunk: Uint8Array): SseByteEvents {
    if (!(chunk instanceof Uint8Array)) expectBytes(chunk, 'SseParser.pushBytes()');
    if (this.failure !== null) throw this.failure;
    const b = this.bytesReader(chunk.length);
    this._truncated = false;
    try {
      if (chunk.length <= this.core.inCap) this.call(chunk, this.bytesMode, b);
      else forPieces(this.core, chunk, (piece) => this.call(piece, this.bytesMode, b));
    } catch (e) {
      throw this.trapped(e);
    }
    if (this.comments !== null) this.deliverComments();
    return b;
  }

  /** `flush()` for the byte-level path. */
  flushBytes(): SseByteEvents {
    const b = this.bytesReader(0);
    this.end(b);
    this.deliverComments();
    return b;
  }

  private bytesReader(incoming: number): SseByteEvents {
    if (!this.fatal) throw new TypeError('SseParser.pushBytes() delivers validated UTF-8 and needs fatal: true');
    const b = (this.byteEvents ??= new SseByteEvents());
    b.clear(incoming);
    return b;
  }

  private deliverComments(): void {
    const c = this.comments;
    if (c === null) return;
    this.comments = null;
    for (const text of c) this.onComment!(text);
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
  private collect(r: number, bytes: SseByteEvents | null, piece: Uint8Array | null): void {
    if (bytes !== null) {
      this.collectBytes(r, bytes, piece);
      return;
    }
    const core = this.core;
    core.sync();
    const i32 = core.i32;
    const res = core.res;
    const n = i32[res + 3];
    if (r & R_RETRY) this._retry = core.x.sseRetry(this.st);
    if (n === 0) return;
    const enc = i32[res + 1];
    const len = i32[res + 2];
    const outPtr = core.outPtr;
    let text = '';
    if (enc !== ENC_UTF8) text = enc === ENC_LATIN1 ? core.latin1(outPtr, len) : core.utf16(outPtr, len);
    let s = this.span;
    const plain = enc !== ENC_UTF8;
    let out = this.evs;
    if (out === null) {
      out = this.evs = new Array<SseEvent>(n);
      this.nEvs = 0;
    }
    let e = this.nEvs;
    for (let k = 0; k < n; k++, s += REC_WORDS) {
      const w0 = i32[s];
      const d0 = i32[s + 1], d1 = i32[s + 2];
      if (plain && (w0 === K_EVENT || w0 === (K_EVENT | SF_TYPE | SF_SAME_TYPE))) {
        // the common case: an event with the type 'message' or the previous one, the same id
        out[e++] = { type: w0 === K_EVENT ? 'message' : this.prevType, data: d0 === 0 && d1 === text.length ? text : text.slice(d0, d1), id: this._lastEventId };
        continue;
      }
      if (w0 & SF_RAW) {
        this.nEvs = e;
        this.rawRecord(w0, d0, d1, i32[s + 3], i32[s + 4], i32[s + 5], i32[s + 6], null);
        e = this.nEvs;
        continue;
      }
      this.typeAndId(w0, enc, text, i32[s + 3], i32[s + 4], i32[s + 5], i32[s + 6]);
      const kind = w0 & 15;
      if (kind === K_EVENT) {
        out[e++] = { type: w0 & SF_TYPE ? this.prevType : 'message', data: d0 === 0 && d1 === text.length ? text : this.piece(enc, text, d0, d1), id: this._lastEventId };
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
    const n = i32[res + 3];
    if (n === 0) return;
    const len = i32[res + 2];
    const outPtr = core.outPtr;
    const base = len === 0 ? 0 : bytes.append(core.u8.subarray(outPtr, outPtr + len));
    // The common records (type 'message' or the previous event's, the ID unchanged) are written
    // straight into the table; the indices of their type and ID are looked up when the type
    // changes, and again after any other record.
    let t = bytes.room(n);
    let k = bytes.length;
    let curType: string | null = null;
    let typeIx = 0;
    let idIx = -1;
    let pieceAt = this.pieceAt;
    let s = this.span;
    for (let q = 0; q < n; q++, s += REC_WORDS) {
      const w0 = i32[s];
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
        const w = 5 * k++;
        t[w] = at + i32[s + 1];
        t[w + 1] = at + i32[s + 2];
        t[w + 2] = typeIx;
        t[w + 3] = idIx;
        t[w + 4] = 0;
        continue;
      }
      bytes.length = k;
      this.pieceAt = pieceAt;
      this.byteRecord(w0, i32[s + 1], i32[s + 2], i32[s + 3], i32[s + 4], i32[s + 5], i32[s + 6], base, bytes, piece);
      k = bytes.length;
      pieceAt = this.pieceAt;
      t = bytes.table;
      curType = null;
      idIx = -1;
    }
    bytes.length = k;
    this.pieceAt = pieceAt;
  }

  /**
   * Copies the run into the reader: the piece, after the bytes the core placed right before it
   * (RES[7] of them, a power of two: the first part of an event whose data continues in the
   * piece, zeros before it). Returns where the piece begins (SF_IN spans are relative to it, the
   * joined event's start is negative).
   */
  private appendRun(bytes: SseByteEvents, piece: Uint8Array): number {
    const core = this.core;
    const head = core.i32[core.res + 7];
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
    const kind = w0 & 15;
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
    const kind = w0 & 15;
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

  private fail(r: number, bytes: SseByteEvents | null): never {
    const core = this.core;
    const rel = core.word(4);
    const events = bytes ?? this.takeEvents();
    let err: Error;
    if (r & R_LIMIT) {
      err = new SseLimitError(this.base + rel, this.maxEventBytes, events as unknown[]);
    } else {
      const trunc = (r & R_TRUNC) !== 0;
      const e = new Utf8DecodeError(trunc ? 'ERR_TRUNCATED_UTF8' : 'ERR_INVALID_UTF8', this.base + rel, '',
        trunc ? new Uint8Array(0) : core.bytesAt(rel, 4));
      Object.defineProperty(e, 'events', { value: events, enumerable: true });
      err = e;
    }
    this.failure = err;
    this.comments = null;
    throw err;
  }

  private run(chunk: Uint8Array, where: string): void {
    if (!(chunk instanceof Uint8Array)) expectBytes(chunk, where);
    if (this.failure !== null) throw this.failure;
    this._truncated = false;
    const mode = this.mode;
    try {
      if (chunk.length <= this.core.inCap) this.call(chunk, mode, null);
      else forPieces(this.core, chunk, (piece) => this.call(piece, mode, null));
    } catch (e) {
      throw this.trapped(e);
    }
  }

  /** A core trap becomes the parser's lasting CoreMemoryError. */
  private trapped(e: unknown): unknown {
    const err = coreTrap(this.core, e, this.base);
    if (err !== e) {
      this.failure = err as Error;
      this.comments = null;
    }
    return err;
  }

  /**
   * One call of the core on a piece that fits the input window, drained of its batches: events
   * with strings, or into `bytes` (the byte-level path).
   */
  private call(piece: Uint8Array, mode: number, bytes: SseByteEvents | null): void {
    const core = this.core;
    core.sync();
    core.u8.set(piece, core.inPtr);
    this.base = this.bytesIn;
    this.bytesIn += piece.length;
    this.pieceAt = -1;
    let r = core.x.ssePush(this.st, piece.length, mode);
    for (;;) {
      if (r !== 0 || core.i32[core.res + 3] !== 0) this.collect(r, bytes, piece);
      if (r & (R_LIMIT | R_UTF8)) this.fail(r, bytes);
      if (!(r & R_MORE)) break;
      r = core.x.sseMore(this.st);
    }
  }

  private end(bytes: SseByteEvents | null): void {
    if (this.failure) throw this.failure;
    const mode = (bytes !== null ? this.bytesMode : this.mode) | (this.eof === 'dispatch' ? M_EOF_DISPATCH : 0);
    this.base = this.bytesIn;
    let r: number;
    try {
      r = this.core.x.sseFlush(this.st, mode);
      this.collect(r, bytes, null);
    } catch (e) {
      throw this.trapped(e);
    }
    this.bytesIn = 0;
    if (r & (R_LIMIT | R_TRUNC)) {
      this._truncated = true;
      this.fail(r, bytes);
    }
    this._truncated = (r & R_TRUNCATED) !== 0;
  }
}

function checkField(value: unknown, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new TypeError(`encodeSse: ${name} must be a string, got ${typeof value}`);
  if (/[\r\n]/.test(value)) throw new TypeError(`encodeSse: ${name} must not contain CR or LF (it would end the field), got ${JSON.stringify(value)}`);
  return value;
}

/**
 * One event in the SSE wire format, ending with the blank line that dispatches it. Multi-line
 * data becomes one `data:` line per line (CR, LF and CRLF all split, so a parser rebuilds the data
 * with LF). CR or LF in `type` or `id` and NUL in `id` throw a TypeError; `retry` must be a
 * non-negative integer.
 */
export function encodeSse(event: { data: string; type?: string; id?: string; retry?: number }): string {
  if (event === null || typeof event !== 'object') throw new TypeError(`encodeSse expects an event object, got ${event === null ? 'null' : typeof event}`);
  const { data } = event;
  if (typeof data !== 'string') throw new TypeError(`encodeSse: data must be a string, got ${typeof data}`);
  const type = checkField(event.type, 'type');
  const id = checkField(event.id, 'id');
  if (id !== undefined && id.includes('\0')) throw new TypeError('encodeSse: id must not contain NUL (a parser would ignore the field)');
  let out = '';
  if (type !== undefined && type !== '') out += `event: ${type}\n`;
  if (id !== undefined) out += id === '' ? 'id\n' : `id: ${id}\n`;
  if (event.retry !== undefined) {
    const r = event.retry;
    if (typeof r !== 'number' || !Number.isSafeInteger(r) || r < 0) throw new TypeError(`encodeSse: retry must be a non-negative integer, got ${String(r)}`);
    out += `retry: ${r}\n`;
  }
  if (data.indexOf('\n') === -1 && data.indexOf('\r') === -1) return `${out}data: ${data}\n\n`;
  for (const line of data.split(/\r\n|\r|\n/)) out += `data: ${line}\n`;
  return `${out}\n`;
}
