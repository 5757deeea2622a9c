// What a relay's client reads: the SSE a relay wrote, parsed by eventsource-parser, and the message
// accumulated as the official clients accumulate it (OpenAI's chat.completion.chunk deltas, or
// Anthropic's content blocks), with every rule of each protocol checked on the way: a relay that
// writes a chunk a client would choke on fails here, not only in the SDK tests.
import { createParser } from 'eventsource-parser';

export interface ClientCall { id: string; name: string; arguments: string }

/** The message a client holds at the end of what it read (or so far). */
export interface ClientMessage {
  text: string;
  reasoning: string;
  calls: ClientCall[];
  finish: string | null;
  usage: Record<string, unknown> | null;
  /** The client's completion arrived: `[DONE]`, or Anthropic's message_stop. */
  done: boolean;
  /** The error event's body, if one came. */
  error: Record<string, unknown> | null;
  /** Events read (comments not counted), and comments (OpenAI) or pings (Anthropic). */
  events: number;
  keepAlives: number;
  /** Anthropic: signatures of thinking blocks and redacted blocks' data, in order. */
  signatures: string[];
  /** OpenAI: each call's `extra_content.google.thought_signature` ('' for none), by its index. */
  callSignatures: string[];
}

const empty = (): ClientMessage => ({
  text: '', reasoning: '', calls: [], finish: null, usage: null, done: false, error: null, events: 0, keepAlives: 0, signatures: [], callSignatures: [],
});

/** The SSE events and comments of the bytes (which must be valid UTF-8 and whole events). */
export function sse(bytes: Uint8Array): { events: { event: string | undefined; data: string }[]; comments: string[] } {
  const events: { event: string | undefined; data: string }[] = [];
  const comments: string[] = [];
  const p = createParser({ onEvent: (e) => events.push({ event: e.event, data: e.data }), onComment: (c) => comments.push(c) });
  p.feed(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  return { events, comments };
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function fail(why: string): never {
  throw new Error(`client: ${why}`);
}

/** An OpenAI Chat Completions client's reading (as openai-node's ChatCompletionStream accumulates). */
export function readOpenAi(bytes: Uint8Array, strict = true): ClientMessage {
  const m = empty();
  const { events, comments } = sse(bytes);
  m.keepAlives = comments.length;
  for (const ev of events) {
    m.events++;
    if (m.done) fail('an event after [DONE]');
    if (ev.event !== undefined && ev.event !== 'error') fail(`an event named ${ev.event}`);
    if (ev.data === '[DONE]') { m.done = true; continue; }
    const v = JSON.parse(ev.data) as unknown;
    if (!isObj(v)) fail('an event that is not an object');
    if (v.error !== undefined) { m.error = v.error as Obj; continue; }
    if (m.error) fail('an event after the error');
    if (strict) {
      if (v.object !== 'chat.completion.chunk') fail(`object ${String(v.object)}`);
      if (typeof v.id !== 'string' || typeof v.model !== 'string' || typeof v.created !== 'number') fail('a chunk without id, model or created');
    }
    if (isObj(v.usage)) {
      if (strict && m.usage !== null) fail('usage twice');
      m.usage = v.usage;
    }
    const choices = Array.isArray(v.choices) ? v.choices : fail('a chunk without choices');
    for (const [position, c] of choices.entries()) {
      if (!isObj(c)) fail('a choice that is not an object');
      if ((typeof c.index === 'number' ? c.index : position) !== 0) continue;
      const d = isObj(c.delta) ? c.delta : fail('a choice without delta');
      if (typeof d.content === 'string') m.text += d.content;
      // (OpenRouter's clients read its reasoning_details' text and summary items, the same text a
      // delta's `reasoning` says again beside them, where it sends both)
      const details = (Array.isArray(d.reasoning_details) ? d.reasoning_details : []).filter(isObj)
        .map((x) => (x.type === 'reasoning.text' ? x.text : x.type === 'reasoning.summary' ? x.summary : undefined)).filter((t) => typeof t === 'string');
      if (details.length !== 0) m.reasoning += details.join('');
      else {
        if (typeof d.reasoning_content === 'string') m.reasoning += d.reasoning_content;
        if (typeof d.reasoning === 'string') m.reasoning += d.reasoning;
      }
      if (Array.isArray(d.tool_calls)) {
        for (const tc of d.tool_calls) {
          if (!isObj(tc)) fail('a tool call that is not an object');
          if (typeof tc.index !== 'number') fail('a tool call without index');
          const fn = isObj(tc.function) ? tc.function : {};
          let call = m.calls[tc.index];
          if (call === undefined) {
            if (tc.index !== m.calls.length) fail(`tool call index ${tc.index} after ${m.calls.length} calls`);
            if (typeof tc.id !== 'string' || tc.type !== 'function' || typeof fn.name !== 'string') fail('a first tool call delta without id, type or name');
            call = m.calls[tc.index] = { id: tc.id, name: fn.name, arguments: '' };
            m.callSignatures[tc.index] = '';
          }
          const google = isObj(tc.extra_content) && isObj(tc.extra_content.google) ? tc.extra_content.google : {};
          if (typeof google.thought_signature === 'string') m.callSignatures[tc.index] = google.thought_signature;
          if (typeof fn.arguments === 'string') call.arguments += fn.arguments;
        }
      }
      if (c.finish_reason !== null && c.finish_reason !== undefined) m.finish = String(c.finish_reason);
    }
  }
  return m;
}

/** An Anthropic Messages client's reading (as @anthropic-ai/sdk's MessageStream accumulates). */
export function readAnthropic(bytes: Uint8Array): ClientMessage {
  const m = empty();
  const { events, comments } = sse(bytes);
  m.keepAlives = comments.length;
  let started = false;
  let stopped = false;
  const blocks: { type: string; open: boolean; input: string; call?: ClientCall }[] = [];
  for (const ev of events) {
    m.events++;
    const v = JSON.parse(ev.data) as unknown;
    if (!isObj(v) || typeof v.type !== 'string') fail('an event without a type');
    if (ev.event !== v.type) fail(`event ${String(ev.event)} holds a ${v.type}`);
    if (stopped) fail(`${v.type} after message_stop`);
    if (m.error) fail(`${v.type} after the error`);
    if (v.type === 'error') { m.error = v.error as Obj; continue; }
    if (v.type === 'ping') { m.keepAlives++; continue; }
    if (v.type === 'message_start') {
      if (started) fail('message_start twice');
      started = true;
      const msg = isObj(v.message) ? v.message : fail('message_start without message');
      if (msg.role !== 'assistant' || !Array.isArray(msg.content) || !isObj(msg.usage)) fail('a message_start without role, content or usage');
      m.usage = { ...msg.usage };
      continue;
    }
    if (!started) fail(`${v.type} before message_start`);
    if (v.type === 'content_block_start') {
      if (v.index !== blocks.length) fail(`block ${String(v.index)} after ${blocks.length} blocks`);
      if (blocks.some((b) => b.open)) fail('a block begun while another is open');
      const b = isObj(v.content_block) ? v.content_block : fail('a block without content_block');
      const block = { type: String(b.type), open: true, input: '', call: undefined as ClientCall | undefined };
      if (b.type === 'server_tool_use' || b.type === 'mcp_tool_use' || (typeof b.type === 'string' && b.type.endsWith('_tool_result'))) {
        // the provider's own tools, passed from an Anthropic upstream: not the client's calls
      } else if (b.type === 'tool_use') {
        if (typeof b.id !== 'string' || typeof b.name !== 'string' || !isObj(b.input)) fail('a tool_use block without id, name or input');
        block.call = { id: b.id, name: b.name, arguments: '' };
        m.calls.push(block.call);
      } else if (b.type === 'redacted_thinking') {
        m.signatures.push(String(b.data));
      } else if (b.type !== 'text' && b.type !== 'thinking') {
        fail(`a ${String(b.type)} block`);
      }
      blocks.push(block);
      continue;
    }
    if (v.type === 'content_block_delta' || v.type === 'content_block_stop') {
      const b = typeof v.index === 'number' ? blocks[v.index] : undefined;
      if (b === undefined || !b.open) fail(`${v.type} of block ${String(v.index)}, which is not open`);
      if (v.type === 'content_block_stop') { b.open = false; continue; }
      const d = isObj(v.delta) ? v.delta : fail('a delta without delta');
      const want = { text_delta: 'text', thinking_delta: 'thinking', signature_delta: 'thinking', input_json_delta: 'tool_use' }[String(d.type)];
      if (want !== b.type && !(d.type === 'input_json_delta' && b.call === undefined && b.type !== 'text' && b.type !== 'thinking')) fail(`a ${String(d.type)} in a ${b.type} block`);
      if (d.type === 'text_delta') m.text += String(d.text);
      else if (d.type === 'thinking_delta') m.reasoning += String(d.thinking);
      else if (d.type === 'signature_delta') m.signatures.push(String(d.signature));
      else if (b.call !== undefined) b.call.arguments += String(d.partial_json);
      continue;
    }
    if (v.type === 'message_delta') {
      if (blocks.some((b) => b.open)) fail('message_delta while a block is open');
      const d = isObj(v.delta) ? v.delta : fail('message_delta without delta');
      m.finish = d.stop_reason === null ? null : String(d.stop_reason);
      if (isObj(v.usage)) m.usage = { ...m.usage, ...v.usage };
      continue;
    }
    if (v.type === 'message_stop') { stopped = true; m.done = true; continue; }
    fail(`an event of type ${v.type}`);
  }
  return m;
}
