// Layer 4: a relay's client in Anthropic Messages: `message_start`, then one content block per
// text, thinking and client `tool_use` part (begun by `content_block_start`, ended by
// `content_block_stop`), text as `text_delta`, reasoning as `thinking_delta` (and its signature
// as `signature_delta`), arguments as `input_json_delta` fragments copied as the escaped bytes
// they came as (a custom tool's free-text input, which Anthropic's tools do not have, as the
// input `{"input": …}`; a Gemini call's thoughtSignature as a thinking block of no text right
// before it); a refusal (OpenAI's) as text, its stop `refusal`; then `message_delta`
// with the stop reason in Anthropic's words and the usage (the reasoning tokens as
// `output_tokens_details.thinking_tokens`), and `message_stop`. An error is
// `event: error` in Anthropic's shape, never a `message_stop`; keep-alives are `ping`s.
import type { ModelStreamError } from './errors.js';
import { anthropicErrorType, finishIn, finishWithCalls } from './formats/describe.js';
import type { Call } from './message.js';
import { type Aborted, type ClientWriter, type QuietHeads, type RelayTarget, anthropicInput, anthropicUsage, callId, errorParts, usageOf } from './writer.js';

const DELTA_END = '"}}\n\n';
const PING = 'event: ping\ndata: {"type":"ping"}\n\n';
const STOP = 'event: message_stop\ndata: {"type":"message_stop"}\n\n';

type Block = 'text' | 'thinking' | 'tool';

/** The bytes a relay writes to an Anthropic Messages client. */
export class AnthropicWriter implements ClientWriter {
  readonly comments = false;
  private started = false;
  /** The index of the last block begun, and what the open one is (null: none open). */
  private index = -1;
  private block: Block | null = null;
  /** The call whose `tool_use` block is open. */
  private call: Call | null = null;
  /** The head of the open block's deltas, and what the core may write itself (for the call of `headsFor`). */
  private deltaHead: string | null = null;
  private heads: QuietHeads | null = null;
  private headsFor: Call | null = null;
  private calls = 0;
  /**
   * Calls begun without a name (a fragment came before the call's start, which names it): held,
   * with their arguments as JSON string bodies, until the name comes or they end, since a
   * `tool_use` block is named at its start. At most HELD_ARGS bytes of arguments are held: past
   * them the block begins unnamed.
   */
  private unnamed: Map<Call, { parts: string[]; bytes: number }> | null = null;
  /** Custom tools' calls whose input's JSON text has begun (`{"input":"`). */
  private customOpen: Set<Call> | null = null;
  /** Anthropic's own explanation of a refusal (`stop_details`, its JSON text), written with the stop in end(). */
  private stopDetails: string | null = null;

  constructor(private readonly t: RelayTarget) {}

  private event(type: string, data: string): void {
    this.t.writeText(`event: ${type}\ndata: ${data}\n\n`);
    this.t.wrote(1);
  }

  /** `message_start`, once, before anything else. */
  private start(): void {
    if (this.started) return;
    this.started = true;
    const input = anthropicInput(usageOf(this.t)) ?? 0;
    this.event('message_start', `{"type":"message_start","message":{"id":${this.t.idJson},"type":"message","role":"assistant",`
      + `"model":${this.t.modelJson},"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":${input},"output_tokens":0}}}`);
  }

  /** Ends the open block, and begins one of `kind` with `content` (its `content_block`). */
  private begin(kind: Block, content: string): void {
    this.close();
    this.start();
    this.index++;
    this.block = kind;
    this.deltaHead = null;
    this.heads = null;
    this.event('content_block_start', `{"type":"content_block_start","index":${this.index},"content_block":${content}}`);
  }

  private close(): void {
    if (this.block === null) return;
    const c = this.call;
    // the end of a custom tool's input's JSON text, or all of it when none came (a block holds the whole text)
    if (c !== null && c.custom) this.jsonDelta(this.customOpen?.delete(c) === true ? '"}' : '{"input":""}');
    this.event('content_block_stop', `{"type":"content_block_stop","index":${this.index}}`);
    this.block = null;
    this.call = null;
    this.deltaHead = null;
    this.heads = null;
  }

  /** A `content_block_delta` of the open block: its head (the span and DELTA_END follow). */
  private delta(type: string, field: string): string {
    return `event: content_block_delta\ndata: {"type":"content_block_delta","index":${this.index},"delta":{"type":"${type}","${field}":"`;
  }

  private span(head: string, ptr: number, len: number): void {
    this.t.writeText(head);
    this.t.writeSpan(ptr, len);
    this.t.writeText(DELTA_END);
    this.t.wrote(1);
  }

  /** A delta of the open block whose string's body (escaped) is made here: its head, the body, its end. */
  private bodyDelta(head: string, body: string): void {
    this.t.writeText(head);
    this.t.writeText(body);
    this.t.writeText(DELTA_END);
    this.t.wrote(1);
  }

  /** The open block's channel only: its deltas' head (the arguments' when the block is the last call's). */
  quiet(last: Call | null): QuietHeads {
    if (this.unnamed !== null && this.unnamed.size !== 0) return HELD; // (what comes is written here, after the held calls' blocks)
    if (this.heads !== null && (this.block !== 'tool' || this.headsFor === last)) return this.heads;
    this.headsFor = last;
    const b = this.block;
    // (a custom tool's input is escaped again here, as the string in its JSON text: never by the core)
    const head = b === null || (b === 'tool' && (this.call !== last || last!.custom)) ? null : { head: this.openDelta(), end: DELTA_END };
    return (this.heads = {
      text: b === 'text' ? head : null, reasoning: b === 'thinking' ? head : null, args: b === 'tool' ? head : null,
    });
  }

  /** The head of the open block's deltas. */
  private openDelta(): string {
    return (this.deltaHead ??= this.block === 'text' ? this.delta('text_delta', 'text')
      : this.block === 'thinking' ? this.delta('thinking_delta', 'thinking') : this.delta('input_json_delta', 'partial_json'));
  }

  /**
   * A refusal's text, as Anthropic's clients read a refusal: the answer's text, then the stop reason
   * `refusal` (end()); or, when it is Anthropic's own explanation (`details`: its `stop_details`),
   * that object with the stop, where Anthropic's clients read it.
   */
  refusal(ptr: number, len: number, _flags: number, details?: string): void {
    if (details !== undefined) this.stopDetails = details;
    else this.text(ptr, len);
  }

  text(ptr: number, len: number): void {
    if (len === 0) return;
    this.releaseAll();
    if (this.block !== 'text') this.begin('text', '{"type":"text","text":""}');
    this.span(this.openDelta(), ptr, len);
  }

  keepAlive(): void {
    this.t.writeText(PING);
    this.t.wrote(1);
  }

  reasoning(ptr: number, len: number): void {
    if (len === 0) return;
    this.releaseAll();
    if (this.block !== 'thinking') this.begin('thinking', '{"type":"thinking","thinking":""}');
    this.span(this.openDelta(), ptr, len);
  }

  signature(ptr: number, len: number, _flags: number, redacted: boolean): void {
    this.releaseAll();
    if (redacted) {
      this.begin('thinking', `{"type":"redacted_thinking","data":"${this.t.text(ptr, len, false)}"}`);
      this.close();
      return;
    }
    if (this.block !== 'thinking') this.begin('thinking', '{"type":"thinking","thinking":""}');
    this.span(this.delta('signature_delta', 'signature'), ptr, len);
  }

  reasoningEnded(): void {
    if (this.block === 'thinking') this.close();
  }

  callBegan(call: Call): void {
    if (call.server) return;
    if (call.name === '') {
      (this.unnamed ??= new Map()).set(call, { parts: [], bytes: 0 });
      this.heads = null;
      return;
    }
    this.releaseAll();
    this.calls++;
    this.callBlock(call);
  }

  callNamed(call: Call): void {
    this.release(call);
  }

  /**
   * Every held call's block, in the order they began: before anything else is written (the
   * client's blocks are in the order of the stream's parts), unnamed.
   */
  private releaseAll(): void {
    const held = this.unnamed;
    if (held === null || held.size === 0) return;
    for (const call of [...held.keys()]) this.release(call);
  }

  /** A held call's block, now (named, or ended, or past HELD_ARGS, or something else comes), and the arguments held for it. */
  private release(call: Call): void {
    const held = this.unnamed?.get(call);
    if (held === undefined) return;
    // (the calls held before it first: they began before it)
    for (const earlier of this.unnamed!.keys()) {
      if (earlier === call) break;
      this.release(earlier);
    }
    this.unnamed!.delete(call);
    this.heads = null;
    this.calls++;
    this.callBlock(call);
    if (held.parts.length !== 0) {
      const head = this.openDelta();
      for (const body of held.parts) this.bodyDelta(head, body);
    }
  }

  /** Arguments of a held call, as a JSON string's body; false when the call is not held (any more). */
  private hold(call: Call, body: string): boolean {
    const held = this.unnamed?.get(call);
    if (held === undefined) return false;
    held.parts.push(body);
    held.bytes += body.length;
    if (held.bytes > HELD_ARGS) this.release(call);
    return true;
  }

  callArgs(call: Call, ptr: number, len: number, _flags: number, whole: boolean): void {
    if (call.server || len === 0) return;
    if (call.custom && !whole) {
      const body = this.t.text(ptr, len, false);
      if (this.unnamed !== null && this.unnamed.size !== 0) {
        if (this.unnamed.has(call)) {
          this.hold(call, this.customPiece(call, body));
          return;
        }
        this.releaseAll(); // (which may end this call's open block, and its input's text with it)
      }
      this.toolBlock(call);
      this.bodyDelta(this.openDelta(), this.customPiece(call, body));
      return;
    }
    if (this.unnamed !== null && this.unnamed.size !== 0) {
      if (this.hold(call, whole ? JSON.stringify(this.t.text(ptr, len, false)).slice(1, -1) : this.t.text(ptr, len, false))) return;
      this.releaseAll();
    }
    this.toolBlock(call);
    if (whole) {
      this.jsonDelta(this.t.text(ptr, len, false));
      return;
    }
    this.span(this.openDelta(), ptr, len);
  }

  callText(call: Call, text: string): void {
    if (call.server || text === '') return;
    if (this.unnamed !== null && this.unnamed.size !== 0) {
      if (this.hold(call, JSON.stringify(text).slice(1, -1))) return;
      this.releaseAll();
    }
    this.toolBlock(call);
    this.jsonDelta(text);
  }

  /** The block of `call` is the open one (a fragment of a call whose block has ended, calls that interleave: a block of its own again). */
  private toolBlock(call: Call): void {
    if (this.call !== call) this.callBlock(call, false);
  }

  /** Begins a `tool_use` block of `call`, named as far as its name came; `first`: the call's first block. */
  private callBlock(call: Call, first = true): void {
    if (first && call.signature !== '') {
      // Gemini's thoughtSignature of the call, which Gemini wants back with it: a thinking block of
      // its own right before the call, with no text, as Anthropic's clients send thinking blocks
      // back as they came (a gateway puts it back on the call)
      this.begin('thinking', '{"type":"thinking","thinking":""}');
      this.event('content_block_delta', `{"type":"content_block_delta","index":${this.index},"delta":{"type":"signature_delta","signature":${JSON.stringify(call.signature)}}}`);
    }
    this.begin('tool', `{"type":"tool_use","id":${callId(this.t, call, 'toolu_seam')},"name":${JSON.stringify(call.name)},"input":{}}`);
    this.call = call;
  }

  /** An input_json_delta of JSON text made here (as a JSON string). */
  private jsonDelta(text: string): void {
    this.event('content_block_delta', `{"type":"content_block_delta","index":${this.index},"delta":{"type":"input_json_delta","partial_json":${JSON.stringify(text)}}}`);
  }

  /**
   * A fragment of a custom tool's input (a JSON string's body, as it came) as a piece of the input's
   * JSON text `{"input":"…"}`, escaped as a partial_json string's body: the first with the text's head.
   */
  private customPiece(call: Call, body: string): string {
    const open = (this.customOpen ??= new Set());
    const first = !open.has(call);
    if (first) open.add(call);
    return JSON.stringify(first ? `{"input":"${body}` : body).slice(1, -1);
  }

  callEnded(call: Call): void {
    if (this.unnamed !== null) this.release(call); // (it never got its name: unnamed, as it came)
    if (this.call === call) this.close();
  }

  completed(): void {
    this.start();
    this.close();
  }

  /**
   * `message_delta` with the stop reason in Anthropic's words (`tool_use` when calls were written and
   * the answer was neither cut at a limit nor refused; never without calls) and the usage, then
   * `message_stop`.
   */
  end(): void {
    const why = this.t.message?.finishReason;
    let reason = finishWithCalls(why === undefined ? 'end_turn' : finishIn(this.t.spec, why, 'anthropic', this.t.message!.refused), 'anthropic', this.calls !== 0);
    // (a refusal that ended as a turn ends: Anthropic's stop for a refusal)
    if (reason === 'end_turn' && this.t.message?.refusing === true) reason = 'refusal';
    const u = usageOf(this.t);
    const usage = u !== undefined ? JSON.stringify(anthropicUsage(u)) : '{"output_tokens":0}';
    const details = this.stopDetails === null ? '' : `,"stop_details":${this.stopDetails}`;
    this.event('message_delta', `{"type":"message_delta","delta":{"stop_reason":${JSON.stringify(reason)},"stop_sequence":null${details}},"usage":${usage}}`);
    this.t.writeText(STOP);
    this.t.wrote(1);
  }

  error(e: ModelStreamError): void {
    // the provider's error type in Anthropic's words (its own, `overloaded_error`, …, or the format's for it)
    this.errorEvent(anthropicErrorType(this.t.spec, e.providerCode), errorParts(e).message);
  }

  aborted(reason: Aborted): void {
    this.errorEvent(ABORT_TYPES[reason.kind], reason.message);
  }

  /** Anthropic's error event: `event: error`, `{"type":"error","error":{"type","message"}}`. */
  private errorEvent(type: string, message: string): void {
    this.event('error', JSON.stringify({ type: 'error', error: { type, message } }));
  }
}

/** What the core may write itself while calls are held: nothing. */
const HELD: QuietHeads = { text: null, reasoning: null, args: null };

/** Bytes of arguments held for a call that has no name yet (its block's start names it); past them it begins unnamed. */
const HELD_ARGS = 64 * 1024;

/** A gateway's reasons to end a stream (SseRelay.abort) as Anthropic error types. */
const ABORT_TYPES: Readonly<Record<Aborted['kind'], string>> = { timeout: 'timeout_error', overloaded: 'overloaded_error', server: 'api_error' };
