// The arguments a stream keeps that no fragment brought (a hosted tool's item's members at its end,
// a tool_use start's input, a call's `{}`) and the provider's tools' results count toward
// maxArgumentBytes as streamed fragments do: past it the stream fails with ERR_ARGUMENTS_TOO_LARGE at
// the event that would pass it, its calls as they stood before it. Each read whole, at every
// two-piece split and a byte per read, to the same exact output.
import { describe, expect, it } from 'vitest';
import { ModelStream, type ToolCall } from '../../bindings/index.js';
import { standardChunkings } from '../helpers/random.js';

const enc = new TextEncoder();
const bytesOf = (s: string) => enc.encode(s).length;

type Format = 'openai-responses' | 'anthropic' | 'gemini';

/** What a stream said for `chunks`: its text, status, calls, and its error's code, offset and message. */
function outcome(format: Format, maxArgumentBytes: number | undefined, chunks: Uint8Array[]) {
  const m = new ModelStream({ format, maxArgumentBytes });
  let text = '';
  let error: { code: string; offset: number; message: string } | null = null;
  try {
    for (const c of chunks) text += m.push(c);
    text += m.flush();
  } catch (e) {
    const x = e as { code: string; offset: number; message: string; text: string };
    error = { code: x.code, offset: x.offset, message: x.message };
    text += x.text;
  }
  return { text, status: m.status, toolCalls: m.toolCalls as ToolCall[], serverToolCalls: m.serverToolCalls as ToolCall[], error };
}

/** `outcome` at every standard chunking of `body`, each equal to the whole read's; that outcome. */
function atEveryCut(format: Format, maxArgumentBytes: number | undefined, body: string) {
  const bytes = enc.encode(body);
  let first: ReturnType<typeof outcome> | undefined;
  let runs = 0;
  for (const chunks of standardChunkings(bytes)) {
    const got = outcome(format, maxArgumentBytes, chunks);
    if (first === undefined) first = got;
    else expect(got, `${chunks.length} reads`).toEqual(first);
    runs++;
  }
  expect(runs).toBe(bytes.length + 3);
  return first!;
}

/** The byte offset of the data of the event that holds `marker` (its `nth` occurrence, from 0). */
function dataAt(body: string, marker: string, nth = 0): number {
  let at = -1;
  for (let i = 0; i <= nth; i++) at = body.indexOf(marker, at + 1);
  return bytesOf(body.slice(0, body.lastIndexOf('data: ', at) + 6));
}

const tooLarge = (at: number, limit: number, kept: number) => ({
  code: 'ERR_ARGUMENTS_TOO_LARGE', offset: at,
  message: `The tool-call arguments in the event at byte offset ${at} would pass maxArgumentBytes (${limit} bytes, ${kept} kept); nothing past the limit was kept`,
});

describe("Responses: a hosted tool's call's arguments (its item's members at its end)", () => {
  const rs = (o: Record<string, unknown>) => `event: ${o.type as string}\ndata: ${JSON.stringify(o)}\n\n`;
  const item = (at: number, begin: Record<string, unknown>, end: Record<string, unknown>) =>
    rs({ type: 'response.output_item.added', output_index: at, item: { ...begin, status: 'in_progress' } })
    + rs({ type: 'response.output_item.done', output_index: at, item: { ...end, status: 'completed' } });
  const body = rs({ type: 'response.created', sequence_number: 0, response: { id: 'resp_1', status: 'in_progress', output: [] } })
    + item(0, { id: 'ws_1', type: 'web_search_call' }, { id: 'ws_1', type: 'web_search_call', action: { type: 'search', query: 'café "paris"' } })
    + item(1, { id: 'ci_1', type: 'code_interpreter_call', container_id: 'cntr_1', code: '' },
      { id: 'ci_1', type: 'code_interpreter_call', container_id: 'cntr_1', code: 'print(1 + 1)', outputs: [{ type: 'logs', logs: '2\n' }] })
    + rs({ type: 'response.output_text.delta', item_id: 'msg_1', output_index: 2, content_index: 0, delta: 'Zwei.' })
    + rs({ type: 'response.completed', sequence_number: 9, response: { id: 'resp_1', status: 'completed', output: [], usage: { input_tokens: 1, output_tokens: 1 } } });
  const SEARCH = '{"action":{"type":"search","query":"café \\"paris\\""}}';
  const CODE = '{"container_id":"cntr_1","code":"print(1 + 1)","outputs":[{"type":"logs","logs":"2\\n"}]}';
  const calls = [
    { index: 0, id: 'ws_1', name: 'web_search_call', arguments: SEARCH, done: true, valid: true },
    { index: 1, id: 'ci_1', name: 'code_interpreter_call', arguments: CODE, done: true, valid: true },
  ];
  const limit = bytesOf(SEARCH) + bytesOf(CODE);

  it('within the limit (exactly): every call kept, and the stream done', () => {
    expect(atEveryCut('openai-responses', limit, body)).toEqual({ text: 'Zwei.', status: 'done', toolCalls: [], serverToolCalls: calls, error: null });
  });

  it('a byte past it: ERR_ARGUMENTS_TOO_LARGE at the data of the item\'s end that would pass it, the calls as they stood before it', () => {
    const at = dataAt(body, '"ci_1"', 1);
    expect(atEveryCut('openai-responses', limit - 1, body)).toEqual({
      text: '', status: 'failed', toolCalls: [],
      serverToolCalls: [calls[0], { index: 1, id: 'ci_1', name: 'code_interpreter_call', arguments: '', done: false }],
      error: tooLarge(at, limit - 1, bytesOf(SEARCH)),
    });
  });
});

describe("Anthropic: a tool_use start's input, and a server tool's result", () => {
  const a = (o: Record<string, unknown>) => `event: ${o.type as string}\ndata: ${JSON.stringify(o)}\n\n`;
  const RESULT = { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [{ type: 'web_search_result', url: 'https://x.test/é', title: 'X', encrypted_content: 'EqgfCioIARgBIiQ3', page_age: null }] };
  const INPUT = { city: 'Paris', unit: 'celsius' };
  const body = a({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], model: 'claude', stop_reason: null, usage: { input_tokens: 10, output_tokens: 1 } } })
    + a({ type: 'content_block_start', index: 0, content_block: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} } })
    + a({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"query": "weather"}' } })
    + a({ type: 'content_block_stop', index: 0 })
    + a({ type: 'content_block_start', index: 1, content_block: RESULT })
    + a({ type: 'content_block_stop', index: 1 })
    // (a proxy's tool_use that carries its whole input in its start, and no fragment)
    + a({ type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_1', name: 'weather', input: INPUT } })
    + a({ type: 'content_block_stop', index: 2 })
    + a({ type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 20 } })
    + a({ type: 'message_stop' });
  const server = { index: 0, id: 'srvtoolu_1', name: 'web_search', arguments: '{"query": "weather"}', done: true, valid: true, result: JSON.stringify(RESULT) };
  const client = { index: 0, id: 'toolu_1', name: 'weather', arguments: JSON.stringify(INPUT), done: true, valid: true };
  // (as sent: the server call's start input `{}` and its fragment, escaped, its result, the client call's start input)
  const kept = [bytesOf('{}') + bytesOf(JSON.stringify(server.arguments).slice(1, -1)), bytesOf(server.result), bytesOf(client.arguments)];
  const limit = kept[0] + kept[1] + kept[2];

  it('within the limit (exactly): the calls and the result kept, and the stream done', () => {
    expect(atEveryCut('anthropic', limit, body)).toEqual({ text: '', status: 'done', toolCalls: [client], serverToolCalls: [server], error: null });
  });

  it('a byte past it: the start whose input would pass it fails the stream there, its call not begun', () => {
    expect(atEveryCut('anthropic', limit - 1, body)).toEqual({
      text: '', status: 'failed', toolCalls: [], serverToolCalls: [server], error: tooLarge(dataAt(body, '"toolu_1"'), limit - 1, kept[0] + kept[1]),
    });
  });

  it('a result that would pass it fails the stream at its block\'s start, the call without it', () => {
    const { result: _, ...without } = server;
    expect(atEveryCut('anthropic', kept[0] + kept[1] - 1, body)).toEqual({
      text: '', status: 'failed', toolCalls: [], serverToolCalls: [without], error: tooLarge(dataAt(body, '"web_search_tool_result"'), kept[0] + kept[1] - 1, kept[0]),
    });
  });
});

describe("Gemini: a call without args (its arguments `{}`)", () => {
  const gchunk = (parts: unknown[], extra = '') => `data: {"candidates":[{"content":{"parts":${JSON.stringify(parts)},"role":"model"}${extra}}],"modelVersion":"gemini-2.5-flash"}\r\n\r\n`;
  const body = gchunk([{ functionCall: { name: 'now' } }]) + gchunk([{ functionCall: { name: 'today' } }]) + gchunk([{ text: '' }], ',"finishReason":"STOP"');
  const calls = [
    { index: 0, id: '', name: 'now', arguments: '{}', done: true, valid: true },
    { index: 1, id: '', name: 'today', arguments: '{}', done: true, valid: true },
  ];

  it('each call\'s `{}` counts: within the limit the calls kept, a byte past it ERR_ARGUMENTS_TOO_LARGE at the call that would pass it', () => {
    expect(atEveryCut('gemini', 4, body)).toEqual({ text: '', status: 'done', toolCalls: calls, serverToolCalls: [], error: null });
    expect(atEveryCut('gemini', 3, body)).toEqual({ text: '', status: 'failed', toolCalls: [calls[0]], serverToolCalls: [], error: tooLarge(dataAt(body, '"today"'), 3, 2) });
  });
});
