// Bedrock ConverseStream (format: 'bedrock'): AWS's binary event stream, framed in the core, read by
// ModelStream and relayed by SseRelay to OpenAI Chat and Anthropic Messages. The fixtures
// (test/helpers/bedrock-fixtures.ts) are encoded by AWS's own codec and read by a reference
// written from AWS's documentation with that codec and JSON.parse; each is fed whole, cut in two
// at every byte, and dripped. What a relay's client reads is accumulated as the official clients
// do (test/helpers/clients.ts), and the official openai and @anthropic-ai/sdk clients read a
// relayed stream of every fixture over HTTP.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  EventStreamError, ModelEventReader, ModelEventStreamDecoder, ModelStream, ModelStreamError, SseRelay, describeFormat,
  type ModelEventStreamMessage,
} from '../../bindings/index.js';
import { BEDROCK_FIXTURES, type BedrockFixture, bedrockReference, codec, crc32Ref, encodeMessage } from '../helpers/bedrock-fixtures.js';
import { readAnthropic, readOpenAi } from '../helpers/clients.js';
import { concat, cut } from '../helpers/random.js';
import { messagesOf, textOutcome } from '../helpers/thrown.js';

const enc = new TextEncoder();

function chunkings(b: Uint8Array): Uint8Array[][] {
  const out: Uint8Array[][] = [[b]];
  for (let i = 1; i < b.length; i++) out.push(cut(b, [i]));
  out.push(Array.from({ length: b.length }, (_, i) => b.subarray(i, i + 1)));
  return out;
}

function read(f: BedrockFixture, chunks: Uint8Array[], raw: boolean) {
  const m = new ModelStream({ format: 'bedrock', raw });
  const { text, error: e } = textOutcome(m, chunks);
  const error = e && { code: e.code, offset: e.offset, ...(e.code === 'ERR_PROVIDER' ? { message: e.providerMessage } : {}) };
  const r = {
    text, reasoning: m.reasoning, status: m.status, finishReason: m.finishReason, usage: m.usage, events: m.events,
    toolCalls: m.toolCalls.map((c) => ({ ...c })), signatures: m.reasoningBlocks.flatMap((b) => [b.signature, b.redacted].filter((x): x is string => x !== undefined)),
    error,
  };
  m.dispose();
  return r;
}

describe.each(BEDROCK_FIXTURES.map((f) => [f.name, f] as const))('bedrock fixture %s', (_, f) => {
  const e = f.expected;
  // (committed: the whole text, NFC; a stream that fails gives what it held back with the error)
  const want = (raw: boolean) => ({
    text: raw ? e.text : e.text.normalize('NFC'), reasoning: e.reasoning, status: e.status, finishReason: e.finishReason, usage: e.usage, events: e.events,
    toolCalls: e.toolCalls, signatures: e.signatures,
    error: e.error && { code: e.error.code, offset: e.error.offset, ...(e.error.code === 'ERR_PROVIDER' ? { message: expect.stringContaining(e.error.message!) } : {}) },
  });

  test('the hand-written results are the reference reading (AWS\'s codec, JSON.parse) of the bytes', () => {
    const ref = bedrockReference(f.bytes);
    expect({ ...ref, error: ref.error && { code: ref.error.code, offset: ref.error.offset } }).toEqual({ ...e, error: e.error && { code: e.error.code, offset: e.error.offset } });
  });

  test('ModelStream, raw and committed: whole, cut in two at every byte, dripped', () => {
    for (const chunks of chunkings(f.bytes)) {
      expect(read(f, chunks, true), `${chunks.length} chunks (raw)`).toEqual(want(true));
      if (chunks.length <= 2) expect(read(f, chunks, false), `${chunks.length} chunks`).toEqual(want(false));
    }
  });

  test('message by message (ModelEventStreamDecoder, whole and dripped), each event read by a ModelEventReader: the text, finish reason and usage the stream reads, and its error at the same message', () => {
    for (const chunks of [[f.bytes], chunkings(f.bytes).at(-1)!]) {
      const reader = new ModelEventReader({ format: 'bedrock' });
      const { messages, framing } = messagesOf<ModelEventStreamMessage>(new ModelEventStreamDecoder({ format: 'bedrock' }), chunks, EventStreamError);
      let error: { code: string; offset: number; message?: string } | undefined = framing;
      let text = '';
      let finishReason: string | undefined;
      let usage: Record<string, unknown> | undefined;
      let done = false;
      for (const m of messages) {
        if (m.error !== undefined) {
          if (done) continue; // (after the completion a message's error is not the answer, as the stream reads it)
          error = { code: m.error.code, offset: m.offset, ...(m.error.code === 'ERR_PROVIDER' ? { message: m.error.providerMessage } : {}) };
          break;
        }
        const r = reader.read(m.data);
        text += r.text;
        finishReason = r.finishReason ?? finishReason;
        if (r.usage !== undefined) usage = { ...usage, ...r.usage };
        done ||= r.done;
      }
      // (a stream without its completion is the stream's error, not a message's)
      if (error === undefined && !done) error = { code: 'ERR_STREAM_TRUNCATED', offset: f.bytes.length };
      expect({ text, finishReason, usage, error }, `${chunks.length} chunks`).toEqual({
        text: e.text, finishReason: e.finishReason, usage: e.usage,
        error: e.error && { code: e.error.code, offset: e.error.offset, ...(e.error.code === 'ERR_PROVIDER' ? { message: expect.stringContaining(e.error.message!) } : {}) },
      });
    }
  });

  test.each(['openai', 'anthropic'] as const)('SseRelay to %s: what its client reads, whole, at every split and dripped', (to) => {
    for (const chunks of chunkings(f.bytes)) {
      const r = new SseRelay({ from: 'bedrock', to });
      const out = concat([...chunks.map((c) => r.push(c).slice()), r.flush().slice()]);
      const got = to === 'openai' ? readOpenAi(out) : readAnthropic(out);
      const where = `${f.name} → ${to}, ${chunks.length} chunks`;
      expect(got.text, where).toBe(e.text);
      expect(got.reasoning, where).toBe(e.reasoning);
      // (an Anthropic client reads a tool_use block with no input_json_delta as its start's input, `{}`,
      // as @anthropic-ai/sdk's MessageStream does; the official clients' test below reads it so)
      const calls = to === 'anthropic' ? got.calls.map((c) => (c.arguments === '' ? { ...c, arguments: '{}' } : c)) : got.calls;
      expect(calls, where).toEqual(e.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments })));
      expect(got.done, where).toBe(e.status === 'done');
      if (e.status === 'done') {
        const words = describeFormat('bedrock').finishReason(e.finishReason!, to);
        expect(got.finish, where).toBe(e.toolCalls.length ? (to === 'openai' ? 'tool_calls' : 'tool_use') : words);
        const u = e.usage!;
        const cached = (u.cacheReadInputTokens as number | undefined) ?? 0;
        const written = (u.cacheWriteInputTokens as number | undefined) ?? 0;
        if (to === 'openai') expect(got.usage, where).toMatchObject({ prompt_tokens: (u.inputTokens as number) + cached + written, completion_tokens: u.outputTokens });
        else expect(got.usage, where).toMatchObject({ input_tokens: u.inputTokens, output_tokens: u.outputTokens });
        if (to === 'anthropic') expect(got.signatures, where).toEqual(e.signatures);
      } else {
        expect(got.error, where).toMatchObject({ ...(to === 'openai' ? { code: e.error!.code } : {}) });
        if (e.error!.message !== undefined) expect(String(got.error!.message), where).toContain(e.error!.message);
        expect(r.error?.code, where).toBe(e.error!.code);
        expect(r.error?.offset, where).toBe(e.error!.offset);
      }
      r.dispose();
    }
  });
});

describe('bedrock: what is not a stream of events', () => {
  test('a JSON error body (an HTTP 4xx from AWS) is ERR_PROVIDER with its message', () => {
    const m = new ModelStream({ format: 'bedrock' });
    m.push(enc.encode('{"message":"The security token included in the request is invalid."}'));
    expect(() => m.flush()).toThrow(expect.objectContaining({ code: 'ERR_PROVIDER', providerMessage: 'The security token included in the request is invalid.' }));
  });

  test('a payload that is not JSON is ERR_BAD_EVENT at its message; invalid UTF-8 in a payload is ERR_INVALID_UTF8 there', () => {
    const first = encodeMessage({ event: 'messageStart', payload: '{"role":"assistant"}' });
    const bad = encodeMessage({ event: 'contentBlockDelta', payload: '{"contentBlockIndex":0,"delta":{"text":"x"},}' });
    const m = new ModelStream({ format: 'bedrock' });
    expect(() => m.push(concat([first, bad]))).toThrow(expect.objectContaining({ code: 'ERR_BAD_EVENT', offset: first.length }));
    const utf = codec.encode({ headers: { ':message-type': { type: 'string', value: 'event' }, ':event-type': { type: 'string', value: 'contentBlockDelta' } }, body: Uint8Array.from([...enc.encode('{"delta":{"text":"'), 0xff, ...enc.encode('"}}')]) });
    const n = new ModelStream({ format: 'bedrock' });
    expect(() => n.push(concat([first, utf]))).toThrow(expect.objectContaining({ code: 'ERR_INVALID_UTF8', offset: first.length }));
  });

  test('a message claiming 4 GiB is ERR_EVENT_TOO_LARGE as soon as its prelude arrives', () => {
    const first = encodeMessage({ event: 'messageStart', payload: '{"role":"assistant"}' });
    const huge = new Uint8Array(12);
    const v = new DataView(huge.buffer);
    v.setUint32(0, 0xfffffff0);
    v.setUint32(4, 0);
    v.setUint32(8, crc32Ref(huge.subarray(0, 8))); // (a prelude whose CRC is right)
    const m = new ModelStream({ format: 'bedrock' });
    expect(() => m.push(concat([first, huge]))).toThrow(expect.objectContaining({ code: 'ERR_EVENT_TOO_LARGE', offset: first.length }));
  });
});

describe('the official clients read what SseRelay writes from Bedrock', () => {
  let port = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (s: string) => { body += s; });
    req.on('end', () => {
      const f = BEDROCK_FIXTURES.find((x) => x.name === (JSON.parse(body) as { model: string }).model)!;
      const to = req.url === '/v1/messages' ? 'anthropic' : 'openai';
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const r = new SseRelay({ from: 'bedrock', to, model: f.name });
      for (let i = 0; i < f.bytes.length; i += 37) res.write(Buffer.from(r.push(f.bytes.subarray(i, i + 37))));
      res.end(Buffer.from(r.flush()));
    });
  });
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  test.each(BEDROCK_FIXTURES.map((f) => [f.name, f] as const))('openai and anthropic: %s', async (name, f) => {
    const e = f.expected;
    const oa = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'test', maxRetries: 0 });
    const an = new Anthropic({ baseURL: `http://127.0.0.1:${port}`, apiKey: 'test', maxRetries: 0 });
    // (both settled together: a rejection is handled as it happens)
    const [os, as] = await Promise.allSettled([
      oa.chat.completions.stream({ model: name, messages: [] }).finalChatCompletion(),
      an.messages.stream({ model: name, max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }).finalMessage(),
    ]);
    if (e.status === 'done') {
      expect(os.status).toBe('fulfilled');
      expect(as.status).toBe('fulfilled');
      const done = (os as PromiseFulfilledResult<OpenAI.ChatCompletion>).value;
      expect(done.choices[0].message.content ?? '').toBe(e.text);
      expect((done.choices[0].message.tool_calls ?? []).map((c) => (c.type === 'function' ? [c.id, c.function.name, c.function.arguments] : []))).toEqual(e.toolCalls.map((c) => [c.id, c.name, c.arguments]));
      const msg = (as as PromiseFulfilledResult<Anthropic.Message>).value;
      expect(msg.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('')).toBe(e.text);
      expect(msg.content.flatMap((b) => (b.type === 'thinking' ? [b.thinking] : [])).join('')).toBe(e.reasoning);
      expect(msg.content.flatMap((b) => (b.type === 'tool_use' ? [b.input] : []))).toEqual(e.toolCalls.map((c) => JSON.parse(c.arguments)));
      expect(msg.usage.output_tokens).toBe(e.usage!.outputTokens);
    } else {
      expect(os.status).toBe('rejected');
      expect(as.status).toBe('rejected');
      if (e.error!.message !== undefined) expect(String((as as PromiseRejectedResult).reason)).toContain(e.error!.message);
    }
  });
});

describe('bedrock: an exception keeps its type', () => {
  const start = encodeMessage({ event: 'messageStart', payload: '{"role":"assistant"}' });
  const exception = (type: string) => encodeMessage({ exception: type, payload: '{"message":"Too many requests, please wait before trying again."}' });
  const dec = new TextDecoder();
  const relayed = (type: string, to: 'openai' | 'anthropic') => {
    const relay = new SseRelay({ from: 'bedrock', to });
    const out = dec.decode(relay.push(concat([start, exception(type)]))) + dec.decode(relay.flush());
    expect(relay.status).toBe('failed');
    return out.slice(out.lastIndexOf('data: '));
  };

  test('in ModelStream: ERR_PROVIDER with the exception\'s message and its type as the provider\'s code', () => {
    const m = new ModelStream({ format: 'bedrock' });
    let error: unknown;
    try {
      m.push(concat([start, exception('throttlingException')]));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ModelStreamError);
    const e = error as ModelStreamError;
    expect([e.code, e.offset, e.providerMessage, e.providerCode]).toEqual(['ERR_PROVIDER', start.length, 'Too many requests, please wait before trying again.', 'throttlingException']);
  });

  test('an error body\'s __type (capitalized, with a namespace) is in Anthropic\'s words too; describeFormat gives the same words', () => {
    const d = describeFormat('bedrock');
    for (const [code, words] of [['throttlingException', 'rate_limit_error'], ['ThrottlingException', 'rate_limit_error'],
      ['com.amazon.bedrock#ThrottlingException', 'rate_limit_error'], ['ValidationException:http://internal.amazon.com/coral/', 'invalid_request_error'],
      ['AccessDeniedException', 'permission_error'], ['overloaded_error', 'overloaded_error'], ['SomethingNewException', 'api_error'], [undefined, 'api_error']] as const) {
      expect(d.anthropicErrorType(code), String(code)).toBe(words);
    }
    const relay = new SseRelay({ from: 'bedrock', to: 'anthropic' });
    const out = new TextDecoder().decode(relay.push(enc.encode('{"__type":"com.amazon.bedrock#ThrottlingException","message":"Too many requests"}'))) + new TextDecoder().decode(relay.flush());
    expect(out.slice(out.lastIndexOf('data: '))).toBe(`data: ${JSON.stringify({ type: 'error', error: { type: 'rate_limit_error', message: 'Too many requests' } })}\n\n`);
    expect(describeFormat('gemini').finishReason('OTHER', 'openai')).toBe('stop');
    expect(describeFormat('gemini').finishReason('OTHER', 'openai', true)).toBe('content_filter');
    expect(describeFormat('gemini').finishReason('OTHER', 'anthropic', true)).toBe('refusal');
    // (Anthropic's stop at the context window: a limit, as Bedrock's same word)
    for (const f of ['anthropic', 'bedrock'] as const) {
      expect(describeFormat(f).finishReason('model_context_window_exceeded', 'openai'), f).toBe('length');
      expect(describeFormat(f).finishReason('model_context_window_exceeded', 'anthropic'), f).toBe('model_context_window_exceeded');
    }
  });

  test("Gemini's usage: the input counts the prompts of the tools it ran itself (toolUsePromptTokenCount), as its total does", () => {
    const u = { promptTokenCount: 10, toolUsePromptTokenCount: 290, candidatesTokenCount: 7, thoughtsTokenCount: 4, totalTokenCount: 311 };
    const usage = describeFormat('gemini').usage(u);
    expect(usage).toEqual({ input: 300, output: 11, cacheRead: undefined, reasoning: 4 });
    expect(usage.input! + usage.output!).toBe(u.totalTokenCount);
    expect(describeFormat('gemini').usage({ candidatesTokenCount: 2 }).input).toBeUndefined();
    const body = `data: ${JSON.stringify({ candidates: [{ content: { parts: [{ text: 'Hi' }], role: 'model' }, finishReason: 'STOP', index: 0 }], usageMetadata: u })}\r\n\r\n`;
    const relay = new SseRelay({ from: 'gemini', to: 'openai' });
    const out = new TextDecoder().decode(relay.push(enc.encode(body))) + new TextDecoder().decode(relay.flush());
    expect(out).toContain('"usage":{"prompt_tokens":300,"completion_tokens":11,"total_tokens":311,"completion_tokens_details":{"reasoning_tokens":4}}');
  });

  test('relayed to OpenAI: the type as provider_code; to Anthropic: in Anthropic\'s words (exact bytes)', () => {
    const message = 'Too many requests, please wait before trying again.';
    expect(relayed('throttlingException', 'openai')).toBe(`data: ${JSON.stringify({ error: { message, type: 'upstream_error', code: 'ERR_PROVIDER', offset: start.length, provider_code: 'throttlingException' } })}\n\n`);
    for (const [type, words] of [['throttlingException', 'rate_limit_error'], ['serviceUnavailableException', 'overloaded_error'], ['validationException', 'invalid_request_error'],
      ['modelStreamErrorException', 'api_error'], ['someNewException', 'api_error']]) {
      expect(relayed(type, 'anthropic'), type).toBe(`data: ${JSON.stringify({ type: 'error', error: { type: words, message } })}\n\n`);
    }
  });
});

describe('ModelEventStreamDecoder: its options and counts, as EventStreamDecoder\'s', () => {
  test('bedrock and bedrock-invoke only; maxMessageBytes, bytesIn and pendingBytes', () => {
    expect(() => new ModelEventStreamDecoder({ format: 'openai' as 'bedrock' })).toThrow(TypeError);
    const d = new ModelEventStreamDecoder({ format: 'bedrock', maxMessageBytes: 4096 });
    expect([d.format, d.maxMessageBytes, d.bytesIn, d.pendingBytes]).toEqual(['bedrock', 4096, 0, 0]);
    const m = encodeMessage({ event: 'messageStart', payload: '{"role":"assistant"}' });
    expect(d.push(concat([m, m.subarray(0, 20)])).map((x) => x.offset)).toEqual([0]);
    expect([d.bytesIn, d.pendingBytes]).toEqual([m.length + 20, 20]);
    expect(d.push(m.subarray(20)).map((x) => [x.offset, x.data])).toEqual([[m.length, '{"messageStart":{"role":"assistant"}}']]);
    expect([d.bytesIn, d.pendingBytes]).toEqual([2 * m.length, 0]);
    expect(new ModelEventStreamDecoder({ format: 'bedrock-invoke' }).maxMessageBytes).toBe(16 * 1024 * 1024);
    d.dispose();
  });
});

describe("bedrock: a tool Bedrock runs itself (a toolUse start of type server_tool_use)", () => {
  const ev = (event: string, payload: unknown) => encodeMessage({ event, payload: JSON.stringify(payload) });
  const messages = [
    ev('messageStart', { role: 'assistant' }),
    ev('contentBlockStart', { contentBlockIndex: 0, start: { toolUse: { toolUseId: 'tooluse_srv', name: 'nova_grounding', type: 'server_tool_use' } } }),
    ev('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: '{"query":' } } }),
    ev('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: '"weather"}' } } }),
    ev('contentBlockStop', { contentBlockIndex: 0 }),
    ev('contentBlockDelta', { contentBlockIndex: 1, delta: { text: 'Sunny.' } }),
    ev('contentBlockStop', { contentBlockIndex: 1 }),
    ev('contentBlockStart', { contentBlockIndex: 2, start: { toolUse: { toolUseId: 'tooluse_cl', name: 'get_weather', type: 'tool_use' } } }),
    ev('contentBlockDelta', { contentBlockIndex: 2, delta: { toolUse: { input: '{"city":"Bern"}' } } }),
    ev('contentBlockStop', { contentBlockIndex: 2 }),
    ev('messageStop', { stopReason: 'tool_use' }),
    ev('metadata', { usage: { inputTokens: 3, outputTokens: 4, totalTokens: 7 }, metrics: { latencyMs: 1 } }),
  ];
  const stream = concat(messages);

  test("is the provider's call, not the client's, whatever the reads", () => {
    for (const chunks of chunkings(stream)) {
      const m = new ModelStream({ format: 'bedrock' });
      let text = '';
      for (const c of chunks) text += m.push(c);
      text += m.flush();
      expect(text).toBe('Sunny.');
      expect(m.serverToolCalls).toEqual([{ index: 0, id: 'tooluse_srv', name: 'nova_grounding', arguments: '{"query":"weather"}', done: true, valid: true }]);
      expect(m.toolCalls).toEqual([{ index: 0, id: 'tooluse_cl', name: 'get_weather', arguments: '{"city":"Bern"}', done: true, valid: true }]);
    }
  });

  test('a relay writes only the client\'s call, to both clients', () => {
    const o = readOpenAi(relayAll('openai'));
    expect([o.text, o.calls, o.finish]).toEqual(['Sunny.', [{ id: 'tooluse_cl', name: 'get_weather', arguments: '{"city":"Bern"}' }], 'tool_calls']);
    const a = readAnthropic(relayAll('anthropic'));
    expect([a.text, a.calls, a.finish]).toEqual(['Sunny.', [{ id: 'tooluse_cl', name: 'get_weather', arguments: '{"city":"Bern"}' }], 'tool_use']);
    // only a server call, and the turn ended: no call for the client, and no tool_calls finish
    const only = concat([...messages.slice(0, 7), ev('messageStop', { stopReason: 'end_turn' })]);
    const oo = readOpenAi(relayAll('openai', only));
    expect([oo.text, oo.calls, oo.finish, oo.done]).toEqual(['Sunny.', [], 'stop', true]);
    const ao = readAnthropic(relayAll('anthropic', only));
    expect([ao.text, ao.calls, ao.finish, ao.done]).toEqual(['Sunny.', [], 'end_turn', true]);
  });

  function relayAll(to: 'openai' | 'anthropic', body = stream): Uint8Array {
    const r = new SseRelay({ from: 'bedrock', to });
    return concat([r.push(body).slice(), r.flush().slice()]);
  }
});
