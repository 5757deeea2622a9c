// Layer 4 for events that arrive already framed, as strings or bytes (an EventSource's messages,
// a capture split by another tool, the command's `check`): each read with the same description
// that a ModelStream reads its events with, its JSON read in the core, so that the two cannot
// disagree about what an event means.
import { JF_ESCAPED, JK_OBJECT, JSON_READ_SLACK, MJREC_CAP } from '../core/generated/abi.js';
import { byteLimitOption, checkOptions, oneOf } from '../core/options.js';
import { type Core, getCore } from '../core/wasm.js';
import { MAX_LIMIT_BYTES } from '../frames/frame-stream.js';
import { JSON_ERRORS, borrowDoc, unescaped } from './document.js';
import { type FormatSpec, type ProviderError, find, runningUsagePath } from './formats/describe.js';
import { FORMATS, MODEL_FORMATS, type ModelFormat } from './formats/index.js';
import { type Citation, type Grounding, type Media, Message, type ToolCall } from './message.js';
import { programAddress } from './plan.js';
import { DEFAULT_MAX_ARGUMENT_BYTES, DEFAULT_MAX_REASONING_BYTES, choiceOption } from './reader.js';

/** What one event says, as {@link ModelEventReader.read} returns it. */
export interface ModelEventReading {
  /** The answer's text in the event ('' when none). */
  text: string;
  /** Reasoning or thinking text in the event ('' when none). */
  reasoning: string;
  /** The model's refusal text in the event (OpenAI's `refusal`), when it has some. */
  refusal?: string;
  /**
   * The sources the event cites (as {@link ModelStream.citations}), when it cites any: without
   * `spans`, which a stream places in its whole text (an event's own text is not the answer's).
   */
  citations?: Citation[];
  /** What the event says of the searches behind the answer (as {@link ModelStream.grounding}), when it says it. */
  grounding?: Grounding;
  /**
   * The media the event carries (as {@link ModelStream.media}: Gemini's `inlineData` parts,
   * Responses' generated image), when it carries any: each whole, its data as sent (the event is
   * the caller's, held whole: no `maxMediaBytes`).
   */
  media?: Media[];
  /** The provider's completion: the stream is done. */
  done: boolean;
  /** A keep-alive (Anthropic `ping`). */
  heartbeat: boolean;
  finishReason?: string;
  /** The provider refused the prompt (Gemini's `promptFeedback.blockReason`, the finish reason then). */
  refused?: true;
  /**
   * The usage object the event carries: a completion's, or a running one a stream cut short
   * reports (Anthropic's message_start's, Gemini's totals so far in each chunk), as a
   * {@link ModelStream} reports it.
   */
  usage?: Record<string, unknown>;
  /** The provider's error the event carries: an error event, or a finish reason that says the turn failed (the reason its `detail`; `done` is then false). */
  error?: ProviderError;
  /**
   * Not an event of the format: invalid JSON (`json`; `offset` is where it stops being JSON, in the
   * event's bytes), or JSON the format cannot read (a `[DONE]` it does not send, Gemini's streamed
   * arguments at a path they cannot be written at; `offset` 0).
   */
  invalid?: { offset: number; message: string; json: boolean };
  /** Nothing to read: a blank line of a line format. */
  blank: boolean;
  /**
   * A limit the event passed: its tool-call arguments (fragments, or arguments said whole), with
   * those the reader keeps of the events before it, would pass its `maxArgumentBytes` (where a
   * {@link ModelStream} fails): they were not kept (the calls stand as before the event), and the
   * next events are read as usual. Or its reasoning (or refusal, or citations), with that of the
   * events before it, would pass the 64 MiB a ModelStream keeps by default (`maxReasoningBytes`,
   * where it fails with ERR_REASONING_TOO_LONG): the reading has it still (it is the event's own).
   */
  limit?: { code: 'ERR_ARGUMENTS_TOO_LARGE' | 'ERR_REASONING_TOO_LONG'; message: string };
}

/** Options of {@link ModelEventReader}. */
export interface ModelEventReaderOptions {
  /** The provider's format. */
  format: ModelFormat;
  /** Which choice to follow (OpenAI's `index`, Gemini's candidate), an integer from 0 to 2,147,483,647. @defaultValue 0 */
  choice?: number;
  /**
   * The most bytes of tool-call arguments (and the provider's own calls' results) the reader keeps
   * across the events it reads, counted as sent; an event that would pass it says so in its
   * reading (`limit`), its arguments not kept.
   * @defaultValue 16777216 (16 MiB, as a ModelStream's)
   */
  maxArgumentBytes?: number;
}

const enc = /* @__PURE__ */ new TextEncoder();
const dec = /* @__PURE__ */ new TextDecoder('utf-8', { ignoreBOM: true });
const DONE = '[DONE]';

/**
 * Reads a provider's events one at a time, given already framed: an SSE event's data, or one line
 * of a line format (NDJSON, ddg), as a string or as bytes. Each is read by the description a
 * {@link ModelStream} reads that format with (its JSON read in the WebAssembly core), so both say
 * the same of every event. Unlike a stream, a bad or erroring event is reported in its reading,
 * and the next one is read as usual.
 */
export class ModelEventReader {
  readonly format: ModelFormat;
  readonly choice: number;
  /** @internal What the events said: the calls persist from event to event, the rest is each event's. */
  message: Message | null = new Message();
  /** @internal */
  readonly keeps = true;
  /** @internal */
  readonly out = null;
  /** The most bytes of tool-call arguments kept across the events (see {@link ModelEventReaderOptions.maxArgumentBytes}). */
  readonly maxArgumentBytes: number;
  /** @internal (one event's reasoning, which the caller holds whole) */
  readonly maxReasoningBytes = Infinity;
  /** @internal (one event's media, which the caller holds whole) */
  readonly maxMediaBytes = Infinity;
  /** @internal */
  get finishReasons(): FormatSpec['finishReasons'] { return FORMATS[this.format].finishReasons; }
  private readonly core: Core;
  private text = '';
  /** Bytes of reasoning (and refusal, and citations) the events read so far said, as a ModelStream counts them (within its default limit). */
  private reasoningKept = 0;

  constructor(options: ModelEventReaderOptions) {
    if (options === undefined) throw new TypeError("ModelEventReader: options are required: new ModelEventReader({ format: 'openai' })");
    checkOptions(options, 'ModelEventReader', ['format', 'choice', 'maxArgumentBytes']);
    this.format = oneOf(options.format, 'format', 'ModelEventReader', MODEL_FORMATS, undefined);
    this.choice = choiceOption(options.choice, 'ModelEventReader');
    this.maxArgumentBytes = byteLimitOption(options.maxArgumentBytes, 'maxArgumentBytes', 'ModelEventReader', DEFAULT_MAX_ARGUMENT_BYTES, MAX_LIMIT_BYTES);
    this.core = getCore();
  }

  /** What one event (its data, or one line) says. */
  read(data: string | Uint8Array): ModelEventReading {
    const spec = FORMATS[this.format];
    let bytes = typeof data === 'string' ? enc.encode(data) : data;
    const r: ModelEventReading = { text: '', reasoning: '', done: false, heartbeat: false, blank: false };
    if (spec.stripData && bytes.length >= 5 && dec.decode(bytes.subarray(0, 5)) === 'data:') {
      bytes = bytes.subarray(bytes.length > 5 && bytes[5] === 0x20 ? 6 : 5);
    }
    if (isBlank(bytes)) {
      r.blank = true;
      return r;
    }
    if (bytes.length === DONE.length && dec.decode(bytes) === DONE) {
      if (spec.doneMarker) {
        // the completion: every call still open ends with it, as a ModelStream ends them
        r.done = true;
        this.core.sync();
        borrowDoc(this.core, this, 0, 0, 0, 0).onToolCallsEnd();
      } else r.invalid = { offset: 0, message: `[DONE] is not an event of the ${this.format} format`, json: false };
      return r;
    }
    const core = this.core;
    core.sync();
    let over = false;
    const large = bytes.length > core.inCap;
    const at = large ? core.x.modelScratch(bytes.length) : core.inPtr;
    core.sync();
    core.u8.set(bytes, at);
    if (!large) core.u8.fill(0, at + bytes.length, at + bytes.length + JSON_READ_SLACK);
    try {
      const n = core.x.jsonRead(programAddress(core, this.format), at, bytes.length, core.mjrec << 2, MJREC_CAP);
      if (n < 0) {
        r.invalid = { offset: core.x.jsonErrorAt(), message: JSON_ERRORS[-n] ?? 'not JSON', json: true };
        return r;
      }
      const m = this.fresh();
      this.text = '';
      const doc = borrowDoc(core, this, at, bytes.length, core.mjrec, n);
      spec.read(doc, doc);
      // (a running usage, which a stream keeps in the core: each event's own, as the stream would report it were it cut there)
      const last = m.usage === undefined ? runningUsagePath(spec.template) : -1;
      const u = last < 0 ? -1 : find(doc, last);
      if (u >= 0 && doc.kind(u) === JK_OBJECT) m.usage = doc.value(u) as Record<string, unknown>;
      // (past the arguments' limit a stream fails at the event; the reader says so in its reading,
      // and reads on: its calls end at a completion as before)
      over = m.tooLong;
      m.tooLong = false;
      if (m.done && m.error === null) doc.onToolCallsEnd();
    } finally {
      if (large) core.x.modelScratchFree();
    }
    const m = this.message!;
    r.text = this.text;
    r.reasoning = m.reasoning();
    r.done = m.done && m.error === null; // (a finish that says the turn failed is the provider's error)
    r.heartbeat = m.pings !== 0;
    if (m.finishReason !== undefined) r.finishReason = m.finishReason;
    if (m.refused) r.refused = true;
    if (m.refusal !== '') r.refusal = m.refusal;
    if (m.citations.length !== 0) r.citations = m.citations.slice();
    if (m.grounding !== null) r.grounding = m.grounding;
    if (m.media !== null) r.media = m.media;
    if (m.usage !== undefined) r.usage = m.usage;
    if (m.bad !== null) {
      r.invalid = { offset: 0, message: m.bad, json: false };
      m.bad = null;
    }
    if (m.error !== null) r.error = m.errorDetail === undefined ? { message: m.error } : { message: m.error, detail: m.errorDetail };
    if (over) {
      r.limit = {
        code: 'ERR_ARGUMENTS_TOO_LARGE',
        message: `the tool-call arguments in the event would pass maxArgumentBytes (${this.maxArgumentBytes} bytes, ${m.argumentBytes} kept): they were not kept`,
      };
    }
    // (an event's reasoning is the caller's, read whole; across the events it counts as a
    // ModelStream's does, which fails where it would pass its default limit)
    if (m.reasoningBytes !== 0) {
      const kept = this.reasoningKept;
      if (kept + m.reasoningBytes > DEFAULT_MAX_REASONING_BYTES) {
        r.limit ??= {
          code: 'ERR_REASONING_TOO_LONG',
          message: `the reasoning (or refusal, or citations) in the event would pass maxReasoningBytes (${DEFAULT_MAX_REASONING_BYTES} bytes, ${kept} kept), where a model stream stops`,
        };
      } else this.reasoningKept = kept + m.reasoningBytes;
    }
    this.text = '';
    return r;
  }

  /** The client's tool calls of the events read so far (as {@link ModelStream.toolCalls}). */
  get toolCalls(): readonly ToolCall[] {
    return this.message!.calls.map((c) => c.snapshot());
  }

  /**
   * The provider's own tool calls of the events read so far (as {@link ModelStream.serverToolCalls}),
   * each with its `result` once the event that carries it was read.
   */
  get serverToolCalls(): readonly ToolCall[] {
    return this.message!.serverCalls.map((c) => c.snapshot());
  }

  /** The message with this event's own parts emptied (its calls go on). */
  private fresh(): Message {
    const m = this.message!;
    m.finishReason = undefined;
    m.refused = false;
    m.refusal = '';
    m.citations.length = 0;
    m.cited = null;
    m.citedLists = null;
    m.grounding = null;
    m.byteSpans = null;
    m.reasoningBytes = 0;
    m.usage = undefined;
    m.pings = 0;
    m.done = false;
    m.error = null;
    m.errorDetail = undefined;
    m.thinking.length = 0;
    m.thinkingOpen = false;
    m.media = null;
    m.mediaBytes = 0;
    return m;
  }

  /** @internal A text span of the event. */
  span(ptr: number, len: number, flags: number): void {
    const core = this.core;
    this.text += flags & JF_ESCAPED ? unescaped(core, ptr, len) : core.utf8(ptr, len);
  }
}

function isBlank(b: Uint8Array): boolean {
  for (let i = 0; i < b.length; i++) if (b[i] !== 0x20 && b[i] !== 0x09 && b[i] !== 0x0a && b[i] !== 0x0d) return false;
  return true;
}
