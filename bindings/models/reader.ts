// Layer 4, what a model stream and a relay share: the provider's stream framed by the core (SSE
// events or lines, on the byte-level path: UTF-8 validated in place), each event's JSON read there
// with the format's path program in the same call (quiet events, text deltas, read to the end by
// the core; every other event handed to the format's description), the status, finish reason,
// usage and reasoning, and the provider's errors as ModelStreamErrors.
import { Utf8DecodeError } from '../bytes/errors.js';
import { Utf8Validator } from '../bytes/utf8.js';
import { CoreMemoryError } from '../core/errors.js';
import { booleanOption, byteLimitOption, integerOption, oneOf } from '../core/options.js';
import { type StateKind } from '../core/stream.js';
import { type CoreExports } from '../core/wasm.js';
import {
  DF_DONE, DF_ERROR, DF_LAST, ESM_READ, FR_NREC, F_FATAL, JE_TRUNCATED, JREC_WORDS, JSON_MAX_DEPTH, LINE_REC_WORDS, LR_END, LR_START, MDR_ARGS_BYTES, MDR_BLANK,
  MDR_COMMENTS, MDR_DOCS, MDR_EMPTY, MDR_GATHERED, MDR_NEXT, MDR_QUIET, MDR_READ, MDR_REASON_BYTES, MDR_SCRATCH, MD_FLAGS, MD_J0, MD_JN, MD_LEN,
  MD_PTR, MD_REC, ME_LOUD, MGR_PTR, MK_SSE, R_LIMIT, SR_DSTART, SSE_REC_WORDS, ST_FRAME_MAX,
} from '../core/generated/abi.js';
import { FrameStream, MAX_LIMIT_BYTES, frameLimit } from '../frames/frame-stream.js';
import { DEFAULT_MAX_EVENT_BYTES } from '../frames/sse.js';
import { type DocReader, JSON_ERRORS, type MessageOut, borrowDoc, eventSaid, jsonTooDeep } from './document.js';
import { ModelStreamError, type ModelStreamErrorCode } from './errors.js';
import { type FormatSpec, wholeAnswerBudget, wholeEventsWithin } from './formats/describe.js';
import { FORMATS, MODEL_FORMATS, type ModelFormat } from './formats/index.js';
import { type Call, Message } from './message.js';
import { type Plan, planOf } from './plan.js';
import { Unframer } from './unframe.js';

export type ModelStatus = 'open' | 'done' | 'truncated' | 'failed';

/** The options of a model reader (stream or relay). */
export interface ReaderOptions {
  format: ModelFormat; fatal?: boolean; maxEventBytes?: number; choice?: number;
  eof?: 'error' | 'allow'; raw?: boolean; normalize?: 'NFC' | false; maxArgumentBytes?: number; maxReasoningBytes?: number; maxMediaBytes?: number;
  /** `bedrock-invoke`: the model's own format in the chunks (Claude's: `anthropic`, the only one read today). */
  inner?: 'anthropic';
}

/** Default of `maxArgumentBytes`: 16 MiB. */
export const DEFAULT_MAX_ARGUMENT_BYTES = 16 * 1024 * 1024;
/** Default of `maxReasoningBytes`: 64 MiB. */
export const DEFAULT_MAX_REASONING_BYTES = 64 * 1024 * 1024;
/** Default of `maxMediaBytes`: 64 MiB. */
export const DEFAULT_MAX_MEDIA_BYTES = 64 * 1024 * 1024;

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
  /** ModelStream: this call could bring the text past maxTextBytes (every event is read in JS, its text committed alone). */
  near = false;
  /** The document being read (its entry in core memory) until its batch's text is committed; 0 between documents. */
  reading = 0;
  /**
   * ModelStream: who takes what each core call read, in order, before the next reads on (the
   * reader of an app's parts, for its push; the core then reads one channel's quiet events or one
   * document a call, ME_ORDER), given the text the push committed so far. Set and cleared around
   * the push by its taker: `begin` leaves it.
   */
  order: { taken(): void } | null = null;
  /** With `order`: the text committed since its taker last took it (`out` joined, and sliced, would be flattened at each take). */
  fresh = '';

  begin(reader: ModelReader): this {
    this.reader = reader;
    this.out = '';
    this.gathered = 0;
    this.readPending = false;
    this.flushing = false;
    this.near = false;
    this.reading = 0;
    this.fresh = '';
    return this;
  }

  /** Text the call committed (ModelStream), for its return, its errors and the taker's `fresh`. */
  commit(text: string): void {
    this.out += text;
    if (this.order !== null) this.fresh += text;
  }
}

/** The realm's one CallState. */
export const call = /* @__PURE__ */ new CallState();

/**
 * The stream reading a whole answer's events, and the body's offset, where their errors are
 * placed (a reading is synchronous: one at a time in a realm; not a field of every stream, which
 * would make each idle stream larger on JavaScriptCore).
 */
let wholeReader: ModelReader | null = null;
let wholeAt = 0;

let utf8: TextDecoder | undefined;
let strictUtf8: TextDecoder | undefined;
let encoder: TextEncoder | undefined;
const decodeUtf8 = (b: Uint8Array): string => (utf8 ??= new TextDecoder('utf-8', { fatal: false, ignoreBOM: true })).decode(b);

/** The most a `choice` can be: the core follows a choice by a 32-bit signed index (2^32 would be choice 0). */
export const MAX_CHOICE = 0x7fffffff;

/** A reader's `choice` option: which choice of the stream to follow, 0 when none is said. */
export function choiceOption(value: unknown, where: string): number {
  return integerOption(value, 'choice', where, undefined, MAX_CHOICE) ?? 0;
}

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
  /** @internal What the events said so far (the format's description writes it through the realm's DocReader); null before anything. */
  message: Message | null = null;
  /** SSE formats and AWS's event stream: 0 before the first byte that is not white space, 1 an event stream, 2 a JSON body. */
  protected sniffed = 0;
  /** Lines read (blank ones too), for the line number of a bad one. */
  private lineNo = 0;
  /** A JSON body instead of an event stream: its bytes so far. */
  private body: { parts: Uint8Array[]; bytes: number; at: number } | null = null;
  /** Bytes of a BOM at the stream's start seen while sniffing (it may come split across reads). */
  private bom = 0;
  /** What the core reads to the end besides text (made the first time: a stream of text only has none). */
  private parts: CoreParts | null = null;

  protected constructor(what: string, options: ReaderOptions, comments = false) {
    const format = oneOf(options.format, 'format', what, MODEL_FORMATS, undefined);
    const fatal = booleanOption(options.fatal, 'fatal', what, true);
    const max = frameLimit(options.maxEventBytes, 'maxEventBytes', what, DEFAULT_MAX_EVENT_BYTES);
    const choice = choiceOption(options.choice, what);
    const eof = oneOf(options.eof, 'eof', what, ['error', 'allow'], 'error');
    if (options.inner !== undefined) {
      if (format !== 'bedrock-invoke') throw new TypeError(`${what}: inner is for format 'bedrock-invoke' (the model's format in its chunks), not ${format}`);
      oneOf(options.inner, 'inner', what, ['anthropic'], 'anthropic');
    }
    const raw = booleanOption(options.raw, 'raw', what, false);
    const normalize = oneOf(options.normalize, 'normalize', what, ['NFC', false], 'NFC');
    const maxArgs = byteLimitOption(options.maxArgumentBytes, 'maxArgumentBytes', what, DEFAULT_MAX_ARGUMENT_BYTES, MAX_LIMIT_BYTES);
    const maxReasoning = byteLimitOption(options.maxReasoningBytes, 'maxReasoningBytes', what, DEFAULT_MAX_REASONING_BYTES, MAX_LIMIT_BYTES);
    // (0: no media data kept, each part's type and size only)
    const maxMedia = options.maxMediaBytes === 0 ? 0 : byteLimitOption(options.maxMediaBytes, 'maxMediaBytes', what, DEFAULT_MAX_MEDIA_BYTES, MAX_LIMIT_BYTES);
    const lines = FORMATS[format].framing === 'lines';
    const binary = FORMATS[format].framing === 'eventstream';
    const flags = fatal ? F_FATAL : 0;
    // (AWS's event stream: an event the core reads is a message's payload under its name, a little longer than the message)
    const sseMax = binary ? Math.min(max + 4096, MAX_LIMIT_BYTES) : max;
    super(what, lines ? LINES_STATE : SSE_STATE, (x) => (lines ? x.linesNew(flags, max) : x.sseNew(flags, sseMax)));
    this.plan = planOf(this.core, format, fatal, max, choice, comments, eof, raw, normalize, maxArgs, maxReasoning, maxMedia);
    if (lines) this.sniffed = 1;
    if (binary) this.unframer = new Unframer(what, max, FORMATS[format].invoke === true);
  }

  /** A new record after the last stream's end gave its own back: as the constructor made it. */
  protected override remake(x: CoreExports): number {
    const p = this.plan;
    const flags = p.fatal ? F_FATAL : 0;
    if (FORMATS[p.format].framing === 'lines') return x.linesNew(flags, p.maxEventBytes);
    return x.sseNew(flags, this.unframer !== null ? Math.min(p.maxEventBytes + 4096, MAX_LIMIT_BYTES) : p.maxEventBytes);
  }

  /** AWS's event stream (Bedrock): the core's framer of its messages, whose events the core's model reader reads. */
  private unframer: Unframer | null = null;

  /** Frames a chunk: AWS's event stream first into its messages' events (the failure it ends in after them). */
  protected override frameAll(chunk: Uint8Array, mode: number): void {
    const u = this.unframer;
    // (a whole answer's events, Bedrock's too, are SSE events as the core's framer of AWS's event
    // stream writes them for the reader: read as they are, not framed again)
    if (u === null || wholeReader === this) {
      // (text: a long read the platform validates is framed without the core's own pass)
      super.frameAll(chunk, mode | this.platformValid(chunk));
      return;
    }
    let n: number;
    try {
      if (chunk.length <= this.core.inCap) {
        // (the usual read: the messages framed and their events read in one core call)
        const plan = this.plan;
        const read = this.readModeNow();
        const r = u.unframeRead(chunk, this.st, mode, plan.framing, plan.prog, this.template(), plan.choice, read);
        n = u.framer.events.len;
        if (r & ESM_READ) {
          this.base = this.bytesIn;
          this.bytesIn += n;
          call.readPending = true;
          this.drain(r & ~ESM_READ, null);
          return;
        }
      } else {
        n = u.unframe(chunk);
      }
    } catch (e) {
      throw this.trapped(e, this.base); // (a trap of the core, or the framer's CoreMemoryError: the stream's too)
    }
    let failure = u.failure;
    if (failure === null) {
      if (n !== 0) this.frameEvents(u.eventsPtr, n, mode);
    } else {
      // the events before the message that failed; after the provider's completion, that message
      // is not the answer (nothing after the completion is, in any format): it is passed over, and
      // the events after it are read (Bedrock's metadata, the usage)
      const at = u.failureAt;
      if (at !== 0) this.frameEvents(u.eventsPtr, at, mode);
      if (this._status === 'done') {
        failure = null;
        if (n > at) this.frameEvents(u.eventsPtr + at, n - at, mode);
      }
    }
    failure ??= u.broken;
    if (failure !== null) {
      if (this.turnFailed !== null) this.failTurn(); // (the turn failed before it)
      this.batchDone();
      this._status = 'failed';
      const e = new ModelStreamError(failure.code, failure.offset, failure.message, call.out, failure.providerMessage, failure.providerCode);
      u.binaryError = e;
      this.stop(e);
    }
  }

  /** The events the core wrote from AWS's event stream, at `ptr` in core memory: to the input window and read, a window at a time. */
  private frameEvents(ptr: number, n: number, mode: number): void {
    const core = this.core;
    const cap = core.inCap;
    try {
      for (let at = 0; at < n; at += cap) {
        const len = Math.min(cap, n - at);
        core.sync();
        core.u8.copyWithin(core.inPtr, ptr + at, ptr + at + len);
        this.frameIn(len, null, mode);
      }
    } catch (e) {
      throw this.trapped(e, this.base);
    }
  }

  /** The stream's end as an offset (the binary stream's bytes for Bedrock). */
  protected get endOffset(): number {
    return this.unframer !== null ? this.unframer.bytes : this.bytesIn;
  }

  /** An error of the events the core read from AWS's event stream: at the offset of the message it lies in. */
  protected override stop(err: Error): never {
    const u = this.unframer;
    // (a JSON body's own errors are at the body's offset already: none of the binary stream's messages)
    if (u !== null && this.sniffed !== 2 && err instanceof ModelStreamError && err !== u.binaryError) err = inMessage(err, (at) => u.offsetOf(at, this.bytesIn));
    // (an error of a whole answer's events: at the body's start, not at an offset of the events written from it)
    if (wholeReader === this && err instanceof ModelStreamError) err = placedAt(err, wholeAt);
    if (u !== null) u.binaryError = null;
    if (err instanceof ModelStreamError) {
      // no more text can come: what a text layer still held back (a mark might have followed it)
      // is the end of what was read, and it goes with the error, as into the report
      const rest = this.heldRest();
      if (rest !== '') err = err.withMoreText(rest);
    }
    return super.stop(err);
  }

  /**
   * The core could not hold what came after a turn that failed: the stream fails with the turn's
   * error, which came first (the memory error is the stream's end, not its cause).
   */
  protected override trapped(e: unknown, offset: number): unknown {
    const err = super.trapped(e, offset);
    const turn = err instanceof CoreMemoryError ? this.turnError() : null;
    if (turn === null) return err;
    this.failure = turn;
    this._status = 'failed';
    return turn;
  }

  /** At the completion or a failure: the text a text layer still holds back, committed (none here). */
  protected heldRest(): string {
    return '';
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
  protected event(_ptr: number, _len: number, _doc: DocReader | null): void {}
  /** The core's mode for its next read (ME_* bits), with what that mode needs put in place. */
  protected readMode(): number { return 0; }
  /** After each call of the core's reader: what it read to the end itself (bytes for a client, their counts). */
  protected quietDone(): void {}

  /** `'done'` once the provider's completion arrived; `'truncated'` after a flush without it; `'failed'` after an error. */
  get status(): ModelStatus { return this._status; }
  /** The finish reason as the provider sent it (`finish_reason`, `stop_reason`, `done_reason`, …). */
  get finishReason(): string | undefined { return this.message?.finishReason; }
  /** The provider refused the prompt (Gemini's `promptFeedback.blockReason`, the finish reason then): no answer was made. */
  get refused(): boolean { return this.message?.refused ?? false; }
  /** The provider's usage object, when it sent one. */
  get usage(): Record<string, unknown> | undefined { return this.message?.usage; }
  /** Provider events (or lines) read so far. */
  get events(): number { return this._events; }
  /** Keep-alives read so far (SSE comments, Anthropic pings): never progress. */
  get heartbeats(): number { return this._heartbeats + (this.message?.pings ?? 0); }
  /** Of those, the keep-alives that are events (Anthropic's pings, counted in `events` too; an SSE comment is not an event). */
  get pings(): number { return this.message?.pings ?? 0; }
  /**
   * Events read that said no part of the answer, nor were keep-alives: `{}`, an envelope without
   * content, the same usage, finish reason or sources again, a part's end alone, an event after the
   * completion that is not the usage a format sends after it (Bedrock's metadata). The events less
   * these and the pings are {@link progressEvents}.
   */
  get emptyEvents(): number { return this.message?.empty ?? 0; }
  /**
   * The events that carried a part of the answer (text, reasoning, a call or its arguments, a
   * refusal, a new source, media, new usage, the finish, the completion, an error): `events -
   * pings - emptyEvents`. It grows only with them: the progress a server's idle timeout can count,
   * which an upstream sending `data: {}` or pings forever does not make. (A delta the core reads
   * itself, text, reasoning or arguments, counts as progress as it is.)
   */
  get progressEvents(): number { return this._events - this.pings - this.emptyEvents; }
  /**
   * Bytes the stream holds in JavaScript as one JSON body: an SSE format's stream (or AWS's event
   * stream) answered with a whole answer or an error object instead is kept whole, from its `{`
   * (or Gemini's `[`), until the stream's end, up to maxEventBytes, outside the core's memory that
   * `coreMemoryUsed()` counts. 0 for an event stream (and a format of lines), and once a whole
   * answer was read; a caller with a memory budget counts what it grows by after each push.
   */
  get jsonBodyBytes(): number { return this.body?.bytes ?? 0; }

  /** @internal Whether reasoning and arguments are kept (a stream) or only passed to `out` (a relay). */
  get keeps(): boolean { return true; }
  /** @internal Where the message's parts go as they come (a relay's writer). */
  get out(): MessageOut | null { return null; }
  /** @internal The most bytes of tool-call arguments kept in all. */
  get maxArgumentBytes(): number { return this.plan.maxArgumentBytes; }
  /** @internal The format's finish reasons. */
  get finishReasons(): FormatSpec['finishReasons'] { return this.plan.spec.finishReasons; }
  /** @internal The most bytes of reasoning (and a refusal) kept, as sent. */
  get maxReasoningBytes(): number { return this.plan.maxReasoningBytes; }
  /** @internal The most bytes of media data kept, as sent. */
  get maxMediaBytes(): number { return this.plan.maxMediaBytes; }

  protected override resetState(): void {
    this.unframer?.reset();
    this.parts = null; // (the core's reset dropped its current call and what it kept)
    this._status = 'open';
    this._events = 0;
    this._heartbeats = 0;
    this.lineNo = 0;
    this.message = null;
    this.turnFailed = null;
    this.sniffed = this.framing === MK_SSE ? 0 : 1;
    this.body = null;
    this.bom = 0;
  }

  /** The framing's end of stream (the last line of an NDJSON stream is read here). */
  protected flushFrames(): void {
    if (this.sniffed === 2) this.endBody();
    // (AWS's event stream of nothing but white space: framed as its bytes, as any stream's)
    else if (this.sniffed === 0 && this.unframer !== null && this.unframer.leadBytes !== 0) this.unhold();
    const lines = this.framing !== MK_SSE;
    call.flushing = true;
    try {
      this.flushCore(() => (lines ? this.core.x.linesFlush(this.st, this.mode) : this.core.x.sseFlush(this.st, this.mode)));
    } finally {
      call.flushing = false;
    }
    this.takeRunningUsage();
    if (this.turnFailed !== null) this.failTurn(); // (its usage did not come)
  }

  /**
   * At the stream's end or failure: the running usage the core kept (a template's runningUsage,
   * Gemini's), the stream's usage when no completion brought one; given back in any case.
   */
  private takeRunningUsage(): void {
    if (this.st === 0 || !this.plan.runningUsage) return;
    const core = this.core;
    const len = core.x.modelHeld(this.st, 2, 0);
    if (len === 0) return;
    core.sync();
    // (an object the core read whole: its JSON is valid)
    if (this.message?.usage === undefined) (this.message ??= new Message()).usage = JSON.parse(core.utf8(core.word(MGR_PTR), len)) as Record<string, unknown>;
    core.x.modelHeld(this.st, 2, 1);
  }

  /** The stream ended: its record goes back, and the event stream framer's with it (Bedrock). */
  protected override retire(): void {
    this.unframer?.retire();
    super.retire();
  }

  /**
   * Gives the core memory back now; a stream still open is then failed (nothing more can complete
   * it). What the core still held of the answer (reasoning, arguments, a raw stream's kept text) is
   * taken first, as when a stream fails: `reasoning`, `toolCalls` stay readable after a client left.
   */
  override dispose(): void {
    if (this.st !== 0 && this.failure === null) this.released();
    this.unframer?.dispose();
    super.dispose();
    if (this._status === 'open') this._status = 'failed';
  }

  protected override released(): void {
    this.takeParts();
    this.takeRunningUsage();
    super.released();
    if (this._status === 'open') this._status = 'failed';
    // (and its record, its framer's (Bedrock's) with it: a failed stream is read no more until
    // reset() makes a new one, and an app or gateway that lets a failed stream go without dispose()
    // had it held until a collection)
    this.retire();
  }

  // ---- reasoning and arguments the core reads to the end ----------------------------------------

  /**
   * The call whose argument fragments the core may read to the end itself (null: none), for the
   * next read: given to the core when it changed, with the budget left (a stream that keeps them).
   */
  protected setCall(c: Call | null): void {
    let p = this.parts;
    if (p === null) {
      if (c === null) return;
      p = this.parts = new CoreParts();
    }
    const m = this.message;
    const left = this.keeps && m !== null ? this.maxArgumentBytes - m.argumentBytes : 0x7fffffff;
    if (c === p.call && (c === null || left === p.left)) return;
    if (p.held & 2) this.takeParts(false);
    p.call = c;
    p.left = left;
    this.core.x.modelSetCall(this.st, c === null ? -1 : c.key, left);
  }

  /** After a read: the reasoning and arguments the core read to the end (counted; kept in the core until taken). */
  private partsRead(): void {
    const i32 = this.core.i32;
    const r = this.core.res;
    const args = i32[r + MDR_ARGS_BYTES];
    if (args !== 0) {
      const p = this.parts!;
      p.call!.bytes += args;
      if (this.keeps) {
        this.message!.argumentBytes += args;
        p.left -= args;
        p.held |= 2;
      }
    }
    const reasoning = i32[r + MDR_REASON_BYTES];
    if (reasoning !== 0 && this.keeps) {
      (this.parts ??= new CoreParts()).held |= 1;
      (this.message ??= new Message()).reasoningBytes += reasoning; // (within maxReasoningBytes: see ModelStream's nearLimit)
    }
  }

  /**
   * @internal The reasoning and arguments the core kept from quiet events, taken into the Message
   * (one string each): before an event JS reads, when a caller asks, and at the end. `freeScratch`:
   * the call's heap scratch goes back now (not inside a read, whose event may lie in it).
   */
  takeParts(freeScratch = true): void {
    const p = this.parts;
    if (p === null || p.held === 0 || this.st === 0) return;
    const held = p.held;
    p.held = 0;
    const core = this.core;
    if (held & 1) (this.message ??= new Message()).block().text += this.partText(0);
    if (held & 2) p.call!.text += this.partText(1);
    if (freeScratch && core.word(MDR_SCRATCH) !== 0) core.x.modelScratchFree();
  }

  /**
   * The reasoning (0) or arguments (1) the core kept, unescaped there; where the heap's budget has
   * no room for that (a stream that fails for it takes its parts here), read as sent, in JS.
   */
  private partText(which: 0 | 1): string {
    const core = this.core;
    const x = core.x;
    try {
      const units = x.modelPart(this.st, which);
      core.sync();
      return core.utf16(core.word(MGR_PTR), units);
    } catch (e) {
      if (!(e instanceof WebAssembly.RuntimeError)) throw e;
      // (the core traps before it changes anything: what it held is there as it was)
      const len = x.modelHeld(this.st, which, 0);
      core.sync();
      const text = len === 0 ? '' : (JSON.parse(`"${core.utf8(core.word(MGR_PTR), len)}"`) as string);
      x.modelHeld(this.st, which, 1);
      return text;
    }
  }

  // ---- framing -------------------------------------------------------------------------------

  // A push and its continuations frame the bytes and read the batch's documents in one core call.
  protected pushCore(len: number, mode: number): number {
    const plan = this.plan;
    const read = this.readModeNow();
    call.readPending = true;
    return this.core.x.modelPush(this.st, len, mode, plan.framing, plan.prog, this.template(), plan.choice, read);
  }

  protected more(): number {
    const plan = this.plan;
    const read = this.readModeNow();
    call.readPending = true;
    return this.core.x.modelMore(this.st, plan.framing, plan.prog, this.template(), plan.choice, read);
  }

  /** The template of quiet events the core may read to the end itself (0: none, every event is read here). */
  protected get tmpl(): number { return this.plan.tmpl; }

  /**
   * The template for the next read: none once the stream is done or failed; near its text limit,
   * or once its turn failed, every event is read here (ME_LOUD), the template passed still for a
   * running usage the core keeps (Gemini's, which a stream cut short then reports).
   */
  private template(): number {
    return this._status === 'open' && (this.quietReads || this.plan.runningUsage) ? this.tmpl : 0;
  }

  /** The mode of the next read: the reader's, every event for JS where the template is for the running usage alone. */
  private readModeNow(): number {
    return this.quietReads ? this.readMode() : this.readMode() | ME_LOUD;
  }

  /** Whether the core may read quiet events itself on the next read: the turn has not failed, the text is not near its limit. */
  private get quietReads(): boolean {
    return this.turnFailed === null && !call.near;
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
    if (quiet !== 0) this.quietSaid(i32, r);
    call.gathered = i32[r + MDR_GATHERED];
    this.partsRead();
    this.quietDone();
    if (call.gathered !== 0) this.batchDone();
    if (call.order !== null) call.order.taken();
    return true;
  }

  /** Of the quiet events the core read to the end in its last call, those with no content (`{}`, a role or an empty string alone): counted in `emptyEvents`. */
  private quietSaid(i32: Int32Array, r: number): void {
    const empty = i32[r + MDR_EMPTY];
    if (empty !== 0) (this.message ??= new Message()).empty += empty;
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
        : core.x.modelDocs(this.st, next, nrec, this.framing, this.plan.prog, this.template(), this.plan.choice, call.gathered, this.readModeNow());
      read = false;
      core.sync();
      const i32 = core.i32;
      const r = core.res;
      next = i32[r + MDR_NEXT];
      const quiet = i32[r + MDR_QUIET];
      this._events += quiet;
      this.lineNo += quiet + i32[r + MDR_BLANK];
      this._heartbeats += i32[r + MDR_COMMENTS];
      if (quiet !== 0) this.quietSaid(i32, r);
      call.gathered = i32[r + MDR_GATHERED];
      try {
        this.partsRead();
        this.quietDone();
        if (nd !== 0) {
          call.reading = core.mdoc;
          this.document(core.mdoc);
        }
        this.batchDone();
      } finally {
        call.reading = 0;
        // heap scratch of the call (a large event's document or text, a large run of bytes for
        // the client) goes back now, also when the event failed: between calls the core holds
        // only the streams' own memory
        if (core.i32[r + MDR_SCRATCH] !== 0) core.x.modelScratchFree();
      }
      if (call.order !== null) call.order.taken();
    }
  }

  private document(e: number): void {
    let i32 = this.core.i32;
    const flags = i32[e + MD_FLAGS];
    this.lineNo++;
    this._events++;
    if (this._status !== 'open' || this.turnFailed !== null) {
      // after the completion: nothing more is the answer (a format's trailer may still bring its
      // usage); after a turn that failed, the event that follows it brings its usage, then the failure
      const trailer = this.spec.trailer;
      eventSaid.any = false;
      if (trailer !== undefined && (this._status === 'done' || this.turnFailed !== null) && (flags & (DF_DONE | DF_ERROR)) === 0) {
        // (what a trailer may say: the usage, merged over what came before)
        const doc = borrowDoc(this.core, this, i32[e + MD_PTR], i32[e + MD_LEN], this.core.mjrec + i32[e + MD_J0] * JREC_WORDS, i32[e + MD_JN]);
        trailer(doc, doc);
      }
      // (anything else says nothing of the answer, nor does the same usage again: a Bedrock stream's
      // events between its stop and its usage, which its relay waits for, are no progress, nor is
      // its metadata said twice)
      if (!eventSaid.any && (flags & DF_DONE) === 0) (this.message ??= new Message()).empty++;
      if (this.turnFailed !== null) this.failTurn();
      return;
    }
    if (this.parts !== null && this.parts.held !== 0) {
      // what the core kept comes before what this event says (its scratch stays: the event may lie in it)
      this.takeParts(false);
      i32 = this.core.i32;
    }
    const ptr = i32[e + MD_PTR];
    if (flags & DF_DONE) {
      if (this.spec.doneMarker) {
        this.completed(borrowDoc(this.core, this, 0, 0, 0, 0));
        this.event(0, 0, null); // (the marker: no document)
      }
      else this.failAt('ERR_BAD_EVENT', this.offsetOf(e, 0), `[DONE] at byte offset ${this.offsetOf(e, 0)} is not an event of the ${this.format} format`);
      return;
    }
    if (flags & DF_ERROR) {
      // the last line of a line stream, cut short by the end: the stream is truncated
      if (call.flushing && this.framing !== MK_SSE && i32[e + MD_JN] === JE_TRUNCATED) {
        this._events--; // not an event: one the stream ended inside
        return;
      }
      const why = JSON_ERRORS[i32[e + MD_JN]] ?? 'not JSON';
      // (the offset of the byte where the JSON breaks, and where its event or line begins)
      const at = this.offsetOf(e, i32[e + MD_J0]);
      const start = this.offsetOf(e, 0);
      this.failAt('ERR_BAD_EVENT', at, this.framing === MK_SSE
        ? `Invalid JSON at byte offset ${at}, in the event whose data begins at byte offset ${start}: ${why}`
        : `Invalid JSON at byte offset ${at}, on line ${this.lineNo}, whose JSON begins at byte offset ${start}: ${why}`);
      return;
    }
    const len = i32[e + MD_LEN];
    const doc = borrowDoc(this.core, this, ptr, len, this.core.mjrec + i32[e + MD_J0] * JREC_WORDS, i32[e + MD_JN]);
    eventSaid.any = false;
    const pings = this.message?.pings ?? 0;
    this.spec.read(doc, doc);
    // (an event that said no part of the answer, nor was a ping: `{}`, an envelope alone, the same
    // usage again; a running usage the core keeps, Gemini's, that is new says something: DF_LAST)
    if (!eventSaid.any && (flags & DF_LAST) === 0 && (this.message?.pings ?? 0) === pings) (this.message ??= new Message()).empty++;
    const m = this.message;
    if (m !== null) {
      const why = m.error;
      if (why !== null) {
        m.error = null;
        let at = this.offsetOf(e, 0);
        const detail = m.errorDetail;
        if (m.done && this.spec.trailer !== undefined) {
          // a finish reason that says the turn failed, in a format whose stream goes on after its
          // completion with its usage (Bedrock's metadata): the stream fails at this event, once the
          // event after it (the usage the provider counted for the failed turn) or the end came
          const u = this.unframer;
          if (u !== null) at = u.offsetOf(at, this.bytesIn);
          this.turnFailed = { at, why, detail };
          this.answerDone(); // (nothing after it is the answer: what a text layer held back is its end)
        } else {
          this.failAt('ERR_PROVIDER', at, providerSaid(at, why, detail), why, detail);
        }
      }
      const bad = m.bad;
      if (bad !== null) {
        m.bad = null;
        const at = this.offsetOf(e, 0);
        this.failAt('ERR_BAD_EVENT', at, `The event at byte offset ${at} is not a ${this.format} event: ${bad}`);
      }
      if (m.tooLong) {
        const at = this.offsetOf(e, 0);
        this.failAt('ERR_ARGUMENTS_TOO_LARGE', at, `The tool-call arguments in the event at byte offset ${at} would pass `
          + `maxArgumentBytes (${this.maxArgumentBytes} bytes, ${m.argumentBytes} kept); nothing past the limit was kept`);
      }
      if (m.reasoningTooLong) {
        const at = this.offsetOf(e, 0);
        // (a relay keeps only the addresses and titles of the sources cited, which it writes at the completion)
        this.failAt('ERR_REASONING_TOO_LONG', at, `The ${this.keeps ? 'reasoning (or refusal, or citations)' : 'sources cited (their addresses and titles, kept until the completion)'} `
          + `in the event at byte offset ${at} would pass maxReasoningBytes (${this.maxReasoningBytes} bytes, ${m.reasoningBytes} kept); nothing past the limit was kept`);
      }
      if (m.done && this.turnFailed === null) this.completed(doc);
    }
    this.event(ptr, len, doc);
  }

  /** The provider's completion: the stream is done, and every call it left open ended with it. */
  private completed(doc: DocReader): void {
    this._status = 'done';
    doc.onToolCallsEnd();
    this.answerDone();
  }

  /** At the provider's completion, inside the event that completes the stream: nothing more of the answer can follow. */
  protected answerDone(): void {}

  /**
   * Where the text being committed came from: the event being read (the text of an event the core
   * read to the end itself is committed with its batch, after the event: see ModelStream's
   * `near`), or the stream's end (a flush).
   */
  protected textOffset(): number {
    return call.reading !== 0 ? this.offsetOf(call.reading, 0) : this.bytesIn;
  }

  /** Bytes of the stream the core holds and has not read into events yet: an unfinished event or line, and (Bedrock) message. */
  protected heldBytes(): number {
    return (this.st === 0 ? 0 : this.core.x.framePending(this.st)) + (this.unframer?.framer.pendingBytes ?? 0);
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


  /**
   * A turn that failed, in a format whose usage comes after its completion (Bedrock): the error
   * waits for that event or the end. Its offset is the stream's, that of the event that said it.
   */
  private turnFailed: { at: number; why: string; detail: string | undefined } | null = null;

  /**
   * @internal The error of a turn that failed and waits (see {@link turnFailed}), with `text`, or
   * null: what ends the stream before its usage came (a relay's abort, a stream whose upstream
   * broke) ends it with this error, which came first.
   */
  turnError(text = ''): ModelStreamError | null {
    const t = this.turnFailed;
    if (t === null) return null;
    return new ModelStreamError('ERR_PROVIDER', t.at, providerSaid(t.at, t.why, t.detail), text, t.why, t.detail);
  }

  /** The turn that failed stops the stream now, with the text this call committed (what was held back at its stop). */
  private failTurn(): never {
    this.batchDone();
    const e = this.turnError(call.out)!;
    if (this.unframer !== null) this.unframer.binaryError = e; // (its offset is the stream's already)
    this._status = 'failed';
    this.stop(e);
  }

  /** The event being read stops the stream: its batch's text committed first, then the error at `offset`, with that text. */
  private failAt(code: ModelStreamErrorCode, offset: number, message: string, providerMessage?: string, providerCode?: string): never {
    this.batchDone();
    this._status = 'failed';
    this.stop(new ModelStreamError(code, offset, message, call.out, providerMessage, providerCode));
  }

  // ---- a JSON body instead of an event stream (SSE formats, AWS's event stream) ---------------

  /** Before the first byte that is not white space: is the body one JSON object (or array)? True when this chunk went to it. */
  protected sniff(chunk: Uint8Array): boolean {
    if (this.sniffed === 2) {
      this.keepBody(chunk);
      return true;
    }
    const u = this.unframer;
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i];
      // a BOM at the stream's start, whatever reads it came in
      const at = this.bytesIn + i;
      if (at === this.bom && at < 3 && b === BOM[at]) {
        this.bom++;
        continue;
      }
      if (b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09) continue;
      // (`[`: a JSON array, where the format's provider answers one: Gemini without alt=sse, its errors too)
      this.sniffed = b === 0x7b || (b === 0x5b && this.spec.arrayBody !== undefined) ? 2 : 1;
      if (this.sniffed === 2) {
        // the body from its `{`: what came before it (white space, a BOM) is no part of it
        this.bytesIn += i;
        this.keepBody(chunk.subarray(i));
        return true;
      }
      // (AWS's event stream: the white space held before this byte is its first bytes)
      if (u !== null && u.leadBytes !== 0) this.unhold();
      return false;
    }
    if (u !== null) {
      // AWS's event stream: white space (or a BOM) is held, not framed, until the first other byte
      // says what follows; framed, 12 bytes of it before a body would be a prelude whose CRC fails
      u.hold(chunk);
      this.bytesIn += chunk.length;
      return true;
    }
    return false;
  }

  /** AWS's event stream after white space: the white space held, framed as its first bytes (the stream's offsets are then the binary stream's). */
  private unhold(): void {
    const lead = this.unframer!.takeLead();
    this.bytesIn = 0; // (the events' bytes, none yet)
    this.frameAll(lead, this.mode);
  }

  private keepBody(chunk: Uint8Array): void {
    const body = (this.body ??= { parts: [], bytes: 0, at: this.bytesIn });
    // (counted once kept: a read past the limit is not, and jsonBodyBytes says what is held)
    if (body.bytes + chunk.length > this.maxEventBytes) {
      this.stop(new ModelStreamError('ERR_EVENT_TOO_LARGE', body.at,
        `The ${this.format} response is a JSON body larger than maxEventBytes (${this.maxEventBytes} bytes)`, ''));
    }
    body.parts.push(chunk.slice());
    body.bytes += chunk.length;
    this.bytesIn += chunk.length;
  }

  /** A strict stream's whole answer is valid UTF-8 (its JSON was read leniently, as an error body's is): else ERR_INVALID_UTF8 at its first bad byte. */
  private strictBody(all: Uint8Array, at: number): void {
    try {
      (strictUtf8 ??= new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })).decode(all);
      return;
    } catch {
      // placed by the core's validator below
    }
    const v = new Utf8Validator();
    try {
      v.push(all);
      v.flush();
    } catch (e) {
      if (!(e instanceof Utf8DecodeError)) throw e;
      this.stop(new ModelStreamError('ERR_INVALID_UTF8', at + e.offset, `The ${this.format} response, a whole answer in a JSON body, is not valid UTF-8 at byte offset ${at + e.offset}`, ''));
    } finally {
      v.dispose();
    }
  }

  /** A whole answer's events, written as its stream (see FormatSpec.wholeAnswer), read as that stream's bytes at flush. */
  protected abstract readWhole(events: Uint8Array): void;

  private endBody(): void {
    this._events = 1; // the body is the provider's one answer
    const parts = this.body?.parts ?? [];
    const all = new Uint8Array(this.body?.bytes ?? 0);
    let o = 0;
    for (const p of parts) {
      all.set(p, o);
      o += p.length;
    }
    // (where the body begins: past white space and a BOM before it)
    const at = this.body?.at ?? 0;
    // (nested deeper than the core reads any event: refused at the bracket that passes it, as a
    // streamed event is; writing its events would overflow the stack)
    const deep = jsonTooDeep(all);
    if (deep >= 0) {
      this.stop(new ModelStreamError('ERR_BAD_EVENT', at + deep,
        `The ${this.format} response, a whole answer in a JSON body, is nested deeper than ${JSON_MAX_DEPTH} levels (at byte offset ${at + deep})`, ''));
    }
    let value: unknown;
    try {
      value = JSON.parse(decodeUtf8(all));
    } catch {
      this.stop(new ModelStreamError('ERR_BAD_EVENT', at, `The ${this.format} response, from byte offset ${at}, is neither an event stream nor valid JSON`, ''));
    }
    // the whole answer (asked without streaming): read as the events of its stream, their errors
    // at the body's offset; the body is then no more than them.
    // (An answer with its error, a failed Responses response's, is read so too: its output, then
    // its error, as its stream says them)
    // (no more than 4 × maxEventBytes of them and 1 MiB, a Responses answer's ~3 × its body and
    // each event's envelope with room: a body that would be more, an envelope said again with each
    // of many choices, is refused unwritten)
    const budget = wholeAnswerBudget(this.maxEventBytes);
    const events = wholeEventsWithin(this.spec, value, budget);
    if (events === null) {
      this.stop(new ModelStreamError('ERR_EVENT_TOO_LARGE', at,
        `The ${this.format} response, a whole answer of ${all.length} bytes, would be read as events of more than ${budget} bytes (4 × maxEventBytes and 1 MiB): not read`, ''));
    }
    if (events === undefined) {
      const err = this.spec.errorBody(value);
      if (err !== undefined) {
        this._status = 'failed';
        this.stop(new ModelStreamError('ERR_PROVIDER', at, `The provider answered with an error body: ${err.message}${err.detail ? ` (${err.detail})` : ''}`, '', err.message, err.detail));
      }
    } else {
      if (this.plan.fatal) this.strictBody(all, at);
      const end = this.bytesIn;
      this.body = null;
      this.sniffed = 1;
      this._events = 0;
      this.bytesIn = at;
      let sse = '';
      for (const e of events) sse += `${e.event === undefined ? '' : `event: ${e.event}\n`}data: ${e.data}\n\n`;
      const bytes = (encoder ??= new TextEncoder()).encode(sse);
      // (the body was held within maxEventBytes; its events, each with its envelope, a call's
      // index, the response whole in its completion, may each be a little longer than it: the
      // core's limit is theirs while it reads them, no more than the bytes they are)
      const core = this.core;
      // (the framer's state is a new stream's: what it read before the body, white space and a
      // BOM, perhaps cut inside a line or a character, is none of the events)
      core.x.sseReset(this.st);
      // (and Bedrock's framer of the binary stream: the white space held before the body is no message)
      this.unframer?.reset();
      core.sync();
      const limit = (this.st + ST_FRAME_MAX) >> 2; // (the frame record's limit)
      const max = core.i32[limit];
      if (bytes.length > max) core.i32[limit] = Math.min(bytes.length, MAX_LIMIT_BYTES);
      wholeReader = this;
      wholeAt = at;
      try {
        this.readWhole(bytes);
      } finally {
        wholeReader = null;
        core.sync();
        if (this.st !== 0) core.i32[(this.st + ST_FRAME_MAX) >> 2] = max;
      }
      this.bytesIn = end; // (the input's length, for a stream cut short)
      if (this.unframer !== null) this.unframer.bytes = end; // (Bedrock's: the offsets are the binary stream's)
      return;
    }
    // (chunks as a JSON array: Gemini's answer to streamGenerateContent without alt=sse)
    const array = Array.isArray(value) ? ` array${this.spec.arrayBody !== undefined ? ` (${this.spec.arrayBody})` : ''}` : ' body';
    this.stop(new ModelStreamError('ERR_BAD_EVENT', at, `The ${this.format} response is a JSON${array}, not an event stream`, ''));
  }

}

/**
 * What the core reads to the end for a reader besides text: the call whose argument fragments it
 * reads (its key is the core's current call), the bytes of arguments it may still keep (the
 * budget it was given, less what it kept since), and what it kept that JS has not taken yet (1
 * reasoning, 2 arguments).
 */
class CoreParts {
  call: Call | null = null;
  left = 0;
  held = 0;
}

/** `err` placed at byte offset `at` (its message's offsets with it), or `err` when it is there. */
function placedAt(err: ModelStreamError, at: number): ModelStreamError {
  if (at === err.offset) return err;
  const message = err.message.replaceAll(`byte offset ${err.offset}`, `byte offset ${at}`).replaceAll(`after ${err.offset} bytes`, `after ${at} bytes`);
  return new ModelStreamError(err.code, at, message, err.text, err.providerMessage, err.providerCode);
}

/**
 * An error of the events written from AWS's event stream, in the binary stream's terms: at the
 * offset of the message its event came in (`map`), and so is every offset its message says (those
 * of the events written from the messages mean nothing to a caller); what it said of the bytes at
 * its offset is said of the message's event, whose bytes those are.
 */
function inMessage(err: ModelStreamError, map: (at: number) => number): ModelStreamError {
  const at = map(err.offset);
  const message = err.message
    .replace(/byte offset (\d+)/g, (_, n: string) => `byte offset ${map(Number(n))}`)
    .replaceAll(`after ${err.offset} bytes`, `after ${at} bytes`)
    .replace(/^(Invalid|Truncated) UTF-8 at byte offset (\d+) \(bytes from there: /, '$1 UTF-8 in the event of the message at byte offset $2 (its bytes from the bad one: ')
    .replace(/^Invalid JSON at byte offset (\d+), in the event whose data begins at byte offset \d+: /, 'Invalid JSON in the event of the message at byte offset $1: ');
  return new ModelStreamError(err.code, at, message, err.text, err.providerMessage, err.providerCode);
}

/** UTF-8's byte order mark. */
const BOM = [0xef, 0xbb, 0xbf];

/** The message of the provider's error an event said (an error event, a finish reason that says the turn failed), at byte offset `at`. */
function providerSaid(at: number, why: string, detail: string | undefined): string {
  return `The provider sent an error at byte offset ${at}: ${why}${detail ? ` (${detail})` : ''}`;
}
