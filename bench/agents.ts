// Layer 4 benchmarks on agents' streams: text, reasoning and tool calls whose arguments come in
// fragments, against the JSON pipelines gateways and apps write today, at one event per read
// (what real APIs flush) and 1 KiB. Each side's output is read back and checked equal before
// anything is timed.
//   - SseRelay anthropic → openai against a JSON gateway that translates the same message
//     (TextDecoder + eventsource-parser + JSON.parse + JSON.stringify + TextEncoder);
//   - SseRelay openai → anthropic against the JSON gateway that writes Anthropic's events;
//   - ModelStream raw (text, reasoning, calls) against TextDecoder + eventsource-parser +
//     JSON.parse + accumulating the calls.
//
//   npm run build && node build/bench/agents.js [--full] [--chunk 1event,1KiB]
import { createParser } from './peers.js';
import { ModelStream, SseRelay } from '../bindings/index.js';
import { chunked, perEvent, prng } from './corpus.js';
import { type BenchOptions, type Row, assertSame, compare, runIfMain } from './harness.js';

const enc = new TextEncoder();
const words = 'the file path function value result error check read write list update test build config server client'.split(' ');

/** A JSON arguments object for a call, and its text cut into fragments of 1–24 bytes (as models stream them). */
function argumentsOf(r: () => number): { text: string; fragments: string[] } {
  const o: Record<string, unknown> = { path: `src/${words[Math.floor(r() * words.length)]}/${Math.floor(r() * 1000)}.ts` };
  const n = 1 + Math.floor(r() * 4);
  let body = '';
  for (let i = 0; i < 20 + r() * 200; i++) body += `${words[Math.floor(r() * words.length)]}${r() < 0.1 ? '\n' : ' '}`;
  o.content = n > 2 ? `${body} — é “quoted” 🚀` : body;
  if (n > 1) o.line = Math.floor(r() * 500);
  const text = JSON.stringify(o);
  const fragments: string[] = [];
  for (let i = 0; i < text.length;) {
    const k = 1 + Math.floor(r() * 24);
    fragments.push(text.slice(i, i + k));
    i += k;
  }
  return { text, fragments };
}

const textDelta = (r: () => number) => {
  let s = '';
  for (let i = 0, n = 1 + Math.floor(r() * 4); i < n; i++) s += `${words[Math.floor(r() * words.length)]} `;
  return s;
};

/** An agent's turns as Anthropic Messages streams (one HTTP response each): thinking, text, then calls. */
export function anthropicAgent(turns: number, seed = 21): Uint8Array[] {
  const r = prng(seed);
  const ev = (type: string, data: unknown) => `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
  const out: Uint8Array[] = [];
  for (let t = 0; t < turns; t++) {
    let s = '';
    s += ev('message_start', { type: 'message_start', message: { id: `msg_${t}`, type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1200, output_tokens: 1 } } });
    let index = 0;
    s += ev('content_block_start', { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } });
    for (let i = 0; i < 20; i++) s += ev('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: textDelta(r) } });
    s += ev('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxDdcvCJ2Oqo8iMN2AiMAp6QmF7gkTv9qfhVIKPHB' } });
    s += ev('content_block_stop', { type: 'content_block_stop', index: index++ });
    s += ev('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
    for (let i = 0; i < 30; i++) s += ev('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: textDelta(r) } });
    s += ev('content_block_stop', { type: 'content_block_stop', index: index++ });
    for (let c = 0, calls = 1 + Math.floor(r() * 2); c < calls; c++) {
      s += ev('content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: `toolu_${t}_${c}`, name: 'write_file', input: {} } });
      s += ev('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: '' } });
      for (const f of argumentsOf(r).fragments) s += ev('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: f } });
      s += ev('content_block_stop', { type: 'content_block_stop', index: index++ });
    }
    s += ev('message_delta', { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 300 } });
    s += ev('message_stop', { type: 'message_stop' });
    out.push(enc.encode(s));
  }
  return out;
}

/** The same turns as OpenAI Chat Completions streams: reasoning_content, text, then tool_calls deltas. */
export function openaiAgent(turns: number, seed = 22): Uint8Array[] {
  const r = prng(seed);
  const out: Uint8Array[] = [];
  for (let t = 0; t < turns; t++) {
    let s = '';
    const chunk = (delta: unknown, finish: string | null = null) => `data: ${JSON.stringify({
      id: `chatcmpl-${t}`, object: 'chat.completion.chunk', created: 1764600000, model: 'gpt-4.1-2025-04-14', system_fingerprint: 'fp_b3f1157249',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    })}\n\n`;
    s += chunk({ role: 'assistant', content: null });
    for (let i = 0; i < 20; i++) s += chunk({ reasoning_content: textDelta(r) });
    for (let i = 0; i < 30; i++) s += chunk({ content: textDelta(r) });
    for (let c = 0, calls = 1 + Math.floor(r() * 2); c < calls; c++) {
      s += chunk({ tool_calls: [{ index: c, id: `call_${t}_${c}`, type: 'function', function: { name: 'write_file', arguments: '' } }] });
      for (const f of argumentsOf(r).fragments) s += chunk({ tool_calls: [{ index: c, function: { arguments: f } }] });
    }
    s += chunk({}, 'tool_calls');
    s += `data: ${JSON.stringify({ id: `chatcmpl-${t}`, object: 'chat.completion.chunk', created: 1764600000, model: 'gpt-4.1-2025-04-14', choices: [], usage: { prompt_tokens: 1200, completion_tokens: 300, total_tokens: 1500 } })}\n\n`;
    s += 'data: [DONE]\n\n';
    out.push(enc.encode(s));
  }
  return out;
}

/** The peer's reading of each turn (a decoder and a parser per response): each event's data (and name) through `onEvent`. */
function peerRead(turns: Uint8Array[][], onEvent: (data: string, name: string | undefined) => void): void {
  for (const chunks of turns) {
    const td = new TextDecoder();
    const p = createParser({ onEvent: (e) => onEvent(e.data, e.event) });
    for (const c of chunks) p.feed(td.decode(c, { stream: true }));
    p.feed(td.decode());
  }
}

/** A message as its client ends with it. */
interface Message { text: string; reasoning: string; calls: { id: string; name: string; arguments: string }[] }

type Obj = Record<string, unknown>;

/** Turns of relayed bytes, read back as the clients read them (each response ends at its [DONE] or message_stop). */
function readBack(bytes: Uint8Array[], to: 'openai' | 'anthropic'): Message {
  const turns = [bytes];
  const m: Message = { text: '', reasoning: '', calls: [] };
  let base = 0;
  peerRead(turns, (data, name) => {
    if (data === '[DONE]') { base = m.calls.length; return; }
    const v = JSON.parse(data) as Obj;
    if (to === 'openai') {
      for (const c of (v.choices ?? []) as Obj[]) {
        const d = c.delta as Obj;
        if (typeof d.content === 'string') m.text += d.content;
        if (typeof d.reasoning_content === 'string') m.reasoning += d.reasoning_content;
        for (const tc of (d.tool_calls ?? []) as Obj[]) {
          const fn = (tc.function ?? {}) as Obj;
          const k = base + (tc.index as number);
          m.calls[k] ??= { id: tc.id as string, name: fn.name as string, arguments: '' };
          m.calls[k].arguments += (fn.arguments as string | undefined) ?? '';
        }
      }
    } else if (name === 'content_block_start' && (v.content_block as Obj).type === 'tool_use') {
      const b = v.content_block as Obj;
      m.calls.push({ id: b.id as string, name: b.name as string, arguments: '' });
    } else if (name === 'content_block_delta') {
      const d = v.delta as Obj;
      if (d.type === 'text_delta') m.text += d.text as string;
      else if (d.type === 'thinking_delta') m.reasoning += d.thinking as string;
      else if (d.type === 'input_json_delta') m.calls[m.calls.length - 1].arguments += d.partial_json as string;
    }
  });
  return m;
}

/** A gateway's relay of each turn (one upstream response each): its reads, then its end. */
function seamRelay(turns: Uint8Array[][], from: 'openai' | 'anthropic', to: 'openai' | 'anthropic', sink: Uint8Array[] | null): number {
  let n = 0;
  for (const chunks of turns) {
    const r = new SseRelay({ from, to });
    for (const c of chunks) {
      const out = r.push(c);
      n += out.length;
      if (sink) sink.push(out.slice());
    }
    const end = r.flush();
    n += end.length;
    if (sink) sink.push(end.slice());
  }
  return n;
}

/** The JSON gateway that translates Anthropic's events into OpenAI chunks: text, reasoning, calls, finish, usage. */
function jsonAnthropicToOpenai(chunks: Uint8Array[][], sink: Uint8Array[] | null): number {
  let n = 0;
  const created = Math.floor(Date.now() / 1000);
  let calls = 0;
  let usage: Obj = {};
  const write = (s: string) => {
    const out = enc.encode(s);
    n += out.length;
    if (sink) sink.push(out);
  };
  const chunk = (delta: unknown, finish: string | null = null) => write(`data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created, model: 'claude', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
  peerRead(chunks, (data) => {
    const e = JSON.parse(data) as Obj;
    const d = (e.delta ?? {}) as Obj;
    switch (e.type) {
      case 'message_start':
        calls = 0;
        usage = ((e.message as Obj).usage ?? {}) as Obj;
        chunk({ role: 'assistant', content: '' });
        break;
      case 'content_block_start': {
        const b = e.content_block as Obj;
        if (b.type === 'tool_use') chunk({ tool_calls: [{ index: calls++, id: b.id, type: 'function', function: { name: b.name, arguments: '' } }] });
        break;
      }
      case 'content_block_delta':
        if (d.type === 'text_delta') chunk({ content: d.text });
        else if (d.type === 'thinking_delta') chunk({ reasoning_content: d.thinking });
        else if (d.type === 'input_json_delta' && d.partial_json !== '') chunk({ tool_calls: [{ index: calls - 1, function: { arguments: d.partial_json } }] });
        break;
      case 'message_delta':
        usage = { ...usage, ...(e.usage as Obj) };
        chunk({}, calls ? 'tool_calls' : 'stop');
        write(`data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created, model: 'claude', choices: [], usage: { prompt_tokens: usage.input_tokens, completion_tokens: usage.output_tokens, total_tokens: (usage.input_tokens as number) + (usage.output_tokens as number) } })}\n\n`);
        break;
      case 'message_stop':
        write('data: [DONE]\n\n');
        break;
    }
  });
  return n;
}

/** The JSON gateway that writes Anthropic's events from OpenAI chunks: a block per text, thinking and tool_use part. */
function jsonOpenaiToAnthropic(chunks: Uint8Array[][], sink: Uint8Array[] | null): number {
  let n = 0;
  let index = -1;
  let open: string | null = null;
  let usage: Obj | null = null;
  let calls = 0;
  const write = (type: string, data: unknown) => {
    const out = enc.encode(`event: ${type}\ndata: ${JSON.stringify(data)}\n\n`);
    n += out.length;
    if (sink) sink.push(out);
  };
  const close = () => { if (open !== null) { write('content_block_stop', { type: 'content_block_stop', index }); open = null; } };
  const begin = (kind: string, block: unknown) => { close(); index++; open = kind; write('content_block_start', { type: 'content_block_start', index, content_block: block }); };
  peerRead(chunks, (data) => {
    if (data === '[DONE]') {
      close();
      write('message_delta', { type: 'message_delta', delta: { stop_reason: calls ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: usage?.completion_tokens ?? 0, input_tokens: usage?.prompt_tokens ?? 0 } });
      write('message_stop', { type: 'message_stop' });
      index = -1; open = null; usage = null; calls = 0;
      return;
    }
    const v = JSON.parse(data) as Obj;
    if (v.usage) usage = v.usage as Obj;
    for (const c of (v.choices ?? []) as Obj[]) {
      const d = c.delta as Obj;
      if (d.role === 'assistant') write('message_start', { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'gpt', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 0, output_tokens: 0 } } });
      if (typeof d.reasoning_content === 'string') {
        if (open !== 'thinking') begin('thinking', { type: 'thinking', thinking: '' });
        write('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: d.reasoning_content } });
      }
      if (typeof d.content === 'string' && d.content !== '') {
        if (open !== 'text') begin('text', { type: 'text', text: '' });
        write('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: d.content } });
      }
      for (const tc of (d.tool_calls ?? []) as Obj[]) {
        const fn = (tc.function ?? {}) as Obj;
        if (typeof tc.id === 'string') { calls++; begin('tool', { type: 'tool_use', id: tc.id, name: fn.name, input: {} }); }
        if (typeof fn.arguments === 'string' && fn.arguments !== '') write('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: fn.arguments } });
      }
    }
  });
  return n;
}

/** What an app reads: the text, the reasoning and the calls, with ModelStream's raw mode (one stream per turn). */
function seamRead(turns: Uint8Array[][]): Message {
  const out: Message = { text: '', reasoning: '', calls: [] };
  for (const chunks of turns) {
    const m = new ModelStream({ format: 'openai', raw: true });
    for (const c of chunks) out.text += m.push(c);
    out.text += m.flush();
    out.reasoning += m.reasoning;
    for (const c of m.toolCalls) out.calls.push({ id: c.id, name: c.name, arguments: c.arguments });
  }
  return out;
}

/** The same with JSON.parse: the text, the reasoning, and the calls accumulated by index. */
function peerReadCalls(chunks: Uint8Array[][]): Message {
  const out: Message = { text: '', reasoning: '', calls: [] };
  let base = 0;
  peerRead(chunks, (data) => {
    if (data === '[DONE]') { base = out.calls.length; return; }
    const v = JSON.parse(data) as { choices: { delta: { content?: string | null; reasoning_content?: string; tool_calls?: { index: number; id?: string; function?: { name?: string; arguments?: string } }[] } }[] };
    const d = v.choices[0]?.delta;
    if (d === undefined) return;
    if (typeof d.content === 'string') out.text += d.content;
    if (typeof d.reasoning_content === 'string') out.reasoning += d.reasoning_content;
    for (const tc of d.tool_calls ?? []) {
      const call = (out.calls[base + tc.index] ??= { id: tc.id ?? '', name: tc.function?.name ?? '', arguments: '' });
      call.arguments += tc.function?.arguments ?? '';
    }
  });
  return out;
}

const READS = [
  { name: '1 event', cut: (turns: Uint8Array[]) => turns.map((b) => perEvent(b, 1)) },
  { name: '1 KiB', cut: (turns: Uint8Array[]) => turns.map((b) => chunked(b, 1024)) },
];
const size = (turns: Uint8Array[]) => turns.reduce((n, t) => n + t.length, 0);

export function runAgentBench(opts: BenchOptions, log: (r: Row) => void = () => {}, filter?: { chunk?: string[] }): Row[] {
  const rows: Row[] = [];
  const add = (r: Row) => { rows.push(r); log(r); };
  const anthropic = anthropicAgent(40);
  const openai = openaiAgent(40);
  for (const r of READS.filter((x) => !filter?.chunk || filter.chunk.includes(x.name.replace(/ /g, '')))) {
    const meta = (what: string, corpus: string, peerName: string) => ({ layer: 'agents', case: what, corpus, chunk: r.name, peerName });
    const a = r.cut(anthropic);
    const o = r.cut(openai);
    const ours: Uint8Array[] = [];
    const theirs: Uint8Array[] = [];
    seamRelay(a, 'anthropic', 'openai', ours);
    jsonAnthropicToOpenai(a, theirs);
    assertSame(`anthropic → openai ${r.name}`, JSON.stringify(readBack(ours, 'openai')), JSON.stringify(readBack(theirs, 'openai')));
    add(compare(meta('SseRelay anthropic → openai', 'Anthropic agent', 'JSON gateway that translates (+ JSON.stringify + TextEncoder)'), size(anthropic),
      () => seamRelay(a, 'anthropic', 'openai', null), () => jsonAnthropicToOpenai(a, null), opts));
    ours.length = 0;
    theirs.length = 0;
    seamRelay(o, 'openai', 'anthropic', ours);
    jsonOpenaiToAnthropic(o, theirs);
    assertSame(`openai → anthropic ${r.name}`, JSON.stringify(readBack(ours, 'anthropic')), JSON.stringify(readBack(theirs, 'anthropic')));
    add(compare(meta('SseRelay openai → anthropic', 'OpenAI agent', 'JSON gateway that writes Anthropic events'), size(openai),
      () => seamRelay(o, 'openai', 'anthropic', null), () => jsonOpenaiToAnthropic(o, null), opts));
    assertSame(`ModelStream raw ${r.name}`, JSON.stringify(seamRead(o)), JSON.stringify(peerReadCalls(o)));
    add(compare(meta('ModelStream raw: text, reasoning, tool calls', 'OpenAI agent', 'TextDecoder + eventsource-parser + JSON.parse + accumulating the calls'), size(openai),
      () => seamRead(o), () => peerReadCalls(o), opts));
  }
  return rows;
}

runIfMain(import.meta.url, 'agents', runAgentBench);
