// What a gateway puts between an upstream and its client: the upstream's events read as a model
// stream (framed, UTF-8 validated and JSON read in the core), and the client's bytes written as
// OpenAI Chat Completions events. From `openai` the events' data pass through byte for byte; from
// the other formats each text delta becomes a `chat.completion.chunk` whose content is the
// provider's JSON-escaped string copied as it is (nothing is unescaped and escaped again). Only
// whole, validated events are written; `[DONE]` only after a completed upstream, an error event
// in OpenAI's shape otherwise.
import {
  MDR_CHUNKS, MDR_EMIT_LEN, MDR_EMIT_PTR, MDR_HIGH, MDR_QUIET, MDR_TEXT_BYTES, ME_CHUNKS, ME_COMMENTS, ME_HIGH, ME_PASS, MHEAD_CAP,
} from '../core/generated/abi.js';
import { checkOptions, oneOf } from '../core/options.js';
import { type Core } from '../core/wasm.js';
import { ModelStreamError } from './errors.js';
import { finishIn } from './formats/describe.js';
import { MODEL_FORMATS, type ModelFormat } from './formats/index.js';
import { ModelReader, call } from './reader.js';

/** Options of {@link SseRelay}. */
export interface SseRelayOptions {
  /** The upstream's format. */
  from: ModelFormat;
  /** The client's format. @defaultValue 'openai' */
  to?: 'openai';
  /** As ModelStream's: only `true` is supported. @defaultValue true */
  fatal?: boolean;
  /** The most bytes one upstream event may hold. @defaultValue 16 MiB */
  maxEventBytes?: number;
  /** Which upstream choice to relay (OpenAI's `index`; from `openai` every choice passes). @defaultValue 0 */
  choice?: number;
  /** Forward SSE comments (keep-alives), so that clients behind idle timeouts stay connected. @defaultValue true */
  comments?: boolean;
  /** The `id` of the chunks written for a translated stream. @defaultValue a `chatcmpl-` id made for the relay */
  id?: string;
  /** The `model` of the chunks written for a translated stream. @defaultValue the `from` format's name */
  model?: string;
}

const enc = /* @__PURE__ */ new TextEncoder();
const DATA = /* @__PURE__ */ enc.encode('data: ');
const END = /* @__PURE__ */ enc.encode('\n\n');
const DONE = /* @__PURE__ */ enc.encode('data: [DONE]\n\n');
const CONTENT_END = /* @__PURE__ */ enc.encode('"},"finish_reason":null}]}\n\n');

let relays = 0;
const NO_BYTES = /* @__PURE__ */ new Uint8Array(0);
/** A relay's output buffer above this size is dropped after a call that used less than a quarter of it. */
const RELAY_KEEP_BYTES = 16 * 1024;
/** Which relay's head is in the core's head area (its serial), and that core. */
let headIn = 0;
let headCore: Core | null = null;
let serials = 0;

/**
 * The bytes a gateway writes to its client for an upstream model stream. `push(chunk)` returns a
 * view of memory the relay reuses: write it (or copy it) before the next call.
 */
export class SseRelay extends ModelReader {
  readonly from: ModelFormat;
  readonly to: 'openai';
  private readonly passThrough: boolean;
  private readonly serial = ++serials;
  private readonly head: Uint8Array;
  private readonly idJson: string;
  private readonly modelJson: string;
  private readonly created: number;
  /** The bytes of the last call (made on the first write; dropped when large and little used). */
  private buf: Uint8Array = NO_BYTES;
  private used = 0;
  /** The chunk being pushed (only during the call). */
  private input: Uint8Array = NO_BYTES;
  /**
   * From `openai`, during a push: what the call wrote for the client so far is the pushed chunk's
   * first `sameEnd` bytes, unchanged (whole canonical events), and it is kept as that (nothing is
   * copied) while it stays so; -1 once it did not (or outside a push). The call then returns the
   * chunk itself, or a view of its start (before a `[DONE]`, which flush() writes).
   */
  private sameEnd = -1;
  private _textBytes = 0;
  private finishSent = false;
  private ended = false;
  private errorSent = false;
  private upstreamError: ModelStreamError | null = null;
  /** The error written to the client as an SSE error event. */
  private sentError: ModelStreamError | undefined = undefined;
  private _eventsOut = 0;
  /** A high surrogate that ended the last text span (its pair may start the next). */
  private highSurrogate = false;

  constructor(options: SseRelayOptions) {
    if (options === undefined) throw new TypeError("SseRelay: options are required: new SseRelay({ from: 'anthropic' })");
    checkOptions(options, 'SseRelay', ['from', 'to', 'fatal', 'maxEventBytes', 'choice', 'comments', 'id', 'model']);
    const from = oneOf(options.from, 'from', 'SseRelay', MODEL_FORMATS, undefined);
    super('SseRelay', { format: from, fatal: options.fatal, maxEventBytes: options.maxEventBytes, choice: options.choice }, options.comments ?? true);
    this.from = from;
    this.to = oneOf(options.to, 'to', 'SseRelay', ['openai'], 'openai');
    this.passThrough = from === 'openai';
    this.idJson = JSON.stringify(options.id ?? `chatcmpl-seam${Date.now().toString(36)}${(relays++).toString(36)}`);
    this.modelJson = JSON.stringify(options.model ?? from);
    this.created = Math.floor(Date.now() / 1000);
    this.head = this.passThrough ? NO_BYTES : enc.encode(`data: {"id":${this.idJson},"object":"chat.completion.chunk","created":${this.created},"model":${this.modelJson},"choices":[{"index":0,"delta":{"content":"`);
    // a head too long for the core's head area: every event is read here
    if (!this.passThrough && this.head.length > MHEAD_CAP - 4) this.tmpl = 0;
  }

  /** UTF-8 bytes of delta text relayed so far (for usage accounting). */
  get textBytes(): number { return this._textBytes; }
  /** SSE events written to the client so far (comments not counted; `[DONE]` and an error event are). */
  get eventsOut(): number { return this._eventsOut; }
  /**
   * The error the relay wrote to the client as an SSE error event (the upstream's error, a bad
   * event, invalid UTF-8, a limit, or ERR_STREAM_TRUNCATED), once it wrote it; undefined otherwise.
   */
  get error(): ModelStreamError | undefined { return this.sentError; }

  /**
   * Bytes to write to the client now: whole, validated events (a view, valid until the next call).
   * From `openai`, a chunk of whole events written as the relay writes them (`data: ` and a blank
   * line each, nothing else) comes back as the chunk itself, or as a view of its start when it ends
   * in the `[DONE]` that flush() writes, where the runtime compares memory natively (Node), instead
   * of a copy: `out.buffer === chunk.buffer` tells.
   */
  push(chunk: Uint8Array): Uint8Array {
    call.begin(this);
    this.fresh();
    if (this.failure !== null || this.ended) return this.view();
    let out: Uint8Array;
    try {
      this.open(chunk, 'SseRelay.push()');
      if (this.sniffed !== 1 && this.sniff(chunk)) return this.view();
      this.input = chunk;
      if (this.passThrough) this.sameEnd = 0;
      this.frameAll(chunk, this.mode);
    } catch (e) {
      if (!(e instanceof ModelStreamError)) throw e;
      this.upstreamError = e; // written by flush(), after the whole events before it
    } finally {
      const k = this.sameEnd;
      out = k < 0 ? this.view() : k === chunk.length ? chunk : chunk.subarray(0, k);
      this.sameEnd = -1;
      this.input = NO_BYTES; // (an idle relay does not hold its caller's chunk)
    }
    return out;
  }

  /**
   * End of the upstream: after its completion `data: [DONE]` (with a final chunk carrying the
   * finish reason, for a translated stream); otherwise an SSE error event in OpenAI's error shape
   * (`ERR_STREAM_TRUNCATED`, or the upstream's error if it was not written yet), never `[DONE]`.
   */
  flush(): Uint8Array {
    call.begin(this);
    this.fresh();
    if (this.ended) return this.view();
    this.ended = true;
    if (this.failure === null) {
      try {
        this.flushFrames();
      } catch (e) {
        if (!(e instanceof ModelStreamError)) throw e;
        this.upstreamError = e;
      }
    }
    if (this.highSurrogate) {
      this.highSurrogate = false;
      this._textBytes += 3; // a lone high surrogate at the end: U+FFFD
    }
    if (this.upstreamError !== null) {
      this.errorEvent(this.upstreamError);
    } else if (this.failure === null) {
      if (this._status === 'done') {
        this.write(DONE);
        this._eventsOut++;
      } else {
        this._status = 'truncated';
        this.errorEvent(new ModelStreamError('ERR_STREAM_TRUNCATED', this.bytesIn,
          `The upstream ${this.from} stream ended without its completion: the answer is cut short`, ''));
      }
    }
    this.bytesIn = 0;
    return this.view();
  }

  protected override resetState(): void {
    super.resetState();
    this._textBytes = 0;
    this.finishSent = false;
    this.ended = false;
    this.errorSent = false;
    this.upstreamError = null;
    this.sentError = undefined;
    this._eventsOut = 0;
    this.highSurrogate = false;
  }

  /** @internal A text span of the followed choice: counted, and for a translated stream written as a chunk. */
  span(ptr: number, len: number, _flags: number): void {
    const core = this.core;
    // counted by the core's rule for quiet events (a pair split across deltas is one character)
    this._textBytes += core.x.modelTextBytes(ptr, len, this.highSurrogate ? 1 : 0);
    this.highSurrogate = core.word(MDR_HIGH) === 1;
    if (this.passThrough || len === 0) return;
    this.write(this.head);
    this.write(core.u8.subarray(ptr, ptr + len));
    this.write(CONTENT_END);
    this._eventsOut++;
  }

  /**
   * The core writes the client's bytes for quiet events (text deltas) itself: from `openai` their
   * data as they are, from the other formats a chunk per text span (this relay's head, the span's
   * escaped bytes, the chunk's end), and the comments in between.
   */
  protected override readMode(): number {
    const core = this.core;
    let mode = this.plan.comments ? ME_COMMENTS : 0;
    if (this.highSurrogate) mode |= ME_HIGH;
    if (this.passThrough) return mode | ME_PASS;
    if (headIn !== this.serial || headCore !== core) {
      core.sync();
      const at = core.x.MHEAD_PTR.value as number;
      new DataView(core.u8.buffer).setUint32(at, this.head.length, true);
      core.u8.set(this.head, at + 4);
      headIn = this.serial;
      headCore = core;
    }
    return mode | ME_CHUNKS;
  }

  /** What the core wrote for the client and counted: one copy into the relay's buffer. */
  protected override quietDone(): void {
    const core = this.core;
    const i32 = core.i32;
    const r = core.res;
    const n = i32[r + MDR_EMIT_LEN];
    if (n !== 0) {
      const at = i32[r + MDR_EMIT_PTR];
      const k = this.sameEnd;
      if (k >= 0 && core.sameAt(at, this.input, k, n)) this.sameEnd = k + n;
      else this.write(core.u8.subarray(at, at + n));
    }
    this._textBytes += i32[r + MDR_TEXT_BYTES];
    this.highSurrogate = i32[r + MDR_HIGH] === 1;
    this._eventsOut += this.passThrough ? i32[r + MDR_QUIET] : i32[r + MDR_CHUNKS];
  }

  /** A valid upstream event: from `openai` its data pass through; the completion, for a translated stream, is the chunk with the finish reason. */
  protected override event(ptr: number, len: number): void {
    if (this.passThrough) {
      if (len === 0) return; // [DONE]: flush() writes it
      const k = this.sameEnd;
      const input = this.input;
      if (k >= 0 && startsWith(input, k, DATA) && this.core.sameAt(ptr, input, k + DATA.length, len) && startsWith(input, k + DATA.length + len, END)) {
        this.sameEnd = k + DATA.length + len + END.length; // the event as it came
      } else {
        this.write(DATA);
        this.write(this.core.u8.subarray(ptr, ptr + len));
        this.write(END);
      }
      this._eventsOut++;
    } else if (this._status === 'done') {
      this.finishChunk();
    }
  }

  private finishChunk(): void {
    if (this.finishSent) return;
    const why = this.said.finishReason;
    if (why === undefined && this._status !== 'done') return;
    this.finishSent = true;
    const reason = JSON.stringify(why === undefined ? 'stop' : finishIn(this.spec, why, 'openai'));
    this.write(enc.encode(`data: {"id":${this.idJson},"object":"chat.completion.chunk","created":${this.created},"model":${this.modelJson},"choices":[{"index":0,"delta":{},"finish_reason":${reason}}]}\n\n`));
    this._eventsOut++;
  }

  private errorEvent(e: ModelStreamError): void {
    if (this.errorSent) return;
    this.errorSent = true;
    this.ended = true;
    if (this._status === 'open') this._status = e.code === 'ERR_STREAM_TRUNCATED' ? 'truncated' : 'failed';
    const error = { message: e.providerMessage ?? e.message, type: e.code === 'ERR_PROVIDER' ? 'upstream_error' : 'upstream_stream_error', code: e.code, offset: e.offset };
    this.write(enc.encode(`data: ${JSON.stringify({ error })}\n\n`));
    this._eventsOut++;
    this.sentError = e;
  }

  /**
   * A new call: the last call's view is no longer valid. A buffer grown by large reads is dropped
   * once a call used less than a quarter of it, so that thousands of open relays do not each keep
   * the largest read they saw.
   */
  private fresh(): void {
    if (this.buf.length > RELAY_KEEP_BYTES && this.used < this.buf.length >> 2) this.buf = NO_BYTES;
    this.used = 0;
  }

  private write(bytes: Uint8Array): void {
    const k = this.sameEnd;
    if (k >= 0) {
      // bytes other than the pushed chunk's own next ones: the chunk's start so far becomes the
      // start of the buffer
      this.sameEnd = -1;
      if (k !== 0) this.write(this.input.subarray(0, k));
    }
    const need = this.used + bytes.length;
    if (need > this.buf.length) {
      const grown = new Uint8Array(Math.max(need, this.buf.length * 2, 1024));
      grown.set(this.buf.subarray(0, this.used));
      this.buf = grown;
    }
    this.buf.set(bytes, this.used);
    this.used = need;
  }

  private view(): Uint8Array {
    return this.buf.subarray(0, this.used);
  }
}

/** Whether `bytes` hold `word` at `at`. */
function startsWith(bytes: Uint8Array, at: number, word: Uint8Array): boolean {
  if (at + word.length > bytes.length) return false;
  for (let i = 0; i < word.length; i++) if (bytes[at + i] !== word[i]) return false;
  return true;
}

