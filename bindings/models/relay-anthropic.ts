// Layer 4: a relay's client in Anthropic Messages: `message_start`, then one content block per
// text, thinking and client `tool_use` part (begun by `content_block_start`, ended by
// `content_block_stop`), text as `text_delta`, reasoning as `thinking_delta` (and its signature
// as `signature_delta`), arguments as `input_json_delta` fragments copied as the escaped bytes
// they came as; then `message_delta` with the stop reason in Anthropic's words and the usage, and
// `message_stop`. An error is `event: error` in Anthropic's shape, never a `message_stop`;
// keep-alives are `ping`s.
import type { ModelStreamError } from './errors.js';
import { finishIn } from './formats/describe.js';
import type { Call } from './message.js';
import { type ClientWriter, type QuietText, type RelayTarget, callId, errorParts, member, usageOf, utf8 } from './writer.js';

const DELTA_END = /* @__PURE__ */ utf8('"}}\n\n');
const PING = /* @__PURE__ */ utf8('event: ping\ndata: {"type":"ping"}\n\n');
const STOP = /* @__PURE__ */ utf8('event: message_stop\ndata: {"type":"message_stop"}\n\n');

let versions = 0;

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
  private quietText: QuietText | null = null;
  private calls = 0;

  constructor(private readonly t: RelayTarget) {}

  private event(type: string, data: string): void {
    this.t.write(utf8(`event: ${type}\ndata: ${data}\n\n`));
    this.t.wrote(1);
  }

  /** `message_start`, once, before anything else. */
  private start(): void {
    if (this.started) return;
    this.started = true;
    const u = usageOf(this.t);
    const input = u?.input === undefined ? 0 : u.input - (u.cacheRead ?? 0) - (u.cacheWrite ?? 0);
    this.event('message_start', `{"type":"message_start","message":{"id":${this.t.idJson},"type":"message","role":"assistant",`
      + `"model":${this.t.modelJson},"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":${input},"output_tokens":0}}}`);
  }

  /** Ends the open block, and begins one of `kind` with `content` (its `content_block`). */
  private begin(kind: Block, content: string): void {
    this.close();
    this.start();
    this.index++;
    this.block = kind;
    this.event('content_block_start', `{"type":"content_block_start","index":${this.index},"content_block":${content}}`);
  }

  private close(): void {
    if (this.block === null) return;
    this.event('content_block_stop', `{"type":"content_block_stop","index":${this.index}}`);
    this.block = null;
    this.call = null;
    this.quietText = null;
  }

  /** A `content_block_delta` of the open block: its head (the span and DELTA_END follow). */
  private delta(type: string, field: string): Uint8Array {
    return utf8(`event: content_block_delta\ndata: {"type":"content_block_delta","index":${this.index},"delta":{"type":"${type}","${field}":"`);
  }

  private span(head: Uint8Array, ptr: number, len: number): void {
    this.t.write(head);
    this.t.writeSpan(ptr, len);
    this.t.write(DELTA_END);
    this.t.wrote(1);
  }

  quiet(): QuietText | null {
    if (this.block !== 'text') return null;
    return (this.quietText ??= { version: ++versions, head: this.delta('text_delta', 'text'), end: DELTA_END });
  }

  text(ptr: number, len: number): void {
    if (len === 0) return;
    if (this.block !== 'text') this.begin('text', '{"type":"text","text":""}');
    this.span(this.quiet()!.head, ptr, len);
  }

  keepAlive(): void {
    this.t.write(PING);
    this.t.wrote(1);
  }

  reasoning(ptr: number, len: number): void {
    if (len === 0) return;
    if (this.block !== 'thinking') this.begin('thinking', '{"type":"thinking","thinking":""}');
    this.span(this.delta('thinking_delta', 'thinking'), ptr, len);
  }

  signature(ptr: number, len: number, _flags: number, redacted: boolean): void {
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
    this.calls++;
    this.begin('tool', `{"type":"tool_use","id":${callId(this.t, call, 'toolu_seam')},"name":${JSON.stringify(call.name)},"input":{}}`);
    this.call = call;
  }

  callArgs(call: Call, ptr: number, len: number, _flags: number, whole: boolean): void {
    if (call.server || len === 0) return;
    if (this.call !== call) {
      // a fragment of a call whose block has ended (calls that interleave): a block of its own again
      this.begin('tool', `{"type":"tool_use","id":${callId(this.t, call, 'toolu_seam')},"name":${JSON.stringify(call.name)},"input":{}}`);
      this.call = call;
    }
    if (whole) {
      const s = JSON.stringify(this.t.text(ptr, len, false));
      this.event('content_block_delta', `{"type":"content_block_delta","index":${this.index},"delta":{"type":"input_json_delta","partial_json":${s}}}`);
      return;
    }
    this.span(this.delta('input_json_delta', 'partial_json'), ptr, len);
  }

  callEnded(call: Call): void {
    if (this.call === call) this.close();
  }

  completed(): void {
    this.start();
    this.close();
  }

  /** `message_delta` with the stop reason in Anthropic's words (`tool_use` exactly when calls were written) and the usage, then `message_stop`. */
  end(): void {
    const why = this.t.message?.finishReason;
    let reason = why === undefined ? 'end_turn' : finishIn(this.t.spec, why, 'anthropic');
    if (this.calls !== 0) reason = 'tool_use';
    else if (reason === 'tool_use') reason = 'end_turn';
    const u = usageOf(this.t);
    let usage = '';
    if (u !== undefined) {
      const input = u.input === undefined ? undefined : u.input - (u.cacheRead ?? 0) - (u.cacheWrite ?? 0);
      usage = `{"output_tokens":${u.output ?? 0}${member('input_tokens', input)}${member('cache_read_input_tokens', u.cacheRead)}`
        + `${member('cache_creation_input_tokens', u.cacheWrite)}}`;
    } else {
      usage = '{"output_tokens":0}';
    }
    this.event('message_delta', `{"type":"message_delta","delta":{"stop_reason":${JSON.stringify(reason)},"stop_sequence":null},"usage":${usage}}`);
    this.t.write(STOP);
    this.t.wrote(1);
  }

  error(e: ModelStreamError): void {
    const { message } = errorParts(e);
    // the provider's own error type when it is one of Anthropic's words (`overloaded_error`, …)
    const type = e.providerCode !== undefined && /^[a-z_]+_error$/.test(e.providerCode) ? e.providerCode : 'api_error';
    this.event('error', JSON.stringify({ type: 'error', error: { type, message } }));
  }
}
