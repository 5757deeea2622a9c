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
  JF_ASCII, JF_ESCAPED, JK_STRING, JREC_WORDS, JR_END, JR_HEAD, JR_START, MDR_CHUNKS, MDR_COMMENTS, MDR_EMIT_LEN, MDR_EMIT_PTR, MDR_HIGH, MDR_QUIET, MDR_TEXT_BYTES, MDR_TEXT_CHARS,
  ME_ARGS, ME_CHARS, ME_CHUNKS, ME_COMMENTS, ME_HIGH, ME_NAMED, ME_NO_TEXT, ME_PASS, ME_REASONING, MHEAD_SLOT,
} from '../core/generated/abi.js';
import { CoreMemoryError } from '../core/errors.js';
import { booleanOption, checkOptions, describeValue, oneOf, stringOption } from '../core/options.js';
import { type Core } from '../core/wasm.js';
import { type DocReader, type MessageOut, unescaped } from './document.js';
import { ModelStreamError, cutShort } from './errors.js';
import { type ClientFormat, MODEL_FORMATS, type ModelFormat } from './formats/index.js';
import { envelopeAddress } from './plan.js';
import { ModelReader, call } from './reader.js';
import { AnthropicWriter } from './relay-anthropic.js';
import { OpenAiWriter } from './relay-openai.js';
import type { Aborted, ClientWriter, QuietHeads, QuietText, RelayAbort, RelayTarget } from './writer.js';

/** Options of {@link SseRelay}. */
export interface SseRelayOptions {
  /** The upstream's format. */
  from: ModelFormat;
  /** The client's format. @defaultValue 'openai' */
  to?: ClientFormat;
  /** Only `true`: a bad byte of the upstream's ends the stream with an error event (`false` is a TypeError). @defaultValue true */
  fatal?: true;
  /** The most bytes one upstream event may hold. @defaultValue 16 MiB */
  maxEventBytes?: number;
  /**
   * The most bytes a relay keeps until the upstream's completion: the addresses and titles of the
   * sources the answer cites, which a relay to OpenAI's clients from another format writes then
   * (`annotations`). Past it the stream ends with `ERR_REASONING_TOO_LONG` at the event, as a
   * ModelStream's does (citations count toward the same limit there). @defaultValue 64 MiB
   */
  maxReasoningBytes?: number;
  /** Which upstream choice to relay (OpenAI's `index`, Gemini's candidate; from `openai` to `openai` every choice passes), an integer from 0 to 2,147,483,647. @defaultValue 0 */
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
  /** `from: 'bedrock-invoke'`: the model's own format in its chunks (`anthropic`, Claude's). @defaultValue 'anthropic' */
  inner?: 'anthropic';
}

const enc = /* @__PURE__ */ new TextEncoder();
const DATA = /* @__PURE__ */ enc.encode('data: ');
const LF = /* @__PURE__ */ enc.encode('\n');
const END = /* @__PURE__ */ enc.encode('\n\n');

let relays = 0;
const NO_BYTES = /* @__PURE__ */ new Uint8Array(0);
/** A relay's output buffer above this size is dropped after a call that used less than a quarter of it. */
const RELAY_KEEP_BYTES = 16 * 1024;
/** A relay's first buffer: its bytes, and the slab they are carved from. */
const FIRST_BYTES = 1024;
const SLAB_BYTES = 16 * 1024;
let slab: ArrayBuffer | null = null;
let slabAt = SLAB_BYTES;

/**
 * A relay's first buffer, carved from a slab shared by the next relays (as Node's Buffer pool
 * does): a typed array of its own lies outside V8's heap and costs 2–3 µs to make and collect on
 * Node 24, as much as a dozen events' relaying; a view of a slab, about 30 ns. A slab lives as long
 * as one of its relays keeps its first buffer (16 KiB at most for a relay that outlives the others).
 */
function firstBuffer(): Uint8Array {
  if (slabAt + FIRST_BYTES > SLAB_BYTES) {
    slab = new ArrayBuffer(SLAB_BYTES);
    slabAt = 0;
  }
  const b = new Uint8Array(slab!, slabAt, FIRST_BYTES);
  slabAt += FIRST_BYTES;
  return b;
}

/**
 * Which heads are in the core's head area, and that core. The writer's heads object itself: a
 * writer makes a new one whenever any of its heads changes, and no other writer's can be the same
 * (a number counted by each client's writer module could be: an OpenAI writer's heads and an
 * Anthropic writer's had the same number at times).
 */
let headsIn: QuietHeads | null = null;
let headsCore: Core | null = null;
/** Which of those heads fit their slots (bit c: channel c), and so may be written by the core. */
let headsFit = 0;

const ABORT_KINDS = ['timeout', 'overloaded', 'server'] as const;

/** {@link SseRelay.abort}'s reason, checked (a `TypeError` otherwise), with its defaults. */
function abortReason(reason: RelayAbort): Aborted {
  const where = 'SseRelay.abort';
  if (typeof reason !== 'object' || reason === null) {
    throw new TypeError(`${where}: the reason must be an object, { message, kind?, code? }; got ${describeValue(reason)}`);
  }
  checkOptions(reason, where, ['message', 'kind', 'code']);
  if (typeof reason.message !== 'string') throw new TypeError(`${where}: message must be a string; got ${describeValue(reason.message)}`);
  if (reason.code !== undefined && typeof reason.code !== 'string') throw new TypeError(`${where}: code must be a string; got ${describeValue(reason.code)}`);
  return { message: reason.message, kind: oneOf(reason.kind, 'kind', where, ABORT_KINDS, 'server'), code: reason.code ?? null };
}

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
   * returns the chunk itself, or a view of its start (before a `[DONE]`, which the relay writes itself).
   */
  private sameEnd = -1;
  /** A pass-through relay is writing the event being read anew (its records, for what ends it: its annotations, finish and usage). */
  private rewriting: { doc: DocReader; finish: number; usage: number; annotations: number; others: boolean } | null = null;
  private _textBytes = 0;
  /** Characters (code points) of that text: the client's content, where an annotation's span ends (read only for a writer that cites, and counted whole only then). */
  private _textChars = 0;
  private completedSent = false;
  /** The client's end was written ([DONE]; Anthropic's `message_delta` and `message_stop`, or the upstream's own passed). */
  private endSent = false;
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
    checkOptions(options, 'SseRelay', ['from', 'to', 'fatal', 'maxEventBytes', 'maxReasoningBytes', 'choice', 'comments', 'reasoning', 'id', 'model', 'inner']);
    const from = oneOf(options.from, 'from', 'SseRelay', MODEL_FORMATS, undefined);
    // (only strict: a relay writes its client valid UTF-8, and forwards what it read as it came)
    const fatal = oneOf(options.fatal, 'fatal', 'SseRelay', [true], true, undefined, {
      false: "a relay writes its client only valid UTF-8: an upstream's bad byte ends the stream with an error event in the client's format",
    });
    const comments = booleanOption(options.comments, 'comments', 'SseRelay', true);
    // (checked before the core's record is made, which a refused option would leave to a collection)
    const to = oneOf(options.to, 'to', 'SseRelay', ['openai', 'anthropic'], 'openai');
    const reasoning = oneOf(options.reasoning, 'reasoning', 'SseRelay', ['pass', 'drop'], 'pass');
    // (written into the client's events as JSON strings)
    const id = stringOption(options.id, 'id', 'SseRelay');
    const model = stringOption(options.model, 'model', 'SseRelay');
    super('SseRelay', {
      format: from, fatal, maxEventBytes: options.maxEventBytes, maxReasoningBytes: options.maxReasoningBytes, choice: options.choice, inner: options.inner,
    }, comments);
    this.from = from;
    this.to = to;
    this.passThrough = from === to;
    const serial = (this.serial = `${Date.now().toString(36)}${(relays++).toString(36)}`);
    this.idJson = JSON.stringify(id ?? (to === 'openai' ? `chatcmpl-seam${serial}` : `msg_seam${serial}`));
    this.modelJson = JSON.stringify(model ?? from);
    this.created = Math.floor(Date.now() / 1000);
    this.writer = to === 'openai' ? new OpenAiWriter(this, reasoning === 'pass', this.passThrough) : new AnthropicWriter(this);
  }

  /** UTF-8 bytes of delta text relayed so far (for usage accounting). */
  get textBytes(): number { return this._textBytes; }
  /** @internal Characters (code points) of the text relayed so far, a lone high surrogate at its end one. */
  get textChars(): number { return this._textChars + (this.highSurrogate ? 1 : 0); }
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
   * its start when it ends in a `[DONE]` (which the relay writes itself, after it), instead of a copy (compared in the
   * core; a chunk larger than the core's input window only where the runtime compares memory
   * natively, Node): `out.buffer === chunk.buffer && out.byteOffset === chunk.byteOffset` tells (the
   * buffer alone does not: relays' first buffers are parts of one ArrayBuffer, and `chunk` may be
   * another relay's output).
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

  /** A whole answer's events (a JSON body, read at flush): written to the client as a push of them would. */
  protected override readWhole(events: Uint8Array): void {
    this.input = events;
    if (this.passThrough) this.sameEnd = 0;
    try {
      this.frameAll(events, this.mode);
    } finally {
      const k = this.sameEnd;
      this.sameEnd = -1;
      this.input = NO_BYTES;
      if (k > 0) this.write(events.subarray(0, k));
    }
  }

  /**
   * End of the upstream: after its completion, the client's end (`data: [DONE]`; Anthropic's
   * `message_delta` and `message_stop`) unless it was written at the completion (`endWritten`);
   * otherwise an error event in the client's shape
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
        if (e instanceof ModelStreamError) this.upstreamError = e;
        else if (!(e instanceof CoreMemoryError)) throw e; // (which is now the relay's failure)
      }
    }
    if (this.highSurrogate) {
      this.highSurrogate = false;
      this._textBytes += 3; // a lone high surrogate at the end: U+FFFD
      this._textChars++;
    }
    const memory = this.failure instanceof CoreMemoryError ? this.failure : null;
    if (this._status === 'done') {
      // the answer is whole: its end, never an error after it (bytes after the completion that are
      // not UTF-8, a read the core could not hold after it: not the answer)
      this.completion();
    } else if (this.upstreamError !== null) {
      this.errorEvent(this.upstreamError);
    } else if (memory !== null) {
      // (a push threw it: the stream stopped where the core could not hold it; the others go on)
      this.errorEvent({ message: `the relay could not hold the stream: ${memory.message}`, kind: 'overloaded', code: memory.code });
    } else if (this.failure === null) {
      this._status = 'truncated';
      this.errorEvent(new ModelStreamError('ERR_STREAM_TRUNCATED', this.endOffset, cutShort(this.from), ''));
    }
    this.bytesIn = 0;
    this.retire(); // (a gateway ends thousands of relays between collections)
    return this.view();
  }

  /**
   * The gateway ends the stream itself: a timeout, a limit of its own, a push that threw
   * `CoreMemoryError`. Returns the client's error event (a view, as `push`'s), written after
   * everything the relay returned before: OpenAI's `data: {"error": {message, type, code}}`,
   * Anthropic's `event: error` with `{type, message}`, the type in the client's words for
   * `reason.kind`. The upstream's own error, when the relay had read one and not written it yet,
   * is written instead (it came first). After the upstream's completion (`done`), the answer is
   * whole: the client gets its end as `flush()` writes it, never an error after a completion. The
   * relay then writes nothing more (`push` and `flush` return nothing), is `failed` (or stays
   * `done`), and gives its core memory back. After `flush()`, an earlier `abort()` or `dispose()`,
   * it returns nothing. A `reason` that is not one is a `TypeError`, and changes nothing.
   */
  abort(reason: RelayAbort): Uint8Array {
    const r = abortReason(reason);
    call.begin(this);
    this.fresh();
    if (this.ended || this.disposed) return this.view();
    this.ended = true;
    if (this._status === 'done') this.completion(); // (the answer is whole: its end, never an error after it)
    else if (this.upstreamError !== null) this.errorEvent(this.upstreamError);
    else this.errorEvent(this.turnError() ?? r); // (a turn that failed before its usage came: that error came first)
    this.retire();
    return this.view();
  }

  /** After the upstream's completion: the client's (`data: [DONE]`; Anthropic's `message_delta` and `message_stop`), unless it was written. */
  private completion(): void {
    if (!this.completedSent && !this.passThrough) {
      // (a format with a trailer, Bedrock's usage after its messageStop: the completion once the stream ended)
      this.completedSent = true;
      this.writer.completed();
    }
    if (this.endSent) return;
    this.endSent = true;
    // (from Anthropic to Anthropic the upstream's own message_delta and message_stop passed)
    if (!(this.passThrough && this.to === 'anthropic')) this.writer.end();
  }

  /**
   * The client's stream is whole: its end was written (`data: [DONE]`; Anthropic's `message_delta`
   * and `message_stop`, or the upstream's own). From the upstream's completion on for a format that
   * sends nothing after it (all but Bedrock's ConverseStream, whose usage follows its messageStop:
   * there at `flush()`), so the client need not wait for the upstream's body to end; the upstream
   * has nothing more to read (`flush()` then writes nothing; a gateway may end the client's
   * response and let the upstream go).
   */
  get endWritten(): boolean { return this.endSent; }

  protected override resetState(): void {
    super.resetState();
    this._textBytes = 0;
    this._textChars = 0;
    this.completedSent = false;
    this.endSent = false;
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
  }

  // ---- RelayTarget: what the writer writes through ---------------------------------------------

  /** @internal */
  write(bytes: Uint8Array): void {
    this.room(bytes.length);
    this.buf.set(bytes, this.used);
    this.used += bytes.length;
  }

  /** @internal */
  writeText(s: string): void {
    this.room(s.length * 3);
    this.used += enc.encodeInto(s, this.buf.subarray(this.used)).written;
  }

  /** Room for `n` more bytes in the buffer (and what the call wrote so far in it). */
  private room(n: number): void {
    const k = this.sameEnd;
    if (k >= 0) {
      // bytes other than the pushed chunk's own next ones: the chunk's start so far becomes the
      // start of the buffer
      this.sameEnd = -1;
      if (k !== 0) this.write(this.input.subarray(0, k));
    }
    const need = this.used + n;
    if (need > this.buf.length) {
      const grown = need <= FIRST_BYTES && this.buf.length === 0 ? firstBuffer() : new Uint8Array(Math.max(need, this.buf.length * 2, FIRST_BYTES));
      grown.set(this.buf.subarray(0, this.used));
      this.buf = grown;
    }
  }

  /** @internal */
  writeSpan(ptr: number, len: number): void {
    this.write(this.core.u8.subarray(ptr, ptr + len));
  }

  /**
   * @internal A JSON value as it came, on one line (inside a `data:` line): its line breaks, white
   * space between its tokens where an event's data came on several lines (a JSON string holds
   * none as it is), as spaces.
   */
  writeJsonSpan(ptr: number, len: number): void {
    const at = this.used;
    this.writeSpan(ptr, len);
    const b = this.buf;
    for (let i = at; i < this.used; i++) if (b[i] === 0x0a || b[i] === 0x0d) b[i] = 0x20;
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
  span(ptr: number, len: number, flags: number): void {
    const high = this.highSurrogate;
    if (len === 0) {
      // no text (Gemini's empty part): a high surrogate before it stays pending, as the core's quiet loop leaves it
    } else if ((flags & (JF_ASCII | JF_ESCAPED)) === JF_ASCII) {
      // ASCII as it is: a byte a character (after a high surrogate left alone before it: U+FFFD)
      this._textBytes += high ? len + 3 : len;
      this._textChars += high ? len + 1 : len;
      this.highSurrogate = false;
    } else {
      // counted by the core's rule for quiet events (a pair split across deltas is one character),
      // the characters for a writer that cites
      const core = this.core;
      if (this.writer.cites === true) this._textChars += core.x.modelTextChars(ptr, len, flags, high ? 1 : 0);
      this._textBytes += core.x.modelTextBytes(ptr, len, high ? 1 : 0);
      this.highSurrogate = core.word(MDR_HIGH) === 1;
    }
    if (this.passThrough && this.rewriting === null) return;
    this.writer.text(ptr, len);
  }

  /**
   * @internal An event of the pass-through format that its clients cannot read as it is: written
   * anew, in the upstream's envelope (its `id`, `created` and `model`): its role first, if it names
   * one, then its parts, with its annotations, finish reason and usage (records, −1 when none).
   */
  nonCanonical(doc: DocReader, finish: number, usage: number, annotations: number, role: number, others: boolean): void {
    if (!this.passThrough) return;
    const env = envelopeOf(this.core, this.from, doc);
    (this.writer as OpenAiWriter).rewrite(env[0] ?? this.idJson, env[1] ?? String(this.created), env[2] ?? this.modelJson);
    if (role >= 0) (this.writer as OpenAiWriter).role(doc, role);
    this.rewriting = { doc, finish, usage, annotations, others };
  }

  /**
   * The core writes the client's bytes for quiet events itself: when the formats are the same
   * their data as they are (with their names), otherwise one event per content span (the head of
   * its channel, the span's escaped bytes, its end) for the channels the writer can take from it
   * now, and the comments in between.
   */
  protected override readMode(): number {
    // (no comment after the client's end, which the relay wrote at the completion: a keep-alive that
    // came after it in the same read is no part of the client's stream)
    let mode = this.plan.comments && !this.endSent && (this.passThrough || this.writer.comments) ? ME_COMMENTS : 0;
    if (this.highSurrogate) mode |= ME_HIGH;
    const last = this.message?.last ?? null;
    if (this.passThrough) {
      this.setCall(last !== null && !last.done && last.key >= 0 ? last : null);
      return mode | ME_PASS | ME_REASONING | ME_ARGS | (this.plan.spec.namedEvents === true ? ME_NAMED : 0);
    }
    const q = this.writer.quiet(last);
    if (headsIn !== q || headsCore !== this.core) this.putHeads(q);
    const fit = headsFit;
    if (!(fit & 1)) mode |= ME_NO_TEXT;
    if (fit & 2) mode |= ME_REASONING;
    if (fit & 4) mode |= ME_ARGS;
    this.setCall(fit & 4 ? last : null);
    // (the characters of the text, for a writer that says where the content ends)
    return mode | ME_CHUNKS | (this.writer.cites === true ? ME_CHARS : 0);
  }

  /**
   * The writer's heads into the core's head area, a slot per channel; a channel without one, or
   * whose head is too large for its slot (a very long `id` or `model`), stays with the writer.
   */
  private putHeads(q: QuietHeads): void {
    const core = this.core;
    core.sync();
    const at = core.x.MHEAD_PTR.value as number;
    const dv = new DataView(core.u8.buffer);
    const slots: (QuietText | null)[] = [q.text, q.reasoning, q.args];
    let fit = 0;
    for (let c = 0; c < 3; c++) {
      const h = slots[c];
      const o = at + c * MHEAD_SLOT;
      if (h === null) continue;
      const head = enc.encodeInto(h.head, core.u8.subarray(o + 8, o + MHEAD_SLOT));
      if (head.read !== h.head.length) continue;
      const end = enc.encodeInto(h.end, core.u8.subarray(o + 8 + head.written, o + MHEAD_SLOT));
      if (end.read !== h.end.length) continue;
      dv.setUint32(o, head.written, true);
      dv.setUint32(o + 4, end.written, true);
      fit |= 1 << c;
    }
    headsIn = q;
    headsCore = core;
    headsFit = fit;
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
      if (k >= 0 && this.sameInput(at, k, n)) this.sameEnd = k + n;
      else this.write(core.u8.subarray(at, at + n));
    }
    this._textBytes += i32[r + MDR_TEXT_BYTES];
    this._textChars += i32[r + MDR_TEXT_CHARS];
    this.highSurrogate = i32[r + MDR_HIGH] === 1;
    this._eventsOut += this.passThrough ? i32[r + MDR_QUIET] : i32[r + MDR_CHUNKS];
    if (!this.passThrough && !this.writer.comments && this.plan.comments && !this.endSent) for (let c = i32[r + MDR_COMMENTS]; c > 0; c--) this.writer.keepAlive();
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
        // (the other choices of the event, which the reader does not follow: every choice passes;
        // before the followed one's end, whose usage is the event's last chunk)
        if (re.others) w.otherChoices(this.core.utf8(ptr, len));
        w.rewritten(re.doc, re.finish, re.usage, re.annotations);
        w.rewrite(null, '', '');
      } else if (len !== 0) {
        this.passEvent(ptr, len, doc);
      }
    } else if (this._status === 'done' && !this.completedSent && this.plan.spec.trailer === undefined) {
      this.completedSent = true;
      this.writer.completed();
    }
    // the completion of a format that sends nothing after it: the client's end now, not at the
    // upstream's end (which a connection left open may hold back)
    if (this._status === 'done' && this.plan.spec.trailer === undefined) this.completion();
  }

  /**
   * An event as it came: the chunk's own bytes when they are exactly that, else its name (its
   * `event:` line, for a format that names its events: its data's `type`) and a `data:` line per
   * line of its data.
   */
  private passEvent(ptr: number, len: number, doc: DocReader | null): void {
    const core = this.core;
    let name: Uint8Array | null = null;
    if (this.plan.spec.namedEvents === true && doc !== null) {
      const j = findPath(doc, 0);
      if (j >= 0 && doc.kind(j) === JK_STRING) name = enc.encode(`event: ${core.utf8(doc.ptr(j), doc.len(j))}\n`);
    }
    const k = this.sameEnd;
    const input = this.input;
    if (k >= 0) {
      const at = name === null ? k : k + name.length;
      if ((name === null || startsWith(input, k, name)) && startsWith(input, at, DATA) && this.sameInput(ptr, at + DATA.length, len)
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

  /** The client's one error event: the upstream's error (kept as `error`), or the gateway's reason to end the stream. */
  private errorEvent(e: ModelStreamError | Aborted): void {
    if (this.errorSent) return;
    this.errorSent = true;
    this.ended = true;
    if (e instanceof ModelStreamError) {
      if (this._status === 'open') this._status = e.code === 'ERR_STREAM_TRUNCATED' ? 'truncated' : 'failed';
      this.writer.error(e);
      this.sentError = e;
    } else {
      if (this._status === 'open') this._status = 'failed';
      this.writer.aborted(e);
    }
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

  /**
   * Whether core memory at [ptr, ptr + len) holds the pushed chunk's bytes from `start`: compared
   * in the core when the chunk is there whole (it fits the input window), else natively where the
   * runtime can (Node's Buffer.compare).
   */
  private sameInput(ptr: number, start: number, len: number): boolean {
    const input = this.input;
    const core = this.core;
    if (start + len > input.length) return false;
    return input.length <= core.inCap ? core.sameIn(ptr, core.inPtr + start, len) : core.sameAt(ptr, input, start, len);
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

