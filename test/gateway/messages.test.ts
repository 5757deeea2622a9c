// The gateway's two APIs with the whole message: `POST /v1/messages` (Anthropic Messages) and
// `POST /v1/chat/completions` in front of an upstream of every format, read by the official
// clients (@anthropic-ai/sdk's messages.stream() / finalMessage() / create(), openai's
// chat.completions.stream() / finalChatCompletion()); every fixture cut at random (seed printed):
// - the text, reasoning, tool calls (their inputs parsed by the SDK) and stop reason the relay
//   writes, from the reference reading (test/helpers/relay-oracle.ts);
// - a whole answer (`stream: false`) with its tool_use blocks / tool_calls;
// - the request as each upstream receives it: tools, tool choice, the assistant's calls and the
//   tool results of the history, in the upstream's own words (written here from each API's
//   documentation, apart from the gateway's code);
// - errors in the client's shape (Anthropic's `{"type":"error","error":{type,message}}`).
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { SseRelay } from '../../bindings/index.js';
import { FIXTURES, FORMATS, type Fixture, type ModelFormat, type TextFormat } from '../helpers/model-fixtures.js';
import { Oracle, isJson, matching } from '../helpers/relay-oracle.js';
import { SEED, concat, cut, randomCuts, rng } from '../helpers/random.js';
import { createGateway } from '../../examples/gateway/server.mjs';
import { expectSignedAsSent, post, startGateway, withAwsEnv, type Running } from './support.js';

const fixtures = FIXTURES.filter((f) => f.choice === undefined);
const byFormat = (format: ModelFormat) => fixtures.filter((f) => f.format === format);

/** The type of the error event SseRelay writes to an Anthropic client for a fixture's body (`api_error` when it writes none: a call's bad arguments). */
function streamedErrorType(f: Fixture): string {
  const r = new SseRelay({ from: f.format, to: 'anthropic' });
  const out = new TextDecoder().decode(concat([r.push(f.bytes).slice(), r.flush().slice()]));
  r.dispose();
  const m = /event: error\ndata: (.*)\n\n$/.exec(out);
  return m ? (JSON.parse(m[1]) as { error: { type: string } }).error.type : 'api_error';
}

describe.each(FORMATS.map((f) => [f] as const))('the gateway\'s /v1/messages in front of a %s upstream', (format) => {
  let g: Running;
  let anthropic: Anthropic;
  let openai: OpenAI;
  beforeAll(async () => {
    g = await startGateway({ upstreamFormat: format });
    anthropic = new Anthropic({ baseURL: g.url, apiKey: 'test-key', maxRetries: 0, timeout: 20_000 });
    openai = new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'test-key', maxRetries: 0, timeout: 20_000 });
  });
  afterAll(async () => {
    await g.close();
  });

  const script = (f: Fixture, round: number) => {
    const at = randomCuts(f.bytes, rng(SEED + f.bytes.length + round), 24);
    g.up.scripts.set(f.name, { pieces: cut(f.bytes, at) });
    return `${f.name} (seed ${SEED} round ${round}, cuts ${at.slice(0, 10).join(',')}…)`;
  };

  test.each(byFormat(format).map((f) => [f.name, f] as const))('anthropic client, messages.stream() and finalMessage(): %s', async (name, f) => {
    const want = new Oracle(f, 'anthropic').expected();
    const badArgs = want.calls!.some((c) => c.arguments !== '' && !isJson(c.arguments));
    for (let round = 0; round < 2; round++) {
      const why = script(f, round);
      let thrown: unknown;
      try {
        const msg = await anthropic.messages.stream({ model: name, max_tokens: 64, messages: [{ role: 'user', content: 'x' }] }).finalMessage();
        expect(msg.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join(''), why).toBe(want.text);
        expect(msg.content.flatMap((b) => (b.type === 'thinking' ? [b.thinking] : [])).join(''), why).toBe(want.reasoning);
        const calls = msg.content.flatMap((b) => (b.type === 'tool_use' ? [b] : []));
        expect(calls.map((c) => ({ id: c.id, name: c.name })), why).toEqual(matching(want.calls!).map((c) => ({ id: c.id, name: c.name })));
        expect(calls.map((c) => c.input), why).toEqual(want.calls!.map((c) => (c.arguments === '' ? {} : JSON.parse(c.arguments))));
        expect(msg.stop_reason, why).toBe(want.finish);
      } catch (e) {
        thrown = e;
      }
      if (want.done && !badArgs) expect(thrown, why).toBeUndefined();
      else if (want.done) expect(String(thrown), why).toMatch(/JSON|Unexpected|token/i);
      else {
        // an error event in Anthropic's shape, never a message_stop
        expect(thrown, why).toBeInstanceOf(Anthropic.APIError);
        const body = (thrown as { error?: { type?: string; error?: { type?: string; message?: string } } }).error;
        expect(body?.type, why).toBe('error');
        if (f.expected.error!.message !== undefined) expect(body?.error?.message, why).toContain(f.expected.error!.message);
      }
    }
    g.up.scripts.delete(name);
  });

  test.each(byFormat(format).filter((f) => f.expected.toolCalls?.length).map((f) => [f.name, f] as const))('openai client, finalChatCompletion() with tool calls: %s', async (name, f) => {
    const want = new Oracle(f, 'openai').expected();
    const why = script(f, 7);
    let thrown: unknown;
    try {
      const done = await openai.chat.completions.stream({ model: name, messages: [{ role: 'user', content: 'x' }] }).finalChatCompletion();
      const msg = done.choices[0].message;
      expect(msg.content ?? '', why).toBe(want.text);
      expect((msg.tool_calls ?? []).map((c) => ({ id: c.id, name: c.type === 'function' ? c.function.name : '', arguments: c.type === 'function' ? c.function.arguments : '' })), why)
        .toEqual(matching(want.calls!));
      expect(done.choices[0].finish_reason, why).toBe(want.finish);
    } catch (e) {
      thrown = e;
    }
    if (want.done) expect(thrown, why).toBeUndefined();
    else expect(thrown, why).toBeInstanceOf(OpenAI.APIError);
    g.up.scripts.delete(name);
  });

  test('a whole answer (stream: false) with its tool_use blocks, from the upstream\'s stream', async () => {
    if (format === 'anthropic') {
      // Anthropic's whole answer passes through as it is
      const message = { id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [{ type: 'text', text: 'Bonjour' }, { type: 'tool_use', id: 'toolu_1', name: 'f', input: { a: 1 } }], stop_reason: 'tool_use', stop_sequence: null, usage: { input_tokens: 3, output_tokens: 4 } };
      g.up.scripts.set('whole', { contentType: 'application/json', pieces: [Buffer.from(JSON.stringify(message))] });
      expect(await anthropic.messages.create({ model: 'whole', max_tokens: 9, messages: [{ role: 'user', content: 'x' }] })).toEqual(message);
      expect((g.up.received.at(-1)!.body as { stream?: boolean }).stream).toBeUndefined();
      return;
    }
    for (const f of byFormat(format)) {
      const want = new Oracle(f, 'anthropic').expected();
      const calls = f.expected.toolCalls ?? [];
      g.up.scripts.set(f.name, { pieces: cut(f.bytes, randomCuts(f.bytes, rng(SEED + 11), 12)) });
      const got = await anthropic.messages.create({ model: f.name, max_tokens: 9, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
      if (f.expected.status !== 'done' || calls.some((c) => !c.valid)) {
        expect(got, f.name).toBeInstanceOf(Anthropic.APIError);
        expect((got as InstanceType<typeof Anthropic.APIError>).status, f.name).toBe(502);
        // (the error type the streamed answer's error event has: the provider's, in Anthropic's words)
        expect((got as InstanceType<typeof Anthropic.APIError>).error, f.name).toMatchObject({ type: 'error', error: { type: streamedErrorType(f), message: expect.any(String) } });
        continue;
      }
      const msg = got as Anthropic.Message;
      const content: unknown[] = [];
      if (f.expected.text !== '') content.push({ type: 'text', text: f.expected.text });
      for (const c of calls) {
        // (a Gemini call's signature: a thinking block of no text right before it, as SseRelay writes it)
        if (c.signature !== undefined) content.push({ type: 'thinking', thinking: '', signature: c.signature });
        content.push({ type: 'tool_use', id: c.id === '' ? expect.stringMatching(/^toolu_gw/) : c.id, name: c.name, input: c.arguments === '' ? {} : JSON.parse(c.arguments) });
      }
      expect(msg, f.name).toMatchObject({ type: 'message', role: 'assistant', model: f.name, stop_reason: want.finish, stop_sequence: null });
      // the reasoning's blocks first (whole-answers.test.ts compares each, its signature and all, with the streamed answer's)
      let lead = 0;
      for (const b of msg.content) {
        if (b.type !== 'redacted_thinking' && !(b.type === 'thinking' && b.thinking !== '')) break;
        lead++;
      }
      expect(msg.content.slice(0, lead).map((b) => (b.type === 'thinking' ? b.thinking : '')).join(''), f.name).toBe(want.reasoning);
      expect(msg.content.slice(lead), f.name).toEqual(content);
      if (want.usage !== undefined) expect(msg.usage, f.name).toEqual(want.usage);
      g.up.scripts.set(f.name, { pieces: cut(f.bytes, randomCuts(f.bytes, rng(SEED + 13), 12)) });
      if (format === 'openai') continue; // (OpenAI's whole answer to an OpenAI client passes through: formats.test.ts)
      // the openai client's whole answer: the same calls as tool_calls
      const chat = await openai.chat.completions.create({ model: f.name, messages: [{ role: 'user', content: 'x' }] });
      expect(chat.choices[0].message.content, f.name).toBe(calls.length > 0 && f.expected.text === '' ? null : f.expected.text);
      expect((chat.choices[0].message as { reasoning_content?: string }).reasoning_content, f.name).toBe(want.reasoning === '' ? undefined : want.reasoning);
      expect(chat.choices[0].message.tool_calls, f.name).toEqual(calls.length === 0 ? undefined
        : calls.map((c) => ({
          id: c.id === '' ? expect.stringMatching(/^call_gw/) : c.id, type: 'function', function: { name: c.name, arguments: c.arguments },
          ...(c.signature !== undefined ? { extra_content: { google: { thought_signature: c.signature } } } : {}),
        })));
      expect(chat.choices[0].finish_reason, f.name).toBe(new Oracle(f, 'openai').expected().finish);
      g.up.scripts.delete(f.name);
    }
  });
});

// An agent's second turn: tools, a forced tool, the assistant's two calls (after its thinking, in
// Anthropic's words) and their results, then the user's text.
const TOOLS_SCHEMA = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
const anthropicTurn = {
  model: 'probe', max_tokens: 100, stream: true, system: 'Be brief.', temperature: 0.5, stop_sequences: ['END'],
  tools: [{ name: 'weather', description: 'The weather in a city', input_schema: TOOLS_SCHEMA }],
  tool_choice: { type: 'any', disable_parallel_tool_use: true },
  messages: [
    { role: 'user', content: 'Weather in Paris and Lyon?' },
    { role: 'assistant', content: [
      { type: 'thinking', thinking: 'Two cities.', signature: 'sig' },
      { type: 'text', text: 'Looking.' },
      { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Paris' } },
      { type: 'tool_use', id: 'toolu_2', name: 'weather', input: { city: 'Lyon' } },
    ] },
    { role: 'user', content: [
      { type: 'tool_result', tool_use_id: 'toolu_1', content: '18°C' },
      { type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: '20°C' }] },
      { type: 'text', text: 'And tomorrow?' },
    ] },
  ],
};
const chatTurn = {
  model: 'probe', max_tokens: 100, stream: true, temperature: 0.5, stop: ['END'], parallel_tool_calls: false,
  tools: [{ type: 'function', function: { name: 'weather', description: 'The weather in a city', parameters: TOOLS_SCHEMA } }],
  tool_choice: 'required',
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Weather in Paris and Lyon?' },
    { role: 'assistant', content: 'Looking.', tool_calls: [
      { id: 'toolu_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
      { id: 'toolu_2', type: 'function', function: { name: 'weather', arguments: '{"city":"Lyon"}' } },
    ] },
    { role: 'tool', tool_call_id: 'toolu_1', content: '18°C' },
    { role: 'tool', tool_call_id: 'toolu_2', content: '20°C' },
    { role: 'user', content: 'And tomorrow?' },
  ],
};
// What each upstream must receive for that turn, in its own API's words.
const upstreamBodies: Record<Exclude<TextFormat, 'ddg'>, unknown> = {
  // (the Anthropic client's turn: its max_tokens as Chat's max_completion_tokens, the word OpenAI's
  // reasoning models take; its stream carries the usage, which an OpenAI stream sends only when asked)
  openai: (({ max_tokens, ...turn }) => ({ ...turn, max_completion_tokens: max_tokens, stream_options: { include_usage: true } }))(chatTurn),
  anthropic: {
    model: 'probe', max_tokens: 100, stream: true, system: 'Be brief.', temperature: 0.5, stop_sequences: ['END'],
    tools: [{ name: 'weather', description: 'The weather in a city', input_schema: TOOLS_SCHEMA }],
    tool_choice: { type: 'any', disable_parallel_tool_use: true },
    messages: [
      { role: 'user', content: 'Weather in Paris and Lyon?' },
      { role: 'assistant', content: [
        { type: 'text', text: 'Looking.' },
        { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Paris' } },
        { type: 'tool_use', id: 'toolu_2', name: 'weather', input: { city: 'Lyon' } },
      ] },
      { role: 'user', content: [
        { type: 'tool_result', tool_use_id: 'toolu_1', content: '18°C' },
        { type: 'tool_result', tool_use_id: 'toolu_2', content: '20°C' },
        { type: 'text', text: 'And tomorrow?' },
      ] },
    ],
  },
  'openai-responses': {
    model: 'probe', stream: true, max_output_tokens: 100, temperature: 0.5, parallel_tool_calls: false, store: false,
    tools: [{ type: 'function', name: 'weather', description: 'The weather in a city', parameters: TOOLS_SCHEMA }],
    tool_choice: 'required',
    input: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather in Paris and Lyon?' },
      { role: 'assistant', content: 'Looking.' },
      { type: 'function_call', call_id: 'toolu_1', name: 'weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call', call_id: 'toolu_2', name: 'weather', arguments: '{"city":"Lyon"}' },
      { type: 'function_call_output', call_id: 'toolu_1', output: '18°C' },
      { type: 'function_call_output', call_id: 'toolu_2', output: '20°C' },
      { role: 'user', content: 'And tomorrow?' },
    ],
  },
  // ai.google.dev/api/generate-content: contents of user and model turns, functionCall and functionResponse parts (their ids kept), systemInstruction, functionDeclarations
  gemini: {
    contents: [
      { role: 'user', parts: [{ text: 'Weather in Paris and Lyon?' }] },
      { role: 'model', parts: [{ text: 'Looking.' }, { functionCall: { id: 'toolu_1', name: 'weather', args: { city: 'Paris' } } }, { functionCall: { id: 'toolu_2', name: 'weather', args: { city: 'Lyon' } } }] },
      { role: 'user', parts: [
        { functionResponse: { id: 'toolu_1', name: 'weather', response: { result: '18°C' } } },
        { functionResponse: { id: 'toolu_2', name: 'weather', response: { result: '20°C' } } },
        { text: 'And tomorrow?' },
      ] },
    ],
    systemInstruction: { parts: [{ text: 'Be brief.' }] },
    tools: [{ functionDeclarations: [{ name: 'weather', description: 'The weather in a city', parametersJsonSchema: TOOLS_SCHEMA }] }],
    toolConfig: { functionCallingConfig: { mode: 'ANY' } },
    generationConfig: { temperature: 0.5, maxOutputTokens: 100, stopSequences: ['END'] },
  },
  ollama: {
    model: 'probe', stream: true, options: { temperature: 0.5, num_predict: 100, stop: ['END'] },
    tools: [{ type: 'function', function: { name: 'weather', description: 'The weather in a city', parameters: TOOLS_SCHEMA } }],
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather in Paris and Lyon?' },
      { role: 'assistant', content: 'Looking.', tool_calls: [{ function: { name: 'weather', arguments: { city: 'Paris' } } }, { function: { name: 'weather', arguments: { city: 'Lyon' } } }] },
      { role: 'tool', content: '18°C', tool_name: 'weather' },
      { role: 'tool', content: '20°C', tool_name: 'weather' },
      { role: 'user', content: 'And tomorrow?' },
    ],
  },
};

describe("a model's refusal through the gateway's two APIs, streamed and whole", () => {
  const ev = (o: Record<string, unknown>) => `event: ${o.type as string}\ndata: ${JSON.stringify(o)}\n\n`;
  const REFUSAL = "I can't help with \"that\" — sorry.";
  const pieces = ["I can't help ", 'with "that" — ', 'sorry.'];
  const body = ev({ type: 'response.created', response: { id: 'resp_1', status: 'in_progress', output: [] } })
    + pieces.map((p) => ev({ type: 'response.refusal.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta: p })).join('')
    + ev({ type: 'response.refusal.done', item_id: 'msg_1', output_index: 0, content_index: 0, refusal: REFUSAL })
    + ev({ type: 'response.completed', response: { id: 'resp_1', status: 'completed', output: [], usage: { input_tokens: 4, output_tokens: 7 } } });
  let g: Running;
  let anthropic: Anthropic;
  let openai: OpenAI;
  beforeAll(async () => {
    g = await startGateway({ upstreamFormat: 'openai-responses' });
    anthropic = new Anthropic({ baseURL: g.url, apiKey: 'test-key', maxRetries: 0, timeout: 20_000 });
    openai = new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'test-key', maxRetries: 0, timeout: 20_000 });
  });
  afterAll(async () => {
    await g.close();
  });

  test('an openai client: the message\'s refusal, content null, finish stop', async () => {
    const bytes = new TextEncoder().encode(body);
    for (const round of [0, 1]) {
      g.up.scripts.set('refusing', { pieces: cut(bytes, randomCuts(bytes, rng(SEED + 21 + round), 16)) });
      const streamed = await openai.chat.completions.stream({ model: 'refusing', messages: [{ role: 'user', content: 'x' }] }).finalChatCompletion();
      expect(streamed.choices[0]!.message.refusal).toBe(REFUSAL);
      expect(streamed.choices[0]!.finish_reason).toBe('stop');
      const whole = await openai.chat.completions.create({ model: 'refusing', messages: [{ role: 'user', content: 'x' }] });
      expect(whole.choices[0]).toEqual({ index: 0, message: { role: 'assistant', content: null, refusal: REFUSAL }, finish_reason: 'stop' });
    }
  });

  test('an anthropic client: the refusal as the text, stop reason refusal', async () => {
    const bytes = new TextEncoder().encode(body);
    g.up.scripts.set('refusing', { pieces: cut(bytes, randomCuts(bytes, rng(SEED + 23), 16)) });
    const streamed = await anthropic.messages.stream({ model: 'refusing', max_tokens: 9, messages: [{ role: 'user', content: 'x' }] }).finalMessage();
    expect([streamed.content, streamed.stop_reason]).toEqual([[{ type: 'text', text: REFUSAL }], 'refusal']);
    const whole = await anthropic.messages.create({ model: 'refusing', max_tokens: 9, messages: [{ role: 'user', content: 'x' }] });
    expect([whole.content, whole.stop_reason]).toEqual([[{ type: 'text', text: REFUSAL }], 'refusal']);
  });
});

describe("a custom tool's call (OpenAI's freeform tools) through the gateway's two APIs, whole", () => {
  const ev = (o: Record<string, unknown>) => `event: ${o.type as string}\ndata: ${JSON.stringify(o)}\n\n`;
  const INPUT = '*** Begin Patch\n+const x = "é";\n*** End Patch';
  const body = ev({ type: 'response.created', response: { id: 'resp_1', status: 'in_progress', output: [] } })
    + ev({ type: 'response.output_item.added', output_index: 0, item: { id: 'ctc_1', type: 'custom_tool_call', status: 'in_progress', call_id: 'call_c1', name: 'apply_patch', input: '' } })
    + ev({ type: 'response.custom_tool_call_input.delta', item_id: 'ctc_1', output_index: 0, delta: INPUT.slice(0, 20) })
    + ev({ type: 'response.custom_tool_call_input.delta', item_id: 'ctc_1', output_index: 0, delta: INPUT.slice(20) })
    + ev({ type: 'response.output_item.done', output_index: 0, item: { id: 'ctc_1', type: 'custom_tool_call', status: 'completed', call_id: 'call_c1', name: 'apply_patch', input: INPUT } })
    + ev({ type: 'response.completed', response: { id: 'resp_1', status: 'completed', output: [] } });
  let g: Running;
  afterAll(async () => {
    await g.close();
  });

  test('an openai client gets it as a custom call; an anthropic client as a tool_use of {input}', async () => {
    g = await startGateway({ upstreamFormat: 'openai-responses' });
    const openai = new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'test-key', maxRetries: 0, timeout: 20_000 });
    const anthropic = new Anthropic({ baseURL: g.url, apiKey: 'test-key', maxRetries: 0, timeout: 20_000 });
    const bytes = new TextEncoder().encode(body);
    g.up.scripts.set('custom', { pieces: cut(bytes, randomCuts(bytes, rng(SEED + 31), 16)) });
    const o = await openai.chat.completions.create({ model: 'custom', messages: [{ role: 'user', content: 'x' }] });
    expect(o.choices[0]).toEqual({ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_c1', type: 'custom', custom: { name: 'apply_patch', input: INPUT } }] }, finish_reason: 'tool_calls' });
    const a = await anthropic.messages.create({ model: 'custom', max_tokens: 9, messages: [{ role: 'user', content: 'x' }] });
    expect([a.content, a.stop_reason]).toEqual([[{ type: 'tool_use', id: 'call_c1', name: 'apply_patch', input: { input: INPUT } }], 'tool_use']);
  });
});

describe("a call of a tool the API defines and the client runs (Responses' apply_patch_call) through the gateway's two APIs, whole", () => {
  const ev = (o: Record<string, unknown>) => `event: ${o.type as string}\ndata: ${JSON.stringify(o)}\n\n`;
  const OPERATION = { type: 'update_file', path: 'src/a "b".ts', diff: '@@\n-x\n+const x = "é"; // 🚀\n' };
  const patch = { id: 'apc_1', type: 'apply_patch_call', call_id: 'call_ap1', operation: OPERATION };
  const body = ev({ type: 'response.created', response: { id: 'resp_1', status: 'in_progress', output: [] } })
    + ev({ type: 'response.output_item.added', output_index: 0, item: { ...patch, status: 'in_progress' } })
    + ev({ type: 'response.output_item.done', output_index: 0, item: { ...patch, status: 'completed' } })
    + ev({ type: 'response.completed', response: { id: 'resp_1', status: 'completed', output: [] } });
  let g: Running;
  afterAll(async () => {
    await g.close();
  });

  test('an openai client gets a function call of apply_patch with the operation; an anthropic client a tool_use', async () => {
    g = await startGateway({ upstreamFormat: 'openai-responses' });
    const openai = new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'test-key', maxRetries: 0, timeout: 20_000 });
    const anthropic = new Anthropic({ baseURL: g.url, apiKey: 'test-key', maxRetries: 0, timeout: 20_000 });
    const bytes = new TextEncoder().encode(body);
    g.up.scripts.set('patch', { pieces: cut(bytes, randomCuts(bytes, rng(SEED + 37), 16)) });
    const o = await openai.chat.completions.create({ model: 'patch', messages: [{ role: 'user', content: 'x' }] });
    expect(o.choices[0]).toEqual({ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_ap1', type: 'function', function: { name: 'apply_patch', arguments: JSON.stringify({ operation: OPERATION }) } }] }, finish_reason: 'tool_calls' });
    const a = await anthropic.messages.create({ model: 'patch', max_tokens: 9, messages: [{ role: 'user', content: 'x' }] });
    expect([a.content, a.stop_reason]).toEqual([[{ type: 'tool_use', id: 'call_ap1', name: 'apply_patch', input: { operation: OPERATION } }], 'tool_use']);
    const streamed = await anthropic.messages.stream({ model: 'patch', max_tokens: 9, messages: [{ role: 'user', content: 'x' }] }).finalMessage();
    expect([streamed.content, streamed.stop_reason]).toEqual([[{ type: 'tool_use', id: 'call_ap1', name: 'apply_patch', input: { operation: OPERATION } }], 'tool_use']);
  });
});

describe('tools and tool results carried to each upstream', () => {
  let g: Running | undefined;
  afterAll(async () => {
    await g?.close();
  });
  const start = async (format: ModelFormat) => {
    await g?.close();
    g = await startGateway({ upstreamFormat: format }, format === 'ddg' ? '/chat' : '');
    const f = fixtures.find((x) => x.format === format && x.expected.status === 'done')!;
    g.up.scripts.set('probe', { pieces: [f.bytes] });
    return g;
  };

  test.each((['openai', 'anthropic', 'openai-responses', 'ollama', 'gemini'] as const).flatMap((u) => (['openai', 'anthropic'] as const).map((c) => [c, u] as const)))(
    'a %s client\'s turn to a %s upstream', async (client, format) => {
      const r = await start(format);
      // (the Responses API has no stop sequences: a turn with them is refused, test/gateway/request-params.test.ts)
      const noStop = format === 'openai-responses';
      const res = client === 'openai' ? await post(r.url, noStop ? { ...chatTurn, stop: undefined } : chatTurn, '/v1/chat/completions', { authorization: 'Bearer sk-client' })
        : await post(r.url, noStop ? { ...anthropicTurn, stop_sequences: undefined } : anthropicTurn, '/v1/messages', { 'x-api-key': 'sk-client', 'anthropic-version': '2023-06-01', 'anthropic-beta': 'b1' });
      expect(res.status, res.body.toString()).toBe(200);
      const got = r.up.received.at(-1)!;
      // in the client's own API the body passes as it is (thinking blocks and all)
      expect(got.body).toEqual(client === format ? (client === 'anthropic' ? anthropicTurn : chatTurn) : upstreamBodies[format]);
      if (format === 'anthropic') {
        expect(got.headers['x-api-key']).toBe('sk-client');
        expect(got.headers['anthropic-version']).toBe('2023-06-01');
        expect(got.headers['anthropic-beta']).toBe(client === 'anthropic' ? 'b1' : undefined);
        expect(got.headers.authorization).toBeUndefined();
      } else if (format === 'gemini') {
        expect(got.url).toBe('/v1beta/models/probe:streamGenerateContent?alt=sse');
        expect(got.headers['x-goog-api-key']).toBe('sk-client');
        expect(got.headers.authorization).toBeUndefined();
      } else {
        expect(got.headers.authorization).toBe('Bearer sk-client');
        expect(got.headers['x-api-key']).toBeUndefined();
      }
    },
  );

  test('gemini: each call\'s thoughtSignature reaches the client (streamed and whole) and goes back on its functionCall part in the next turn', async () => {
    const r = await start('gemini');
    const f = fixtures.find((x) => x.name === 'gemini-streamed-args')!;
    r.up.scripts.set('signed', { pieces: cut(f.bytes, randomCuts(f.bytes, rng(SEED + 17), 40)) });
    const streamed = await post(r.url, { model: 'signed', stream: true, messages: [{ role: 'user', content: 'x' }] });
    const deltas = streamed.body.toString().split('\n\n').filter((e) => e.startsWith('data: {'))
      .flatMap((e) => (JSON.parse(e.slice(6)) as { choices: { delta: { tool_calls?: Record<string, unknown>[] } }[] }).choices[0]?.delta.tool_calls ?? []);
    expect(deltas.filter((d) => 'id' in d).map((d) => [d.index, d.extra_content])).toEqual([[0, { google: { thought_signature: 'CmIBjz1rX0OQ+/8=' } }], [1, undefined]]);
    r.up.scripts.set('signed', { pieces: [f.bytes] });
    const whole = JSON.parse((await post(r.url, { model: 'signed', messages: [{ role: 'user', content: 'x' }] })).body.toString()) as { choices: { message: { tool_calls: Record<string, unknown>[] } }[] };
    const calls = whole.choices[0].message.tool_calls;
    expect(calls.map((c) => c.extra_content)).toEqual([{ google: { thought_signature: 'CmIBjz1rX0OQ+/8=' } }, undefined]);
    // the next turn, with the calls as the client got them
    const res = await post(r.url, {
      model: 'probe', messages: [{ role: 'user', content: 'Kochen?' }, { role: 'assistant', content: null, tool_calls: calls },
        { role: 'tool', tool_call_id: calls[0].id, content: 'ok' }, { role: 'tool', tool_call_id: calls[1].id, content: 'läuft' }],
    }, '/v1/chat/completions', { authorization: 'Bearer sk-client' });
    expect(res.status, res.body.toString()).toBe(200);
    const sent = r.up.received.at(-1)!.body as { contents: { role: string; parts: Record<string, unknown>[] }[] };
    expect(sent.contents[1]).toEqual({ role: 'model', parts: [
      { functionCall: { name: 'cookRecipe', args: JSON.parse(f.expected.toolCalls![0].arguments) as unknown }, thoughtSignature: 'CmIBjz1rX0OQ+/8=' },
      { functionCall: { name: 'setTimer', args: { minutes: 45 } } },
    ] });
  });

  test('gemini, to an Anthropic client: a call\'s thoughtSignature comes as a thinking block of no text before it (streamed and whole), and goes back on its functionCall part in the next turn', async () => {
    const r = await start('gemini');
    const f = fixtures.find((x) => x.name === 'gemini-streamed-args')!;
    const client = new Anthropic({ baseURL: r.url, apiKey: 'test-key', maxRetries: 0, timeout: 20_000 });
    const shape = (content: Anthropic.ContentBlock[]) => content.map((b) => (b.type === 'tool_use' ? `tool_use ${b.name}` : b.type === 'thinking' ? `thinking "${b.thinking}" ${b.signature}` : b.type));
    const want = ['thinking "" CmIBjz1rX0OQ+/8=', 'tool_use cookRecipe', 'tool_use setTimer'];
    r.up.scripts.set('signed', { pieces: cut(f.bytes, randomCuts(f.bytes, rng(SEED + 19), 40)) });
    const streamed = await client.messages.stream({ model: 'signed', max_tokens: 9, messages: [{ role: 'user', content: 'x' }] }).finalMessage();
    expect(shape(streamed.content).filter((b) => b !== 'text')).toEqual(want);
    r.up.scripts.set('signed', { pieces: [f.bytes] });
    const whole = await client.messages.create({ model: 'signed', max_tokens: 9, messages: [{ role: 'user', content: 'x' }] });
    expect(shape(whole.content).filter((b) => b !== 'text')).toEqual(want);
    // the next turn, with the answer as the client got it (its thinking blocks sent back as they came)
    for (const content of [streamed.content, whole.content]) {
      const uses = content.filter((b) => b.type === 'tool_use');
      await client.messages.create({
        model: 'probe', max_tokens: 9, messages: [{ role: 'user', content: 'Kochen?' }, { role: 'assistant', content },
          { role: 'user', content: uses.map((u) => ({ type: 'tool_result' as const, tool_use_id: u.id, content: 'ok' })) }],
      });
      const sent = r.up.received.at(-1)!.body as { contents: { role: string; parts: Record<string, unknown>[] }[] };
      expect(sent.contents[1].parts.filter((p) => 'functionCall' in p)).toEqual([
        { functionCall: { name: 'cookRecipe', args: JSON.parse(f.expected.toolCalls![0].arguments) as unknown }, thoughtSignature: 'CmIBjz1rX0OQ+/8=' },
        { functionCall: { name: 'setTimer', args: { minutes: 45 } } },
      ]);
    }
  });

  test('a thinking block of no text is a call\'s signature only for a gemini upstream, and only right before the call', async () => {
    const turn = (blocks: unknown[]) => ({ model: 'probe', max_tokens: 9, messages: [{ role: 'user', content: 'x' }, { role: 'assistant', content: blocks },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' }] }] });
    const use = { type: 'tool_use', id: 'toolu_1', name: 'f', input: {} };
    const signed = { type: 'thinking', thinking: '', signature: 'S1' };
    for (const [format, blocks, sig] of [
      ['gemini', [signed, use], 'S1'], ['gemini', [signed, { type: 'text', text: 'then' }, use], undefined],
      ['gemini', [{ type: 'thinking', thinking: 'Thought.', signature: 'S2' }, use], undefined], ['openai', [signed, use], undefined],
    ] as const) {
      const r = await start(format);
      const res = await post(r.url, turn([...blocks]), '/v1/messages', { 'x-api-key': 'sk-client', 'anthropic-version': '2023-06-01' });
      expect(res.status, res.body.toString()).toBe(200);
      const body = r.up.received.at(-1)!.body as { contents?: { parts: Record<string, unknown>[] }[]; messages?: { tool_calls?: Record<string, unknown>[] }[] };
      if (format === 'gemini') expect(body.contents![1].parts.find((p) => 'functionCall' in p)!.thoughtSignature, JSON.stringify(blocks)).toBe(sig);
      else expect(body.messages!.find((m) => m.tool_calls !== undefined)!.tool_calls![0].extra_content).toBeUndefined();
    }
  });

  test('what an upstream has no word for is a 400 in the client\'s shape, and the upstream is not called', async () => {
    const r = await start('ddg');
    const before = r.up.received.length;
    const a = await post(r.url, anthropicTurn, '/v1/messages');
    expect(a.status).toBe(400);
    expect(JSON.parse(a.body.toString())).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: 'a ddg upstream takes text only: no tools, tool calls or tool results' } });
    const o = await post(r.url, chatTurn);
    expect(o.status).toBe(400);
    expect(JSON.parse(o.body.toString())).toEqual({ error: { message: 'a ddg upstream takes text only: no tools, tool calls or tool results', type: 'invalid_request_error', code: 'ERR_BAD_REQUEST' } });
    await start('anthropic');
    const bad = { ...chatTurn, messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '[1,' } }] }] };
    const b = await post(g!.url, bad);
    expect(b.status).toBe(400);
    expect(JSON.parse(b.body.toString()).error.message).toBe('the arguments of tool call "c1" are not a JSON object');
    // a message, or a tool call, that is not an object: the client's error, not the gateway's (a 500)
    for (const [messages, message] of [
      [[null], 'messages[0] must be an object'],
      [[{ role: 'user', content: 'Hi' }, 'Hi'], 'messages[1] must be an object'],
      [[{ role: 'assistant', content: null, tool_calls: [null] }], 'messages[0].tool_calls must be an array of objects'],
      [[{ role: 'assistant', content: null, tool_calls: { id: 'c1' } }], 'messages[0].tool_calls must be an array of objects'],
    ] as const) {
      const x = await post(g!.url, { ...chatTurn, messages });
      expect([x.status, JSON.parse(x.body.toString())]).toEqual([400, { error: { message, type: 'invalid_request_error', code: 'ERR_BAD_REQUEST' } }]);
    }
    const server = await post(g!.url, { ...anthropicTurn, tools: [{ type: 'web_search_20250305', name: 'web_search' }] }, '/v1/messages');
    expect(server.status).toBe(200); // to Anthropic itself, its own tools pass
    await start('openai');
    const s = await post(g!.url, { ...anthropicTurn, tools: [{ type: 'web_search_20250305', name: 'web_search' }] }, '/v1/messages');
    expect(s.status).toBe(400);
    expect(JSON.parse(s.body.toString()).error.message).toMatch(/^the tool "web_search" is not a client tool with an input_schema/);
    expect(r.up.received.length).toBe(before);
  });
});

// Bedrock: the Converse body, and the request signed with SigV4 by AWS's own signer (checked by signing it again with the same date)
const converseBody = {
  messages: [
    { role: 'user', content: [{ text: 'Weather in Paris and Lyon?' }] },
    { role: 'assistant', content: [{ text: 'Looking.' }, { toolUse: { toolUseId: 'toolu_1', name: 'weather', input: { city: 'Paris' } } }, { toolUse: { toolUseId: 'toolu_2', name: 'weather', input: { city: 'Lyon' } } }] },
    { role: 'user', content: [
      { toolResult: { toolUseId: 'toolu_1', content: [{ text: '18°C' }] } },
      { toolResult: { toolUseId: 'toolu_2', content: [{ text: '20°C' }] } },
      { text: 'And tomorrow?' },
    ] },
  ],
  system: [{ text: 'Be brief.' }],
  inferenceConfig: { maxTokens: 100, temperature: 0.5, stopSequences: ['END'] },
  toolConfig: { tools: [{ toolSpec: { name: 'weather', description: 'The weather in a city', inputSchema: { json: TOOLS_SCHEMA } } }], toolChoice: { any: {} } },
};

describe('a bedrock upstream: the Converse body, signed with SigV4, its binary stream relayed', () => {
  withAwsEnv();

  test.each(['openai', 'anthropic'] as const)('a %s client\'s turn', async (client) => {
    const { BEDROCK_FIXTURES } = await import('../helpers/bedrock-fixtures.js');
    const f = BEDROCK_FIXTURES.find((x) => x.name === 'bedrock-basic')!;
    const g = await startGateway({ upstreamFormat: 'bedrock' });
    try {
      g.up.scripts.set('probe', { contentType: 'application/vnd.amazon.eventstream', pieces: cut(f.bytes, randomCuts(f.bytes, rng(SEED + 5), 40)) });
      const res = client === 'openai' ? await post(g.url, chatTurn, '/v1/chat/completions') : await post(g.url, anthropicTurn, '/v1/messages', { 'anthropic-version': '2023-06-01' });
      expect(res.status, res.body.toString()).toBe(200);
      expect(res.body.toString()).toContain(client === 'openai' ? 'data: [DONE]' : 'event: message_stop');
      const got = g.up.received.at(-1)!;
      expect(got.url).toBe('/model/probe/converse-stream');
      expect(got.body).toEqual(converseBody);
      // (the same request signed again with the date it was signed at gives the same signature)
      await expectSignedAsSent(got, '/model/probe/converse-stream', JSON.stringify(got.body));
    } finally {
      await g.close();
    }
  });

  test('a base URL with a query: the request goes with it, and is signed over the query it goes with (a parameter given twice, twice)', async () => {
    const g = await startGateway({ upstreamFormat: 'bedrock' }, '/?tag=b&version=2&tag=a');
    try {
      const res = await post(g.url, chatTurn, '/v1/chat/completions');
      expect(res.status, res.body.toString()).toBe(404); // (no script: the fake upstream's 404)
      const got = g.up.received.at(-1)!;
      expect(got.url).toBe('/model/probe/converse-stream?tag=b&version=2&tag=a');
      await expectSignedAsSent(got, '/model/probe/converse-stream', got.raw);
    } finally {
      await g.close();
    }
  });

  test('a base URL whose query has a `+`: signed as the plus it is (AWS reads a URL\'s query by RFC 3986, not as a form), and sent unambiguously', async () => {
    // (a `+` was signed as a space, %20, by a form's decoding, while the request went with the `+`,
    // which AWS reads as a plus, %2B: every request refused for its signature)
    const g = await startGateway({ upstreamFormat: 'bedrock' }, '/?filter=a+b&tag=c%2Bd&sp=x%20y&flag&tag=%7Ee');
    try {
      const res = await post(g.url, chatTurn, '/v1/chat/completions');
      expect(res.status, res.body.toString()).toBe(404); // (no script: the fake upstream's 404)
      const got = g.up.received.at(-1)!;
      await expectSignedAsSent(got, '/model/probe/converse-stream', got.raw);
      // (each name and value sent as SigV4's canonical query writes it: the `+` as %2B, which no server reads as a space)
      expect(got.url).toBe('/model/probe/converse-stream?filter=a%2Bb&tag=c%2Bd&sp=x%20y&flag=&tag=~e');
    } finally {
      await g.close();
    }
  });

  test('a base URL whose query has a malformed escape: refused when the gateway is made, for the signed formats alone', () => {
    for (const upstreamFormat of ['bedrock', 'bedrock-invoke'] as const) {
      expect(() => createGateway({ upstream: 'http://127.0.0.1:9/?a=%zz&b=%E9', upstreamFormat })).toThrow(new TypeError(
        'createGateway: the upstream URL\'s query has a malformed percent escape (or one that is not UTF-8), which a signed request cannot carry: ?a=%zz&b=%E9'));
    }
    // (an unsigned upstream's query goes as it is)
    void createGateway({ upstream: 'http://127.0.0.1:9/?a=%zz', upstreamFormat: 'openai' }).close();
  });

  test('without AWS credentials in its environment the gateway fails the request, its own 500 naming what is missing, and the upstream is not called', async () => {
    // (the gateway's misconfiguration, not the client's error: bedrock-config.test.ts has the rest)
    const g = await startGateway({ upstreamFormat: 'bedrock' });
    const key = process.env.AWS_SECRET_ACCESS_KEY;
    delete process.env.AWS_SECRET_ACCESS_KEY;
    try {
      const res = await post(g.url, chatTurn);
      const id = res.headers['x-request-id'] as string;
      expect([res.status, JSON.parse(res.body.toString())]).toEqual([500, { error: {
        message: `gateway error (request id ${id}): the gateway cannot sign for its bedrock upstream: AWS_SECRET_ACCESS_KEY is not set in its environment`,
        type: 'gateway_error', code: 'ERR_GATEWAY',
      } }]);
      expect(g.up.received.length).toBe(0);
    } finally {
      process.env.AWS_SECRET_ACCESS_KEY = key;
      await g.close();
    }
  });
});

function anthropicTurnOr(client: 'openai' | 'anthropic') {
  return client === 'anthropic' ? anthropicTurn : chatTurn;
}

describe('errors in Anthropic\'s shape at /v1/messages', () => {
  test('a missing key is a 401 the SDK reads as AuthenticationError; an upstream\'s 429 keeps its status and message; a truncated stream is an error event', async () => {
    const g = await startGateway({ upstreamFormat: 'openai', apiKeys: ['k1'] });
    try {
      const bad = new Anthropic({ baseURL: g.url, apiKey: 'nope', maxRetries: 0 });
      const e = await bad.messages.create({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(Anthropic.AuthenticationError);
      expect((e as InstanceType<typeof Anthropic.APIError>).error).toEqual({ type: 'error', error: { type: 'authentication_error', message: expect.stringMatching(/^Incorrect or missing API key/) } });
      const client = new Anthropic({ baseURL: g.url, apiKey: 'k1', maxRetries: 0 });
      g.up.scripts.set('busy', { status: 429, contentType: 'application/json', pieces: [Buffer.from('{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}')] });
      const r = await client.messages.create({ model: 'busy', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }).catch((x: unknown) => x);
      expect(r).toBeInstanceOf(Anthropic.RateLimitError);
      expect((r as InstanceType<typeof Anthropic.APIError>).error).toEqual({ type: 'error', error: { type: 'rate_limit_error', message: 'Rate limit reached' } });
      // (a 429 for the quota: the provider's own type for it in Anthropic's words, as a streamed error event has it, not the status's,
      // with Anthropic's status for it, which its clients do not retry)
      const quota = '{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}';
      g.up.scripts.set('quota', { status: 429, contentType: 'application/json', pieces: [Buffer.from(quota)] });
      const q = await client.messages.create({ model: 'quota', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }).catch((x: unknown) => x);
      expect([(q as InstanceType<typeof Anthropic.APIError>).status, (q as InstanceType<typeof Anthropic.APIError>).error])
        .toEqual([402, { type: 'error', error: { type: 'billing_error', message: 'You exceeded your current quota' } }]);
      g.up.scripts.set('quota', { pieces: [Buffer.from(`data: ${quota}\n\n`)] });
      const streamed = await post(g.url, { model: 'quota', max_tokens: 5, stream: true, messages: [{ role: 'user', content: 'x' }] }, '/v1/messages', { 'x-api-key': 'k1' });
      expect(streamed.body.toString()).toContain('data: {"type":"error","error":{"type":"billing_error","message":"You exceeded your current quota"}}');
      g.up.scripts.set('cut', { pieces: [Buffer.from('data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Bon"}}]}\n\n')] });
      const res = await post(g.url, { model: 'cut', max_tokens: 5, stream: true, messages: [{ role: 'user', content: 'x' }] }, '/v1/messages', { 'x-api-key': 'k1' });
      const wire = res.body.toString();
      expect(wire).toMatch(/^event: message_start\n/);
      expect(wire).toContain('"text":"Bon"');
      expect(wire).not.toContain('message_stop');
      expect(wire.endsWith('event: error\ndata: {"type":"error","error":{"type":"api_error","message":"The upstream openai stream ended without its completion: the answer is cut short"}}\n\n')).toBe(true);
    } finally {
      await g.close();
    }
  });
});
