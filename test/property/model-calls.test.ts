// A differential fuzz of agents' streams: generated OpenAI, Anthropic, Responses, Ollama and Gemini streams,
// and Bedrock's (ConverseStream, and Claude on Bedrock: the Anthropic streams in InvokeModelWithResponseStream's
// base64 chunks) in AWS's binary event stream, encoded by AWS's codec, of text, reasoning (with its
// signatures and redacted blocks) and tool calls whose arguments come in fragments (cut anywhere in the JSON
// text, a surrogate pair split between two fragments, escapes spelled at random), calls in
// parallel, empty fragments, a fragment of a call that never began, and events just across the
// line of what the core reads to the end itself (a fragment with the call's id again, two calls
// in one delta, a reasoning string beside text, a kind spelled with an escape). ModelStream (raw
// and committed, new or reset after another stream; an event stream also message by message, as
// ModelEventStreamDecoder and ModelEventReader read it) and SseRelay to both client formats must give
// exactly what the JSON.parse reading gives (test/helpers/model-fixtures.ts: the fragments joined
// per call, each call's validity by JSON.parse; for Bedrock each message decoded by AWS's codec and
// its payload read by JSON.parse), whole, cut at random and dripped (an event stream also a few
// whole messages a read), with the error the stream ends with: the provider's error event, or
// exception or error message, a stop reason that says the turn failed, a message damaged in
// transit; a stream cut anywhere (inside a message too) is truncated. Bedrock's messages come with
// headers in any order, headers no reader acts on of every type, AWS's padding of any length or
// the same in every event, events of types no model has, now and then a delta past the core's
// input window. A budget of argument bytes (maxArgumentBytes) fails the stream at the fragment
// that would pass it, at its offset (an event stream's: its message's), however the stream is cut.
// Seeded; the seed and the stream (an event stream's messages, decoded) are printed on failure.
import { Int64, type MessageHeaderValue } from '@smithy/eventstream-codec';
import { describe, expect, test } from 'vitest';
import {
  EventStreamError, ModelEventReader, ModelEventStreamDecoder, type ModelEventStreamMessage, ModelStream, describeFormat,
} from '../../bindings/index.js';
import { CallBook, type Fixture, type ModelFormat, codec, isEventStream, reference, scanSseBody } from '../helpers/model-fixtures.js';
import { type Rnd, chance, jsonString, pick } from '../helpers/model-streams.js';
import { SEED, concat, cut, randomCuts, rng } from '../helpers/random.js';
import { messagesOf, textOutcome, thrown } from '../helpers/thrown.js';
import { Oracle, settle } from '../helpers/relay-oracle.js';

const enc = new TextEncoder();

const WORDS = ['read', 'the', 'file', 'café', 'naïve', '世界', '👩‍💻', '🇯🇵', '😀', 'a"b', 'back\\slash', 'tab\t', 'line\n', '\u0000', 'x', ''];
const word = (r: Rnd) => pick(r, WORDS);
/** A JSON string literal of `s`, escapes spelled at random. */
const lit = (r: Rnd, s: string) => jsonString(r, s, 0.1);
const say = (r: Rnd) => lit(r, Array.from({ length: 1 + Math.floor(r() * 3) }, () => word(r)).join(' '));
/** Now and then a long piece (past the core's 64 KiB input window), else a few words. */
const long = (r: Rnd) => (chance(r, 0.008) ? lit(r, `${'long answer 東京 🚀 '.repeat(2800 + Math.floor(r() * 400))}${word(r)}`) : say(r));

/** A few words cut anywhere (a pair of surrogates, a letter and its accent, a ZWJ sequence between two pieces), as JSON string literals. */
function pieces(r: Rnd): string[] {
  const text = Array.from({ length: 2 + Math.floor(r() * 6) }, () => pick(r, [...WORDS, 'e\u0301', '🇯🇵🇫🇷', 'ᄀ\u1161\u11a8'])).join(' ');
  const out: string[] = [];
  for (let i = 0; i < text.length;) {
    const k = 1 + Math.floor(r() * 6);
    out.push(lit(r, text.slice(i, i + k)));
    i += k;
  }
  return out;
}

/** A call's arguments (sometimes not JSON, as a model may write), and the fragments they come in. */
function argumentsOf(r: Rnd): string[] {
  const o: Record<string, unknown> = { path: `src/${word(r)}.ts` };
  for (let i = 0, n = Math.floor(r() * 4); i < n; i++) o[`k${i}`] = chance(r, 0.5) ? Array.from({ length: 1 + Math.floor(r() * 6) }, () => word(r)).join(' ') : Math.floor(r() * 1000);
  let text = chance(r, 0.1) ? '' : JSON.stringify(o);
  if (chance(r, 0.08)) text = text.slice(0, Math.floor(r() * text.length)); // invalid: cut short
  const out: string[] = [];
  if (chance(r, 0.3)) out.push('');
  for (let i = 0; i < text.length;) {
    const k = 1 + Math.floor(r() * 12); // (UTF-16 units: a pair may be split between two fragments)
    out.push(text.slice(i, i + k));
    i += k;
    if (chance(r, 0.05)) out.push('');
  }
  return out;
}

const sse = (data: string, type?: string) => `${type !== undefined ? `event: ${type}\n` : ''}data: ${data}\n\n`;

function openaiStream(r: Rnd, strays: boolean): string {
  const env = (delta: string, finish = 'null') => sse(`{"id":"chatcmpl-f","object":"chat.completion.chunk","created":1764600000,"model":"m","choices":[{"index":0,"delta":${delta},"logprobs":null,"finish_reason":${finish}}]}`);
  let s = chance(r, 0.8) ? env('{"role":"assistant","content":""}') : '';
  for (let i = 0, n = Math.floor(r() * 4); i < n; i++) s += env(`{"reasoning_content":${say(r)}}`);
  if (chance(r, 0.1)) s += env(`{"content":${say(r)},"reasoning_content":""}`); // (reasoning beside text: read in JS)
  for (let i = 0, n = Math.floor(r() * 4); i < n; i++) s += env(`{"content":${say(r)}}`);
  const calls = Array.from({ length: Math.floor(r() * 4) }, (_, i) => ({ i, frags: argumentsOf(r), begun: false }));
  const parallel = chance(r, 0.4);
  while (calls.some((c) => c.frags.length !== 0 || !c.begun)) {
    const open = calls.filter((c) => c.frags.length !== 0 || !c.begun);
    let c = parallel ? pick(r, open) : open[0];
    if (!c.begun) c = open.find((x) => !x.begun)!; // (calls begin in the order of their index)
    if (!c.begun) {
      c.begun = true;
      const first = chance(r, 0.5) ? c.frags.shift() ?? '' : '';
      s += env(`{"tool_calls":[{"index":${c.i},"id":"call_${c.i}","type":"function","function":{"name":"f${c.i}","arguments":${lit(r, first)}}}]}`);
      continue;
    }
    const f = c.frags.shift()!;
    const x = r();
    if (x < 0.04) s += env(`{"tool_calls":[{"index":${c.i},"id":"call_${c.i}","function":{"arguments":${lit(r, f)}}}]}`); // its id again
    else if (x < 0.07) s += env(`{"tool_calls":[{"index":${c.i},"function":{"arguments":${lit(r, f)}}},{"index":${c.i},"function":{"arguments":""}}]}`); // two in one
    else if (x < 0.1) s += env(`{"tool_calls":[{"index":${c.i},"type":"function","function":{"arguments":${lit(r, f)}}}]}`);
    else if (x < 0.12) s += env(`{"content":null,"tool_calls":[{"function":{"arguments":${lit(r, f)}},"index":${c.i}}]}`);
    else s += env(`{"tool_calls":[{"index":${c.i},"function":{"arguments":${lit(r, f)}}}]}`);
  }
  if (strays && chance(r, 0.05)) s += env('{"tool_calls":[{"index":7,"function":{"arguments":"{}"}}]}'); // a call that never began
  if (chance(r, 0.1)) return s; // cut short
  s += env('{}', calls.length !== 0 ? '"tool_calls"' : '"stop"');
  if (chance(r, 0.5)) s += sse('{"id":"chatcmpl-f","object":"chat.completion.chunk","created":1764600000,"model":"m","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":5,"total_tokens":14}}');
  return s + sse('[DONE]');
}

function anthropicStream(r: Rnd, strays: boolean): string {
  const ev = (type: string, body: string) => sse(`{"type":"${type}",${body}}`, type);
  let s = ev('message_start', '"message":{"id":"msg_f","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"usage":{"input_tokens":9,"output_tokens":1}}');
  let index = 0;
  const delta = (i: number, d: string) => ev('content_block_delta', `"index":${i},"delta":${d}`);
  if (chance(r, 0.6)) {
    s += ev('content_block_start', `"index":${index},"content_block":{"type":"thinking","thinking":"","signature":""}`);
    for (let i = 0, n = Math.floor(r() * 5); i < n; i++) s += delta(index, `{"type":"thinking_delta","thinking":${say(r)}}`);
    if (chance(r, 0.1)) s += delta(index, '{"type":"thinking_delta","thinking":""}');
    if (chance(r, 0.1)) s += delta(index, `{"type":"thinking_del\\u0074a","thinking":${say(r)}}`);
    s += delta(index, '{"type":"signature_delta","signature":"EqQBCgIYAh"}');
    s += ev('content_block_stop', `"index":${index++}`);
  }
  if (chance(r, 0.15)) {
    s += ev('content_block_start', `"index":${index},"content_block":{"type":"redacted_thinking","data":"${redacted(r)}"}`);
    s += ev('content_block_stop', `"index":${index++}`);
  }
  if (chance(r, 0.8)) {
    s += ev('content_block_start', `"index":${index},"content_block":{"type":"text","text":""}`);
    for (let i = 0, n = Math.floor(r() * 5); i < n; i++) s += delta(index, `{"type":"text_delta","text":${long(r)}}`);
    s += ev('content_block_stop', `"index":${index++}`);
  }
  let client = 0;
  for (let c = 0, n = Math.floor(r() * 4); c < n; c++) {
    const server = chance(r, 0.15);
    const b = index++;
    s += ev('content_block_start', `"index":${b},"content_block":{"type":"${server ? 'server_tool_use' : 'tool_use'}","id":"toolu_${b}","name":"t${b}","input":{}}`);
    if (!server) client++;
    const frags = argumentsOf(r);
    for (const f of frags) {
      const x = r();
      if (x < 0.04) s += delta(b, `{"type":"input_json_delta","partial_json":${lit(r, f)},"text":""}`); // beside an empty text
      else if (x < 0.07 && strays) s += delta(b + 100, `{"type":"input_json_delta","partial_json":${lit(r, f)}}`); // a block that never begins
      else s += delta(b, `{"type":"input_json_delta","partial_json":${lit(r, f)}}`);
    }
    if (chance(r, 0.1)) return s; // cut inside a call
    s += ev('content_block_stop', `"index":${b}`);
    if (strays && chance(r, 0.05)) s += delta(b, `{"type":"input_json_delta","partial_json":${lit(r, '1')}}`); // after its stop
  }
  if (chance(r, 0.03)) return s + ev('error', '"error":{"type":"overloaded_error","message":"Overloaded"}');
  s += ev('message_delta', `"delta":{"stop_reason":"${client !== 0 ? 'tool_use' : chance(r, 0.15) ? 'max_tokens' : 'end_turn'}","stop_sequence":null},"usage":{"output_tokens":5}`);
  return s + ev('message_stop', '"x":0');
}

function responsesStream(r: Rnd): string {
  const ev = (type: string, body: string) => sse(`{"type":"${type}",${body}}`, type);
  let s = ev('response.created', '"response":{"id":"resp_f","status":"in_progress"}');
  let out = 0;
  let seq = 0;
  if (chance(r, 0.5)) {
    const o = out++;
    s += ev('response.output_item.added', `"output_index":${o},"item":{"type":"reasoning","id":"rs_${o}"}`);
    for (let i = 0, n = Math.floor(r() * 4); i < n; i++) s += ev(pick(r, ['response.reasoning_summary_text.delta', 'response.reasoning_text.delta']), `"item_id":"rs_${o}","output_index":${o},"summary_index":0,"sequence_number":${seq++},"delta":${say(r)}`);
    s += ev('response.output_item.done', `"output_index":${o},"item":{"type":"reasoning","id":"rs_${o}"}`);
  }
  if (chance(r, 0.8)) {
    const o = out++;
    s += ev('response.output_item.added', `"output_index":${o},"item":{"type":"message","id":"msg_${o}"}`);
    for (let i = 0, n = Math.floor(r() * 5); i < n; i++) s += ev('response.output_text.delta', `"item_id":"msg_${o}","output_index":${o},"content_index":0,"sequence_number":${seq++},"delta":${say(r)},"logprobs":[]`);
    s += ev('response.output_item.done', `"output_index":${o},"item":{"type":"message","id":"msg_${o}"}`);
  }
  // the items of the tools the API defines: the client's to run (a shell call in the local
  // environment, or none named; a tool search the client runs) or the provider's, and a hosted tool's
  for (let c = 0, n = Math.floor(r() * 3); c < n; c++) {
    const o = out++;
    const item = builtinItem(r, o);
    s += ev('response.output_item.added', `"output_index":${o},"item":${JSON.stringify({ ...item.begin, status: 'in_progress' })}`);
    for (const [i, command] of item.commands.entries()) {
      s += ev('response.shell_call_command.added', `"output_index":${o},"command_index":${i},"command":""`);
      s += ev('response.shell_call_command.delta', `"output_index":${o},"command_index":${i},"delta":${JSON.stringify(command)}`);
    }
    if (chance(r, 0.05)) return s; // (cut before the item's end)
    s += ev('response.output_item.done', `"output_index":${o},"item":${JSON.stringify({ ...item.end, status: 'completed' })}`);
  }
  for (let c = 0, n = Math.floor(r() * 3); c < n; c++) {
    const o = out++;
    const frags = argumentsOf(r);
    s += ev('response.output_item.added', `"output_index":${o},"item":{"type":"function_call","id":"fc_${o}","call_id":"call_${o}","name":"f${o}","arguments":""}`);
    for (const f of frags) s += ev('response.function_call_arguments.delta', `"item_id":"fc_${o}","output_index":${o},"sequence_number":${seq++},"delta":${lit(r, f)}`);
    if (chance(r, 0.1)) return s;
    const whole = JSON.stringify(frags.join(''));
    s += ev('response.function_call_arguments.done', `"item_id":"fc_${o}","output_index":${o},"arguments":${whole}`);
    s += ev('response.output_item.done', `"output_index":${o},"item":{"type":"function_call","id":"fc_${o}","call_id":"call_${o}","name":"f${o}","arguments":${whole}}`);
  }
  return s + ev('response.completed', '"response":{"id":"resp_f","status":"completed","usage":{"input_tokens":9,"output_tokens":5}}');
}

/** An item of a tool the API defines (or a hosted tool's), as it begins and as it ends, and a shell call's commands as they stream. */
function builtinItem(r: Rnd, o: number): { begin: Record<string, unknown>; end: Record<string, unknown>; commands: string[] } {
  const text = () => Array.from({ length: 1 + Math.floor(r() * 3) }, () => word(r)).join(' ');
  const type = pick(r, ['computer_call', 'local_shell_call', 'shell_call', 'apply_patch_call', 'tool_search_call', 'mcp_approval_request', 'web_search_call']);
  const id = { id: `it_${o}`, type, ...(type === 'mcp_approval_request' || type === 'web_search_call' ? {} : { call_id: `call_b${o}` }) };
  if (type === 'shell_call') {
    const commands = Array.from({ length: 1 + Math.floor(r() * 2) }, text);
    const env = pick(r, [undefined, null, { type: 'local' }, { type: 'container_reference', container_id: 'cntr_1' }]);
    const envs = env === undefined ? {} : { environment: env };
    // (the start may say less of who runs it than the end)
    return { begin: { ...id, action: { commands: [], timeout_ms: null }, ...(chance(r, 0.5) ? envs : {}) }, end: { ...id, action: { commands, timeout_ms: 1000 }, ...envs, created_by: 'resp_f' }, commands };
  }
  const payload: Record<string, unknown> =
    type === 'computer_call' ? { action: { type: 'type', text: text() }, pending_safety_checks: [] }
    : type === 'local_shell_call' ? { action: { type: 'exec', command: ['echo', text()], env: {} } }
    : type === 'apply_patch_call' ? { operation: { type: 'create_file', path: `src/${word(r)}.ts`, diff: `+${text()}\n` } }
    : type === 'tool_search_call' ? { execution: pick(r, ['client', 'server']), arguments: { query: text() } }
    : type === 'mcp_approval_request' ? { server_label: 'docs', name: `ask_${o}`, arguments: JSON.stringify({ q: text() }) }
    : { action: { type: 'search', query: text() } };
  return { begin: { ...id, ...(type === 'tool_search_call' ? { execution: payload.execution } : {}) }, end: { ...id, ...payload }, commands: [] };
}

function ollamaStream(r: Rnd): string {
  const line = (m: string, done = false) => `{"model":"m","created_at":"2026-01-01T00:00:00Z","message":${m},"done":${done}}\n`;
  let s = '';
  for (let i = 0, n = Math.floor(r() * 4); i < n; i++) s += line(`{"role":"assistant","content":"","thinking":${say(r)}}`);
  for (let i = 0, n = Math.floor(r() * 4); i < n; i++) s += line(`{"role":"assistant","content":${say(r)}${chance(r, 0.2) ? ',"thinking":""' : ''}}`);
  if (chance(r, 0.5)) s += line(`{"role":"assistant","content":"","tool_calls":[{"function":{"name":"f","arguments":{"path":${lit(r, word(r))}}}}]}`);
  if (chance(r, 0.1)) return s;
  return s + '{"model":"m","created_at":"2026-01-01T00:00:00Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","eval_count":5}\n';
}

/** Gemini: thought parts, text parts (several to a chunk at times), whole functionCalls (no args, nested args, an id), a signature; CR LF. */
function geminiStream(r: Rnd): string {
  const chunk = (parts: string[], extra = '') => `data: {"candidates":[{"content":{"parts":[${parts.join(',')}],"role":"model"}${extra}${chance(r, 0.5) ? ',"index":0' : ''}}],"usageMetadata":{"promptTokenCount":4,"totalTokenCount":${4 + Math.floor(r() * 50)}}}\r\n\r\n`;
  const part = (): string => {
    const x = r();
    if (x < 0.2) return `{"text":${say(r)},"thought":true}`;
    if (x < 0.3) return `{"text":${say(r)},"thoughtSignature":${lit(r, `sig${Math.floor(r() * 99)}`)}}`;
    if (x < 0.5) {
      const args = chance(r, 0.15) ? '' : `,"args":{"path":${lit(r, word(r))},"n":[${Math.floor(r() * 9)},{"deep":${say(r)}}]}`;
      return `{"functionCall":{${chance(r, 0.3) ? `"id":"fc-${Math.floor(r() * 999)}",` : ''}"name":"f${Math.floor(r() * 3)}"${args}}${chance(r, 0.3) ? `,"thoughtSignature":${lit(r, 'sg')}` : ''}}`;
    }
    return `{"text":${say(r)}}`;
  };
  let s = '';
  for (let i = 0, n = Math.floor(r() * 7); i < n; i++) s += chunk(Array.from({ length: chance(r, 0.2) ? 2 + Math.floor(r() * 2) : 1 }, part));
  if (chance(r, 0.1)) return s;
  const last = chance(r, 0.5) ? [part()] : [];
  return s + chunk(last, `,"finishReason":${pick(r, ['"STOP"', '"MAX_TOKENS"', '"SAFETY"'])}`);
}

/** A redacted thinking block's data: base64 of something. */
const redacted = (r: Rnd) => Buffer.from(`redacted ${Math.floor(r() * 1e6)}`).toString('base64');

const PAD = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** A message of AWS's event stream: an event (its type and payload), an exception (its type and payload), an error (its code and message, in headers). */
type Message = { event: string; payload: string } | { exception: string; payload: string } | { error: string; message: string };

/**
 * How a stream's messages are written: `stable`, each payload's members in one order and AWS's
 * padding `p` of one length (an event that repeats the one before it but for its text), or both at
 * random; headers in AWS's order or shuffled, with headers no reader acts on, of every type.
 */
interface Style { stable: boolean; pad: string; shuffle: boolean; extras: number }
const style = (r: Rnd): Style => ({ stable: chance(r, 0.4), pad: PAD.slice(0, Math.floor(r() * PAD.length)), shuffle: chance(r, 0.3), extras: pick(r, [0, 0, 0.1, 0.5]) });

/** A payload: its members (and `p`, most times) in a random order, or in the stream's one order. */
function payload(r: Rnd, st: Style, members: string[]): string {
  if (st.stable) return `{${[...members, `"p":"${st.pad}"`].join(',')}}`;
  const m = [...members];
  if (chance(r, 0.9)) m.push(`"p":"${PAD.slice(0, Math.floor(r() * PAD.length))}"`);
  return `{${shuffled(r, m).join(',')}}`;
}

function shuffled<T>(r: Rnd, xs: T[]): T[] {
  const m = [...xs];
  for (let i = m.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [m[i], m[j]] = [m[j], m[i]];
  }
  return m;
}

/** A header no reader acts on, of one of the ten types. */
function extraHeader(r: Rnd): [string, MessageHeaderValue] {
  const n = Math.floor(r() * 1000);
  return pick(r, [
    () => ['x-amzn-requestid', { type: 'string', value: `req-${n}` }],
    () => [':date', { type: 'timestamp', value: new Date(1764600000000 + n) }],
    () => ['x-flag', { type: 'boolean', value: chance(r, 0.5) }],
    () => ['x-byte', { type: 'byte', value: (n % 256) - 128 }],
    () => ['x-short', { type: 'short', value: n - 500 }],
    () => ['x-int', { type: 'integer', value: n * 99991 }],
    () => ['x-long', { type: 'long', value: Int64.fromNumber(n * 1e6) }],
    () => ['x-bin', { type: 'binary', value: Uint8Array.from({ length: n % 9 }, (_, i) => i * 37) }],
    () => ['x-uuid', { type: 'uuid', value: '123e4567-e89b-12d3-a456-426614174000' }],
  ] as (() => [string, MessageHeaderValue])[])();
}

/** A message encoded by AWS's codec. */
function encode(r: Rnd, st: Style, m: Message): Uint8Array {
  const str = (value: string): MessageHeaderValue => ({ type: 'string', value });
  let h: [string, MessageHeaderValue][] = 'event' in m ? [[':event-type', str(m.event)], [':content-type', str('application/json')], [':message-type', str('event')]]
    : 'exception' in m ? [[':exception-type', str(m.exception)], [':content-type', str('application/json')], [':message-type', str('exception')]]
    : [[':error-code', str(m.error)], [':error-message', str(m.message)], [':message-type', str('error')]];
  while (chance(r, st.extras)) {
    const x = extraHeader(r);
    if (!h.some(([name]) => name === x[0])) h.push(x);
  }
  if (st.shuffle) h = shuffled(r, h);
  return codec.encode({ headers: Object.fromEntries(h), body: enc.encode('error' in m ? '' : m.payload) });
}

/**
 * The messages encoded; sometimes a bit of one changed in transit (past its prelude, so that its
 * length holds and its CRC does not), sometimes the connection drops inside one (or between two).
 */
function eventStream(r: Rnd, st: Style, msgs: Message[]): Uint8Array {
  const parts = msgs.map((m) => encode(r, st, m));
  if (chance(r, 0.03)) {
    const k = Math.floor(r() * parts.length);
    const p = (parts[k] = parts[k].slice());
    p[12 + Math.floor(r() * (p.length - 12))] ^= 1 << Math.floor(r() * 8);
  }
  const bytes = concat(parts);
  return chance(r, 0.08) ? bytes.subarray(0, Math.floor(r() * bytes.length)) : bytes;
}

/** The provider's error: an exception message (its message in its payload), or an error message (in its headers). */
function failure(r: Rnd): Message {
  const message = `${pick(r, ['Too many requests', 'Model stream error', 'Service unavailable'])}: ${word(r)}`;
  if (chance(r, 0.3)) return { error: pick(r, ['ThrottlingException', 'InternalFailure']), message };
  return { exception: pick(r, ['throttlingException', 'modelStreamErrorException', 'internalServerException', 'serviceUnavailableException']), payload: JSON.stringify({ message }) };
}

/**
 * Bedrock's ConverseStream: messageStart; reasoning deltas with their signature, a redacted block;
 * text; toolUse blocks (a start with toolUseId and name, input in fragments or none at all, the
 * stop; some of a tool Bedrock runs itself); messageStop with its stopReason (the model's own, or one
 * that says the turn failed), then metadata with the usage; the provider's error before the stop or
 * after it (passed over); an event of a type no model stream has.
 */
function bedrockStream(r: Rnd, strays: boolean): Uint8Array {
  const st = style(r);
  const msgs: Message[] = [];
  const ev = (event: string, ...members: string[]) => msgs.push({ event, payload: payload(r, st, members) });
  const delta = (i: number, d: string) => ev('contentBlockDelta', `"contentBlockIndex":${i}`, `"delta":${d}`);
  const stop = (i: number) => ev('contentBlockStop', `"contentBlockIndex":${i}`);
  ev('messageStart', '"role":"assistant"');
  let index = 0;
  if (chance(r, 0.5)) {
    for (let i = 0, n = Math.floor(r() * 5); i < n; i++) delta(index, `{"reasoningContent":{"text":${say(r)}}}`);
    if (chance(r, 0.8)) delta(index, `{"reasoningContent":{"signature":${lit(r, `EqQBCgIYAh${Math.floor(r() * 99)}`)}}}`);
    stop(index++);
  }
  if (chance(r, 0.15)) {
    delta(index, `{"reasoningContent":{"redactedContent":"${redacted(r)}"}}`);
    stop(index++);
  }
  if (chance(r, 0.03)) ev('futureEvent', '"x":{"y":[1,2]}');
  if (chance(r, 0.8)) {
    const texts = chance(r, 0.3) ? pieces(r) : Array.from({ length: Math.floor(r() * 6) }, () => long(r));
    for (const t of texts) delta(index, `{"text":${t}}`);
    stop(index++);
  }
  let client = 0;
  let inside = false;
  for (let c = 0, n = Math.floor(r() * 4); c < n; c++) {
    const b = index++;
    const server = chance(r, 0.1);
    ev('contentBlockStart', `"contentBlockIndex":${b}`, `"start":{"toolUse":{"toolUseId":"tooluse_${b}","name":"t${b}"${server ? ',"type":"server_tool_use"' : ''}}}`);
    if (!server) client++;
    const frags = chance(r, 0.25) ? [] : argumentsOf(r); // (a tool with no arguments: no fragment at all)
    for (const f of frags) delta(strays && chance(r, 0.03) ? b + 100 : b, `{"toolUse":{"input":${lit(r, f)}}}`); // (or of a block that never began)
    if (chance(r, 0.08)) { inside = true; break; } // (the model stopped inside the call)
    stop(b);
    if (strays && chance(r, 0.05)) delta(b, `{"toolUse":{"input":${lit(r, '1')}}}`); // after its stop
  }
  if (chance(r, 0.05)) msgs.push(failure(r));
  else if (chance(r, 0.95)) {
    const x = r();
    const reason = x < 0.06 ? 'malformed_tool_use' : x < 0.1 ? 'malformed_model_output' : x < 0.18 || inside ? 'max_tokens'
      : x < 0.22 ? 'stop_sequence' : x < 0.25 ? pick(r, ['guardrail_intervened', 'content_filtered', 'model_context_window_exceeded'])
      : client !== 0 ? 'tool_use' : 'end_turn';
    ev('messageStop', `"stopReason":"${reason}"`);
    if (chance(r, 0.05)) msgs.push(failure(r)); // (after the completion: passed over)
    if (chance(r, 0.03)) ev('futureEvent', '"x":0');
    if (chance(r, 0.9)) {
      const [i, o, cr, cw] = [1 + Math.floor(r() * 900), Math.floor(r() * 300), Math.floor(r() * 500), Math.floor(r() * 50)];
      const cache = chance(r, 0.3) ? `,"cacheReadInputTokens":${cr},"cacheWriteInputTokens":${cw}` : '';
      ev('metadata', `"usage":{"inputTokens":${i},"outputTokens":${o},"totalTokens":${i + o + (cache ? cr + cw : 0)}${cache}}`, `"metrics":{"latencyMs":${Math.floor(r() * 2000)}}`);
    }
  }
  return eventStream(r, st, msgs);
}

/**
 * Claude on Bedrock: the Anthropic generator's events, each in a `chunk` whose bytes are its base64
 * (now and then with its slashes escaped, as some JSON encoders write them; an event written with
 * line breaks; message_stop with Bedrock's invocation metrics at times, as Bedrock sends it); the
 * provider's error anywhere at times (after message_stop, passed over); an event of another type
 * than chunk, which no model reads.
 */
function invokeStream(r: Rnd, strays: boolean): Uint8Array {
  const st = style(r);
  const msgs: Message[] = [];
  const slashes = chance(r, 0.2);
  for (const e of scanSseBody(anthropicStream(r, strays)).events) {
    let data = e.data;
    if (e.type === 'message_stop' && chance(r, 0.7)) data = data.replace(/}$/, ',"amazon-bedrock-invocationMetrics":{"inputTokenCount":9,"outputTokenCount":5,"invocationLatency":812,"firstByteLatency":304}}');
    if (chance(r, 0.03)) data = JSON.stringify(JSON.parse(data), null, 1);
    let b64 = Buffer.from(data).toString('base64');
    if (slashes) b64 = b64.replaceAll('/', '\\/');
    msgs.push({ event: 'chunk', payload: payload(r, st, [`"bytes":"${b64}"`]) });
    if (chance(r, 0.01)) msgs.push({ event: 'metadata', payload: '{"bytes":"AAAA"}' });
  }
  if (chance(r, 0.05)) msgs.splice(1 + Math.floor(r() * msgs.length), 0, failure(r));
  return eventStream(r, st, msgs);
}

/**
 * The generators. With `strays`, a stream may hold fragments of a call that never began, or of
 * one that ended (malformed, and passed through as they are from a format to itself, where a
 * client rejects them: left out of the streams relayed to their own format).
 */
const GENERATE: Record<Exclude<ModelFormat, 'ddg'>, (r: Rnd, strays: boolean) => string | Uint8Array> = {
  openai: openaiStream, anthropic: anthropicStream, 'openai-responses': responsesStream, ollama: ollamaStream, gemini: geminiStream,
  bedrock: bedrockStream, 'bedrock-invoke': invokeStream,
};

/** An event stream's messages, as AWS's codec decodes them (a chunk's bytes decoded), for the reader of a failure. */
function listing(bytes: Uint8Array): string {
  const out: string[] = [];
  let at = 0;
  for (let total; bytes.length - at >= 12 && bytes.length - at >= (total = new DataView(bytes.buffer, bytes.byteOffset + at).getUint32(0)); at += total) {
    let m: ReturnType<typeof codec.decode>;
    try {
      m = codec.decode(bytes.subarray(at, at + total));
    } catch (e) {
      out.push(`(a damaged message: ${String(e)})`);
      continue;
    }
    const h = (name: string) => m.headers[name]?.value;
    let data = h(':message-type') === 'error' ? String(h(':error-message')) : new TextDecoder().decode(m.body);
    if (h(':event-type') === 'chunk') data = Buffer.from((JSON.parse(data) as { bytes: string }).bytes, 'base64').toString();
    out.push(`${String(h(':event-type') ?? h(':exception-type') ?? h(':error-code'))} ${data}`);
  }
  if (at < bytes.length) out.push(`(cut ${bytes.length - at} bytes into a message)`);
  return out.join('\n');
}

/** A generated stream as a fixture whose expectations are the reference reading's (an event stream's body: its messages listed). */
function fixture(format: ModelFormat, stream: string | Uint8Array, name: string): Fixture {
  const ref = reference(stream, format);
  const body = typeof stream === 'string' ? stream : listing(stream);
  return {
    name, format, note: 'generated', body, bytes: typeof stream === 'string' ? enc.encode(stream) : stream,
    expected: {
      text: ref.text, reasoning: ref.reasoning, status: ref.status, finishReason: ref.finishReason, usage: ref.usage, events: ref.events,
      comments: ref.comments, error: ref.error, toolCalls: ref.toolCalls, serverToolCalls: ref.serverToolCalls, signatures: ref.signatures,
    },
  };
}

/** What a ModelStream reads of the chunks: a new one, or `reused` after reset() (its last stream ended as it did). */
function readAll(f: Fixture, chunks: Uint8Array[], raw: boolean, reused?: ModelStream) {
  const m = reused ?? new ModelStream({ format: f.format, raw, eof: 'allow' });
  m.reset();
  const { text, error: e } = textOutcome(m, chunks);
  const error = e && { code: e.code, offset: e.offset, ...(e.providerCode !== undefined ? { providerCode: e.providerCode } : {}) };
  return {
    text, reasoning: m.reasoning, status: m.status, finishReason: m.finishReason, usage: m.usage, events: m.events,
    toolCalls: m.toolCalls, serverToolCalls: m.serverToolCalls,
    signatures: m.reasoningBlocks.flatMap((b) => [b.signature, b.redacted].filter((x) => x !== undefined)),
    error,
  };
}

/**
 * An event stream read message by message, as `seam-stream check` and `decode --events` read it:
 * ModelEventStreamDecoder's messages, each event a ModelEventReader reads; the stream's error is a
 * message's (before the completion), an event's own (a failed turn, an error event), or the
 * framing's.
 */
function readMessages(f: Fixture, chunks: Uint8Array[]) {
  const format = f.format as 'bedrock' | 'bedrock-invoke';
  const reader = new ModelEventReader({ format });
  const { messages, framing } = messagesOf<ModelEventStreamMessage>(new ModelEventStreamDecoder({ format }), chunks, EventStreamError);
  const out: { text: string; reasoning: string; finishReason?: string; usage?: Record<string, unknown>; toolCalls?: unknown; error?: { code: string; offset: number } } = { text: '', reasoning: '' };
  let done = false;
  for (const m of messages) {
    if (m.error !== undefined) {
      if (done) continue; // (after the completion: passed over)
      out.error = { code: m.error.code, offset: m.offset };
      break;
    }
    if (m.data === '') continue;
    const e = reader.read(m.data);
    if (e.error !== undefined && !done) {
      out.error = { code: 'ERR_PROVIDER', offset: m.offset };
      out.finishReason = e.finishReason ?? out.finishReason;
      break;
    }
    if (!done) {
      out.text += e.text;
      out.reasoning += e.reasoning;
      out.finishReason = e.finishReason ?? out.finishReason;
    }
    if (e.usage !== undefined) out.usage = { ...out.usage, ...e.usage };
    done ||= e.done;
  }
  // (the end of the stream: cut inside a message or before the completion, truncated; damage, anywhere)
  if (out.error === undefined && framing !== undefined && !(done && framing.code === 'ERR_STREAM_TRUNCATED')) out.error = framing;
  if (out.error === undefined && !done) out.error = { code: 'ERR_STREAM_TRUNCATED', offset: f.bytes.length };
  out.toolCalls = reader.toolCalls;
  return out;
}

/**
 * The reads a stream is fed in: whole, and cut at random (in pieces of up to 40 bytes, of up to a
 * 50th of a long stream; unless not `fine`, for an event stream); an event stream also in pieces of
 * up to 400 bytes (the rest of a message held from the read before, whole messages, the start of
 * the next), and a few whole messages a read (a read of whole messages is framed and read in one
 * core call).
 */
function chunkings(f: Fixture, r: Rnd, fine = true): Uint8Array[][] {
  const b = f.bytes;
  const out = [[b]];
  if (fine || !isEventStream(f.format)) out.push(cut(b, randomCuts(b, r, Math.max(40, Math.floor(b.length / 50)))));
  if (isEventStream(f.format)) {
    out.push(cut(b, randomCuts(b, r, Math.max(400, Math.floor(b.length / 20)))));
    const ends: number[] = [];
    let left = 0;
    for (let at = 0; b.length - at >= 12;) {
      at += new DataView(b.buffer, b.byteOffset + at).getUint32(0); // (the message's total length)
      if (at >= b.length) break;
      if (--left <= 0) {
        ends.push(at);
        left = 1 + Math.floor(r() * 3);
      }
    }
    out.push(cut(b, ends));
  }
  return out;
}

const FORMATS = Object.keys(GENERATE) as Exclude<ModelFormat, 'ddg'>[];
const N = 120;

describe('agents\' streams: tool calls and reasoning read in the core give what JSON.parse accumulation gives', () => {
  for (const format of FORMATS) {
    test(`${format}: ${N} generated streams, ModelStream raw and committed, whole, cut at random and dripped, seed ${SEED}`, () => {
      const r = rng(SEED + 100 + FORMATS.indexOf(format));
      const reused = [true, false].map((raw) => new ModelStream({ format, raw, eof: 'allow' }));
      for (let s = 0; s < N; s++) {
        const f = fixture(format, GENERATE[format](r, true), `${format} ${s}`);
        const e = f.expected;
        const where = `seed ${SEED}, ${format} stream ${s}: ${isEventStream(format) ? `\n${f.body}\n` : JSON.stringify(f.body)}`;
        // (a stream that fails: its error, at its offset; one cut short is not an error with eof: 'allow')
        const err = e.error === undefined || e.status !== 'failed' ? undefined : e.error;
        const want = {
          text: e.text, reasoning: e.reasoning, status: e.status, finishReason: e.finishReason, usage: e.usage, events: e.events,
          toolCalls: e.toolCalls, serverToolCalls: e.serverToolCalls, signatures: e.signatures,
          error: err && { code: err.code, offset: err.offset, ...(err.providerCode !== undefined ? { providerCode: err.providerCode } : {}) },
        };
        const drip = s % 10 === 0 && f.bytes.length <= 16384;
        const cuts = [...chunkings(f, r), ...(drip ? [cut(f.bytes, Array.from({ length: f.bytes.length - 1 }, (_, i) => i + 1))] : [])];
        for (const chunks of cuts) {
          expect(readAll(f, chunks, true), `${where} (raw, ${chunks.length} chunks)`).toEqual(want);
          expect(readAll(f, chunks, false), `${where} (committed, ${chunks.length} chunks)`).toEqual({ ...want, text: e.text.normalize('NFC') });
        }
        if (isEventStream(format)) {
          // (read message by message, as the command's check and decode --events read it, the stream
          // stops at a stop that says the turn failed: the metadata after it, whose usage ModelStream
          // reads, is not read)
          const turnFailed = e.finishReason !== undefined && describeFormat(format).failedTurn(e.finishReason) !== undefined;
          const got = readMessages(f, cuts[1]);
          expect(turnFailed ? { ...got, usage: undefined } : got, `${where} (message by message, ${cuts[1].length} chunks)`).toEqual({
            text: e.text, reasoning: e.reasoning, finishReason: e.finishReason, usage: turnFailed ? undefined : e.usage, toolCalls: e.toolCalls,
            error: e.error && { code: e.error.code, offset: e.error.offset },
          });
        }
        // (a stream reset after the one before, however that one ended)
        const [chunks] = cuts.slice(-1);
        expect(readAll(f, chunks, true, reused[0]), `${where} (raw, reset, ${chunks.length} chunks)`).toEqual(want);
        expect(readAll(f, chunks, false, reused[1]), `${where} (committed, reset, ${chunks.length} chunks)`).toEqual({ ...want, text: e.text.normalize('NFC') });
      }
    });

    test(`${format}: ${N} generated streams through SseRelay to OpenAI and to Anthropic, whole and cut at random, seed ${SEED}`, () => {
      const r = rng(SEED + 200 + FORMATS.indexOf(format));
      for (let s = 0; s < N; s++) {
        for (const to of ['openai', 'anthropic'] as const) {
          const f = fixture(format, GENERATE[format](r, to !== format), `${format} ${s}`);
          const o = new Oracle(f, to);
          const where = `seed ${SEED}, ${format} stream ${s} → ${to}: ${isEventStream(format) ? `\n${f.body}\n` : JSON.stringify(f.body)}`;
          const [whole, ...cuts] = chunkings(f, r, s % 3 === 0); // (a relay's output is read again at each read: an event stream's small reads in a third of them)
          settle(o, whole, where);
          for (const chunks of cuts) settle(o, chunks, `${where} (cut in ${chunks.length} reads)`);
        }
      }
    });
  }

  test(`maxArgumentBytes: the fragment (or start's input) that would pass it fails the stream at its offset, the calls as they stood before it, however the stream is cut, seed ${SEED}`, () => {
    const r = rng(SEED + 300);
    let failed = 0;
    for (let s = 0; s < 160; s++) {
      const format = pick(r, ['openai', 'anthropic', 'bedrock', 'bedrock-invoke'] as const);
      const body = GENERATE[format](r, true);
      const bytes = typeof body === 'string' ? enc.encode(body) : body;
      const ref = reference(body, format);
      // each fragment's bytes as sent (its JSON string's body, escapes and all), and each start's
      // input (Anthropic's object, Bedrock's `{}`), kept as the call's arguments until a fragment
      // brings some, with its frame and op
      const frags: { bytes: number; frame: number; op: number }[] = [];
      let plain = true;
      ref.frames.forEach((fr, k) => {
        const ops = fr.calls.map((op, i) => [op, i] as const).filter(([op]) => op.op === 'args');
        const lits = [...fr.data.matchAll(/"(?:partial_json|arguments|input)"\s*:\s*"((?:[^"\\]|\\.)*)"/g)].map((x) => enc.encode(x[1]).length);
        if (lits.length !== ops.length) plain = false;
        let j = 0;
        fr.calls.forEach((op, i) => {
          if (op.op === 'args') frags.push({ bytes: lits[j++] ?? 0, frame: k, op: i });
          else if (op.op === 'begin' && op.input !== undefined) frags.push({ bytes: enc.encode(op.input).length, frame: k, op: i });
        });
      });
      const total = frags.reduce((n, x) => n + x.bytes, 0);
      if (!plain || total === 0) continue;
      const limit = 1 + Math.floor(r() * (total - 1));
      if (limit >= total) continue;
      let sum = 0;
      const over = frags.find((x) => (sum += x.bytes) > limit)!;
      const at = ref.frames[over.frame];
      if (ref.error !== undefined && ref.error.offset < at.dataStart) continue; // (the stream fails before)
      // the calls' arguments as they stood before the fragment (a fragment of a call that never
      // began begins it, and then does not fit; a start whose input does not fit begins nothing)
      const book = new CallBook();
      ref.frames.slice(0, over.frame + 1).forEach((fr, k) => fr.calls.forEach((op, i) => {
        if (k < over.frame || i < over.op) book.apply(op);
        else if (i === over.op && op.op === 'args') book.apply({ ...op, text: '' });
      }));
      const before = book.calls.filter((c) => !c.server).map((c) => (c.arguments === '' ? c.fallback : c.arguments));
      const where = `seed ${SEED}, ${format} stream ${s}, maxArgumentBytes ${limit}: ${typeof body === 'string' ? JSON.stringify(body) : `\n${listing(body)}\n`}`;
      for (const chunks of [[bytes], cut(bytes, randomCuts(bytes, r, 40))]) {
        const m = new ModelStream({ format, raw: true, maxArgumentBytes: limit, eof: 'allow' });
        const err = thrown(() => {
          for (const c of chunks) m.push(c);
          m.flush();
        });
        expect(err, where).toMatchObject({ code: 'ERR_ARGUMENTS_TOO_LARGE', offset: at.dataStart });
        expect(m.status, where).toBe('failed');
        expect(m.toolCalls.map((c) => c.arguments), `${where}: the calls before the fragment`).toEqual(before);
        failed++;
      }
    }
    expect(failed).toBeGreaterThan(80);
  });
});
