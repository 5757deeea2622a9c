// Layer 4: a model's stream, from its bytes to its text. The core frames the stream and reads each
// event's JSON (reader.ts); the text spans of a push are written out by the core as one run of
// UTF-16 units, so that one string is made per push, which the text layer commits (whole
// graphemes, NFC), or which the raw mode returns as the provider sent it.
import { checkOptions, byteLimitOption } from '../core/options.js';
import {
  JF_ASCII, JF_ESCAPED, MDR_LOGGED, MDR_TEXT_BYTES, MDR_UNITS, ME_ARGS, ME_GATHER, ME_KEEP, ME_ORDER, ME_REASONING, ME_TEXT, MGATHER_CAP, MGR_PTR, MG_KEEP, MG_TEXT, MG_WORDS, TEXT_LOG_END,
} from '../core/generated/abi.js';
import { DEFAULT_MAX_TEXT_BYTES, type FinalReport, TextAssembler, type TextAssemblerOptions } from '../text/assembler.js';
import { coreHashers } from '../text/core-hash.js';
import { utf8Length } from '../text/counts.js';
import { TextRangeError } from '../text/errors.js';
import { ModelStreamError } from './errors.js';
import type { ModelFormat } from './formats/index.js';
import type { Core } from '../core/wasm.js';
import type { Citation, Grounding, Media, ReasoningBlock, ToolCall } from './message.js';
import { ModelReader, call } from './reader.js';
export { DEFAULT_MAX_ARGUMENT_BYTES, DEFAULT_MAX_MEDIA_BYTES, DEFAULT_MAX_REASONING_BYTES } from './reader.js';

export type { ModelFormat } from './formats/index.js';
export type { ModelStatus } from './reader.js';
export type { BuiltinCallType, CitedSpan, Citation, Grounding, Media, ReasoningBlock, ToolCall } from './message.js';

/** Options of {@link ModelStream}. */
export interface ModelStreamOptions {
  /** Where the provider puts its text and what completes its stream. */
  format: ModelFormat;
  /** `format: 'bedrock-invoke'`: the model's own format in its chunks (`anthropic`, Claude's). @defaultValue 'anthropic' */
  inner?: 'anthropic';
  /**
   * Strict UTF-8: invalid UTF-8 is a ModelStreamError (`ERR_INVALID_UTF8`). With `false`, bad
   * sequences inside the text become U+FFFD exactly as `TextDecoder` makes them.
   * @defaultValue true
   */
  fatal?: boolean;
  /**
   * The most UTF-8 bytes of the answer's text (in the raw mode, of the text kept for the report).
   * The event whose text would pass it stops the stream, whatever the reads: a ModelStreamError
   * (`ERR_TEXT_TOO_LONG`) at that event's offset (the completion's, or the end's, for text held
   * back until then), with the text before it.
   * @defaultValue 256 MiB
   */
  maxTextBytes?: number;
  /** As {@link TextAssembler}'s. @defaultValue 64 KiB */
  maxPendingBytes?: number;
  /** The most bytes one event (or line) may hold while it is assembled, as {@link SseParser}'s. @defaultValue 16 MiB */
  maxEventBytes?: number;
  /** As {@link TextAssembler}'s: `'NFC'`, or `false` for the raw text (still whole graphemes). @defaultValue 'NFC' */
  normalize?: 'NFC' | false;
  /** Which choice to follow (OpenAI's `index`, Gemini's candidate), an integer from 0 to 2,147,483,647. @defaultValue 0 */
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
  /**
   * The most bytes of tool-call arguments (as sent) the stream keeps, for all its calls together,
   * the client's and the provider's own: their streamed fragments, the arguments that come whole
   * (a tool_use start's `input`, a hosted tool's item's members at its end, a call's `{}` when it
   * has none), and the provider's tools' results (Anthropic's result blocks, Gemini's
   * `codeExecutionResult`), which are kept with their calls. The event whose arguments or result
   * would pass it is a ModelStreamError (`ERR_ARGUMENTS_TOO_LARGE`) at its offset, with the calls
   * as they stood before it.
   * @defaultValue 16 MiB
   */
  maxArgumentBytes?: number;
  /**
   * The most bytes of reasoning the stream keeps (as sent: its text, and the signatures and
   * redacted blocks' data that come with it), with a refusal's text and the citations (their
   * provider's JSON; Gemini's grounding metadata's JSON text, each time it changes): the event whose reasoning would pass it stops the stream with a
   * ModelStreamError (`ERR_REASONING_TOO_LONG`) at its offset, whatever the reads, with the
   * reasoning kept up to the piece that would pass it (an event of several pieces, as Gemini's
   * parts, keeps those before it, as its text before them).
   * @defaultValue 64 MiB
   */
  maxReasoningBytes?: number;
  /**
   * The most bytes of media data the stream keeps (Gemini's `inlineData`, Responses' images,
   * OpenAI Chat's audio chunks, OpenRouter's images: base64, counted as sent), for all its media together: a part whose data would pass it is kept without its data
   * (`omitted: true`, with its media type and size), and the stream goes on; 0 keeps no data.
   * @defaultValue 64 MiB
   */
  maxMediaBytes?: number;
}

/** The end of a model stream: the text's report, with what the provider said about it. */
export interface ModelReport extends FinalReport {
  /** `'done'` only when the provider's completion arrived. */
  status: 'done' | 'truncated' | 'failed';
  finishReason?: string;
  /** The provider refused the prompt (Gemini's `promptFeedback.blockReason`, which is then the finish reason): no answer was made. */
  refused?: true;
  usage?: Record<string, unknown>;
  /** Provider events (SSE events, or NDJSON/ddg lines) read, `[DONE]` included, blank lines not. */
  events: number;
  /** Reasoning text, as sent (never part of the text). */
  reasoning: string;
  /** The model's refusal, when it refused (OpenAI's `refusal`, in place of the answer: never part of the text). */
  refusal?: string;
  /** The sources the answer cites, when it cites any (see {@link ModelStream.citations}). */
  citations?: Citation[];
  /** The searches behind a grounded answer, when the provider said them (see {@link ModelStream.grounding}). */
  grounding?: Grounding;
  /** The client's tool calls (see {@link ModelStream.toolCalls}). */
  toolCalls: ToolCall[];
  /** The provider's own tool calls, when it made any (see {@link ModelStream.serverToolCalls}). */
  serverToolCalls?: ToolCall[];
  /** Media the model returned, when it returned any (see {@link ModelStream.media}). */
  media?: Media[];
}

const OPTIONS = ['format', 'fatal', 'maxEventBytes', 'normalize', 'choice', 'eof', 'raw', 'maxTextBytes', 'maxPendingBytes', 'maxArgumentBytes', 'maxReasoningBytes', 'maxMediaBytes', 'inner'];
const HINTS = {
  keys: {
    onEvent: 'the text is returned by push(chunk); finishReason, usage and status are properties',
    maxLineBytes: 'ModelStream limits each event (or NDJSON line) with maxEventBytes',
    provider: "did you mean 'format'?",
    type: "did you mean 'format'?",
  },
};

/**
 * A model's stream, from its bytes to its text: `push(chunk)` returns the text committed by the
 * chunk (whole graphemes, NFC, as {@link TextAssembler}), and the stream knows when it is done
 * (the provider's completion), its finish reason and usage, and the provider's errors.
 *
 * Errors are {@link ModelStreamError}s with the absolute byte offset and the text the call had not
 * returned (what the text layer held back included); the stream then stays failed until `reset()`.
 * The completion returns what was held back at once: no more of the answer can follow it.
 */
export class ModelStream extends ModelReader {
  private assembler: TextAssembler | null;
  /**
   * LOG_ON: the core appends the text's UTF-8 to the stream's TEXT buffer as it gathers it
   * (ME_TEXT), and the text layer hashes the committed bytes there (the stream is its TextBytes).
   * A strict stream with a text layer is LOG_WAITING until its first push after LOG_AFTER bytes of
   * text; LOG_OFF otherwise, and after the log ended (a failure, a refused delta).
   */
  private log: TextLog = LOG_OFF;
  /** The last read's gather entries whose text the core logged itself (MDR_LOGGED), for the batch's end. */
  private spansLogged = 0;
  /** The raw mode's text, kept for the report. */
  private kept: RawText | null;
  /** After flush(): the text layer's report (null in the raw mode: made on request). */
  private finalText: FinalReport | null = null;
  private ended = false;
  /** Bytes that can still be pushed before the text could come near maxTextBytes (negative: to be found again; see nearLimit). */
  private farLeft = -1;

  /** What `flush()` does without the provider's completion. */
  get eof(): 'error' | 'allow' { return this.plan.eof; }
  /** The raw-delta mode. */
  get raw(): boolean { return this.plan.raw; }

  /** Reasoning or thinking text so far, as sent (never part of the answer's text). */
  get reasoning(): string {
    this.takeParts();
    return this.message?.reasoning() ?? '';
  }

  /**
   * The model's refusal so far (OpenAI's `refusal` deltas: `content` is then null; Anthropic's
   * `stop_details.explanation` with its stop `refusal`), as sent: '' when it did not refuse. Never
   * part of the answer's text; the finish reason stays the provider's (`stop`, `refusal`).
   */
  get refusal(): string {
    return this.message?.refusal ?? '';
  }

  /**
   * The sources the answer cites so far, in the order they came (Anthropic's `citations_delta`,
   * Responses' `response.output_text.annotation.added`, OpenAI's `delta.annotations`, Gemini's
   * grounding and citation metadata, Bedrock's `delta.citation`): each with its address, title and
   * quoted passage where the provider gives them, and the provider's citation as sent (where it points).
   * Gemini's grounded answers place each source in the text too: its `spans`, in UTF-16 units of
   * the stream's text, once the text is whole (at the completion). Never part of the text.
   */
  get citations(): readonly Citation[] {
    return this.message?.citations.slice() ?? [];
  }

  /**
   * The searches behind a grounded answer, the last the provider said (Gemini's
   * `groundingMetadata`: the queries searched and the Search Suggestions an app must show with an
   * answer grounded with Google Search; its `urlContextMetadata`: the pages the URL context tool
   * retrieved); undefined when it said none. Kept within maxReasoningBytes, as the citations.
   */
  get grounding(): Grounding | undefined {
    const g = this.message?.grounding;
    return g === null || g === undefined ? undefined : copyGrounding(g);
  }

  /**
   * Media the model returned so far, in order (Gemini's `inlineData` parts: images it made, audio;
   * Responses' generated images; OpenAI Chat's audio chunks; OpenRouter's images):
   * each with its media type, its data as sent (base64), its size, and Gemini's signature to send
   * back with it; past `maxMediaBytes` without its data (`omitted`). Never part of the text.
   */
  get media(): readonly Media[] {
    return this.message?.media?.slice() ?? [];
  }

  /**
   * Reasoning in blocks, with what a caller must send back with each: Anthropic's signature, a
   * redacted block's data, or Responses' `encrypted_content` of a reasoning item and the item's id,
   * on each of its blocks (one block for formats without blocks).
   */
  get reasoningBlocks(): readonly ReasoningBlock[] {
    this.takeParts();
    return this.message?.thinking.map((b) => ({ ...b })) ?? [];
  }

  /**
   * The client's tool calls begun so far, in order: each with the provider's id, its name, its
   * arguments as JSON text (growing as fragments arrive), whether it is done and, once done,
   * whether its arguments are one complete JSON value.
   */
  get toolCalls(): readonly ToolCall[] {
    this.takeParts();
    return this.message?.calls.map((c) => c.snapshot()) ?? [];
  }

  /**
   * The provider's own tool calls (Anthropic's `server_tool_use`, Responses' hosted tools, Gemini's
   * code execution, with its `result`): not the client's to run.
   */
  get serverToolCalls(): readonly ToolCall[] {
    this.takeParts();
    return this.message?.serverCalls.map((c) => c.snapshot()) ?? [];
  }

  /**
   * @internal What `reset()` makes anew for each stream (its text layer, or the raw text it keeps):
   * a ModelPartReader over the stream starts over when it changes. A getter, not a count kept in
   * every stream: a field more made an idle stream larger than the idle-streams bound on Bun.
   */
  get turn(): object {
    return (this.assembler ?? this.kept)!;
  }

  constructor(options: ModelStreamOptions) {
    if (options === undefined) throw new TypeError("ModelStream: options are required: new ModelStream({ format: 'openai' })");
    checkOptions(options, 'ModelStream', OPTIONS, HINTS);
    super('ModelStream', options);
    this.assembler = this.plan.raw ? null : this.textLayer({ normalize: this.plan.normalize, maxTextBytes: options.maxTextBytes, maxPendingBytes: options.maxPendingBytes }, true);
    this.kept = this.plan.raw
      ? new RawText(this.plan.fatal, byteLimitOption(options.maxTextBytes, 'maxTextBytes', 'ModelStream', DEFAULT_MAX_TEXT_BYTES, Infinity))
      : null;
  }

  /** The text committed by the chunk: whole graphemes, NFC (or the raw deltas with `raw: true`). */
  push(chunk: Uint8Array): string {
    this.open(chunk, 'ModelStream.push()');
    if (this.ended) throw new TypeError('ModelStream.push(): the stream ended with flush() or finish(); reset() starts a new one');
    call.begin(this);
    if (this.sniffed !== 1 && this.sniff(chunk)) return '';
    if (this.log === LOG_WAITING && this.assembler!.hashBytes(this, LOG_AFTER)) this.log = LOG_ON;
    if ((this.farLeft -= chunk.length) < 0) call.near = this.nearLimit(chunk.length);
    this.frameAll(chunk, this.mode);
    const out = call.out;
    call.out = ''; // not kept: an idle stream holds no string
    return out;
  }

  /** A whole answer's events (a JSON body, read at flush): as a push of them. */
  protected override readWhole(events: Uint8Array): void {
    if ((this.farLeft -= events.length) < 0) call.near = this.nearLimit(events.length);
    this.frameAll(events, this.mode);
  }

  /**
   * End of stream: the text still held back. Without the provider's completion the status is
   * `'truncated'` and, unless `eof: 'allow'`, this throws ModelStreamError (`ERR_STREAM_TRUNCATED`)
   * with that text on it. Then `finish()` gives the report; `reset()` starts a new stream.
   */
  flush(): string {
    if (this.failure !== null) this.rethrow();
    if (this.ended) return '';
    call.begin(this);
    if (this.farLeft < 0) call.near = this.nearLimit(0);
    this.flushFrames();
    this.takeParts();
    this.takeKept();
    const assembler = this.assembler;
    if (assembler !== null) call.commit(this.releaseHeld());
    this.placeSpans();
    const rest = call.out;
    const text = assembler !== null ? assembler.finish() : null;
    this.finalText = text;
    this.ended = true;
    this.retire(); // (everything of it was taken above; an app or gateway ends thousands of streams between collections)
    if (this._status === 'open') {
      this._status = 'truncated';
      if (this.plan.eof === 'error') {
        this.stop(new ModelStreamError('ERR_STREAM_TRUNCATED', this.bytesIn,
          `The stream ended without its completion (${this.spec.completion}) after ${this.bytesIn} bytes: the text is incomplete`, rest));
      }
    }
    this.bytesIn = 0;
    return rest;
  }

  /**
   * The provider's completion, read in the event that completes the stream: the text before it is
   * committed, and what the text layer held back with it (no more of the answer can follow).
   */
  protected override answerDone(): void {
    this.batchDone();
    call.commit(this.releaseHeld());
    this.placeSpans();
  }

  /**
   * The spans the sources back that wait in bytes (Gemini's), placed in the answer's text once it
   * is whole: at the completion, or at the stream's end. Only a stream whose metadata placed some
   * makes the text's string here.
   */
  private placeSpans(): void {
    const m = this.message;
    if (m === null || m.byteSpans === null) return;
    const a = this.assembler;
    if (a !== null) m.placeSpans(a.committedText + a.pending, a.normalize === 'NFC', a.normalizationChanged);
    else m.placeSpans(this.kept!.textSoFar(this.core, this.st), false);
  }

  /** The text the text layer held back, committed: at the completion or the end. Past maxTextBytes the stream fails there. */
  private releaseHeld(): string {
    const a = this.assembler;
    if (a === null || a.pending.length === 0) return '';
    try {
      return a.flush();
    } catch (e) {
      if (e instanceof TextRangeError) this.textTooLong((at) => this._status === 'done' ? `The text held back until the completion at byte offset ${at}` : `The text held back at the stream's end (byte offset ${at})`);
      throw e;
    }
  }

  /**
   * Whether this read (or the flush, `len` 0) could bring the text past maxTextBytes (or the kept
   * reasoning past maxReasoningBytes, which the same reading of every event here keeps exact). The
   * core reads text deltas to the end itself and commits a read's text in one batch (one push of the
   * text layer), which passes the limit whole: near the limit every event is read here instead
   * (no template of quiet events) and its text is committed alone, so that the stream stops at the
   * event whose text passes the limit, whatever the reads. The text of n bytes of the stream
   * takes at most 3n bytes (an escape is longer than its UTF-8, a byte that is not UTF-8 becomes
   * U+FFFD's three, NFC at most triples the UTF-8 it changes), and the text held back at most 9
   * bytes a unit; so no read is near until `farLeft` more bytes were pushed, and a push costs a
   * subtraction until then.
   */
  private nearLimit(len: number): boolean {
    const a = this.assembler;
    const k = this.kept;
    const room = a !== null ? a.maxTextBytes - a.committedBytes - 9 * a.pending.length : k!.maxBytes - k!.bytes;
    // (and maxReasoningBytes, always finite: n bytes of the stream hold at most n of reasoning as
    // sent, which the core keeps for a read's quiet events whole)
    const reasoning = this.maxReasoningBytes - (this.message?.reasoningBytes ?? 0);
    // (less the bytes the core holds that no event has read yet)
    const far = Math.min(Math.floor(room / 3), reasoning) - this.heldBytes();
    if (len > far) {
      this.farLeft = -1;
      return true;
    }
    this.farLeft = Math.min(far - len, MAX_FAR);
    return false;
  }

  /** The stream stops where its text would pass maxTextBytes: an error with the offset of the event it came from. */
  private textTooLong(what: (at: number) => string): never {
    this.endTextLog();
    const at = this.textOffset();
    const lead = what(at);
    this._status = 'failed';
    const max = this.assembler?.maxTextBytes ?? this.kept!.maxBytes;
    const kept = this.assembler?.committedBytes ?? this.kept!.bytes;
    this.stop(new ModelStreamError('ERR_TEXT_TOO_LONG', at, `${lead} would pass maxTextBytes (${max} bytes, ${kept} committed); the stream stops before it`, call.out));
  }

  /** At a failure: the text held back, committed where it fits maxTextBytes, else forgotten (the report is of the text committed). */
  protected override heldRest(): string {
    const a = this.assembler;
    if (a === null || a.pending.length === 0) return '';
    try {
      return a.flush();
    } catch (e) {
      if (!(e instanceof TextRangeError)) throw e;
      a.discardHeld();
      return '';
    }
  }

  /** The report: the committed text, its counts and SHA-256, status, finish reason, usage. Flushes first if needed (without throwing). */
  finish(options?: { expected?: string }): ModelReport {
    checkOptions(options, 'ModelStream.finish', ['expected']);
    if (!this.ended && this.failure === null) {
      try {
        this.flush();
      } catch (e) {
        if (!(e instanceof ModelStreamError)) throw e;
      }
    }
    if (!this.ended) {
      // failed, before the flush or in it (a JSON body that is not valid, or the provider's error
      // body, read at the end): the text committed before the error (and what was held back, as
      // far as it fits, where the failure was not a ModelStreamError)
      this.heldRest();
      this.finalText = this.assembler?.finish() ?? null;
      this.ended = true;
      this.retire();
    }
    const r = this.makeReport(this.finalText);
    const expected = options?.expected;
    if (expected !== undefined) r.mismatch = (this.plan.normalize === 'NFC' ? expected.normalize('NFC') : expected) !== r.text;
    return r;
  }

  /**
   * A text layer whose report is hashed by this stream's core where the runtime has no native
   * SHA-256; the stream's, with `ours`: strict, it comes to hash the UTF-8 the core logs (ME_TEXT).
   */
  private textLayer(options: TextAssemblerOptions, ours = false): TextAssembler {
    const a = new TextAssembler(options);
    a.hashWith(coreHashers(this.core));
    this.log = ours && this.plan.fatal ? LOG_WAITING : LOG_OFF;
    return a;
  }

  /** @internal TextBytes: a view of the next `n` bytes of the text's UTF-8 in the core. */
  textBytes(n: number): Uint8Array {
    const core = this.core;
    const len = core.x.modelTextLog(this.st, n);
    if (len < n) throw new Error(`seam: the core holds ${len} bytes of the text, not the ${n} committed`);
    core.sync();
    const p = core.word(MGR_PTR);
    return core.u8.subarray(p, p + n);
  }

  /** @internal TextBytes: gives up the next `n` bytes of the text's UTF-8 in the core. */
  dropText(n: number): void {
    this.core.x.modelTextDrop(this.st, n); // (allocates nothing: the views stay)
  }

  /** The text layer hashes strings from here on (the core's log goes, or would fall behind). */
  private endTextLog(): void {
    const on = this.log === LOG_ON;
    this.log = LOG_OFF;
    if (!on) return;
    this.assembler?.detachBytes();
    if (this.st !== 0) this.core.x.modelTextDrop(this.st, TEXT_LOG_END);
  }

  protected override resetState(): void {
    super.resetState();
    this.finalText = null;
    this.ended = false;
    this.farLeft = -1;
    const a = this.assembler;
    this.assembler = a === null ? null : this.textLayer({ normalize: a.normalize, maxTextBytes: a.maxTextBytes, maxPendingBytes: a.maxPendingBytes }, true);
    const k = this.kept;
    this.kept = k === null ? null : new RawText(k.inCore, k.maxBytes);
  }

  /** @internal A text span: a gather entry for the batch's one string. */
  span(ptr: number, len: number, flags: number): void {
    if (call.gathered === MGATHER_CAP) this.batchDone();
    const i32 = this.core.i32;
    const g = this.core.mgather + call.gathered * MG_WORDS;
    i32[g] = ptr;
    i32[g + 1] = len;
    i32[g + 2] = flags;
    call.gathered++;
  }

  /**
   * Gathered in the core: the batch's text read to the end there (ME_GATHER), and reasoning and
   * the last open call's argument fragments kept there until they are asked for.
   */
  protected override readMode(): number {
    const order = call.order !== null ? ME_ORDER : 0;
    if (!this.plan.fatal) return order;
    const last = this.message?.last ?? null;
    this.setCall(last !== null && !last.done && last.key >= 0 ? last : null);
    return (this.kept !== null ? ME_GATHER | ME_KEEP : this.log === LOG_ON ? ME_GATHER | ME_TEXT : ME_GATHER) | ME_REASONING | ME_ARGS | order;
  }

  protected override quietDone(): void {
    const core = this.core;
    this.spansLogged = core.i32[core.res + MDR_LOGGED];
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
      if (k.bytes + bytes > k.maxBytes) this.textTooLong(EVENT_TEXT);
      k.bytes += bytes;
      k.units += units;
    }
    this.commit(text);
  }


  /**
   * The raw text the core kept, taken out as strings of at most KEPT_PIECE units (the core gives
   * its memory back), joined only when the report asks for it. Pieces this size are made in the
   * JS heap's young space, whose pages are in use; one string or one copy of a megabyte lands on
   * memory the process has not touched, and on a VM whose page faults cost 11 µs that copy took a
   * quarter of an Anthropic-shaped raw stream's time (BENCHMARKS.md).
   */
  private takeKept(): void {
    const k = this.kept;
    if (k === null || !k.inCore || k.taken || this.st === 0) return;
    const core = this.core;
    core.x.modelKept(this.st);
    core.sync();
    let ptr = core.word(MGR_PTR); // (an allocation of the core: even, so its units are u16's)
    const end = ptr + 2 * k.units;
    const u16 = core.u16;
    while (ptr < end) {
      let n = Math.min(KEPT_PIECE, (end - ptr) >>> 1);
      // (a piece does not end between the two halves of a pair: a browser's UTF-16 decoder would replace them)
      if (ptr + 2 * n < end && (u16[(ptr >>> 1) + n - 1] & 0xfc00) === 0xd800) n--;
      k.pieces.push(core.units16(ptr, n)); // (a lone surrogate from a JSON escape stays one)
      ptr += 2 * n;
    }
    k.taken = true;
    core.x.modelKeepFree(this.st);
  }

  protected override released(): void {
    this.takeKept();
    this.endTextLog();
    super.released();
  }

  /** Makes the string of the batch's text spans (one core call, one string) and commits it. */
  protected override batchDone(): void {
    const n = call.gathered;
    const logged = this.spansLogged;
    this.spansLogged = 0;
    if (n === 0) return;
    call.gathered = 0;
    const core = this.core;
    let text: string;
    const g0 = core.mgather;
    if (n === 1 && this.kept === null && (core.i32[g0 + 2] & (JF_ASCII | JF_ESCAPED)) === JF_ASCII) {
      // one ASCII span with no escape (a push's usual delta): its bytes are its text
      text = core.latin1(core.i32[g0], core.i32[g0 + 1]);
      if (this.log === LOG_ON && logged === 0) {
        core.x.modelTextSpans(this.st, 1); // (its entry was read first: the call can grow the memory)
        core.sync();
      }
    } else if (this.fatal) {
      const units = core.x.modelGather(this.st, n, this.kept !== null ? MG_KEEP : this.log === LOG_ON ? MG_TEXT : 0);
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
        if (k.bytes + bytes > k.maxBytes) this.textTooLong(EVENT_TEXT);
        k.bytes += bytes;
        k.deltas.push(text);
      }
      call.commit(text);
    } else {
      let c: string;
      try {
        c = this.assembler!.push(text);
      } catch (e) {
        this.endTextLog(); // (the delta was refused: its bytes in the core are not the text's)
        if (e instanceof TextRangeError) this.textTooLong(EVENT_TEXT);
        throw e;
      }
      call.commit(c);
    }
  }

  private makeReport(text: FinalReport | null): ModelReport {
    const status = this._status === 'open' ? 'truncated' : this._status;
    let base: FinalReport;
    if (text !== null) {
      base = text;
    } else {
      const a = this.textLayer({ normalize: false, maxPendingBytes: Infinity, maxTextBytes: Infinity });
      a.push(this.kept?.text() ?? '');
      base = a.finish();
    }
    const r: ModelReport = { ...base, status, events: this._events, reasoning: this.reasoning, toolCalls: [...this.toolCalls] };
    const m = this.message;
    if (m !== null) {
      if (m.finishReason !== undefined) r.finishReason = m.finishReason;
      if (m.refused) r.refused = true;
      if (m.refusal !== '') r.refusal = m.refusal;
      if (m.citations.length !== 0) r.citations = m.citations.slice();
      if (m.grounding !== null) r.grounding = copyGrounding(m.grounding);
      if (m.usage !== undefined) r.usage = m.usage;
      if (m.serverCalls.length !== 0) r.serverToolCalls = [...this.serverToolCalls];
      if (m.media !== null) r.media = m.media.slice();
    }
    return r;
  }
}

/** A copy of a stream's grounding, for a caller (its lists its own). */
function copyGrounding(g: Grounding): Grounding {
  const out: Grounding = { ...g, queries: g.queries.slice() };
  if (g.urls !== undefined) out.urls = g.urls.map((u) => ({ ...u }));
  return out;
}

/** The most `farLeft` holds: a small integer, not a heap number. */
const MAX_FAR = 0x3fffffff;

/** What passed maxTextBytes: the text of the event being read. */
const EVENT_TEXT = (at: number): string => `The text of the event at byte offset ${at}`;

/**
 * Bytes of text a stream commits before its core logs the text's UTF-8 for the hash: a short
 * answer (or a stream idle after a few deltas, of which a gateway holds thousands) keeps no log.
 */
const LOG_AFTER = 1024;

/** A stream's log of its text's UTF-8 in the core (ModelStream's `log`): none, not begun yet, on. */
const LOG_OFF = 0, LOG_WAITING = 1, LOG_ON = 2;
type TextLog = typeof LOG_OFF | typeof LOG_WAITING | typeof LOG_ON;

/** The most UTF-16 units of one piece of the kept text taken out of the core. */
const KEPT_PIECE = 16384;

/**
 * The raw mode's text so far, for the report. Strict, the core keeps it (the UTF-16 units of the
 * text it gathers, appended to the stream's KEEP buffer: ME_KEEP) and JS takes it out at the end in
 * pieces (takeKept); a string kept here per delta would be copied again by every young collection
 * of the JS heap until it is old. Not strict, the deltas are made here, and kept here.
 */
class RawText {
  /** UTF-16 units and UTF-8 bytes so far (each delta counted alone). */
  units = 0;
  bytes = 0;
  /** The core's kept text, taken out of the core in pieces (see takeKept), and whether it has been. */
  readonly pieces: string[] = [];
  taken = false;
  /** The deltas made here, when the core does not keep the text. */
  readonly deltas: string[] = [];

  constructor(readonly inCore: boolean, readonly maxBytes: number) {}

  /**
   * The text so far, read where it is: taken out of the core already, or still kept there (read
   * without taking it: the stream may go on), or the deltas made here.
   */
  textSoFar(core: Core, st: number): string {
    if (!this.inCore || this.taken || st === 0) return this.text();
    const units = core.x.modelKept(st);
    core.sync();
    return units === 0 ? '' : core.units16(core.word(MGR_PTR), units);
  }

  /** The text so far, as one string (kept as the one piece: a report asked for again joins nothing). */
  text(): string {
    const parts = this.inCore ? this.pieces : this.deltas;
    if (parts.length > 1) parts.splice(0, parts.length, parts.join(''));
    return parts[0] ?? '';
  }
}
