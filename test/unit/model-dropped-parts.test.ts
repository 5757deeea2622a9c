// What a provider's stream says that was dropped or misread: each read whole, at every two-piece
// split and a byte per read, to the same exact output (the core property), through ModelStream
// and, where a client sees it, through both relays.
import { describe, expect, it } from 'vitest';
import { ModelEventReader, ModelStream, SseRelay, describeFormat } from '../../bindings/index.js';
import { openaiFinal, anthropicFinal } from '../helpers/sdk-clients.js';
import { standardChunkings } from '../helpers/random.js';
import { FIXTURES } from '../helpers/model-fixtures.js';

const enc = new TextEncoder();
const dec = new TextDecoder();

/** What a stream said, read in `chunks`: its text, status, finish reason and calls. */
function readStream(format: 'openai' | 'openai-responses' | 'gemini', chunks: Uint8Array[]) {
  const m = new ModelStream({ format });
  let text = '';
  for (const c of chunks) text += m.push(c);
  text += m.flush();
  const r = m.finish();
  return { text, status: r.status, finishReason: r.finishReason, toolCalls: r.toolCalls, serverToolCalls: r.serverToolCalls, blocks: m.reasoningBlocks, report: r };
}

/** `read` of every standard chunking of `body`, each equal to the whole read's; that read. */
function atEveryCut<T>(body: string, read: (chunks: Uint8Array[]) => T): T {
  const bytes = enc.encode(body);
  let first: T | undefined;
  let runs = 0;
  for (const chunks of standardChunkings(bytes)) {
    const got = read(chunks);
    if (first === undefined) first = got;
    else expect(got, `${chunks.length} reads`).toEqual(first);
    runs++;
  }
  expect(runs).toBe(bytes.length + 3);
  return first!;
}

/** A relay's output for `chunks`, as text. */
function relayed(options: ConstructorParameters<typeof SseRelay>[0], chunks: Uint8Array[]): string {
  const r = new SseRelay(options);
  let out = '';
  for (const c of chunks) out += dec.decode(r.push(c));
  return out + dec.decode(r.flush());
}

/** The data of each event of a relay's output, an OpenAI chunk's envelope and choice index left out. */
const events = (out: string): string[] => out.split('\n\n').filter((e) => e !== '').map((e) => {
  const data = e.split('\n').find((l) => l.startsWith('data: '))!.slice(6);
  const at = data.indexOf('"delta":');
  return at >= 0 && data.startsWith('{"id":') ? data.slice(at) : data;
});

/**
 * A Gemini body relayed to OpenAI's and to Anthropic's clients, at every cut: the answer's `texts`
 * only, a delta each, and the plain end (exact bytes, but Anthropic's message_start).
 */
function expectTextOnlyRelays(body: string, texts: readonly string[]): void {
  const toOpenAi = atEveryCut(body, (chunks) => events(relayed({ from: 'gemini' }, chunks)));
  expect(toOpenAi).toEqual([
    '"delta":{"role":"assistant","content":""},"finish_reason":null}]}',
    ...texts.map((t) => `"delta":{"content":${JSON.stringify(t)}},"finish_reason":null}]}`),
    '"delta":{},"finish_reason":"stop"}]}',
    '[DONE]',
  ]);
  const toAnthropic = atEveryCut(body, (chunks) => events(relayed({ from: 'gemini', to: 'anthropic', id: 'msg_1', model: 'g' }, chunks)));
  expect(toAnthropic.slice(1)).toEqual([
    '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
    ...texts.map((t) => `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":${JSON.stringify(t)}}}`),
    '{"type":"content_block_stop","index":0}',
    '{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":0}}',
    '{"type":"message_stop"}',
  ]);
}

describe('openai: function.arguments as a JSON object (OpenAI-compatible servers)', () => {
  // llama.cpp's llama-server (some versions) and Hugging Face's TGI write a call's arguments as an
  // object; the call's arguments are that object's JSON text as sent, whole (a later object
  // replaces it), checked once the call is done.
  const head = '"object":"chat.completion.chunk","created":1,"model":"qwen"';
  const ev = (delta: string, finish = 'null') => `data: {"id":"chatcmpl-7",${head},"choices":[{"index":0,"delta":${delta},"finish_reason":${finish}}]}\n\n`;
  const body = ev('{"role":"assistant","content":"Sehen wir nach. "}')
    + ev('{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":{"city": "Zürich", "days": [1, 2]}}}]}')
    + ev('{"tool_calls":[{"index":1,"id":"call_2","type":"function","function":{"name":"get_time","arguments":{}}}]}')
    + ev('{}', '"tool_calls"') + 'data: [DONE]\n\n';
  const calls = [
    { index: 0, id: 'call_1', name: 'get_weather', arguments: '{"city": "Zürich", "days": [1, 2]}', done: true, valid: true },
    { index: 1, id: 'call_2', name: 'get_time', arguments: '{}', done: true, valid: true },
  ];

  it('ModelStream: each call\'s arguments the object\'s JSON text as sent, valid once done', () => {
    const r = atEveryCut(body, (chunks) => readStream('openai', chunks));
    expect(r.text).toBe('Sehen wir nach. ');
    expect(r.status).toBe('done');
    expect(r.finishReason).toBe('tool_calls');
    expect(r.toolCalls).toEqual(calls);
  });

  it('ModelEventReader: the same calls, event by event', () => {
    const reader = new ModelEventReader({ format: 'openai' });
    for (const e of body.split('\n\n').filter((x) => x !== '')) reader.read(e.slice('data: '.length));
    expect(reader.toolCalls).toEqual(calls);
  });

  it('to OpenAI: the event written anew with the arguments as a string (exact bytes), read so by openai-node', async () => {
    const out = atEveryCut(body, (chunks) => relayed({ from: 'openai' }, chunks));
    expect(out).not.toContain('chatcmpl-seam'); // (the upstream's envelope: the same bytes at every cut)
    expect(events(out)).toEqual([
      '"delta":{"role":"assistant","content":"Sehen wir nach. "},"finish_reason":null}]}',
      '"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}]}',
      '"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\\"city\\": \\"Zürich\\", \\"days\\": [1, 2]}"}}]},"finish_reason":null}]}',
      '"delta":{"tool_calls":[{"index":1,"id":"call_2","type":"function","function":{"name":"get_time","arguments":""}}]},"finish_reason":null}]}',
      '"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{}"}}]},"finish_reason":null}]}',
      '"delta":{},"finish_reason":"tool_calls"}]}',
      '[DONE]',
    ]);
    const msg = (await openaiFinal(enc.encode(out))).choices[0].message;
    expect(msg.tool_calls?.map((c) => (c.type === 'function' ? [c.id, c.function.name, c.function.arguments] : c.type))).toEqual([
      ['call_1', 'get_weather', '{"city": "Zürich", "days": [1, 2]}'], ['call_2', 'get_time', '{}'],
    ]);
  });

  it('to Anthropic: each call a tool_use block with the object as its input_json_delta, read so by the SDK', async () => {
    const out = atEveryCut(body, (chunks) => relayed({ from: 'openai', to: 'anthropic', id: 'msg_1', model: 'qwen' }, chunks));
    const msg = await anthropicFinal(enc.encode(out));
    expect(msg.content.map((c) => (c.type === 'tool_use' ? [c.id, c.name, c.input] : c.type === 'text' ? c.text : c.type))).toEqual([
      'Sehen wir nach. ', ['call_1', 'get_weather', { city: 'Zürich', days: [1, 2] }], ['call_2', 'get_time', {}],
    ]);
    expect(msg.stop_reason).toBe('tool_use');
  });
});

describe("Responses: a reasoning item's encrypted_content (include: [\"reasoning.encrypted_content\"])", () => {
  const rs = (o: Record<string, unknown>) => `event: ${o.type as string}\ndata: ${JSON.stringify(o)}\n\n`;
  const first = { id: 'rs_1', type: 'reasoning', summary: [] };
  const second = { id: 'rs_2', type: 'reasoning', summary: [] };
  const ENC1 = 'gAAAAABpF0zbM_w+/é==';
  const ENC2 = 'gAAAAABpF1xyQ9==';
  const body = rs({ type: 'response.created', response: { id: 'resp_1', status: 'in_progress', output: [] } })
    + rs({ type: 'response.output_item.added', output_index: 0, item: { ...first, encrypted_content: null } })
    + rs({ type: 'response.reasoning_summary_part.added', item_id: 'rs_1', output_index: 0, summary_index: 0, part: { type: 'summary_text', text: '' } })
    + rs({ type: 'response.reasoning_summary_text.delta', item_id: 'rs_1', output_index: 0, summary_index: 0, delta: '**Plan**\n\n' })
    + rs({ type: 'response.reasoning_summary_text.delta', item_id: 'rs_1', output_index: 0, summary_index: 0, delta: 'Look it up.' })
    + rs({ type: 'response.output_item.done', output_index: 0, item: { ...first, encrypted_content: ENC1, summary: [{ type: 'summary_text', text: '**Plan**\n\nLook it up.' }] } })
    // (an item without a summary: its encrypted content a block of no text)
    + rs({ type: 'response.output_item.added', output_index: 1, item: second })
    + rs({ type: 'response.output_item.done', output_index: 1, item: { ...second, encrypted_content: ENC2 } })
    + rs({ type: 'response.output_item.added', output_index: 2, item: { id: 'msg_1', type: 'message', role: 'assistant', content: [] } })
    + rs({ type: 'response.output_text.delta', item_id: 'msg_1', output_index: 2, content_index: 0, delta: 'Erledigt.' })
    + rs({ type: 'response.completed', response: { id: 'resp_1', status: 'completed', output: [] } });

  it('ModelStream: kept with the item\'s last block, as sent (a block of no text for an item without summary); never in the text', () => {
    const r = atEveryCut(body, (chunks) => readStream('openai-responses', chunks));
    expect(r.text).toBe('Erledigt.');
    expect(r.status).toBe('done');
    expect(r.blocks).toEqual([{ text: '**Plan**\n\nLook it up.', encrypted: ENC1, id: 'rs_1' }, { text: '', encrypted: ENC2, id: 'rs_2' }]);
    expect(r.report.reasoning).toBe('**Plan**\n\nLook it up.');
  });

  it('counts toward maxReasoningBytes: the item\'s end that passes it is ERR_REASONING_TOO_LONG', () => {
    const m = new ModelStream({ format: 'openai-responses', maxReasoningBytes: '**Plan**\n\nLook it up.'.length + 4 });
    expect(() => { m.push(enc.encode(body)); }).toThrow(expect.objectContaining({ code: 'ERR_REASONING_TOO_LONG' }));
  });

  it('relays: nothing of it written (OpenAI Chat and Anthropic Messages have no place for it: not made another provider\'s signature)', async () => {
    const toOpenAi = atEveryCut(body, (chunks) => events(relayed({ from: 'openai-responses' }, chunks)));
    expect(toOpenAi).toEqual([
      '"delta":{"role":"assistant","content":""},"finish_reason":null}]}',
      '"delta":{"reasoning_content":"**Plan**\\n\\n"},"finish_reason":null}]}',
      '"delta":{"reasoning_content":"Look it up."},"finish_reason":null}]}',
      '"delta":{"content":"Erledigt."},"finish_reason":null}]}',
      '"delta":{},"finish_reason":"stop"}]}',
      '[DONE]',
    ]);
    const toAnthropic = atEveryCut(body, (chunks) => relayed({ from: 'openai-responses', to: 'anthropic', id: 'msg_1', model: 'o' }, chunks));
    expect(toAnthropic).not.toContain('gAAAA');
    const msg = await anthropicFinal(enc.encode(toAnthropic));
    // (the thinking block with no signature: none came)
    expect(msg.content).toEqual([{ type: 'thinking', thinking: '**Plan**\n\nLook it up.' }, { type: 'text', text: 'Erledigt.' }]);
  });
});

describe("Responses: a reasoning item's id, on each of its blocks, with its encrypted_content (what a stateless caller sends back)", () => {
  // (with store: false and include: ["reasoning.encrypted_content"] the next turn's input carries
  // each reasoning item back: {type: "reasoning", id, summary, encrypted_content}; with store: true
  // and no previous_response_id, the item by its id)
  const rs = (o: Record<string, unknown>) => `event: ${o.type as string}\ndata: ${JSON.stringify(o)}\n\n`;
  const ENC = 'gAAAAABpF0zbM_w+/é==';
  const SUMMARY = [{ type: 'summary_text', text: '**Plan**\n\nLook it up.' }, { type: 'summary_text', text: '**Check**\n\nTwice.' }];
  const ITEMS = [
    { id: 'rs_a1', type: 'reasoning', summary: SUMMARY, encrypted_content: ENC },
    { id: 'rs_a2', type: 'reasoning', summary: [] },
  ];
  const MESSAGE = { id: 'msg_1', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Erledigt.', annotations: [] }] };
  const body = rs({ type: 'response.created', response: { id: 'resp_1', object: 'response', status: 'in_progress', output: [] } })
    + rs({ type: 'response.output_item.added', output_index: 0, item: { id: 'rs_a1', type: 'reasoning', summary: [], encrypted_content: null } })
    + SUMMARY.map((p, i) => rs({ type: 'response.reasoning_summary_part.added', item_id: 'rs_a1', output_index: 0, summary_index: i, part: { type: 'summary_text', text: '' } })
      + rs({ type: 'response.reasoning_summary_text.delta', item_id: 'rs_a1', output_index: 0, summary_index: i, delta: p.text.slice(0, 5) })
      + rs({ type: 'response.reasoning_summary_text.delta', item_id: 'rs_a1', output_index: 0, summary_index: i, delta: p.text.slice(5) })
      + rs({ type: 'response.reasoning_summary_text.done', item_id: 'rs_a1', output_index: 0, summary_index: i, text: p.text })
      + rs({ type: 'response.reasoning_summary_part.done', item_id: 'rs_a1', output_index: 0, summary_index: i, part: p })).join('')
    + rs({ type: 'response.output_item.done', output_index: 0, item: ITEMS[0] })
    // (an item of no summary, without encrypted content: its id alone, a block of no text)
    + rs({ type: 'response.output_item.added', output_index: 1, item: ITEMS[1] })
    + rs({ type: 'response.output_item.done', output_index: 1, item: ITEMS[1] })
    + rs({ type: 'response.output_item.added', output_index: 2, item: { ...MESSAGE, status: 'in_progress', content: [] } })
    + rs({ type: 'response.output_text.delta', item_id: 'msg_1', output_index: 2, content_index: 0, delta: 'Erledigt.' })
    + rs({ type: 'response.output_item.done', output_index: 2, item: MESSAGE })
    + rs({ type: 'response.completed', response: { id: 'resp_1', object: 'response', status: 'completed', output: [...ITEMS, MESSAGE] } });
  const BLOCKS = [
    { text: '**Plan**\n\nLook it up.', id: 'rs_a1' }, { text: '**Check**\n\nTwice.', id: 'rs_a1', encrypted: ENC }, { text: '', id: 'rs_a2' },
  ];

  it('ModelStream: each block of an item has its id, the last its encrypted_content, as sent', () => {
    const r = atEveryCut(body, (chunks) => readStream('openai-responses', chunks));
    expect(r.text).toBe('Erledigt.');
    expect(r.blocks).toEqual(BLOCKS);
    // (what the next turn's input carries, made from the blocks)
    const items = [...new Set(r.blocks.map((b) => b.id))].map((id) => {
      const of = r.blocks.filter((b) => b.id === id);
      const enc = of.at(-1)!.encrypted;
      return { id, type: 'reasoning', summary: of.filter((b) => b.text !== '').map((b) => ({ type: 'summary_text', text: b.text })), ...(enc === undefined ? {} : { encrypted_content: enc }) };
    });
    expect(items).toEqual(ITEMS);
  });

  it('a whole response (no stream) says the same', () => {
    const whole = JSON.stringify({ id: 'resp_1', object: 'response', status: 'completed', model: 'o4-mini', output: [...ITEMS, MESSAGE], usage: null });
    const r = atEveryCut(whole, (chunks) => readStream('openai-responses', chunks));
    expect(r.text).toBe('Erledigt.');
    expect(r.blocks).toEqual(BLOCKS);
  });

  it('an item whose beginning was not read is named at its end', () => {
    const cut = body.replace(rs({ type: 'response.output_item.added', output_index: 1, item: ITEMS[1] }), '');
    expect(cut).not.toBe(body);
    expect(atEveryCut(cut, (chunks) => readStream('openai-responses', chunks)).blocks).toEqual(BLOCKS);
  });

  it('the ids count toward maxReasoningBytes', () => {
    // (each as sent: its JSON string's bytes)
    const sent = (s: string) => enc.encode(JSON.stringify(s)).length - 2;
    const all = sent(SUMMARY[0].text) + sent(SUMMARY[1].text) + sent(ENC) + 'rs_a1'.length + 'rs_a2'.length;
    const m = new ModelStream({ format: 'openai-responses', maxReasoningBytes: all - 1 });
    expect(() => { m.push(enc.encode(body)); }).toThrow(expect.objectContaining({ code: 'ERR_REASONING_TOO_LONG' }));
    const room = new ModelStream({ format: 'openai-responses', maxReasoningBytes: all });
    room.push(enc.encode(body));
    expect(room.reasoningBlocks).toEqual(BLOCKS);
  });
});

/** A Gemini chunk of `parts` (the followed candidate's), with `extra` after its content. */
const gchunk = (parts: unknown[], extra = '') => `data: {"candidates":[{"content":{"parts":${JSON.stringify(parts)},"role":"model"}${extra}}],"modelVersion":"gemini-2.5-flash"}\r\n\r\n`;

describe('gemini: the code execution tool (executableCode, codeExecutionResult)', () => {
  // Google runs the code itself: a call of the provider's own (as Anthropic's server_tool_use and
  // Responses' hosted tools), its code as arguments and its result kept with it; no text of either
  // in the answer, and no client is given the call.
  const CODE = { language: 'PYTHON', code: 'print(sum(range(101)))\n' };
  const body = gchunk([{ text: 'Ich rechne nach. ' }])
    + gchunk([{ executableCode: CODE }])
    + gchunk([{ codeExecutionResult: { outcome: 'OUTCOME_OK', output: '5050\n' } }])
    // (the Gemini API's ids: a result names its code's)
    + gchunk([{ executableCode: { language: 'PYTHON', code: 'import math\nprint(math.pi)', id: 'ex_2' }, thoughtSignature: 'CgsigA==' }])
    + gchunk([{ codeExecutionResult: { outcome: 'OUTCOME_FAILED', output: 'Traceback …\n', id: 'ex_2' } }, { text: 'Die Summe ist 5050.' }])
    + gchunk([{ text: '' }], ',"finishReason":"STOP"');
  const SERVER = [
    { index: 0, id: '', name: 'code_execution', arguments: '{"language":"PYTHON","code":"print(sum(range(101)))\\n"}', done: true, valid: true, result: '{"outcome":"OUTCOME_OK","output":"5050\\n"}' },
    {
      index: 1, id: 'ex_2', name: 'code_execution', arguments: '{"language":"PYTHON","code":"import math\\nprint(math.pi)","id":"ex_2"}', done: true, valid: true,
      signature: 'CgsigA==', result: '{"outcome":"OUTCOME_FAILED","output":"Traceback …\\n","id":"ex_2"}',
    },
  ];

  it('ModelStream: each code a server call with its code as arguments and its result; the text only the answer\'s', () => {
    const r = atEveryCut(body, (chunks) => readStream('gemini', chunks));
    expect(r.text).toBe('Ich rechne nach. Die Summe ist 5050.');
    expect([r.status, r.finishReason]).toEqual(['done', 'STOP']);
    expect(r.toolCalls).toEqual([]);
    expect(r.serverToolCalls).toEqual(SERVER);
    expect(r.blocks).toEqual([]);
  });

  it('a result whose code never came is kept on a call of its own (no arguments)', () => {
    const lone = gchunk([{ codeExecutionResult: { outcome: 'OUTCOME_DEADLINE_EXCEEDED' } }]) + gchunk([{ text: 'Zu langsam.' }], ',"finishReason":"STOP"');
    const r = atEveryCut(lone, (chunks) => readStream('gemini', chunks));
    expect(r.text).toBe('Zu langsam.');
    expect(r.serverToolCalls).toEqual([{ index: 0, id: '', name: 'code_execution', arguments: '{}', done: true, valid: true, result: '{"outcome":"OUTCOME_DEADLINE_EXCEEDED"}' }]);
  });

  it('results count toward maxArgumentBytes (as sent)', () => {
    const first = body.split('\r\n\r\n').slice(0, 3).map((e) => `${e}\r\n\r\n`).join('');
    const kept = enc.encode(SERVER[0].arguments + SERVER[0].result).length;
    const fits = new ModelStream({ format: 'gemini', maxArgumentBytes: kept });
    fits.push(enc.encode(first));
    expect(fits.serverToolCalls).toEqual([SERVER[0]]);
    const over = new ModelStream({ format: 'gemini', maxArgumentBytes: kept - 1 });
    expect(() => { over.push(enc.encode(first)); }).toThrow(expect.objectContaining({ code: 'ERR_ARGUMENTS_TOO_LARGE' }));
    expect(over.serverToolCalls).toEqual([{ ...SERVER[0], result: undefined }].map(({ result: _, ...c }) => c));
  });

  it('relays: the provider\'s calls left out, the answer\'s text only (exact bytes)', () => {
    expectTextOnlyRelays(body, ['Ich rechne nach. ', 'Die Summe ist 5050.']);
  });
});

describe('gemini: built-in tools run with function calling (toolCall, toolResponse parts)', () => {
  // With built-in tools and functions in one request, Gemini says each of its own tools' calls in
  // a `toolCall` part (`{id, toolType, args}`, signed) and its result in a `toolResponse` part
  // (`{id, toolType, response}`), which the caller sends back in the turn's content as they came.
  // They were dropped, and a toolCall's thoughtSignature was taken for a reasoning block's. Now
  // each is a call of the provider's own, as the code execution tool's is: the part's object as
  // its arguments, its toolType its name, its signature with it, the response's object as its
  // result; never text, and no client is given the call.
  const CALL = { id: 'tc_1', toolType: 'GOOGLE_SEARCH_WEB', args: { queries: ['Wetter Zürich morgen'] } };
  const RESPONSE = { id: 'tc_1', toolType: 'GOOGLE_SEARCH_WEB', response: { search_suggestions: '<div>…</div>' } };
  const body = gchunk([{ text: 'Ich sehe nach. ' }])
    + gchunk([{ toolCall: CALL, thoughtSignature: 'CtcBsig==' }])
    + gchunk([{ toolResponse: RESPONSE }])
    + gchunk([{ functionCall: { id: 'fc_1', name: 'notify', args: { text: 'Regen 🌧️' } }, thoughtSignature: 'CtcBfc==' }])
    + gchunk([{ text: 'Morgen regnet es.' }], ',"finishReason":"STOP"');

  it('ModelStream: the call a server call with its object, name, signature and result; the client\'s call and the text as they were', () => {
    const r = atEveryCut(body, (chunks) => readStream('gemini', chunks));
    expect(r.text).toBe('Ich sehe nach. Morgen regnet es.');
    expect([r.status, r.finishReason]).toEqual(['done', 'STOP']);
    expect(r.serverToolCalls).toEqual([{
      index: 0, id: 'tc_1', name: 'GOOGLE_SEARCH_WEB', arguments: JSON.stringify(CALL), done: true, valid: true, signature: 'CtcBsig==', result: JSON.stringify(RESPONSE),
    }]);
    expect(r.toolCalls).toEqual([{ index: 0, id: 'fc_1', name: 'notify', arguments: '{"text":"Regen 🌧️"}', done: true, valid: true, signature: 'CtcBfc==' }]);
    // (the toolCall's signature is its own, not a reasoning block's)
    expect(r.blocks).toEqual([]);
  });

  it('a response whose call never came is kept on a call of its own, named by its toolType', () => {
    const lone = gchunk([{ toolResponse: { id: 'tc_9', toolType: 'URL_CONTEXT', response: { ok: true } } }]) + gchunk([{ text: 'Fertig.' }], ',"finishReason":"STOP"');
    const r = atEveryCut(lone, (chunks) => readStream('gemini', chunks));
    expect(r.text).toBe('Fertig.');
    expect(r.serverToolCalls).toEqual([{ index: 0, id: 'tc_9', name: 'URL_CONTEXT', arguments: '{}', done: true, valid: true, result: '{"id":"tc_9","toolType":"URL_CONTEXT","response":{"ok":true}}' }]);
  });

  it('relays: the provider\'s calls left out, the client\'s call and the answer\'s text (both clients read them)', async () => {
    for (const to of ['openai', 'anthropic'] as const) {
      const out = atEveryCut(body, (chunks) => relayed({ from: 'gemini', to }, chunks).replace(/(?:chatcmpl-|msg_|call_|toolu_)seam[0-9a-z]+/g, 'seam').replace(/"created":\d+/g, '"created":0'));
      expect(out).not.toContain('GOOGLE_SEARCH_WEB');
      if (to === 'openai') {
        const done = await openaiFinal(enc.encode(out));
        expect([done.choices[0].message.content, done.choices[0].message.tool_calls?.map((c) => c.type === 'function' ? [c.id, c.function.name, c.function.arguments] : [])])
          .toEqual(['Ich sehe nach. Morgen regnet es.', [['fc_1', 'notify', '{"text":"Regen 🌧️"}']]]);
      } else {
        const msg = await anthropicFinal(enc.encode(out));
        // (the function call's signature in the thinking block of no text before it; the toolCall's, the provider's own, in none)
        expect(msg.content.map((b) => (b.type === 'text' ? b.text : b.type === 'tool_use' ? [b.id, b.name, b.input] : b.type === 'thinking' ? [b.thinking, b.signature] : b.type)))
          .toEqual(['Ich sehe nach. ', ['', 'CtcBfc=='], ['fc_1', 'notify', { text: 'Regen 🌧️' }], 'Morgen regnet es.']);
      }
    }
  });
});

describe('gemini: media the model returns (inlineData)', () => {
  // An image model's answer: text, a thought image, the image (signed), then text. The media are
  // kept as sent within maxMediaBytes, past it without their data (never lost silently), and are
  // never text; no relay's client format has a place for them.
  const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
  const WAV = 'UklGRiQAAABXQVZFZm10IBAAAAABAAEAgD4AAAB9AAACABAAZGF0YQAAAAA=';
  const body = gchunk([{ text: 'Hier ist dein Bild: ' }])
    + gchunk([{ inlineData: { mimeType: 'image/png', data: WAV.slice(0, 8) }, thought: true }])
    + gchunk([{ inlineData: { mimeType: 'image/png', data: PNG }, thoughtSignature: 'CiIBsig/+==' }])
    + gchunk([{ inlineData: { mimeType: 'audio/wav', data: WAV } }, { text: 'Fertig.' }], ',"finishReason":"STOP"');
  const MEDIA = [
    { mimeType: 'image/png', data: WAV.slice(0, 8), bytes: 8, thought: true },
    { mimeType: 'image/png', data: PNG, bytes: PNG.length, signature: 'CiIBsig/+==' },
    { mimeType: 'audio/wav', data: WAV, bytes: WAV.length },
  ];

  it('ModelStream: each part kept as sent (its media type, base64 data, size, thought and signature), in order; the text only the answer\'s', () => {
    const r = atEveryCut(body, (chunks) => {
      const s = readStream('gemini', chunks);
      return { ...s, media: s.report.media };
    });
    expect(r.text).toBe('Hier ist dein Bild: Fertig.');
    expect([r.status, r.finishReason]).toEqual(['done', 'STOP']);
    expect(r.media).toEqual(MEDIA);
    // (the image's signature is its own: no reasoning block holds it)
    expect(r.blocks).toEqual([]);
  });

  it('past maxMediaBytes a part is kept without its data (omitted, with its type and size), and the stream goes on', () => {
    const limit = 8 + PNG.length + WAV.length - 1;
    const r = atEveryCut(body, (chunks) => {
      const m = new ModelStream({ format: 'gemini', maxMediaBytes: limit });
      let text = '';
      for (const c of chunks) text += m.push(c);
      text += m.flush();
      return { text, status: m.status, media: m.media };
    });
    expect(r).toEqual({ text: 'Hier ist dein Bild: Fertig.', status: 'done', media: [MEDIA[0], MEDIA[1], { mimeType: 'audio/wav', data: '', bytes: WAV.length, omitted: true }] });
    const none = new ModelStream({ format: 'gemini', maxMediaBytes: 0 });
    none.push(enc.encode(body));
    expect(none.finish().media).toEqual(MEDIA.map((x) => ({ ...x, data: '', omitted: true })));
  });

  it('relays: the answer\'s text only (exact bytes)', () => {
    expectTextOnlyRelays(body, ['Hier ist dein Bild: ', 'Fertig.']);
  });
});

describe("anthropic: a server tool's result block (code execution)", () => {
  const a = (o: Record<string, unknown>) => `event: ${o.type as string}\ndata: ${JSON.stringify(o)}\n\n`;
  const RESULT = { type: 'bash_code_execution_tool_result', tool_use_id: 'srvtoolu_2', content: { type: 'bash_code_execution_result', stdout: '5050\n', stderr: '', return_code: 0, content: [] } };
  const body = a({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], model: 'claude', stop_reason: null, usage: { input_tokens: 10, output_tokens: 1 } } })
    + a({ type: 'content_block_start', index: 0, content_block: { type: 'server_tool_use', id: 'srvtoolu_2', name: 'bash_code_execution', input: {} } })
    + a({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"command": "python -c \'print(sum(range(101)))\'"}' } })
    + a({ type: 'content_block_stop', index: 0 })
    + a({ type: 'content_block_start', index: 1, content_block: RESULT })
    + a({ type: 'content_block_stop', index: 1 })
    + a({ type: 'content_block_start', index: 2, content_block: { type: 'text', text: '' } })
    + a({ type: 'content_block_delta', index: 2, delta: { type: 'text_delta', text: '5050.' } })
    + a({ type: 'content_block_stop', index: 2 })
    + a({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 20 } })
    + a({ type: 'message_stop' });

  it('ModelStream: the result block, as sent, is the result of the call it names; not text', () => {
    const r = atEveryCut(body, (chunks) => {
      const m = new ModelStream({ format: 'anthropic' });
      let text = '';
      for (const c of chunks) text += m.push(c);
      text += m.flush();
      return { text, status: m.status, calls: m.toolCalls, server: m.serverToolCalls };
    });
    expect(r).toEqual({
      text: '5050.', status: 'done', calls: [],
      server: [{ index: 0, id: 'srvtoolu_2', name: 'bash_code_execution', arguments: '{"command": "python -c \'print(sum(range(101)))\'"}', done: true, valid: true, result: JSON.stringify(RESULT) }],
    });
  });
});

describe('Anthropic: stop_reason "pause_turn" (the server paused a long turn of its own tools)', () => {
  // (the client sends the answer back as it is to let the model go on: not a finished turn, in
  // the provider's words as sent, and to OpenAI's clients `length`, an answer not finished, where
  // it was `stop`, which they take for a finished one)
  const sse = (o: Record<string, unknown>) => `event: ${o.type as string}\ndata: ${JSON.stringify(o)}\n\n`;
  const body = sse({ type: 'message_start', message: { id: 'msg_p', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 30, output_tokens: 1 } } })
    + sse({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } })
    + sse({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Ich suche weiter. ' } })
    + sse({ type: 'content_block_stop', index: 0 })
    + sse({ type: 'content_block_start', index: 1, content_block: { type: 'server_tool_use', id: 'srvtoolu_p1', name: 'web_search', input: {} } })
    + sse({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"query":"Zürich Wetter"}' } })
    + sse({ type: 'content_block_stop', index: 1 })
    + sse({ type: 'message_delta', delta: { stop_reason: 'pause_turn', stop_sequence: null }, usage: { output_tokens: 40 } })
    + sse({ type: 'message_stop' });

  it('ModelStream: the reason as sent, pause_turn, the stream done', () => {
    const r = atEveryCut(body, (chunks) => {
      const m = new ModelStream({ format: 'anthropic' });
      let text = '';
      for (const c of chunks) text += m.push(c);
      text += m.flush();
      const rep = m.finish();
      return { text, status: rep.status, finishReason: rep.finishReason, server: m.serverToolCalls.map((c) => [c.id, c.name, c.arguments]) };
    });
    expect(r).toEqual({ text: 'Ich suche weiter. ', status: 'done', finishReason: 'pause_turn', server: [['srvtoolu_p1', 'web_search', '{"query":"Zürich Wetter"}']] });
  });

  it('in a client\'s words: pause_turn to Anthropic\'s, length to OpenAI\'s (not stop: the turn is not over), which openai-node reads', async () => {
    expect(describeFormat('anthropic').finishReason('pause_turn', 'anthropic')).toBe('pause_turn');
    expect(describeFormat('anthropic').finishReason('pause_turn', 'openai')).toBe('length');
    // (the envelope, its id and time the relay's own, left out)
    const bare = (e: string) => e.replace(/^\{"id":"[^"]*","object":"chat\.completion\.chunk","created":\d+,"model":"anthropic",/, '');
    expect(atEveryCut(body, (chunks) => events(relayed({ from: 'anthropic' }, chunks)).map(bare))).toEqual([
      '"delta":{"role":"assistant","content":""},"finish_reason":null}]}',
      '"delta":{"content":"Ich suche weiter. "},"finish_reason":null}]}',
      '"delta":{},"finish_reason":"length"}]}',
      '"choices":[],"usage":{"prompt_tokens":30,"completion_tokens":40,"total_tokens":70}}',
      '[DONE]',
    ]);
    const done = await openaiFinal(enc.encode(relayed({ from: 'anthropic' }, [enc.encode(body)])));
    expect(done.choices[0].finish_reason).toBe('length');
    expect(done.choices[0].message.content).toBe('Ich suche weiter. ');
    const toAnthropic = atEveryCut(body, (chunks) => relayed({ from: 'anthropic', to: 'anthropic' }, chunks));
    expect((await anthropicFinal(enc.encode(toAnthropic))).stop_reason).toBe('pause_turn');
  });
});

describe('Anthropic: stop_reason "compaction" (the server compacted the conversation and paused to return the compaction block)', () => {
  // (with context management's pause_after_compaction, or a compaction request: the turn's answer
  // is not there, the client sends the block back to go on; to OpenAI's clients `length`, an answer
  // not finished, where the reason went as sent, a word openai-node's types do not know)
  const sse = (o: Record<string, unknown>) => `event: ${o.type as string}\ndata: ${JSON.stringify(o)}\n\n`;
  const body = sse({ type: 'message_start', message: { id: 'msg_c', type: 'message', role: 'assistant', model: 'claude-opus-5', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 150000, output_tokens: 1 } } })
    + sse({ type: 'content_block_start', index: 0, content_block: { type: 'compaction', content: null, encrypted_content: null } })
    + sse({ type: 'content_block_delta', index: 0, delta: { type: 'compaction_delta', content: 'Der Nutzer plant eine Reise nach Zürich.', encrypted_content: 'Q29tcA==' } })
    + sse({ type: 'content_block_stop', index: 0 })
    + sse({ type: 'message_delta', delta: { stop_reason: 'compaction', stop_sequence: null }, usage: { output_tokens: 12 } })
    + sse({ type: 'message_stop' });

  it('ModelStream: the reason as sent, compaction, the stream done, no text (the summary is not the answer)', () => {
    const r = atEveryCut(body, (chunks) => {
      const m = new ModelStream({ format: 'anthropic' });
      let text = '';
      for (const c of chunks) text += m.push(c);
      text += m.flush();
      const rep = m.finish();
      return { text, status: rep.status, finishReason: rep.finishReason, calls: rep.toolCalls.length + m.serverToolCalls.length };
    });
    expect(r).toEqual({ text: '', status: 'done', finishReason: 'compaction', calls: 0 });
  });

  it('in a client\'s words: compaction to Anthropic\'s, length to OpenAI\'s, which openai-node reads', async () => {
    expect(describeFormat('anthropic').finishReason('compaction', 'anthropic')).toBe('compaction');
    expect(describeFormat('anthropic').finishReason('compaction', 'openai')).toBe('length');
    const bare = (e: string) => e.replace(/^\{"id":"[^"]*","object":"chat\.completion\.chunk","created":\d+,"model":"anthropic",/, '');
    expect(atEveryCut(body, (chunks) => events(relayed({ from: 'anthropic' }, chunks)).map(bare))).toEqual([
      '"delta":{"role":"assistant","content":""},"finish_reason":null}]}',
      '"delta":{},"finish_reason":"length"}]}',
      '"choices":[],"usage":{"prompt_tokens":150000,"completion_tokens":12,"total_tokens":150012}}',
      '[DONE]',
    ]);
    const done = await openaiFinal(enc.encode(relayed({ from: 'anthropic' }, [enc.encode(body)])));
    expect(done.choices[0].finish_reason).toBe('length');
    const toAnthropic = atEveryCut(body, (chunks) => relayed({ from: 'anthropic', to: 'anthropic' }, chunks));
    expect((await anthropicFinal(enc.encode(toAnthropic))).stop_reason).toBe('compaction');
  });
});

describe('Responses: a response incomplete for a reason of its own (max_messages; steered, over WebSocket)', () => {
  // (`response.incomplete` says why in incomplete_details.reason: max_output_tokens and
  // content_filter were in clients' words; max_messages (the response's limit of output messages)
  // and steered (stopped at a safe boundary for a steering input, a successor response going on)
  // went to clients as sent, words neither client's types know. Both are an answer not finished
  // that goes on: length to OpenAI's clients, pause_turn to Anthropic's)
  const rs = (o: Record<string, unknown>) => `event: ${o.type as string}\ndata: ${JSON.stringify(o)}\n\n`;
  const body = (reason: string) => rs({ type: 'response.created', response: { id: 'resp_i', object: 'response', status: 'in_progress', output: [] } })
    + rs({ type: 'response.output_item.added', output_index: 0, item: { id: 'msg_i', type: 'message', role: 'assistant', status: 'in_progress', content: [] } })
    + rs({ type: 'response.output_text.delta', item_id: 'msg_i', output_index: 0, content_index: 0, delta: 'Erst der Plan: ' })
    + rs({ type: 'response.output_text.delta', item_id: 'msg_i', output_index: 0, content_index: 0, delta: 'Zürich 🚆' })
    + rs({ type: 'response.incomplete', response: {
      id: 'resp_i', object: 'response', status: 'incomplete', incomplete_details: { reason }, output: [],
      usage: { input_tokens: 20, output_tokens: 6, total_tokens: 26 },
    } });

  for (const reason of ['max_messages', 'steered']) {
    it(`${reason}: ModelStream keeps it as sent, done; length to OpenAI's clients and pause_turn to Anthropic's, which they read`, async () => {
      const r = atEveryCut(body(reason), (chunks) => {
        const got = readStream('openai-responses', chunks);
        return { text: got.text, status: got.status, finishReason: got.finishReason };
      });
      expect(r).toEqual({ text: 'Erst der Plan: Zürich 🚆', status: 'done', finishReason: reason });
      const f = describeFormat('openai-responses');
      expect([f.finishReason(reason, 'openai'), f.finishReason(reason, 'anthropic')]).toEqual(['length', 'pause_turn']);
      const bare = (e: string) => e.replace(/^\{"id":"[^"]*","object":"chat\.completion\.chunk","created":\d+,"model":"[^"]*",/, '');
      expect(atEveryCut(body(reason), (chunks) => events(relayed({ from: 'openai-responses' }, chunks)).map(bare))).toEqual([
        '"delta":{"role":"assistant","content":""},"finish_reason":null}]}',
        '"delta":{"content":"Erst der Plan: "},"finish_reason":null}]}',
        '"delta":{"content":"Zürich 🚆"},"finish_reason":null}]}',
        '"delta":{},"finish_reason":"length"}]}',
        '"choices":[],"usage":{"prompt_tokens":20,"completion_tokens":6,"total_tokens":26}}',
        '[DONE]',
      ]);
      const done = await openaiFinal(enc.encode(relayed({ from: 'openai-responses' }, [enc.encode(body(reason))])));
      expect([done.choices[0].finish_reason, done.choices[0].message.content]).toEqual(['length', 'Erst der Plan: Zürich 🚆']);
      const toAnthropic = atEveryCut(body(reason), (chunks) => relayed({ from: 'openai-responses', to: 'anthropic' }, chunks).replace(/msg_seam[0-9a-z]+/g, 'msg_seam'));
      const msg = await anthropicFinal(enc.encode(toAnthropic));
      expect([msg.stop_reason, msg.content]).toEqual(['pause_turn', [{ type: 'text', text: 'Erst der Plan: Zürich 🚆' }]]);
    });
  }
});

describe('Responses: an answer in audio (response.audio.delta, response.audio.transcript.delta)', () => {
  // (the answer's words are its audio's transcript, as OpenAI Chat's audio.transcript is: they were
  // dropped, and a spoken answer read as an empty one that completed)
  const rs = (o: Record<string, unknown>) => `event: ${o.type as string}\ndata: ${JSON.stringify(o)}\n\n`;
  const body = rs({ type: 'response.created', sequence_number: 0, response: { id: 'resp_a', object: 'response', status: 'in_progress', output: [] } })
    + rs({ type: 'response.audio.delta', sequence_number: 1, delta: 'UklGRiQAAABXQVZF' })
    + rs({ type: 'response.audio.transcript.delta', sequence_number: 2, delta: 'Grüezi, ' })
    + rs({ type: 'response.audio.transcript.delta', sequence_number: 3, delta: 'wie geht’s? 👋🏼' })
    + rs({ type: 'response.audio.done', sequence_number: 4 })
    + rs({ type: 'response.audio.transcript.done', sequence_number: 5 })
    + rs({ type: 'response.completed', sequence_number: 6, response: { id: 'resp_a', object: 'response', status: 'completed', output: [], usage: { input_tokens: 9, output_tokens: 30, total_tokens: 39 } } });

  it('ModelStream: the transcript is the text, whole and at every cut (raw too)', () => {
    const r = atEveryCut(body, (chunks) => {
      const got = readStream('openai-responses', chunks);
      return { text: got.text, status: got.status, finishReason: got.finishReason };
    });
    expect(r).toEqual({ text: 'Grüezi, wie geht’s? 👋🏼', status: 'done', finishReason: 'completed' });
    const raw = atEveryCut(body, (chunks) => {
      const m = new ModelStream({ format: 'openai-responses', raw: true });
      return chunks.map((c) => m.push(c)).join('') + m.flush();
    });
    expect(raw).toBe('Grüezi, wie geht’s? 👋🏼');
  });

  it('relays: the transcript as each client\'s text, which both official clients read', async () => {
    const toOpenAi = atEveryCut(body, (chunks) => relayed({ from: 'openai-responses' }, chunks).replace(/chatcmpl-seam[0-9a-z]+/g, 'seam').replace(/"created":\d+/g, '"created":0'));
    expect((await openaiFinal(enc.encode(toOpenAi))).choices[0].message.content).toBe('Grüezi, wie geht’s? 👋🏼');
    const toAnthropic = atEveryCut(body, (chunks) => relayed({ from: 'openai-responses', to: 'anthropic' }, chunks).replace(/msg_seam[0-9a-z]+/g, 'msg_seam'));
    const msg = await anthropicFinal(enc.encode(toAnthropic));
    expect([msg.stop_reason, msg.content]).toEqual(['end_turn', [{ type: 'text', text: 'Grüezi, wie geht’s? 👋🏼' }]]);
  });
});

describe('openai: OpenRouter\'s reasoning_details', () => {
  // OpenRouter says each reasoning delta twice, as `reasoning` and as an item of `reasoning_details`
  // (`reasoning.text` {text, signature?}, `reasoning.summary` {summary}, `reasoning.encrypted`
  // {data}, each with `format` and `index`); a signature or encrypted data comes in an item of its
  // own, and the caller sends it back with the block. Only `reasoning` was read: a stream of items
  // alone lost its reasoning, and every stream its signatures and redacted blocks.
  const claude = FIXTURES.find((f) => f.name === 'openai-openrouter-reasoning-details')!.body;
  const gpt = FIXTURES.find((f) => f.name === 'openai-openrouter-summary-details')!.body;

  it('ModelStream: the reasoning once, its blocks with their signature, redacted data and encrypted reasoning, at every cut (raw too)', () => {
    const read = (body: string, raw: boolean) => atEveryCut(body, (chunks) => {
      const m = new ModelStream({ format: 'openai', raw });
      let text = '';
      for (const c of chunks) text += m.push(c);
      text += m.flush();
      const r = m.finish();
      return { text, reasoning: m.reasoning, blocks: m.reasoningBlocks.map((b) => ({ ...b })), status: r.status, finishReason: r.finishReason };
    });
    for (const raw of [false, true]) {
      expect(read(claude, raw), `raw ${raw}`).toEqual({
        text: 'Ich sehe nach.', reasoning: 'Der Nutzer fragt nach dem Wetter in Zürich – e\u0301 👩‍💻.', status: 'done', finishReason: 'stop',
        blocks: [
          { text: 'Der Nutzer fragt nach dem Wetter in Zürich – e\u0301 👩‍💻.', signature: 'EqQBCgIYAhIM1gbc+/A=' },
          { text: '', redacted: 'UmVkYWN0ZWQ=' },
        ],
      });
      expect(read(gpt, raw), `raw ${raw}`).toEqual({
        text: '5 und 6.', reasoning: '**Rechnen**\n\n2+3 und 2·3, ganz einfach.', status: 'done', finishReason: 'stop',
        blocks: [{ text: '**Rechnen**\n\n2+3 und 2·3, ganz einfach.', encrypted: 'gAAAAABo1w==' }],
      });
    }
  });

  it('ModelEventReader: each event\'s reasoning once, as a stream reads it', () => {
    for (const [body, want] of [[claude, ['', 'Der Nutzer fragt nach', ' dem Wetter in Zürich – e\u0301 👩‍💻.', '', '', '', '', '', '']], [gpt, ['**Rechnen**\n\n2+3', ' und 2·3, ganz einfach.', '', '', '', '']]] as const) {
      const reader = new ModelEventReader({ format: 'openai' });
      expect(body.split('\n\n').filter((x) => x !== '').map((e) => reader.read(e.slice('data: '.length)).reasoning)).toEqual(want);
    }
  });

  it('to Anthropic: a thinking block with its signature_delta, then a redacted_thinking block (exact events), read so by the SDK', async () => {
    const out = atEveryCut(claude, (chunks) => relayed({ from: 'openai', to: 'anthropic', id: 'msg_1', model: 'claude' }, chunks));
    expect(events(out).slice(1)).toEqual([
      '{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}',
      '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Der Nutzer fragt nach"}}',
      '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":" dem Wetter in Zürich – e\\u0301 👩‍💻."}}',
      '{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM1gbc+/A="}}',
      '{"type":"content_block_stop","index":0}',
      '{"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"UmVkYWN0ZWQ="}}',
      '{"type":"content_block_stop","index":1}',
      '{"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}',
      '{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"Ich sehe nach."}}',
      '{"type":"content_block_stop","index":2}',
      '{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":31,"input_tokens":40}}',
      '{"type":"message_stop"}',
    ]);
    const msg = await anthropicFinal(enc.encode(out));
    expect(msg.content).toEqual([
      { type: 'thinking', thinking: 'Der Nutzer fragt nach dem Wetter in Zürich – e\u0301 👩‍💻.', signature: 'EqQBCgIYAhIM1gbc+/A=' },
      { type: 'redacted_thinking', data: 'UmVkYWN0ZWQ=' },
      { type: 'text', text: 'Ich sehe nach.' },
    ]);
    // (OpenAI's encrypted reasoning has no place in Anthropic's blocks: the summaries alone, unsigned)
    const fromGpt = await anthropicFinal(enc.encode(atEveryCut(gpt, (chunks) => relayed({ from: 'openai', to: 'anthropic', id: 'msg_2', model: 'gpt' }, chunks))));
    expect(fromGpt.content).toEqual([
      { type: 'thinking', thinking: '**Rechnen**\n\n2+3 und 2·3, ganz einfach.' },
      { type: 'text', text: '5 und 6.' },
    ]);
  });

  it('a whole answer (OpenRouter\'s message with reasoning and reasoning_details) reads as its stream: the reasoning once, before the text, its blocks signed', () => {
    const details = [
      { type: 'reasoning.text', text: 'Der Nutzer fragt nach dem Wetter.', signature: 'EqQBCgIYAhIM', format: 'anthropic-claude-v1', index: 0 },
      { type: 'reasoning.encrypted', data: 'UmVkYWN0ZWQ=', id: null, format: 'anthropic-claude-v1', index: 1 },
    ];
    const body = JSON.stringify({
      id: 'gen-1', provider: 'Anthropic', model: 'anthropic/claude-sonnet-4', object: 'chat.completion', created: 1,
      choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'Ich sehe nach.', refusal: null, reasoning: 'Der Nutzer fragt nach dem Wetter.', reasoning_details: details } }],
      usage: { prompt_tokens: 40, completion_tokens: 31, total_tokens: 71 },
    });
    const r = atEveryCut(body, (chunks) => {
      const got = readStream('openai', chunks);
      return { text: got.text, status: got.status, finishReason: got.finishReason, blocks: got.blocks.map((b) => ({ ...b })) };
    });
    expect(r).toEqual({
      text: 'Ich sehe nach.', status: 'done', finishReason: 'stop',
      blocks: [{ text: 'Der Nutzer fragt nach dem Wetter.', signature: 'EqQBCgIYAhIM' }, { text: '', redacted: 'UmVkYWN0ZWQ=' }],
    });
  });

  it('to OpenAI: the events as they came (reasoning_details and all), read by openai-node', async () => {
    const out = atEveryCut(claude, (chunks) => relayed({ from: 'openai' }, chunks));
    expect(out).toBe(claude);
    const done = await openaiFinal(enc.encode(out));
    expect([done.choices[0].message.content, done.choices[0].finish_reason]).toEqual(['Ich sehe nach.', 'stop']);
  });
});
