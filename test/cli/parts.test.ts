// decode --parts on every model fixture that says more than its text: standard output is what
// decode prints without it, and standard error says the reasoning, the calls and the sources in the
// order the events said them, as the library gives them to a reader fed a byte a read (each read
// then completes one event at most), whether the capture is read whole or through a slow pipe.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type ModelFormat, type ModelPart, ModelPartReader, ModelStream, type ToolCall } from '../../bindings/index.js';
import { BEDROCK_FIXTURES, encodeMessage } from '../helpers/bedrock-fixtures.js';
import { FIXTURES } from '../helpers/model-fixtures.js';
import { awkwardCuts, cli, file, run, tempDir, writer } from './helpers.js';

let dir: string;
beforeAll(() => {
  dir = tempDir();
});

/** The parts of a stream dripped a byte a read (stopping where it stops), the answer's text left out. */
function dripped(format: ModelFormat, choice: number | undefined, bytes: Uint8Array): ModelPart[] {
  const m = new ModelStream({ format, choice });
  const reader = new ModelPartReader(m);
  const out: ModelPart[] = [];
  try {
    for (let i = 0; i < bytes.length; i++) {
      out.push(...reader.take(m.push(bytes.subarray(i, i + 1))));
      if (m.status === 'done' && format !== 'bedrock') break; // (the command stops reading at the completion)
    }
    out.push(...reader.take(m.flush()));
  } catch (e) {
    out.push(...reader.take((e as { text?: string }).text ?? ''));
  }
  return out.filter((p) => p.type !== 'text');
}

/** What --parts says of them, written here from the help's words: a [reasoning] line per block, each call once it ended, the provider's own calls once ended and their results' sizes, each source. */
function said(parts: ModelPart[]): string {
  let s = '';
  let block = -1;
  const serverSaid = new Set<number>();
  const resultSaid = new Set<number>();
  const endLine = () => {
    if (s !== '' && !s.endsWith('\n')) s += '\n';
  };
  for (const p of parts) {
    if (p.type === 'reasoning' && p.text !== '') {
      if (p.block !== block) {
        endLine();
        s += '[reasoning]\n';
        block = p.block;
      }
      s += p.text;
    } else if (p.type === 'tool-call' && p.call.done) {
      endLine();
      block = -1;
      const c = p.call;
      s += `[tool call ${c.index}] ${c.name}${c.id ? ` (${c.id})` : ''} ${c.arguments}${c.valid === false ? ' (arguments that are not one JSON value)' : ''}\n`;
    } else if (p.type === 'server-tool-call') {
      const c = p.call;
      if (c.done && !serverSaid.has(c.index)) {
        serverSaid.add(c.index);
        endLine();
        block = -1;
        s += `[provider's tool call ${c.index}] ${c.name}${c.id ? ` (${c.id})` : ''} ${c.arguments}\n`;
      }
      if (c.result !== undefined && !resultSaid.has(c.index)) {
        resultSaid.add(c.index);
        endLine();
        block = -1;
        s += `[provider's tool result ${c.index}] ${c.name}${c.id ? ` (${c.id})` : ''}, ${Buffer.byteLength(c.result)} bytes of JSON\n`;
      }
    } else if (p.type === 'citation') {
      endLine();
      block = -1;
      const c = p.citation;
      const bits = [c.title, c.url && `<${c.url}>`, c.citedText !== undefined && c.citedText !== '' ? JSON.stringify(c.citedText) : undefined].filter((x) => x);
      s += `[source] ${bits.length ? bits.join(' ') : JSON.stringify(c.source)}\n`;
    }
  }
  // each call the stream began and did not end (it stopped first), as it stands, said to be cut short
  const last = new Map<number, ToolCall>();
  for (const p of parts) if (p.type === 'tool-call') last.set(p.call.index, p.call);
  for (const c of last.values()) {
    if (c.done) continue;
    endLine();
    s += `[tool call ${c.index}] ${c.name}${c.id ? ` (${c.id})` : ''} ${c.arguments} (cut short: the stream stopped before the call ended)\n`;
  }
  // and so each of the provider's own calls
  const lastServer = new Map<number, ToolCall>();
  for (const p of parts) if (p.type === 'server-tool-call') lastServer.set(p.call.index, p.call);
  for (const c of lastServer.values()) {
    if (c.done) continue;
    endLine();
    s += `[provider's tool call ${c.index}] ${c.name}${c.id ? ` (${c.id})` : ''} ${c.arguments} (cut short: the stream stopped before the call ended)\n`;
  }
  endLine();
  return s;
}

const enc = new TextEncoder();
const sse = (events: [string | null, unknown][], eol = '\n') => enc.encode(events.map(([t, d]) => `${t === null ? '' : `event: ${t}${eol}`}data: ${typeof d === 'string' ? d : JSON.stringify(d)}${eol}${eol}`).join(''));
const concat = (parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) out.set(p, (at += p.length) - p.length);
  return out;
};

/** Turns that interleave reasoning, text and calls (reasoning after a call, text before reasoning): read whole, each kind's parts would come together. */
const interleaved = [
  {
    name: 'anthropic-interleaved', format: 'anthropic' as ModelFormat,
    bytes: sse(([
      ['message_start', { message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [], usage: { input_tokens: 3, output_tokens: 1 } } }],
      ['content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '' } }],
      ['content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'Look it up.' } }],
      ['content_block_stop', { index: 0 }],
      ['content_block_start', { index: 1, content_block: { type: 'tool_use', id: 'toolu_1', name: 'search', input: {} } }],
      ['content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '{"q":"oslo"}' } }],
      ['content_block_stop', { index: 1 }],
      ['content_block_start', { index: 2, content_block: { type: 'text', text: '' } }],
      ['content_block_delta', { index: 2, delta: { type: 'text_delta', text: 'Searching. ' } }],
      ['content_block_stop', { index: 2 }],
      ['content_block_start', { index: 3, content_block: { type: 'thinking', thinking: '' } }],
      ['content_block_delta', { index: 3, delta: { type: 'thinking_delta', thinking: 'Now the weather.' } }],
      ['content_block_stop', { index: 3 }],
      ['content_block_start', { index: 4, content_block: { type: 'tool_use', id: 'toolu_2', name: 'weather', input: {} } }],
      ['content_block_delta', { index: 4, delta: { type: 'input_json_delta', partial_json: '{"city":"Oslo"}' } }],
      ['content_block_stop', { index: 4 }],
      ['message_delta', { delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 9 } }],
      ['message_stop', {}],
    ] as [string, Record<string, unknown>][]).map(([t, d]) => [t, { type: t, ...d }])),
  },
  {
    name: 'openai-interleaved', format: 'openai' as ModelFormat,
    bytes: sse([
      ...[
        { role: 'assistant', reasoning_content: 'Look it up.' },
        { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'search', arguments: '{"q":"oslo"}' } }] },
        { reasoning_content: 'And the weather.' },
        { tool_calls: [{ index: 1, id: 'call_2', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] },
      ].map((delta) => [null, { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: null }] }] as [null, unknown]),
      [null, { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] }],
      [null, '[DONE]'],
    ]),
  },
  {
    name: 'gemini-interleaved', format: 'gemini' as ModelFormat,
    bytes: sse([
      [null, { candidates: [{ content: { role: 'model', parts: [{ text: 'Look it up.', thought: true }] }, index: 0 }] }],
      [null, { candidates: [{ content: { role: 'model', parts: [{ functionCall: { name: 'search', args: { q: 'oslo' } } }] }, index: 0 }] }],
      [null, { candidates: [{ content: { role: 'model', parts: [{ text: 'Now the weather.', thought: true }] }, index: 0 }] }],
      [null, { candidates: [{ content: { role: 'model', parts: [{ functionCall: { name: 'weather', args: { city: 'Oslo' } } }] }, finishReason: 'STOP', index: 0 }] }],
    ], '\r\n'),
  },
  {
    name: 'bedrock-interleaved', format: 'bedrock' as ModelFormat,
    bytes: concat([
      { event: 'messageStart', payload: { role: 'assistant' } },
      { event: 'contentBlockDelta', payload: { contentBlockIndex: 0, delta: { reasoningContent: { text: 'Look it up.' } } } },
      { event: 'contentBlockStop', payload: { contentBlockIndex: 0 } },
      { event: 'contentBlockStart', payload: { contentBlockIndex: 1, start: { toolUse: { toolUseId: 'tooluse_1', name: 'search' } } } },
      { event: 'contentBlockDelta', payload: { contentBlockIndex: 1, delta: { toolUse: { input: '{"q":"oslo"}' } } } },
      { event: 'contentBlockStop', payload: { contentBlockIndex: 1 } },
      { event: 'contentBlockDelta', payload: { contentBlockIndex: 2, delta: { reasoningContent: { text: 'Now the weather.' } } } },
      { event: 'contentBlockStop', payload: { contentBlockIndex: 2 } },
      { event: 'contentBlockDelta', payload: { contentBlockIndex: 3, delta: { text: 'Checking.' } } },
      { event: 'contentBlockStop', payload: { contentBlockIndex: 3 } },
      { event: 'messageStop', payload: { stopReason: 'tool_use' } },
      { event: 'metadata', payload: { usage: { inputTokens: 3, outputTokens: 9, totalTokens: 12 }, metrics: { latencyMs: 1 } } },
    ].map((m) => encodeMessage({ event: m.event, payload: JSON.stringify(m.payload) }))),
  },
  {
    // (cut inside the provider's own call: said at the end as it stands, as a client's call is)
    name: 'anthropic-server-call-cut', format: 'anthropic' as ModelFormat,
    bytes: sse(([
      ['message_start', { message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [], usage: { input_tokens: 3, output_tokens: 1 } } }],
      ['content_block_start', { index: 0, content_block: { type: 'text', text: '' } }],
      ['content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Searching.' } }],
      ['content_block_stop', { index: 0 }],
      ['content_block_start', { index: 1, content_block: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} } }],
      ['content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '{"query":"os' } }],
    ] as [string, Record<string, unknown>][]).map(([t, d]) => [t, { type: t, ...d }])),
  },
].map((f) => ({ ...f, choice: undefined as number | undefined }));

/** The parts of a stream read whole: each kind's together. */
function whole(format: ModelFormat, bytes: Uint8Array): ModelPart[] {
  const m = new ModelStream({ format });
  const reader = new ModelPartReader(m);
  return [...reader.take(m.push(bytes)), ...reader.take(m.flush())].filter((p) => p.type !== 'text');
}

const fixtures = [
  ...FIXTURES.map((f) => ({ name: f.name, format: f.format, choice: f.choice, bytes: f.bytes })),
  ...BEDROCK_FIXTURES.map((f) => ({ name: f.name, format: 'bedrock' as ModelFormat, choice: undefined, bytes: f.bytes })),
  ...interleaved,
].map((f) => ({ ...f, parts: dripped(f.format, f.choice, f.bytes) }))
  .filter((f) => f.parts.some((p) => p.type === 'citation' || p.type === 'tool-call' || p.type === 'server-tool-call' || (p.type === 'reasoning' && p.text !== '')));

describe('decode --parts', () => {
  it('has fixtures of each kind: reasoning in blocks, calls, Bedrock\'s (a source: decode.test.ts); those that interleave them read otherwise whole', () => {
    expect(fixtures.length).toBeGreaterThan(10);
    expect(fixtures.some((f) => f.format === 'bedrock')).toBe(true);
    // (OpenAI's reasoning is one block, and its calls end at the finish: its order reads the same whole)
    for (const f of interleaved.filter((x) => x.format !== 'openai' && x.name.endsWith('-interleaved'))) expect(said(whole(f.format, f.bytes)), f.name).not.toBe(said(dripped(f.format, undefined, f.bytes)));
    expect(fixtures.some((f) => new Set(f.parts.filter((p) => p.type === 'reasoning').map((p) => (p as { block: number }).block)).size > 1)).toBe(true);
  });

  it.each(fixtures.map((f) => [f.name, f] as const))('%s: the text as without it, the parts in the events\' order, read whole and through a slow pipe', async (name, f) => {
    const path = file(dir, `${name.replace(/[^\w-]/g, '_')}.capture`, f.bytes);
    const choice = f.choice === undefined ? [] : ['--choice', String(f.choice)];
    const plain = await run(['decode', '--format', f.format, ...choice, path]);
    const want = said(f.parts);
    const whole = await run(['decode', '--parts', '--format', f.format, ...choice, path]);
    const piped = await run(['decode', '--parts', '--format', f.format, ...choice], { stdin: writer(path, awkwardCuts(f.bytes), 0) });
    for (const r of [whole, piped]) {
      expect([r.code, r.stdout]).toEqual([plain.code, plain.stdout]);
      const at = r.stderr.indexOf('seam-stream:');
      expect(at < 0 ? r.stderr : r.stderr.slice(0, at)).toBe(want);
      expect(at < 0 ? '' : r.stderr.slice(at)).toBe(plain.stderr);
    }
  });
});

// (a pseudo-terminal for standard output and standard error both, where util-linux's script is found)
const script = spawnSync('script', ['-V'], { encoding: 'utf8' });
const hasScript = script.status === 0 && /util-linux/.test(script.stdout + script.stderr);

describe.skipIf(!hasScript)('decode --parts on a terminal (standard output and standard error one)', () => {
  /** What the terminal shows (its line ends CR LF), the command run with NO_COLOR. */
  function onTerminal(args: string[], bytes: Uint8Array): string {
    const path = file(dir, 'terminal.capture', bytes);
    const command = [process.execPath, cli, 'decode', '--parts', ...args, path].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
    const r = spawnSync('script', ['-qec', command, '/dev/null'], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
    expect(r.status).toBe(0);
    return r.stdout;
  }

  it('a part after the text ends the text\'s line once: calls one after the other have no blank line between them, and the command ends no line twice', () => {
    const calls = sse(([
      ['message_start', { message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [], usage: { input_tokens: 3, output_tokens: 1 } } }],
      ['content_block_start', { index: 0, content_block: { type: 'text', text: '' } }],
      ['content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Searching.' } }],
      ['content_block_stop', { index: 0 }],
      ['content_block_start', { index: 1, content_block: { type: 'tool_use', id: 'toolu_1', name: 'search', input: {} } }],
      ['content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '{"q":"oslo"}' } }],
      ['content_block_stop', { index: 1 }],
      ['content_block_start', { index: 2, content_block: { type: 'tool_use', id: 'toolu_2', name: 'weather', input: {} } }],
      ['content_block_delta', { index: 2, delta: { type: 'input_json_delta', partial_json: '{"city":"Oslo"}' } }],
      ['content_block_stop', { index: 2 }],
      ['message_delta', { delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 9 } }],
      ['message_stop', {}],
    ] as [string, Record<string, unknown>][]).map(([t, d]) => [t, { type: t, ...d }]));
    // (the text's last cluster is held back until the completion: '.' comes after the calls)
    expect(onTerminal(['--format', 'anthropic'], calls)).toBe('Searching\r\n[tool call 0] search (toolu_1) {"q":"oslo"}\r\n[tool call 1] weather (toolu_2) {"city":"Oslo"}\r\n.\r\n');
    // (the completion commits the text and ends the call in one event: the call's line ends the text's)
    const gemini = sse([
      [null, { candidates: [{ content: { role: 'model', parts: [{ text: 'Looking.' }] }, index: 0 }] }],
      [null, { candidates: [{ content: { role: 'model', parts: [{ functionCall: { name: 'weather', args: { city: 'Oslo' } } }] }, finishReason: 'STOP', index: 0 }] }],
    ], '\r\n');
    const saved = join(dir, 'terminal.txt');
    expect(onTerminal(['--format', 'gemini', '--save', saved], gemini)).toBe('Looking.\r\n[tool call 0] weather {"city":"Oslo"}\r\n');
    expect(readFileSync(saved, 'utf8')).toBe('Looking.');
  });

  it('media the model returns: its type and size on standard error, between the text before and after it, never its base64', async () => {
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
    const gemini = sse([
      [null, { candidates: [{ content: { role: 'model', parts: [{ text: 'Here it is: ' }] }, index: 0 }] }],
      [null, { candidates: [{ content: { role: 'model', parts: [{ inlineData: { mimeType: 'image/png', data: png } }] }, index: 0 }] }],
      [null, { candidates: [{ content: { role: 'model', parts: [{ text: 'a dot.' }] }, finishReason: 'STOP', index: 0 }] }],
    ], '\r\n');
    const r = await run(['decode', '--parts', '--format', 'gemini'], { input: gemini });
    expect([r.code, r.stdout, r.stderr]).toEqual([0, 'Here it is: a dot.', `[media] image/png, ${png.length} bytes of base64\n`]);
    // (the library's parts, in the events' order, read whole)
    const parts = new ModelPartReader(new ModelStream({ format: 'gemini' }));
    const got = [...parts.push(gemini), ...parts.flush()];
    expect(got.map((p) => p.type === 'media' ? p : p.type === 'text' ? p.text : p.type)).toEqual(['Here it is:', { type: 'media', media: { mimeType: 'image/png', data: png, bytes: png.length } }, ' a dot.']); // (the space held back until the text after it)
  });
});
