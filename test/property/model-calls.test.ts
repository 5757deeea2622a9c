// A differential fuzz of agents' streams: generated OpenAI, Anthropic, Responses, Ollama and Gemini streams
// of text, reasoning and tool calls whose arguments come in fragments (cut anywhere in the JSON
// text, a surrogate pair split between two fragments, escapes spelled at random), calls in
// parallel, empty fragments, a fragment of a call that never began, and events just across the
// line of what the core reads to the end itself (a fragment with the call's id again, two calls
// in one delta, a reasoning string beside text, a kind spelled with an escape). ModelStream (raw
// and committed) and SseRelay to both client formats must give exactly what the JSON.parse
// reading gives (test/helpers/model-fixtures.ts: the fragments joined per call, each call's
// validity by JSON.parse), whole, cut at random and dripped. A budget of argument bytes
// (maxArgumentBytes) fails the stream at the fragment that would pass it, at its offset, however
// the stream is cut. Seeded; the seed and the stream are printed on failure.
import { describe, expect, test } from 'vitest';
import { ModelStream } from '../../bindings/index.js';
import { CallBook, type Fixture, type ModelFormat, type TextFormat, reference } from '../helpers/model-fixtures.js';
import { type Rnd, chance, jsonString, pick } from '../helpers/model-streams.js';
import { SEED, cut, randomCuts, rng } from '../helpers/random.js';
import { thrown } from '../helpers/thrown.js';
import { Oracle, settle } from '../helpers/relay-oracle.js';

const enc = new TextEncoder();

const WORDS = ['read', 'the', 'file', 'café', 'naïve', '世界', '👩‍💻', '🇯🇵', '😀', 'a"b', 'back\\slash', 'tab\t', 'line\n', '\u0000', 'x', ''];
const word = (r: Rnd) => pick(r, WORDS);
/** A JSON string literal of `s`, escapes spelled at random. */
const lit = (r: Rnd, s: string) => jsonString(r, s, 0.1);
const say = (r: Rnd) => lit(r, Array.from({ length: 1 + Math.floor(r() * 3) }, () => word(r)).join(' '));

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
  if (chance(r, 0.8)) {
    s += ev('content_block_start', `"index":${index},"content_block":{"type":"text","text":""}`);
    for (let i = 0, n = Math.floor(r() * 5); i < n; i++) s += delta(index, `{"type":"text_delta","text":${say(r)}}`);
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
  s += ev('message_delta', `"delta":{"stop_reason":"${client !== 0 ? 'tool_use' : 'end_turn'}","stop_sequence":null},"usage":{"output_tokens":5}`);
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

/**
 * The generators. With `strays`, a stream may hold fragments of a call that never began, or of
 * one that ended (malformed, and passed through as they are from a format to itself, where a
 * client rejects them: left out of the streams relayed to their own format).
 */
const GENERATE: Record<Exclude<TextFormat, 'ddg'>, (r: Rnd, strays: boolean) => string> = {
  openai: openaiStream, anthropic: anthropicStream, 'openai-responses': responsesStream, ollama: ollamaStream, gemini: geminiStream,
};

/** A generated stream as a fixture whose expectations are the reference reading's. */
function fixture(format: ModelFormat, body: string, name: string): Fixture {
  const ref = reference(body, format);
  return {
    name, format, note: 'generated', body, bytes: enc.encode(body),
    expected: {
      text: ref.text, reasoning: ref.reasoning, status: ref.status, finishReason: ref.finishReason, usage: ref.usage, events: ref.events,
      comments: ref.comments, error: ref.error, toolCalls: ref.toolCalls, serverToolCalls: ref.serverToolCalls, signatures: ref.signatures,
    },
  };
}

function readAll(f: Fixture, chunks: Uint8Array[], raw: boolean) {
  const m = new ModelStream({ format: f.format, raw, eof: 'allow' });
  let text = '';
  for (const c of chunks) text += m.push(c);
  text += m.flush();
  return {
    text, reasoning: m.reasoning, status: m.status, finishReason: m.finishReason, usage: m.usage, events: m.events,
    toolCalls: m.toolCalls, serverToolCalls: m.serverToolCalls,
    signatures: m.reasoningBlocks.flatMap((b) => [b.signature, b.redacted].filter((x) => x !== undefined)),
  };
}

const FORMATS = Object.keys(GENERATE) as Exclude<TextFormat, 'ddg'>[];
const N = 120;

describe('agents\' streams: tool calls and reasoning read in the core give what JSON.parse accumulation gives', () => {
  for (const format of FORMATS) {
    test(`${format}: ${N} generated streams, ModelStream raw and committed, whole, cut at random and dripped, seed ${SEED}`, () => {
      const r = rng(SEED + 100 + FORMATS.indexOf(format));
      for (let s = 0; s < N; s++) {
        const f = fixture(format, GENERATE[format](r, true), `${format} ${s}`);
        const e = f.expected;
        const where = `seed ${SEED}, ${format} stream ${s}: ${JSON.stringify(f.body)}`;
        const want = {
          text: e.text, reasoning: e.reasoning, status: e.status, finishReason: e.finishReason, usage: e.usage, events: e.events,
          toolCalls: e.toolCalls, serverToolCalls: e.serverToolCalls, signatures: e.signatures,
        };
        const cuts = [[f.bytes], cut(f.bytes, randomCuts(f.bytes, r, 40)), ...(s % 10 === 0 ? [cut(f.bytes, Array.from({ length: f.bytes.length - 1 }, (_, i) => i + 1))] : [])];
        for (const chunks of cuts) {
          expect(readAll(f, chunks, true), `${where} (raw, ${chunks.length} chunks)`).toEqual(want);
          expect(readAll(f, chunks, false), `${where} (committed, ${chunks.length} chunks)`).toEqual({ ...want, text: e.text.normalize('NFC') });
        }
      }
    });

    test(`${format}: ${N} generated streams through SseRelay to OpenAI and to Anthropic, whole and cut at random, seed ${SEED}`, () => {
      const r = rng(SEED + 200 + FORMATS.indexOf(format));
      for (let s = 0; s < N; s++) {
        for (const to of ['openai', 'anthropic'] as const) {
          const f = fixture(format, GENERATE[format](r, to !== format), `${format} ${s}`);
          const o = new Oracle(f, to);
          const where = `seed ${SEED}, ${format} stream ${s} → ${to}: ${JSON.stringify(f.body)}`;
          settle(o, [f.bytes], where);
          settle(o, cut(f.bytes, randomCuts(f.bytes, r, 40)), `${where} (cut at random)`);
        }
      }
    });
  }

  test(`maxArgumentBytes: the fragment that would pass it fails the stream at its offset, the calls as they stood before it, however the stream is cut, seed ${SEED}`, () => {
    const r = rng(SEED + 300);
    let failed = 0;
    for (let s = 0; s < 80; s++) {
      const format = pick(r, ['openai', 'anthropic'] as const);
      const body = GENERATE[format](r, true);
      const bytes = enc.encode(body);
      const ref = reference(body, format);
      // each fragment's bytes as sent (its JSON string's body, escapes and all), with its frame and op
      const frags: { bytes: number; frame: number; op: number }[] = [];
      let plain = true;
      ref.frames.forEach((fr, k) => {
        const ops = fr.calls.map((op, i) => [op, i] as const).filter(([op]) => op.op === 'args');
        const lits = [...fr.data.matchAll(/"(?:partial_json|arguments)"\s*:\s*"((?:[^"\\]|\\.)*)"/g)].map((x) => enc.encode(x[1]).length);
        if (lits.length !== ops.length) plain = false;
        ops.forEach(([, i], j) => frags.push({ bytes: lits[j] ?? 0, frame: k, op: i }));
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
      // began begins it, and then does not fit)
      const book = new CallBook();
      ref.frames.slice(0, over.frame + 1).forEach((fr, k) => fr.calls.forEach((op, i) => {
        if (k < over.frame || i < over.op) book.apply(op);
        else if (i === over.op && op.op === 'args') book.apply({ ...op, text: '' });
      }));
      const before = book.calls.filter((c) => !c.server).map((c) => (c.arguments === '' ? c.fallback : c.arguments));
      const where = `seed ${SEED}, ${format} stream ${s}, maxArgumentBytes ${limit}: ${JSON.stringify(body)}`;
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
    expect(failed).toBeGreaterThan(40);
  });
});
