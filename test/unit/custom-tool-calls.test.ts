// Calls other than a function tool's, which clients must run all the same. The functions API's
// `function_call` (one a message, no index or id), read as a call and relayed as one. Calls of
// custom tools (OpenAI's freeform tools): Chat's `tool_calls` of `type: "custom"`, with
// `custom.name` and the free-text input in `custom.input` fragments, and Responses'
// `custom_tool_call` items, their input in `response.custom_tool_call_input.delta` events. They are
// the client's calls: ModelStream has them with `type: 'custom'` and the input as sent, not JSON
// (no `valid`); a relay writes them to OpenAI clients as custom calls (openai-node's
// `tool_calls[].custom`) and to Anthropic's, whose tools take JSON, as a `tool_use` whose input is
// `{"input": …}`. Whole, at every cut and dripped; read by the official clients.
import { describe, expect, it } from 'vitest';
import { ModelEventReader, ModelStream, SseRelay, type ToolCall } from '../../bindings/index.js';
import { concat, standardChunkings } from '../helpers/random.js';
import { callsRead, sameAtEveryCut } from '../helpers/sdk-clients.js';

const enc = new TextEncoder();
const sse = (type: string | null, o: unknown) => `${type === null ? '' : `event: ${type}\n`}data: ${JSON.stringify(o)}\n\n`;
const oa = (delta: unknown, finish: string | null = null) => sse(null, { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-x', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
const rs = (o: Record<string, unknown>) => sse(o.type as string, o);

/** A patch, in pieces: quotes, a backslash, line ends, an accent and an emoji. */
const PIECES = ['*** Begin Patch\n*** Update File: a "b".ts\n', '@@\n-const x = \'\\\\\';\n+const x = "é";\n', '+// 🚀\n*** End Patch'];
const INPUT = PIECES.join('');

const chat = oa({ role: 'assistant', content: null }) + oa({ content: 'Patching.' })
  + oa({ tool_calls: [{ index: 0, id: 'call_c1', type: 'custom', custom: { name: 'apply_patch', input: '' } }] })
  + PIECES.map((p) => oa({ tool_calls: [{ index: 0, custom: { input: p } }] })).join('')
  + oa({ tool_calls: [{ index: 1, id: 'call_f2', type: 'function', function: { name: 'lint', arguments: '' } }] })
  + oa({ tool_calls: [{ index: 1, function: { arguments: '{"fix":true}' } }] })
  + oa({}, 'tool_calls') + 'data: [DONE]\n\n';
const responses = rs({ type: 'response.created', response: { id: 'resp_1', status: 'in_progress', output: [] } })
  + rs({ type: 'response.output_text.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'Patching.' })
  + rs({ type: 'response.output_item.added', output_index: 1, item: { id: 'ctc_1', type: 'custom_tool_call', status: 'in_progress', call_id: 'call_c1', name: 'apply_patch', input: '' } })
  + PIECES.map((p) => rs({ type: 'response.custom_tool_call_input.delta', item_id: 'ctc_1', output_index: 1, delta: p })).join('')
  + rs({ type: 'response.custom_tool_call_input.done', item_id: 'ctc_1', output_index: 1, input: INPUT })
  + rs({ type: 'response.output_item.done', output_index: 1, item: { id: 'ctc_1', type: 'custom_tool_call', status: 'completed', call_id: 'call_c1', name: 'apply_patch', input: INPUT } })
  + rs({ type: 'response.output_item.added', output_index: 2, item: { id: 'fc_2', type: 'function_call', status: 'in_progress', call_id: 'call_f2', name: 'lint', arguments: '' } })
  + rs({ type: 'response.function_call_arguments.delta', item_id: 'fc_2', output_index: 2, delta: '{"fix":true}' })
  + rs({ type: 'response.output_item.done', output_index: 2, item: { id: 'fc_2', type: 'function_call', status: 'completed', call_id: 'call_f2', name: 'lint', arguments: '{"fix":true}' } })
  + rs({ type: 'response.completed', response: { id: 'resp_1', status: 'completed', output: [] } });
/** A custom call whose input is given whole, by the item's done only. */
const responsesWhole = rs({ type: 'response.created', response: { id: 'resp_1', status: 'in_progress', output: [] } })
  + rs({ type: 'response.output_item.added', output_index: 0, item: { id: 'ctc_1', type: 'custom_tool_call', status: 'in_progress', call_id: 'call_c1', name: 'apply_patch', input: '' } })
  + rs({ type: 'response.output_item.done', output_index: 0, item: { id: 'ctc_1', type: 'custom_tool_call', status: 'completed', call_id: 'call_c1', name: 'apply_patch', input: INPUT } })
  + rs({ type: 'response.completed', response: { id: 'resp_1', status: 'completed', output: [] } });

/** A custom call with no input, then a function's call. */
const chatEmpty = oa({ role: 'assistant', content: null })
  + oa({ tool_calls: [{ index: 0, id: 'call_c1', type: 'custom', custom: { name: 'apply_patch', input: '' } }] })
  + oa({ tool_calls: [{ index: 1, id: 'call_f2', type: 'function', function: { name: 'lint', arguments: '{"fix":true}' } }] })
  + oa({}, 'tool_calls') + 'data: [DONE]\n\n';

/** A custom call's first fragment before its start (which names it). */
const early = oa({ role: 'assistant', content: null })
  + oa({ tool_calls: [{ index: 0, custom: { input: 'echo "hi"' } }] })
  + oa({ tool_calls: [{ index: 0, id: 'call_a', type: 'custom', custom: { name: 'shell' } }] })
  + oa({ tool_calls: [{ index: 0, custom: { input: ' && ls' } }] }) + oa({}, 'tool_calls') + 'data: [DONE]\n\n';
/** A custom call named with no input yet; a function call's fragment before its start; the custom call's input; the start. */
const waiting = oa({ role: 'assistant', content: null })
  + oa({ tool_calls: [{ index: 0, id: 'call_c1', type: 'custom', custom: { name: 'apply_patch', input: '' } }] })
  + oa({ tool_calls: [{ index: 1, function: { arguments: '{"x":1}' } }] })
  + oa({ tool_calls: [{ index: 0, custom: { input: 'hello' } }] })
  + oa({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'lint', arguments: '' } }] }) + oa({}, 'tool_calls') + 'data: [DONE]\n\n';

const CUSTOM: ToolCall = { index: 0, id: 'call_c1', name: 'apply_patch', arguments: INPUT, done: true, type: 'custom' };
const LINT: ToolCall = { index: 1, id: 'call_f2', name: 'lint', arguments: '{"fix":true}', done: true, valid: true };
const UPSTREAMS = [
  { name: 'openai', format: 'openai' as const, body: enc.encode(chat), text: 'Patching.', calls: [CUSTOM, LINT] },
  { name: 'openai-responses', format: 'openai-responses' as const, body: enc.encode(responses), text: 'Patching.', calls: [CUSTOM, LINT] },
  { name: 'openai, a custom call with no input', format: 'openai' as const, body: enc.encode(chatEmpty), text: '', calls: [{ ...CUSTOM, arguments: '' }, LINT] },
  { name: 'openai, a custom fragment before its call\'s start', format: 'openai' as const, body: enc.encode(early), text: '', calls: [{ ...CUSTOM, id: 'call_a', name: 'shell', arguments: 'echo "hi" && ls' }] },
  { name: 'openai, a custom call\'s input while another call waits for its start', format: 'openai' as const, body: enc.encode(waiting), text: '', calls: [{ ...CUSTOM, arguments: 'hello' }, { ...LINT, id: 'call_b', arguments: '{"x":1}' }],
    // (to Anthropic the waiting call's block begins unnamed when something else comes; the custom call's input then takes a block of its own again, with its id, as interleaved calls do)
    anthropic: [{ id: 'call_c1', name: 'apply_patch', input: { input: '' } }, { id: 'toolu_seam_1', name: '', input: { x: 1 } }, { id: 'call_c1', name: 'apply_patch', input: { input: 'hello' } }] },
  { name: 'openai-responses, the input whole', format: 'openai-responses' as const, body: enc.encode(responsesWhole), text: '', calls: [CUSTOM] },
];

describe("a custom tool's call", () => {
  for (const { name, format, body, text, calls, anthropic } of UPSTREAMS as { name: string; format: 'openai' | 'openai-responses'; body: Uint8Array; text: string; calls: ToolCall[]; anthropic?: unknown[] }[]) {
    for (const raw of [false, true]) {
      it(`${name}${raw ? ', raw' : ''}: ModelStream has it, type custom, its input as sent, whatever the reads`, () => {
        for (const chunks of standardChunkings(body)) {
          const m = new ModelStream({ format, raw });
          let got = '';
          for (const c of chunks) got += m.push(c);
          got += m.flush();
          expect(got).toBe(text);
          expect(m.toolCalls).toEqual(calls);
          expect(m.serverToolCalls).toEqual([]);
          expect(m.finish().toolCalls).toEqual(calls);
        }
      });
    }

    for (const to of ['openai', 'anthropic'] as const) {
      it(`${name}, relayed to ${to}: the official client has the call, at every cut`, async () => {
        const first = await sameAtEveryCut(body, () => new SseRelay({ from: format, to }), (b) => callsRead(to, b));
        const want = to === 'anthropic' && anthropic !== undefined ? anthropic : calls.map((c) => (to === 'openai'
          ? c.type === 'custom' ? { id: c.id, type: 'custom', custom: { name: c.name, input: c.arguments } } : { id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }
          : { id: c.id, name: c.name, input: c.type === 'custom' ? { input: c.arguments } : JSON.parse(c.arguments) }));
        expect(first).toEqual({ text, calls: want, finish: to === 'openai' ? 'tool_calls' : 'tool_use' });
      });
    }
  }

  it("the functions API's function_call: a call, whatever the reads; relayed to Anthropic as a tool_use", async () => {
    const legacy = oa({ role: 'assistant', content: null, function_call: { name: 'get_weather', arguments: '' } })
      + oa({ function_call: { arguments: '{"city":' } }) + oa({ function_call: { arguments: '"Zürich"}' } }) + oa({}, 'function_call') + 'data: [DONE]\n\n';
    const bytes = enc.encode(legacy);
    const call: ToolCall = { index: 0, id: '', name: 'get_weather', arguments: '{"city":"Zürich"}', done: true, valid: true };
    for (const chunks of standardChunkings(bytes)) {
      const m = new ModelStream({ format: 'openai' });
      for (const c of chunks) m.push(c);
      m.flush();
      expect(m.toolCalls).toEqual([call]);
      expect(m.finishReason).toBe('function_call');
    }
    for (const chunks of [[bytes], [...standardChunkings(bytes)][40], [...standardChunkings(bytes)].at(-1)!]) {
      const r = new SseRelay({ from: 'openai', to: 'anthropic' });
      const got = await callsRead('anthropic', concat([...chunks.map((c) => r.push(c).slice()), r.flush().slice()]));
      expect(got).toEqual({ text: '', calls: [{ id: expect.stringMatching(/^toolu_seam/), name: 'get_weather', input: { city: 'Zürich' } }], finish: 'tool_use' });
    }
  });

  it('ModelEventReader: the call, type custom, as its events come', () => {
    const r = new ModelEventReader({ format: 'openai' });
    for (const e of chat.split(/(?<=\n\n)/)) r.read(e.slice(6, -2));
    expect(r.toolCalls).toEqual([CUSTOM, LINT]);
  });
});
