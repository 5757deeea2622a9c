// Layer 4, what a model stream and a relay share: the provider's stream framed by the core (SSE
// events or lines, on the byte-level path: UTF-8 validated in place), each event's JSON read there
// with the format's path program in the same call (quiet events, text deltas, read to the end by
// the core; every other event handed to the format's description), the status, finish reason,
// usage and reasoning, and the provider's errors as ModelStreamErrors.
import { booleanOption, oneOf } from '../core/options.js';
import { type StateKind } from '../core/stream.js';
import {
  DF_DONE, DF_ERROR, FR_NREC, F_FATAL, JE_TRUNCATED, JREC_WORDS, LINE_REC_WORDS, LR_END, LR_START, MDR_BLANK, MDR_COMMENTS,
  MDR_DOCS, MDR_GATHERED, MDR_NEXT, MDR_QUIET, MDR_READ, MDR_SCRATCH, MD_FLAGS, MD_J0, MD_JN, MD_LEN, MD_PTR, MD_REC, MK_SSE, R_LIMIT,
  SR_DSTART, SSE_REC_WORDS,
} from '../core/generated/abi.js';
import { FrameStream, frameLimit } from '../frames/frame-stream.js';
import { DEFAULT_MAX_EVENT_BYTES } from '../frames/sse.js';
import { JSON_ERRORS, NOTHING_SAID, type Said, borrowDoc } from './document.js';
import { ModelStreamError } from './errors.js';
import { type FormatSpec } from './formats/describe.js';
import { FORMATS, MODEL_FORMATS, type ModelFormat } from './formats/index.js';
import { type Plan, planOf } from './plan.js';

export type ModelStatus = 'open' | 'done' | 'truncated' | 'failed';

/** The options of a model reader (stream or relay). */
export interface ReaderOptions {
  format: ModelFormat; fatal?: boolean; maxEventBytes?: number; choice?: number;
  eof?: 'error' | 'allow'; raw?: boolean; normalize?: 'NFC' | false;
}

const SSE_STATE: StateKind = { reset: (x, st) => x.sseReset(st), free: (x, st) => x.frameFree(st) };
const LINES_STATE: StateKind = { reset: (x, st) => x.linesReset(st), free: (x, st) => x.frameFree(st) };

/**
 * What one call of a model reader (a push or a flush, with its continuations) holds while it runs.
 * A call borrows the realm's one CallState with `begin`, which resets it; nothing of it means
 * anything after the call. Calls do not nest (a reader runs no user code during one: it has no
 * callbacks), so every reader and relay of the realm can share it, and an idle one costs nothing.
 */
export class CallState {
  /** The reader whose call it is. */
  reader: ModelReader | null = null;
  /** The text the call committed so far (ModelStream; on its errors). */
  out = '';
  /** Gather entries written for the batch being read. */
  gathered = 0;
  /** The frame call just made read its batch's documents itself (its MDR_* words are in the result record). */
  readPending = false;
  /** A flush is under way. */
  flushing = false;

  begin(reader: ModelReader): this {
    this.reader = reader;
    this.out = '';
    this.gathered = 0;
    this.readPending = false;
    this.flushing = false;
    return this;
  }
}

/** The realm's one CallState. */
export const call = /* @__PURE__ */ new CallState();

let utf8: TextDecoder | undefined;
const decodeUtf8 = (b: Uint8Array): string => (utf8 ??= new TextDecoder('utf-8', { fatal: false, ignoreBOM: true })).decode(b);

/**
 * What a model stream and a relay share: the provider's stream framed by the core (SSE events or
 * lines), each event's JSON read there, the format's description over the records, the status,
 * finish reason, usage and reasoning, and the provider's errors as ModelStreamErrors. A subclass
 * decides what becomes of the text spans (a string for the text layer, or bytes for a client):
 * `span` (a text span of an event the description read), `batchDone` (the end of a batch: its
 * bytes are overwritten by the next core call), `readMode` (the core's ME_* mode for its next
 * read, with what that mode needs put in place), `quietDone` (after each read: what the core read
 * to the end itself) and `event` (a valid event after the description read it).
 */
export abstract class ModelReader extends FrameStream {
  /** @internal What the options decided (shared by the streams made with the same options). */
  readonly plan: Plan;
  protected _status: ModelStatus = 'open';
  protected _events = 0;
  protected _heartbeats = 0;
  /** @internal What the events said so far (the format's description writes them through the realm's DocReader). */
  said: Said = NOTHING_SAID;
  /** SSE formats: 0 before the first byte that is not white space, 1 an event stream, 2 a JSON body. */
  protected sniffed = 0;
  /** The template of quiet events the core may read to the end itself (0: none, every event is read here). */
  protected tmpl: number;
  /** Lines read (blank ones too), for the line number of a bad one. */
  private lineNo = 0;
  /** A JSON body instead of an event stream: its bytes so far. */
  private body: { parts: Uint8Array[]; bytes: number } | null = null;

  protected constructor(what: string, options: ReaderOptions, comments = false) {
    const format = oneOf(options.format, 'format', what, MODEL_FORMATS, undefined);
    const fatal = booleanOption(options.fatal, 'fatal', what, true);
    const max = frameLimit(options.maxEventBytes, 'maxEventBytes', what, DEFAULT_MAX_EVENT_BYTES);
    const choice = options.choice ?? 0;
    if (typeof choice !== 'number' || !Number.isInteger(choice) || choice < 0) {
      throw new TypeError(`${what}: choice must be a non-negative integer, got ${String(choice)}`);
    }
    const eof = oneOf(options.eof, 'eof', what, ['error', 'allow'], 'error');
    const raw = booleanOption(options.raw, 'raw', what, false);
    const normalize = oneOf(options.normalize, 'normalize', what, ['NFC', false], 'NFC');
    const lines = FORMATS[format].framing === 'lines';
    const flags = fatal ? F_FATAL : 0;
    super(what, lines ? LINES_STATE : SSE_STATE, (x) => (lines ? x.linesNew(flags, max) : x.sseNew(flags, max)));
    this.plan = planOf(this.core, format, fatal, max, choice, comments, eof, raw, normalize);
    this.tmpl = this.plan.tmpl;
    if (lines) this.sniffed = 1;
  }

  get format(): ModelFormat { return this.plan.format; }
  get fatal(): boolean { return this.plan.fatal; }
  get choice(): number { return this.plan.choice; }
  get maxEventBytes(): number { return this.plan.maxEventBytes; }
  protected get spec(): FormatSpec { return this.plan.spec; }
  protected get framing(): number { return this.plan.framing; }
  protected get mode(): number { return this.plan.mode; }

  /** @internal A string span of the answer's text (an escaped JSON string when JF_ESCAPED is in flags). */
  abstract span(ptr: number, len: number, flags: number): void;
  /** The end of a batch (its bytes are overwritten by the next core call). */
  protected batchDone(): void {}
  /**
   * A valid event's JSON document (`len` bytes at `ptr`), after the description read it and found no
   * error, or the `[DONE]` marker (`len` 0); the status says whether it completed the stream.
   */
  protected event(_ptr: number, _len: number): void {}
  /** The core's mode for its next read (ME_* bits), with what that mode needs put in place. */
  protected readMode(): number { return 0; }
  /** After each call of the core's reader: what it read to the end itself (bytes for a client, their counts). */
  protected quietDone(): void {}

  /** `'done'` once the provider's completion arrived; `'truncated'` after a flush without it; `'failed'` after an error. */
  get status(): ModelStatus { return this._status; }
  /** The finish reason as the provider sent it (`finish_reason`, `stop_reason`, `done_reason`, …). */
  get finishReason(): string | undefined { return this.said.finishReason; }
  /** The provider's usage object, when it sent one. */
  get usage(): Record<string, unknown> | undefined { return this.said.usage; }
  /** Reasoning or thinking text so far, as sent (never part of the answer's text). */
  get reasoning(): string { return this.said.reasoning; }
  /** Provider events (or lines) read so far. */
  get events(): number { return this._events; }
  /** Keep-alives read so far (SSE comments, Anthropic pings): never progress. */
  get heartbeats(): number { return this._heartbeats + this.said.pings; }

  protected override resetState(): void {
    this._status = 'open';
    this._events = 0;
    this._heartbeats = 0;
    this.lineNo = 0;
    this.said = NOTHING_SAID;
    this.sniffed = this.framing === MK_SSE ? 0 : 1;
    this.body = null;
  }

  /** The framing's end of stream (the last line of an NDJSON stream is read here). */
  protected flushFrames(): void {
    if (this.sniffed === 2) this.endBody();
    const lines = this.framing !== MK_SSE;
    call.flushing = true;
    try {
      this.flushCore(() => (lines ? this.core.x.linesFlush(this.st, this.mode) : this.core.x.sseFlush(this.st, this.mode)));
    } finally {
      call.flushing = false;
    }
  }

  protected override released(): void {
    super.released();
    if (this._status === 'open') this._status = 'failed';
  }

  // ---- framing -------------------------------------------------------------------------------

  // A push and its continuations frame the bytes and read the batch's documents in one core call.
  protected pushCore(len: number, mode: number): number {
    const plan = this.plan;
    const read = this.readMode();
    call.readPending = true;
    return this.core.x.modelPush(this.st, len, mode, plan.framing, plan.prog, this.template(), plan.choice, read);
  }

  protected more(): number {
    const plan = this.plan;
    const read = this.readMode();
    call.readPending = true;
    return this.core.x.modelMore(this.st, plan.framing, plan.prog, this.template(), plan.choice, read);
  }

  /** The template for the next read: none once the stream is done or failed (then every event is read here). */
  private template(): number {
    return this._status === 'open' ? this.tmpl : 0;
  }

  protected errorOf(r: number): Error {
    this.batchDone();
    const at = this.errorOffset();
    if (r & R_LIMIT) {
      const message = this.framing === MK_SSE
        ? `Server-sent event exceeds maxEventBytes (${this.maxEventBytes} bytes) at the line starting at byte offset ${at}; nothing past the limit was buffered`
        : `Line starting at byte offset ${at} is longer than maxEventBytes (${this.maxEventBytes} bytes); nothing past the limit was buffered`;
      return new ModelStreamError('ERR_EVENT_TOO_LARGE', at, message, call.out);
    }
    return new ModelStreamError('ERR_INVALID_UTF8', at, this.utf8Error(r).message, call.out);
  }

  /**
   * The usual push: nothing framed, or only quiet events the core read to the end (their text
   * gathered, or their bytes written for a client), with nothing held in scratch.
   */
  protected override quick(): boolean {
    const core = this.core;
    core.sync();
    const i32 = core.i32;
    const r = core.res;
    const nrec = i32[r + FR_NREC];
    if (nrec === 0) {
      call.readPending = false;
      return true;
    }
    if (i32[r + MDR_DOCS] !== 0 || i32[r + MDR_NEXT] !== nrec || i32[r + MDR_SCRATCH] !== 0) return false;
    call.readPending = false;
    const quiet = i32[r + MDR_QUIET];
    this._events += quiet;
    this.lineNo += quiet + i32[r + MDR_BLANK];
    this._heartbeats += i32[r + MDR_COMMENTS];
    call.gathered = i32[r + MDR_GATHERED];
    this.quietDone();
    if (call.gathered !== 0) this.batchDone();
    return true;
  }

  /**
   * The documents of the batch the last frame call wrote. The core reads blank lines, comments and
   * quiet events (text deltas: see the format's template) to the end itself; each other document
   * comes back alone, in order, for the format's description.
   */
  protected collect(): void {
    const core = this.core;
    core.sync();
    const nrec = core.i32[core.res + FR_NREC];
    let read = call.readPending && core.i32[core.res + MDR_READ] === 1; // (read by the frame call itself)
    call.readPending = false;
    let next = 0;
    while (next < nrec) {
      const nd = read ? core.i32[core.res + MDR_DOCS]
        : core.x.modelDocs(this.st, next, nrec, this.framing, this.plan.prog, this.template(), this.plan.choice, call.gathered, this.readMode());
      read = false;
      core.sync();
      const i32 = core.i32;
      const r = core.res;
      next = i32[r + MDR_NEXT];
      const quiet = i32[r + MDR_QUIET];
      this._events += quiet;
      this.lineNo += quiet + i32[r + MDR_BLANK];
      this._heartbeats += i32[r + MDR_COMMENTS];
      call.gathered = i32[r + MDR_GATHERED];
      try {
        this.quietDone();
        if (nd !== 0) this.document(core.mdoc);
        this.batchDone();
      } finally {
        // heap scratch of the call (a large event's document or text, a large run of bytes for
        // the client) goes back now, also when the event failed: between calls the core holds
        // only the streams' own memory
        if (core.i32[r + MDR_SCRATCH] !== 0) core.x.modelScratchFree();
      }
    }
  }

  private document(e: number): void {
    const i32 = this.core.i32;
    const flags = i32[e + MD_FLAGS];
    this.lineNo++;
    this._events++;
    if (this._status !== 'open') return; // after the completion: nothing more is the answer
    const ptr = i32[e + MD_PTR];
    if (flags & DF_DONE) {
      if (this.spec.doneMarker) {
        this._status = 'done';
        this.event(0, 0); // (the marker: no document)
      }
      else this.badEvent(this.offsetOf(e, 0), `[DONE] at byte offset ${this.offsetOf(e, 0)} is not an event of the ${this.format} format`);
      return;
    }
    if (flags & DF_ERROR) {
      // the last line of a line stream, cut short by the end: the stream is truncated
      if (call.flushing && this.framing !== MK_SSE && i32[e + MD_JN] === JE_TRUNCATED) {
        this._events--; // not an event: one the stream ended inside
        return;
      }
      const why = JSON_ERRORS[i32[e + MD_JN]] ?? 'not JSON';
      const at = this.offsetOf(e, i32[e + MD_J0]);
      this.badEvent(at, this.framing === MK_SSE ? `Invalid JSON in the event at byte offset ${at}: ${why}` : `Invalid JSON on line ${this.lineNo} (byte offset ${at}): ${why}`);
      return;
    }
    const len = i32[e + MD_LEN];
    const doc = borrowDoc(this.core, this, ptr, len, this.core.mjrec + i32[e + MD_J0] * JREC_WORDS, i32[e + MD_JN]);
    this.spec.read(doc, doc);
    const said = this.said; // (made by the first thing a description reported)
    const why = said.error;
    if (why !== null) {
      said.error = null;
      this.batchDone();
      this._status = 'failed';
      const at = this.offsetOf(e, 0);
      const detail = said.errorDetail;
      this.stop(new ModelStreamError('ERR_PROVIDER', at, `The provider sent an error at byte offset ${at}: ${why}${detail ? ` (${detail})` : ''}`, call.out, why));
    }
    if (said.done) this._status = 'done';
    this.event(ptr, len);
  }

  /** The absolute stream offset of byte `at` of a document at `ptr` (exact when it lies in this read). */
  private offsetOf(e: number, at: number): number {
    const core = this.core;
    const i32 = core.i32;
    const ptr = i32[e + MD_PTR];
    if (this.framing !== MK_SSE) {
      // a line: where it began in the stream (its record), and where its document begins in it
      const k = i32[e + MD_REC];
      const start = i32[core.span + k * LINE_REC_WORDS + LR_START];
      const text = k === 0 ? 0 : i32[core.span + (k - 1) * LINE_REC_WORDS + LR_END];
      const inLine = ptr - (core.outPtr + text);
      return this.base + start + (inLine >= 0 && inLine < 8 ? inLine : 0) + at;
    }
    // an event: where its data began in the stream (exact when the data is one line)
    return this.base + i32[core.span + i32[e + MD_REC] * SSE_REC_WORDS + SR_DSTART] + at;
  }


  private badEvent(offset: number, message: string): void {
    this.batchDone();
    this._status = 'failed';
    this.stop(new ModelStreamError('ERR_BAD_EVENT', offset, message, call.out));
  }

  // ---- a JSON body instead of an event stream (SSE formats) -----------------------------------

  /** Before the first byte that is not white space: is the body one JSON object? True when this chunk went to it. */
  protected sniff(chunk: Uint8Array): boolean {
    if (this.sniffed === 2) {
      this.keepBody(chunk);
      return true;
    }
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i];
      if (b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09) continue;
      if (b === 0xef && i === 0 && this.bytesIn === 0) { i += 2; continue; } // a BOM
      this.sniffed = b === 0x7b ? 2 : 1;
      if (this.sniffed === 2) {
        this.keepBody(chunk);
        return true;
      }
      return false;
    }
    return false;
  }

  private keepBody(chunk: Uint8Array): void {
    const body = (this.body ??= { parts: [], bytes: 0 });
    body.bytes += chunk.length;
    if (body.bytes > this.maxEventBytes) {
      this.stop(new ModelStreamError('ERR_EVENT_TOO_LARGE', this.bytesIn,
        `The ${this.format} response is a JSON body larger than maxEventBytes (${this.maxEventBytes} bytes)`, ''));
    }
    body.parts.push(chunk.slice());
    this.bytesIn += chunk.length;
  }

  private endBody(): void {
    this._events = 1; // the body is the provider's one answer
    const parts = this.body?.parts ?? [];
    const all = new Uint8Array(this.body?.bytes ?? 0);
    let o = 0;
    for (const p of parts) {
      all.set(p, o);
      o += p.length;
    }
    let value: unknown;
    try {
      value = JSON.parse(decodeUtf8(all));
    } catch {
      this.stop(new ModelStreamError('ERR_BAD_EVENT', 0, `The ${this.format} response is neither an event stream nor valid JSON`, ''));
    }
    const err = this.spec.errorBody(value);
    if (err !== undefined) {
      this._status = 'failed';
      this.stop(new ModelStreamError('ERR_PROVIDER', 0, `The provider answered with an error body: ${err.message}${err.detail ? ` (${err.detail})` : ''}`, '', err.message));
    }
    this.stop(new ModelStreamError('ERR_BAD_EVENT', 0, `The ${this.format} response is a JSON body, not an event stream`, ''));
  }

}
