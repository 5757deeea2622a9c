// Layer 4: a model's stream, from its bytes to its text. The core frames the stream (SSE events or
// lines, on the byte-level path: UTF-8 validated in place) and reads each event's JSON with the
// format's path program in one call per batch; a format's description (model-formats.ts) picks
// the text, the finish reason, the usage, the completion and the errors out of the records; the
// text spans of a push are written out by the core as one run of UTF-16 units, so that one string
// is made per push, which the text layer commits (whole graphemes, NFC).
import { DEFAULT_MAX_TEXT_BYTES, type FinalReport, TextAssembler } from './assembler.js';
import { type StateKind } from './core-stream.js';
import { ModelStreamError, hex } from './errors.js';
import { FrameStream, frameLimit } from './frames.js';
import {
  DF_DONE, DF_ERROR, MD_REC, MDR_BLANK, MDR_DOCS, MDR_READ, MDR_SCRATCH, MDR_COMMENTS, MDR_GATHERED, MDR_QUIET, MDR_TEXT_BYTES, MDR_UNITS, ME_GATHER, ME_KEEP, FR_ERR, FR_NREC, F_FATAL, JF_ASCII, JF_ESCAPED, JREC_WORDS, JR_END, JR_HEAD,
  JE_TRUNCATED, JR_INDEX, JR_START, JSON_PROG_CAP, MDR_NEXT, MD_FLAGS, MD_J0, MD_JN, MD_LEN, MD_PTR, MGATHER_CAP, MGR_PTR,
  LINE_REC_WORDS, LR_END, LR_START, MG_WORDS, MK_LINES, MK_SSE, MK_STRIP_DATA, M_COMMENTS, M_IN_SPANS, M_UTF8_OUT, R_LIMIT, R_TRUNC,
  SR_DSTART, SSE_REC_WORDS,
} from './generated/abi.js';
import { FORMATS, Kind, MODEL_FORMATS, type Doc, type FormatSpec, type ModelFormat, type Sink } from './model-formats.js';
import { booleanOption, byteLimitOption, checkOptions, oneOf } from './options.js';
import { TextRangeError } from './text-errors.js';
import { DEFAULT_MAX_EVENT_BYTES } from './sse.js';
import { type Core } from './wasm.js';

export type { ModelFormat } from './model-formats.js';

/** Options of {@link ModelStream}. */
export interface ModelStreamOptions {
  /** Where the provider puts its text and what completes its stream. */
  format: ModelFormat;
  /**
   * Strict UTF-8: invalid UTF-8 is a ModelStreamError (`ERR_INVALID_UTF8`). With `false`, bad
   * sequences inside the text become U+FFFD exactly as `TextDecoder` makes them.
   * @defaultValue true
   */
  fatal?: boolean;
  /** As {@link TextAssembler}'s. @defaultValue 256 MiB */
  maxTextBytes?: number;
  /** As {@link TextAssembler}'s. @defaultValue 64 KiB */
  maxPendingBytes?: number;
  /** The most bytes one event (or line) may hold while it is assembled, as {@link SseParser}'s. @defaultValue 16 MiB */
  maxEventBytes?: number;
  /** As {@link TextAssembler}'s: `'NFC'`, or `false` for the raw text (still whole graphemes). @defaultValue 'NFC' */
  normalize?: 'NFC' | false;
  /** Which choice to follow (OpenAI's `index`). @defaultValue 0 */
  choice?: number;
  /**
   * What `flush()` does with a stream that ended without its provider's completion: `'error'`
   * throws ModelStreamError (`ERR_STREAM_TRUNCATED`); `'allow'` returns the rest. Either way the
   * status is `'truncated'`.
   * @defaultValue 'error'
   */
  eof?: 'error' | 'allow';
  /**
   * The raw-delta mode: `push` returns the delta text as the provider sent it, with no grapheme
   * commit and no NFC (for callers that commit text themselves).
   * @defaultValue false
   */
  raw?: boolean;
}

/** The end of a model stream: the text's report, with what the provider said about it. */
export interface ModelReport extends FinalReport {
  /** `'done'` only when the provider's completion arrived. */
  status: 'done' | 'truncated' | 'failed';
  finishReason?: string;
  usage?: Record<string, unknown>;
  /** Provider events (SSE events, or NDJSON/ddg lines) read, `[DONE]` included, blank lines not. */
  events: number;
}

export type ModelStatus = 'open' | 'done' | 'truncated' | 'failed';

const EMPTY = new Uint8Array(0);

// What one call holds while it runs (one call runs at a time, and no user code runs during one):
/** The text a ModelStream's call committed so far. */
let callOut = '';
/** Gather entries written for the batch being read. */
let gathered = 0;
/** A frame call that reads its batch's documents itself was just made (its MDR_* words are in the result record). */
let readPending = false;
/** During a flush: the incomplete character held before it, and that a flush is under way. */
let carried: Uint8Array = EMPTY;
let flushing = false;

/** The options of a model reader (stream or relay). */
interface ReaderOptions {
  format: ModelFormat; fatal?: boolean; maxEventBytes?: number; choice?: number;
  eof?: 'error' | 'allow'; raw?: boolean; normalize?: 'NFC' | false;
}

/** What a reader's options decide: the same object for every stream made with the same options. */
interface Plan {
  readonly format: ModelFormat;
  readonly fatal: boolean;
  readonly maxEventBytes: number;
  readonly choice: number;
  readonly comments: boolean;
  readonly eof: 'error' | 'allow';
  readonly raw: boolean;
  readonly normalize: 'NFC' | false;
  readonly spec: FormatSpec;
  readonly prog: number;
  /** The format's template (quiet events), or 0 where the core may not read events to the end itself. */
  readonly tmpl: number;
  readonly framing: number;
  readonly mode: number;
}

let plansOf: Core | null = null;
const plans = new Map<string, Plan>();

function planOf(core: Core, format: ModelFormat, fatal: boolean, maxEventBytes: number, choice: number, comments: boolean,
  eof: 'error' | 'allow', raw: boolean, normalize: 'NFC' | false): Plan {
  if (plansOf !== core) {
    plansOf = core;
    plans.clear();
  }
  const key = `${format}|${fatal}|${maxEventBytes}|${choice}|${comments}|${eof}|${raw}|${normalize}`;
  let plan = plans.get(key);
  if (plan === undefined) {
    if (plans.size > 256) plans.clear(); // (a realm with many option sets: a cache, not a registry)
    const spec = FORMATS[format];
    const lines = spec.framing === 'lines';
    plan = Object.freeze({
      format, fatal, maxEventBytes, choice, comments, eof, raw, normalize, spec,
      prog: programAddress(core, format, spec),
      tmpl: programAddress(core, format, spec) + templateOffset(spec),
      framing: lines ? MK_LINES | (spec.stripData ? MK_STRIP_DATA : 0) : MK_SSE,
      mode: lines ? M_UTF8_OUT : M_UTF8_OUT | M_IN_SPANS | M_COMMENTS,
    });
    plans.set(key, plan);
  }
  return plan;
}
const SSE_STATE: StateKind = { reset: (x, st) => x.sseReset(st), free: (x, st) => x.frameFree(st) };
const LINES_STATE: StateKind = { reset: (x, st) => x.linesReset(st), free: (x, st) => x.frameFree(st) };

const OPTIONS = ['format', 'fatal', 'maxEventBytes', 'normalize', 'choice', 'eof', 'raw', 'maxTextBytes', 'maxPendingBytes'];
const HINTS = {
  keys: {
    onEvent: 'the text is returned by push(chunk); finishReason, usage and status are properties',
    maxLineBytes: 'ModelStream limits each event (or NDJSON line) with maxEventBytes',
    provider: "did you mean 'format'?",
    type: "did you mean 'format'?",
  },
};

/** Each format's program, placed once per core in its program area. */
const PROGRAM_SLOT = JSON_PROG_CAP / 8;
let programsOf: Core | null = null;
const programAt = new Map<ModelFormat, number>();

/** Where a format's template lies in its slot, after its program (4-byte aligned). */
const templateOffset = (spec: FormatSpec): number => (spec.program.length + 3) & ~3;

function programAddress(core: Core, format: ModelFormat, spec: FormatSpec): number {
  if (programsOf !== core) {
    programsOf = core;
    programAt.clear();
  }
  let at = programAt.get(format);
  if (at === undefined) {
    if (templateOffset(spec) + spec.template.length > PROGRAM_SLOT) throw new Error(`seam: the ${format} path program does not fit its slot`);
    at = (core.x.JSON_PROG_PTR.value as number) + PROGRAM_SLOT * MODEL_FORMATS.indexOf(format);
    core.sync();
    core.u8.set(spec.program, at);
    core.u8.set(spec.template, at + templateOffset(spec));
    programAt.set(format, at);
  }
  return at;
}

let utf8: TextDecoder | undefined;
const decodeUtf8 = (b: Uint8Array): string => (utf8 ??= new TextDecoder('utf-8', { fatal: false, ignoreBOM: true })).decode(b);

/**
 * What a model stream and a relay share: the provider's stream framed by the core (SSE events or
 * lines), each event's JSON read there, the format's description over the records, the status,
 * finish reason, usage and reasoning, and the provider's errors as ModelStreamErrors. A subclass
 * decides what becomes of the text spans (a string for the text layer, or bytes for a client).
 */
export abstract class ModelReader extends FrameStream {
  /** @internal What the options decided (shared by the streams made with the same options). */
  readonly plan: Plan;
  protected _status: ModelStatus = 'open';
  protected _events = 0;
  protected _heartbeats = 0;
  /** @internal What the events said so far (the format's description writes them through the realm's Reader). */
  said: Said = NOTHING_SAID;
  /** SSE formats: 0 before the first byte that is not white space, 1 an event stream, 2 a JSON body. */
  protected sniffed = 0;
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
    if (lines) this.sniffed = 1;
  }

  get format(): ModelFormat { return this.plan.format; }
  get fatal(): boolean { return this.plan.fatal; }
  get choice(): number { return this.plan.choice; }
  get maxEventBytes(): number { return this.plan.maxEventBytes; }
  protected get spec(): FormatSpec { return this.plan.spec; }
  protected get framing(): number { return this.plan.framing; }
  protected get mode(): number { return this.plan.mode; }
  protected get forwardComments(): boolean { return this.plan.comments; }

  /** @internal A string span of the answer's text (an escaped JSON string when JF_ESCAPED is in flags). */
  abstract span(ptr: number, len: number, flags: number): void;
  /** The end of a batch (its bytes are overwritten by the next core call). */
  protected batchDone(): void {}
  /** A valid event's JSON document, after the description read it (and found no error). */
  protected eventDoc(_ptr: number, _len: number): void {}
  /** The provider's completion was just read. */
  protected completed(): void {}
  /** The core's mode for its next read (ME_* bits), with what that mode needs put in place. */
  protected readMode(): number { return 0; }
  /** The template of quiet events the core may read to the end itself (0: none). */
  protected quietTemplate(): number { return this.plan.tmpl; }
  /** After each call of the core's reader: what it read to the end itself (bytes for a client, their counts). */
  protected quietDone(): void {}
  /** The text a call produced before an error, for the error. */
  protected abstract textSoFar(): string;

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
  /** Bytes of core memory the stream holds now. */
  get retainedBytes(): number { return this.st === 0 ? 0 : this.core.x.frameRetained(this.st); }

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
    carried = this.carriedBytes();
    flushing = true;
    try {
      this.flushCore(() => (lines ? this.core.x.linesFlush(this.st, this.mode) : this.core.x.sseFlush(this.st, this.mode)));
    } finally {
      flushing = false;
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
    readPending = true;
    return this.core.x.modelPush(this.st, len, mode, plan.framing, plan.prog, this.template(), plan.choice, read);
  }

  protected more(): number {
    const plan = this.plan;
    const read = this.readMode();
    readPending = true;
    return this.core.x.modelMore(this.st, plan.framing, plan.prog, this.template(), plan.choice, read);
  }

  /** The template for the next read: none once the stream is done or failed (then every event is read here). */
  private template(): number {
    return this._status === 'open' ? this.quietTemplate() : 0;
  }

  protected errorOf(r: number): Error {
    const core = this.core;
    const rel = core.word(FR_ERR);
    this.batchDone();
    const at = this.base + rel;
    if (r & R_LIMIT) {
      const message = this.framing === MK_SSE
        ? `Server-sent event exceeds maxEventBytes (${this.maxEventBytes} bytes) at the line starting at byte offset ${at}; nothing past the limit was buffered`
        : `Line starting at byte offset ${at} is longer than maxEventBytes (${this.maxEventBytes} bytes); nothing past the limit was buffered`;
      return new ModelStreamError('ERR_EVENT_TOO_LARGE', at, message, this.textSoFar());
    }
    const message = r & R_TRUNC
      ? `Truncated UTF-8: the stream ended inside a character that starts at byte offset ${at} (${hex(carried)})`
      : `Invalid UTF-8 at byte offset ${at} (bytes from there: ${hex(core.bytesAt(rel, 4))})`;
    return new ModelStreamError('ERR_INVALID_UTF8', at, message, this.textSoFar());
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
      readPending = false;
      return true;
    }
    if (i32[r + MDR_DOCS] !== 0 || i32[r + MDR_NEXT] !== nrec || i32[r + MDR_SCRATCH] !== 0) return false;
    readPending = false;
    const quiet = i32[r + MDR_QUIET];
    this._events += quiet;
    this.lineNo += quiet + i32[r + MDR_BLANK];
    this._heartbeats += i32[r + MDR_COMMENTS];
    gathered = i32[r + MDR_GATHERED];
    this.quietDone();
    if (gathered !== 0) this.batchDone();
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
    let read = readPending && core.i32[core.res + MDR_READ] === 1; // (read by the frame call itself)
    readPending = false;
    let next = 0;
    while (next < nrec) {
      const nd = read ? core.i32[core.res + MDR_DOCS]
        : core.x.modelDocs(this.st, next, nrec, this.framing, this.plan.prog, this.template(), this.plan.choice, gathered, this.readMode());
      read = false;
      core.sync();
      const i32 = core.i32;
      const r = core.res;
      next = i32[r + MDR_NEXT];
      const quiet = i32[r + MDR_QUIET];
      this._events += quiet;
      this.lineNo += quiet + i32[r + MDR_BLANK];
      this._heartbeats += i32[r + MDR_COMMENTS];
      gathered = i32[r + MDR_GATHERED];
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
        this.completed();
      }
      else this.badEvent(this.offsetOf(e, 0), `[DONE] at byte offset ${this.offsetOf(e, 0)} is not an event of the ${this.format} format`);
      return;
    }
    if (flags & DF_ERROR) {
      // the last line of a line stream, cut short by the end: the stream is truncated
      if (flushing && this.framing !== MK_SSE && i32[e + MD_JN] === JE_TRUNCATED) {
        this._events--; // not an event: one the stream ended inside
        return;
      }
      const why = JSON_ERRORS[i32[e + MD_JN]] ?? 'not JSON';
      const at = this.offsetOf(e, i32[e + MD_J0]);
      this.badEvent(at, this.framing === MK_SSE ? `Invalid JSON in the event at byte offset ${at}: ${why}` : `Invalid JSON on line ${this.lineNo} (byte offset ${at}): ${why}`);
      return;
    }
    const reader = readerOf(this.core);
    reader.stream = this;
    reader.dPtr = ptr;
    reader.dLen = i32[e + MD_LEN];
    reader.dRec = this.core.mjrec + i32[e + MD_J0] * JREC_WORDS;
    reader.n = i32[e + MD_JN];
    this.spec.read(reader, reader);
    const said = this.said; // (made by the first thing a description reported)
    const why = said.error;
    if (why !== null) {
      said.error = null;
      this.batchDone();
      this._status = 'failed';
      const at = this.offsetOf(e, 0);
      const detail = said.errorDetail;
      this.stop(new ModelStreamError('ERR_PROVIDER', at, `The provider sent an error at byte offset ${at}: ${why}${detail ? ` (${detail})` : ''}`, this.textSoFar(), why));
    }
    this.eventDoc(ptr, reader.dLen);
    if (said.done) {
      this._status = 'done';
      this.completed();
    }
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
    this.stop(new ModelStreamError('ERR_BAD_EVENT', offset, message, this.textSoFar()));
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
    const err = (value as { error?: unknown } | null)?.error;
    if (err !== undefined && err !== null) {
      const e = err as { message?: unknown; code?: unknown; type?: unknown };
      const m = typeof err === 'string' ? err : typeof e.message === 'string' ? e.message : JSON.stringify(err);
      const detail = typeof e.code === 'string' ? e.code : typeof e.type === 'string' ? e.type : undefined;
      this._status = 'failed';
      this.stop(new ModelStreamError('ERR_PROVIDER', 0, `The provider answered with an error body: ${m}${detail ? ` (${detail})` : ''}`, '', m));
    }
    this.stop(new ModelStreamError('ERR_BAD_EVENT', 0, `The ${this.format} response is a JSON body, not an event stream`, ''));
  }

}

/**
 * A model's stream, from its bytes to its text: `push(chunk)` returns the text committed by the
 * chunk (whole graphemes, NFC, as {@link TextAssembler}), and the stream knows when it is done
 * (the provider's completion), its finish reason and usage, and the provider's errors.
 *
 * Errors are {@link ModelStreamError}s with the absolute byte offset and the text committed by
 * the call before the error; the stream then stays failed until `reset()`.
 */
export class ModelStream extends ModelReader {
  private assembler: TextAssembler | null;
  /** The raw mode's text, kept for the report. */
  private kept: RawText | null;
  /** After flush(): the text layer's report (null in the raw mode: made on request). */
  private finalText: FinalReport | null = null;
  private ended = false;
  /** All text committed (in UTF-16 units). */
  private committed = 0;

  /** What `flush()` does without the provider's completion. */
  get eof(): 'error' | 'allow' { return this.plan.eof; }
  /** The raw-delta mode. */
  get raw(): boolean { return this.plan.raw; }

  constructor(options: ModelStreamOptions) {
    if (options === undefined) throw new TypeError("ModelStream: options are required: new ModelStream({ format: 'openai' })");
    checkOptions(options, 'ModelStream', OPTIONS, HINTS);
    super('ModelStream', options);
    this.assembler = this.plan.raw ? null : new TextAssembler({ normalize: this.plan.normalize, maxTextBytes: options.maxTextBytes, maxPendingBytes: options.maxPendingBytes });
    this.kept = this.plan.raw
      ? new RawText(this.plan.fatal, byteLimitOption(options.maxTextBytes, 'maxTextBytes', 'ModelStream', DEFAULT_MAX_TEXT_BYTES, Infinity))
      : null;
  }

  /** The text committed by the chunk: whole graphemes, NFC (or the raw deltas with `raw: true`). */
  push(chunk: Uint8Array): string {
    this.open(chunk, 'ModelStream.push()');
    callOut = '';
    if (this.sniffed !== 1 && this.sniff(chunk)) return '';
    this.frameAll(chunk, this.mode);
    const out = callOut;
    callOut = ''; // not kept: an idle stream holds no string
    return out;
  }

  /**
   * End of stream: the text still held back. Without the provider's completion the status is
   * `'truncated'` and, unless `eof: 'allow'`, this throws ModelStreamError (`ERR_STREAM_TRUNCATED`)
   * with that text on it. Then `finish()` gives the report; `reset()` starts a new stream.
   */
  flush(): string {
    if (this.failure !== null) this.rethrow();
    if (this.ended) return '';
    callOut = '';
    this.flushFrames();
    this.takeKept();
    let rest = callOut;
    const assembler = this.assembler;
    const text = assembler !== null ? assembler.finish() : null;
    if (text !== null) {
      rest += text.text.slice(this.committed);
      this.committed = text.text.length;
    }
    this.finalText = text;
    this.ended = true;
    if (this._status === 'open') {
      this._status = 'truncated';
      if (this.plan.eof === 'error') {
        this.stop(new ModelStreamError('ERR_STREAM_TRUNCATED', this.bytesIn,
          `The stream ended without its completion (${COMPLETION[this.format]}) after ${this.bytesIn} bytes: the text is incomplete`, rest));
      }
    }
    this.bytesIn = 0;
    return rest;
  }

  /** The report: the committed text, its counts and SHA-256, status, finish reason, usage. Flushes first if needed (without throwing). */
  finish(options?: { expected?: string }): ModelReport {
    checkOptions(options, 'ModelStream.finish', ['expected']);
    if (!this.ended && this.failure !== null) {
      // failed: the text committed before the error
      this.finalText = this.assembler?.finish() ?? null;
      this.ended = true;
    } else if (!this.ended) {
      try {
        this.flush();
      } catch (e) {
        if (!(e instanceof ModelStreamError) || !this.ended) throw e;
      }
    }
    const r = this.makeReport(this.finalText);
    const expected = options?.expected;
    if (expected !== undefined) r.mismatch = (this.plan.normalize === 'NFC' ? expected.normalize('NFC') : expected) !== r.text;
    return r;
  }

  protected override resetState(): void {
    super.resetState();
    this.finalText = null;
    this.ended = false;
    callOut = '';
    this.committed = 0;
    gathered = 0;
    const a = this.assembler;
    this.assembler = a === null ? null : new TextAssembler({ normalize: a.normalize, maxTextBytes: a.maxTextBytes, maxPendingBytes: a.maxPendingBytes });
    const k = this.kept;
    this.kept = k === null ? null : new RawText(k.inCore, k.maxBytes);
  }

  protected textSoFar(): string {
    return callOut;
  }

  /** @internal A text span: a gather entry for the batch's one string. */
  span(ptr: number, len: number, flags: number): void {
    if (gathered === MGATHER_CAP) this.batchDone();
    const i32 = this.core.i32;
    const g = this.core.mgather + gathered * MG_WORDS;
    i32[g] = ptr;
    i32[g + 1] = len;
    i32[g + 2] = flags;
    gathered++;
  }

  /** Gathered in the core: the batch's text read to the end there (ME_GATHER). */
  protected override readMode(): number { return this.plan.fatal ? (this.kept !== null ? ME_GATHER | ME_KEEP : ME_GATHER) : 0; }

  protected override quietDone(): void {
    const core = this.core;
    const units = core.i32[core.res + MDR_UNITS];
    if (units >= 0) this.commitGathered(units);
  }

  /** The text of `units` units the core gathered at MGR_PTR (and kept, in the raw mode). */
  private commitGathered(units: number): void {
    const core = this.core;
    const text = core.utf16(core.word(MGR_PTR), units);
    const k = this.kept;
    if (k !== null) {
      const bytes = core.word(MDR_TEXT_BYTES);
      if (k.bytes + bytes > k.maxBytes) this.tooLong(k, bytes);
      k.bytes += bytes;
      k.units += units;
    }
    this.commit(text);
  }

  /** The raw text would pass maxTextBytes: the stream stops, its report has the text before. */
  private tooLong(k: RawText, bytes: number): never {
    this._status = 'failed';
    this.stop(new TextRangeError('ERR_TEXT_TOO_LONG', `ModelStream: ${bytes} more bytes of raw text would pass maxTextBytes `
      + `(${k.maxBytes} bytes, ${k.bytes} kept for the report); the stream stops before them`));
  }

  /** The raw text the core kept, as one string (the core gives its memory back). */
  private takeKept(): void {
    const k = this.kept;
    if (k === null || !k.inCore || k.taken !== null || this.st === 0) return;
    const core = this.core;
    core.x.modelKept(this.st);
    core.sync();
    k.taken = core.utf16(core.word(MGR_PTR), k.units);
    core.x.modelKeepFree(this.st);
  }

  protected override released(): void {
    this.takeKept();
    super.released();
  }

  /** Makes the string of the batch's text spans (one core call, one string) and commits it. */
  protected override batchDone(): void {
    const n = gathered;
    if (n === 0) return;
    gathered = 0;
    const core = this.core;
    let text: string;
    const g0 = core.mgather;
    if (n === 1 && this.kept === null && (core.i32[g0 + 2] & (JF_ASCII | JF_ESCAPED)) === JF_ASCII) {
      // one ASCII span with no escape (a push's usual delta): its bytes are its text
      text = core.latin1(core.i32[g0], core.i32[g0 + 1]);
    } else if (this.fatal) {
      const units = core.x.modelGather(this.st, n, this.kept !== null ? 1 : 0);
      core.sync();
      this.commitGathered(units);
      return;
    } else {
      // not strict: the spans may hold bad sequences, which become U+FFFD as TextDecoder makes them
      text = '';
      const i32 = core.i32;
      for (let i = 0; i < n; i++) {
        const g = core.mgather + i * MG_WORDS;
        const s = core.utf8(i32[g], i32[g + 1]);
        text += i32[g + 2] & JF_ESCAPED ? (JSON.parse(`"${s}"`) as string) : s;
      }
    }
    this.commit(text);
  }

  /** Text of the answer, in order: to the raw deltas, or through the text layer. */
  private commit(text: string): void {
    const k = this.kept;
    if (k !== null) {
      if (!k.inCore) {
        const bytes = utf8Length(text);
        if (k.bytes + bytes > k.maxBytes) this.tooLong(k, bytes);
        k.bytes += bytes;
        k.deltas.push(text);
      }
      callOut += text;
    } else {
      const c = this.assembler!.push(text);
      this.committed += c.length;
      callOut += c;
    }
  }

  private makeReport(text: FinalReport | null): ModelReport {
    const status = this._status === 'open' ? 'truncated' : this._status;
    let base: FinalReport;
    if (text !== null) {
      base = text;
    } else {
      const a = new TextAssembler({ normalize: false, maxPendingBytes: Infinity, maxTextBytes: Infinity });
      a.push(this.kept?.text() ?? '');
      base = a.finish();
    }
    const r: ModelReport = { ...base, status, events: this._events };
    const said = this.said;
    if (said.finishReason !== undefined) r.finishReason = said.finishReason;
    if (said.usage !== undefined) r.usage = said.usage;
    return r;
  }
}

/**
 * The raw mode's text so far, for the report. Strict, the core keeps it (the UTF-16 units of the
 * text it gathers, appended to the stream's KEEP buffer: ME_KEEP) and JS takes it as one string at
 * the end; a string kept here per delta would be copied again by every young collection of the
 * JS heap until it is old. Not strict, the deltas are made here, and kept here.
 */
class RawText {
  /** UTF-16 units and UTF-8 bytes so far (each delta counted alone). */
  units = 0;
  bytes = 0;
  /** The core's kept text, once taken; the deltas made here otherwise. */
  taken: string | null = null;
  readonly deltas: string[] = [];

  constructor(readonly inCore: boolean, readonly maxBytes: number) {}

  text(): string {
    return this.inCore ? this.taken ?? '' : this.deltas.join('');
  }
}

/** UTF-8 bytes of a string (a lone surrogate counts as U+FFFD, 3 bytes). */
function utf8Length(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 2; // a pair: 4 bytes for 2 units
      i++;
    } else n += 2;
  }
  return n;
}

/** What a stream's events said: written by its format's description, read by the stream. */
interface Said {
  finishReason: string | undefined;
  usage: Record<string, unknown> | undefined;
  reasoning: string;
  pings: number;
  done: boolean;
  /** The error a description reported while reading a document. */
  error: string | null;
  errorDetail: string | undefined;
}

/** What a stream that read nothing has said (shared, never written). */
const NOTHING_SAID: Said = Object.freeze({
  finishReason: undefined, usage: undefined, reasoning: '', pings: 0, done: false, error: null, errorDetail: undefined,
}) as Said;

let readers: { core: Core; reader: Reader } | null = null;

/** The realm's Reader (one: a document is read at a time). */
function readerOf(core: Core): Reader {
  if (readers === null || readers.core !== core) readers = { core, reader: new Reader(core) };
  return readers.reader;
}

/**
 * The document being read, for a format's description (Doc), and what it reports, written into
 * the stream's `said` (Sink). One per realm: the fields are set for each document.
 */
class Reader implements Doc, Sink {
  /** The document being read: its address, length, first record (as an i32 index) and records. */
  dPtr = 0;
  dLen = 0;
  dRec = 0;
  n = 0;
  stream: ModelReader | null = null;

  constructor(private readonly core: Core) {}

  get choice(): number {
    return this.stream!.choice;
  }

  /** The stream's record of what was said, made the first time something is. */
  private get said(): Said {
    const stream = this.stream!;
    let said = stream.said;
    if (said === NOTHING_SAID) {
      said = stream.said = { finishReason: undefined, usage: undefined, reasoning: '', pings: 0, done: false, error: null, errorDetail: undefined };
    }
    return said;
  }

  onText(_doc: Doc, j: number): void {
    const i32 = this.core.i32;
    const w = this.dRec + j * JREC_WORDS;
    const start = i32[w + JR_START];
    this.stream!.span(this.dPtr + start, i32[w + JR_END] - start, i32[w + JR_HEAD] >>> 24);
  }

  onReasoning(doc: Doc, j: number): void {
    this.said.reasoning += doc.string(j);
  }

  onFinishReason(reason: string): void {
    this.said.finishReason = reason;
  }

  onUsage(fields: Record<string, unknown>): void {
    const said = this.said;
    said.usage = said.usage === undefined ? fields : { ...said.usage, ...fields };
  }

  onDone(): void {
    this.said.done = true;
  }

  onPing(): void {
    this.said.pings++;
  }

  onError(message: string, detail?: string): void {
    const said = this.said;
    said.error = message;
    said.errorDetail = detail;
  }

  // ---- Doc: the records of the document being read --------------------------------------------

  path(j: number): number { return this.core.i32[this.dRec + j * JREC_WORDS + JR_HEAD] & 0xffff; }
  kind(j: number): Kind { return (this.core.i32[this.dRec + j * JREC_WORDS + JR_HEAD] >>> 16) & 0xff; }
  index(j: number): number { return this.core.i32[this.dRec + j * JREC_WORDS + JR_INDEX]; }

  string(j: number): string {
    const i32 = this.core.i32;
    const w = this.dRec + j * JREC_WORDS;
    const head = i32[w + JR_HEAD];
    const a = this.dPtr + i32[w + JR_START];
    const len = i32[w + JR_END] - i32[w + JR_START];
    const flags = head >>> 24;
    if (((head >>> 16) & 0xff) !== Kind.String) return this.core.utf8(a, len);
    if (flags & JF_ESCAPED) return JSON.parse(`"${this.core.utf8(a, len)}"`) as string;
    return flags & JF_ASCII ? this.core.latin1(a, len) : this.core.utf8(a, len);
  }

  value(j: number): unknown {
    const i32 = this.core.i32;
    const w = this.dRec + j * JREC_WORDS;
    return JSON.parse(this.core.utf8(this.dPtr + i32[w + JR_START], i32[w + JR_END] - i32[w + JR_START]));
  }

  int(j: number): number {
    const i32 = this.core.i32;
    const w = this.dRec + j * JREC_WORDS;
    if (((i32[w + JR_HEAD] >>> 16) & 0xff) !== Kind.Number) return -1;
    const u8 = this.core.u8;
    let v = 0;
    for (let p = this.dPtr + i32[w + JR_START], end = this.dPtr + i32[w + JR_END]; p < end; p++) {
      const d = u8[p] - 48;
      if (d < 0 || d > 9 || v > 1e9) return -1;
      v = v * 10 + d;
    }
    return v;
  }

  is(j: number, ascii: Uint8Array): boolean {
    const i32 = this.core.i32;
    const w = this.dRec + j * JREC_WORDS;
    const head = i32[w + JR_HEAD];
    if (((head >>> 16) & 0xff) !== Kind.String) return false;
    const start = i32[w + JR_START];
    const len = i32[w + JR_END] - start;
    if ((head >>> 24) & JF_ESCAPED) return this.string(j) === String.fromCharCode(...ascii);
    if (len !== ascii.length) return false;
    const u8 = this.core.u8;
    const p = this.dPtr + start;
    for (let k = len - 1; k >= 0; k--) if (u8[p + k] !== ascii[k]) return false;
    return true;
  }

  whole(): unknown {
    return JSON.parse(this.core.utf8(this.dPtr, this.dLen));
  }
}

/** What completes each format's stream, for messages. */
const COMPLETION: Readonly<Record<ModelFormat, string>> = {
  openai: 'data: [DONE]', 'openai-responses': 'a response.completed event', anthropic: 'a message_stop event',
  ollama: 'a line with "done": true', ddg: 'a [DONE] line',
};

/** The JSON reader's error codes, for messages. */
const JSON_ERRORS: readonly string[] = [
  '', 'the document ends too early', 'an unexpected byte', 'more after the value', 'a broken number',
  'a control character in a string', 'a bad escape', 'a broken literal', 'nested too deep', 'too many values',
];
