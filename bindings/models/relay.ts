// What a gateway puts between an upstream and its client: the upstream's events read as a model
// stream (framed, UTF-8 validated and JSON read in the core), and the client's bytes written in
// its format, OpenAI Chat Completions or Anthropic Messages (relay-openai.ts, relay-anthropic.ts).
// When the two formats are the same, the events pass through byte for byte (an event whose data
// spans several lines is written as one `data:` line per line, as it came); from OpenAI an event
// its clients cannot read as it is (Mistral's content arrays, calls without `index`) is written
// anew. Otherwise the message is translated part by part: text, reasoning and tool-call
// arguments are the provider's JSON-escaped strings copied as they are (nothing is unescaped and
// escaped again). Only whole, validated events are written; the completion only after the
// upstream's own, an error event in the client's shape otherwise.
import {
  JK_STRING, JREC_WORDS, JR_END, JR_HEAD, JR_START, MDR_CHUNKS, MDR_COMMENTS, MDR_EMIT_LEN, MDR_EMIT_PTR, MDR_HIGH, MDR_QUIET, MDR_TEXT_BYTES, ME_CHUNKS, ME_COMMENTS, ME_HIGH,
  ME_PASS, MHEAD_CAP,
} from '../core/generated/abi.js';
import { checkOptions, oneOf } from '../core/options.js';
import { type Core } from '../core/wasm.js';
import { type DocReader, type MessageOut, unescaped } from './document.js';
import { ModelStreamError } from './errors.js';
import { type ClientFormat, MODEL_FORMATS, type ModelFormat } from './formats/index.js';
import { envelopeAddress } from './plan.js';
import { ModelReader, call } from './reader.js';
import { AnthropicWriter } from './relay-anthropic.js';
import { OpenAiWriter } from './relay-openai.js';
import type { ClientWriter, QuietText, RelayTarget } from './writer.js';

/** Options of {@link SseRelay}. */
export interface SseRelayOptions {
  /** The upstream's format. */
  from: ModelFormat;
  /** The client's format. @defaultValue 'openai' */
  to?: ClientFormat;
  /** As ModelStream's: only `true` is supported. @defaultValue true */
  fatal?: boolean;
  /** The most bytes one upstream event may hold. @defaultValue 16 MiB */
  maxEventBytes?: number;
  /** Which upstream choice to relay (OpenAI's `index`; from `openai` to `openai` every choice passes). @defaultValue 0 */
  choice?: number;
  /** Forward SSE comments (keep-alives; to Anthropic as `ping` events), so that clients behind idle timeouts stay connected. @defaultValue true */
  comments?: boolean;
  /**
   * Reasoning for an OpenAI client: `'pass'` writes it as `reasoning_content` deltas (as DeepSeek
   * and vLLM do; clients that do not know the field skip it), `'drop'` leaves it out. To Anthropic,
   * reasoning is always written, as thinking blocks.
   * @defaultValue 'pass'
   */
  reasoning?: 'pass' | 'drop';
  /** The `id` of the chunks (or of the message) written for a translated stream. @defaultValue a `chatcmpl-` (or `msg_`) id made for the relay */
  id?: string;
  /** The `model` of the chunks (or of the message) written for a translated stream. @defaultValue the `from` format's name */
  model?: string;
}

const enc = /* @__PURE__ */ new TextEncoder();
const DATA = /* @__PURE__ */ enc.encode('data: ');
const LF = /* @__PURE__ */ enc.encode('\n');
const END = /* @__PURE__ */ enc.encode('\n\n');

let relays = 0;
const NO_BYTES = /* @__PURE__ */ new Uint8Array(0);
/** A relay's output buffer above this size is dropped after a call that used less than a quarter of it. */
const RELAY_KEEP_BYTES = 16 * 1024;
/** Which head is in the core's head area (its version), and that core. */
let headIn = 0;
let headCore: Core | null = null;
/** Versions of pass-through heads (negative: apart from the writers' versions). */
let passVersions = -(2 ** 30);

/**
 * The bytes a gateway writes to its client for an upstream model stream. `push(chunk)` returns a
 * view of memory the relay reuses: write it (or copy it) before the next call.
 */
export class SseRelay extends ModelReader {
  readonly from: ModelFormat;
  readonly to: ClientFormat;
  private readonly passThrough: boolean;
  /** The client's writer: every part from a translated stream, and events written anew from a pass-through one. */
  private writer: ClientWriter;
  /** @internal */
  readonly serial: string;
  /** @internal */
  readonly idJson: string;
  /** @internal */
  readonly modelJson: string;
  /** @internal */
  readonly created: number;
  /** The bytes of the last call (made on the first write; dropped when large and little used). */
  private buf: Uint8Array = NO_BYTES;
  private used = 0;
  /** The chunk being pushed (only during the call). */
  private input: Uint8Array = NO_BYTES;
  /**
   * When the formats are the same, during a push: what the call wrote for the client so far is the
   * pushed chunk's first `sameEnd` bytes, unchanged (whole canonical events), and it is kept as that
   * (nothing is copied) while it stays so; -1 once it did not (or outside a push). The call then
   * returns the chunk itself, or a view of its start (before a `[DONE]`, which flush() writes).
   */
  private sameEnd = -1;
  /** Whether the core may read quiet events to the end itself now (the writer can take text from it). */
  private quiet = true;
  /** When the formats are the same: what the core writes before a quiet event's data (its `event:` line, for a format that names its events). */
  private readonly passHead: QuietText | null;
  /** A pass-through relay is writing the event being read anew (its records, for its finish and usage). */
  private rewriting: { doc: DocReader; finish: number; usage: number } | null = null;
  private _textBytes = 0;
  private completedSent = false;
  private ended = false;
  private errorSent = false;
  private upstreamError: ModelStreamError | null = null;
  /** The error written to the client as an error event. */
  private sentError: ModelStreamError | undefined = undefined;
  private _eventsOut = 0;
  /** A high surrogate that ended the last text span (its pair may start the next). */
  private highSurrogate = false;

  constructor(options: SseRelayOptions) {
    if (options === undefined) throw new TypeError("SseRelay: options are required: new SseRelay({ from: 'anthropic' })");
    checkOptions(options, 'SseRelay', ['from', 'to', 'fatal', 'maxEventBytes', 'choice', 'comments', 'reasoning', 'id', 'model']);
    const from = oneOf(options.from, 'from', 'SseRelay', MODEL_FORMATS, undefined);
    super('SseRelay', { format: from, fatal: options.fatal, maxEventBytes: options.maxEventBytes, choice: options.choice }, options.comments ?? true);
    const to = oneOf(options.to, 'to', 'SseRelay', ['openai', 'anthropic'], 'openai');
    const reasoning = oneOf(options.reasoning, 'reasoning', 'SseRelay', ['pass', 'drop'], 'pass');
    this.from = from;
    this.to = to;
    this.passThrough = from === to;
    const serial = (this.serial = `${Date.now().toString(36)}${(relays++).toString(36)}`);
    this.idJson = JSON.stringify(options.id ?? (to === 'openai' ? `chatcmpl-seam${serial}` : `msg_seam${serial}`));
    this.modelJson = JSON.stringify(options.model ?? from);
    this.created = Math.floor(Date.now() / 1000);
    this.writer = to === 'openai' ? new OpenAiWriter(this, reasoning === 'pass', this.passThrough) : new AnthropicWriter(this);
    const named = this.plan.spec.quietEvent;
    this.passHead = this.passThrough ? { version: ++passVersions, head: named === undefined ? NO_BYTES : enc.encode(`event: ${named}\n`), end: NO_BYTES } : null;
    this.quietTemplate();
  }

  /** UTF-8 bytes of delta text relayed so far (for usage accounting). */
  get textBytes(): number { return this._textBytes; }
  /** SSE events written to the client so far (comments not counted; `[DONE]` and an error event are). */
  get eventsOut(): number { return this._eventsOut; }
  /**
   * The error the relay wrote to the client as an error event (the upstream's error, a bad event,
   * invalid UTF-8, a limit, or ERR_STREAM_TRUNCATED), once it wrote it; undefined otherwise.
   */
  get error(): ModelStreamError | undefined { return this.sentError; }

  /** @internal A relay passes reasoning and arguments on; it does not keep them. */
  override get keeps(): boolean { return false; }
  /** @internal Where the parts go: the writer, for a translated stream or an event written anew. */
  override get out(): MessageOut | null { return this.passThrough && this.rewriting === null ? null : this.writer; }
  /** @internal The upstream's format description. */
  override get spec() { return this.plan.spec; }

  /**
   * Bytes to write to the client now: whole, validated events (a view, valid until the next call).
   * When the formats are the same, a chunk of whole events written as the relay writes them
   * (`data: ` and a blank line each, nothing else) comes back as the chunk itself, or as a view of
   * its start when it ends in the `[DONE]` that flush() writes, where the runtime compares memory
   * natively (Node), instead of a copy: `out.buffer === chunk.buffer` tells.
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
   * End of the upstream: after its completion, the client's (`data: [DONE]`; Anthropic's
   * `message_delta` and `message_stop`); otherwise an error event in the client's shape
   * (`ERR_STREAM_TRUNCATED`, or the upstream's error if it was not written yet), never a completion.
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
        // (from Anthropic to Anthropic the upstream's own message_delta and message_stop passed)
        if (!(this.passThrough && this.to === 'anthropic')) this.writer.end();
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
    this.completedSent = false;
    this.ended = false;
    this.errorSent = false;
    this.upstreamError = null;
    this.sentError = undefined;
    this._eventsOut = 0;
    this.highSurrogate = false;
    this.rewriting = null;
    this.writer = this.to === 'openai'
      ? new OpenAiWriter(this, (this.writer as OpenAiWriter).keepsReasoning, this.passThrough)
      : new AnthropicWriter(this);
    this.quietTemplate();
  }

  // ---- RelayTarget: what the writer writes through ---------------------------------------------

  /** @internal */
  write(bytes: Uint8Array): void {
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

  /** @internal */
  writeSpan(ptr: number, len: number): void {
    this.write(this.core.u8.subarray(ptr, ptr + len));
  }

  /** @internal */
  text(ptr: number, len: number, escaped: boolean): string {
    return escaped ? unescaped(this.core, ptr, len) : this.core.utf8(ptr, len);
  }

  /** @internal */
  wrote(events: number): void {
    this._eventsOut += events;
  }

  // ---- what the reader hands over ---------------------------------------------------------------

  /** @internal A text span of the followed choice: counted, and written by the writer for a translated stream (or an event written anew). */
  span(ptr: number, len: number, _flags: number): void {
    const core = this.core;
    // counted by the core's rule for quiet events (a pair split across deltas is one character)
    this._textBytes += core.x.modelTextBytes(ptr, len, this.highSurrogate ? 1 : 0);
    this.highSurrogate = core.word(MDR_HIGH) === 1;
    if (this.passThrough && this.rewriting === null) return;
    this.writer.text(ptr, len);
    this.quietTemplate();
  }

  /**
   * @internal An event of the pass-through format that its clients cannot read as it is: written
   * anew, in the upstream's envelope (its `id`, `created` and `model`), with its finish reason and
   * usage (records, −1 when none).
   */
  nonCanonical(doc: DocReader, finish: number, usage: number): void {
    if (!this.passThrough) return;
    const env = envelopeOf(this.core, this.from, doc);
    (this.writer as OpenAiWriter).rewrite(env[0] ?? this.idJson, env[1] ?? String(this.created), env[2] ?? this.modelJson);
    this.rewriting = { doc, finish, usage };
  }

  /**
   * The core writes the client's bytes for quiet events (text deltas) itself: when the formats are
   * the same their data as they are, otherwise one event per text span (the writer's head, the
   * span's escaped bytes, its end), and the comments in between.
   */
  protected override readMode(): number {
    let mode = this.plan.comments && (this.passThrough || this.writer.comments) ? ME_COMMENTS : 0;
    if (this.highSurrogate) mode |= ME_HIGH;
    const q = this.passThrough ? this.passHead! : this.writer.quiet();
    if (q === null) return mode; // (the template is off: nothing is quiet)
    const core = this.core;
    if (headIn !== q.version || headCore !== core) {
      core.sync();
      const at = core.x.MHEAD_PTR.value as number;
      const dv = new DataView(core.u8.buffer);
      dv.setUint32(at, q.head.length, true);
      dv.setUint32(at + 4, q.end.length, true);
      core.u8.set(q.head, at + 8);
      core.u8.set(q.end, at + 8 + q.head.length);
      headIn = q.version;
      headCore = core;
    }
    return mode | (this.passThrough ? ME_PASS : ME_CHUNKS);
  }

  /** @internal The template of quiet events: none while the writer cannot take text from the core. */
  protected override get tmpl(): number { return this.quiet ? this.plan.tmpl : 0; }

  /** Quiet events only while the writer can take text from the core (its head fits the head area). */
  private quietTemplate(): void {
    if (this.passThrough) return;
    const q = this.writer.quiet();
    this.quiet = q !== null && q.head.length + q.end.length <= MHEAD_CAP - 8;
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
    if (!this.passThrough && !this.writer.comments && this.plan.comments) for (let c = i32[r + MDR_COMMENTS]; c > 0; c--) this.writer.keepAlive();
  }

  /**
   * A valid upstream event, after its parts went to the writer: when the formats are the same its
   * data pass through (or the rest of an event written anew); the completion goes to the writer.
   */
  protected override event(ptr: number, len: number, doc: DocReader | null): void {
    if (this.passThrough) {
      const re = this.rewriting;
      if (re !== null) {
        this.rewriting = null;
        const w = this.writer as OpenAiWriter;
        w.rewritten(re.doc, re.finish, re.usage);
        w.rewrite(null, '', '');
      } else if (len !== 0) {
        this.passEvent(ptr, len, doc);
      }
    } else {
      this.quietTemplate();
      if (this._status === 'done' && !this.completedSent) {
        this.completedSent = true;
        this.writer.completed();
      }
    }
  }

  /**
   * An event as it came: the chunk's own bytes when they are exactly that, else its name (its
   * `event:` line, for a format that names its events: its data's `type`) and a `data:` line per
   * line of its data.
   */
  private passEvent(ptr: number, len: number, doc: DocReader | null): void {
    const core = this.core;
    let name: Uint8Array | null = null;
    if (this.plan.spec.quietEvent !== undefined && doc !== null) {
      const j = findPath(doc, 0);
      if (j >= 0 && doc.kind(j) === JK_STRING) name = enc.encode(`event: ${core.utf8(doc.ptr(j), doc.len(j))}\n`);
    }
    const k = this.sameEnd;
    const input = this.input;
    if (k >= 0) {
      const at = name === null ? k : k + name.length;
      if ((name === null || startsWith(input, k, name)) && startsWith(input, at, DATA) && core.sameAt(ptr, input, at + DATA.length, len)
        && startsWith(input, at + DATA.length + len, END)) {
        this.sameEnd = at + DATA.length + len + END.length; // the event as it came
        this._eventsOut++;
        return;
      }
    }
    if (name !== null) this.write(name);
    const u8 = core.u8;
    let p = ptr;
    const end = ptr + len;
    for (;;) {
      let q = p;
      while (q < end && u8[q] !== 0x0a) q++;
      this.write(DATA);
      this.writeSpan(p, q - p);
      this.write(LF);
      if (q >= end) break;
      p = q + 1;
    }
    this.write(LF);
    this._eventsOut++;
  }

  private errorEvent(e: ModelStreamError): void {
    if (this.errorSent) return;
    this.errorSent = true;
    this.ended = true;
    if (this._status === 'open') this._status = e.code === 'ERR_STREAM_TRUNCATED' ? 'truncated' : 'failed';
    this.writer.error(e);
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

  private view(): Uint8Array {
    return this.buf.subarray(0, this.used);
  }
}

/**
 * The JSON texts of an event's envelope values (OpenAI's `id`, `created`, `model`: undefined where
 * absent), read by the core with the format's envelope program, beside the event's own records.
 */
function envelopeOf(core: Core, format: ModelFormat, doc: DocReader): (string | undefined)[] {
  const recs = core.x.JSON_REC_PTR.value as number;
  const n = core.x.jsonRead(envelopeAddress(core, format), doc.dPtr, doc.dLen, recs, 8);
  core.sync();
  const out: (string | undefined)[] = [];
  const i32 = core.i32;
  for (let j = 0; j < n; j++) {
    const w = (recs >> 2) + j * JREC_WORDS;
    const start = i32[w + JR_START];
    const end = i32[w + JR_END];
    const string = ((i32[w + JR_HEAD] >>> 16) & 0xff) === JK_STRING;
    out[i32[w + JR_HEAD] & 0xffff] = string ? `"${core.utf8(doc.dPtr + start, end - start)}"` : core.utf8(doc.dPtr + start, end - start);
  }
  return out;
}

/** The first record of path `p`, or −1. */
function findPath(doc: DocReader, p: number): number {
  for (let j = 0; j < doc.n; j++) if (doc.path(j) === p) return j;
  return -1;
}

/** Whether `bytes` hold `word` at `at`. */
function startsWith(bytes: Uint8Array, at: number, word: Uint8Array): boolean {
  if (at + word.length > bytes.length) return false;
  for (let i = 0; i < word.length; i++) if (bytes[at + i] !== word[i]) return false;
  return true;
}

