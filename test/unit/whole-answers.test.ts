// A whole answer (a JSON body asked without streaming) reads as the stream the same answer comes
// as: through ModelStream, SseRelay (to both clients) and the format's facts. The oracle of what a
// whole answer of a stream is: the official clients' final object of that stream (openai-node's
// finalChatCompletion and finalResponse, the Anthropic SDK's finalMessage), for every fixture they
// read; each body read whole, at every two-piece split and a byte per read, to the same output.
import { describe, expect, it } from 'vitest';
import { MODEL_FORMATS, ModelPartReader, ModelStream, ModelStreamError, SseRelay, describeFormat } from '../../bindings/index.js';
import { FIXTURES } from '../helpers/model-fixtures.js';
import { standardChunkings } from '../helpers/random.js';
import { anthropicFinal, callsRead, openaiFinal, responsesFinal } from '../helpers/sdk-clients.js';

const enc = new TextEncoder();

type Format = 'openai' | 'anthropic' | 'openai-responses' | 'gemini';

/** What a model stream makes of `chunks`: the answer as a caller sees it. */
function read(format: Format, chunks: Uint8Array[], choice?: number) {
  const m = new ModelStream(choice === undefined ? { format } : { format, choice });
  let text = '';
  for (const c of chunks) text += m.push(c);
  text += m.flush();
  const r = m.finish();
  return {
    text, status: r.status, finishReason: r.finishReason, usage: r.usage, reasoning: m.reasoning,
    calls: m.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments, done: c.done, valid: c.valid })),
    serverCalls: m.serverToolCalls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments, result: c.result })),
    signatures: m.reasoningBlocks.map((b) => b.signature ?? b.redacted ?? null), citations: m.citations, refused: m.refused,
  };
}

/** `read` of the body whole, at every two-piece split and a byte per read: the same each time; that reading. */
function atEveryCut(format: Format, body: string, choice?: number) {
  const bytes = enc.encode(body);
  const first = read(format, [bytes], choice);
  let runs = 0;
  for (const chunks of standardChunkings(bytes)) {
    expect(read(format, chunks, choice), `${chunks.length} reads`).toEqual(first);
    runs++;
  }
  expect(runs).toBe(bytes.length + 3);
  return first;
}

/** A relay's bytes for the body read in `chunks`. */
function relayed(from: Format, to: 'openai' | 'anthropic', chunks: Uint8Array[]): Uint8Array {
  const r = new SseRelay({ from, to });
  const out: Uint8Array[] = chunks.map((c) => r.push(c).slice());
  out.push(r.flush().slice());
  const all = new Uint8Array(out.reduce((n, b) => n + b.length, 0));
  let o = 0;
  for (const b of out) {
    all.set(b, o);
    o += b.length;
  }
  return all;
}

const FINAL: Record<'openai' | 'anthropic' | 'openai-responses', (bytes: Uint8Array) => Promise<unknown>> = {
  openai: openaiFinal, anthropic: anthropicFinal, 'openai-responses': responsesFinal,
};

/** The completed fixtures whose stream the client does not read to a final object (it needs events they leave out: a content part's start, a call's `type`, an `index`). */
const CLIENT_REFUSES = new Set(['responses-tool-call', 'responses-hosted-and-calls', 'openai-reasoning-calls-text', 'openai-mistral-arrays']);
/** Calls of a stream the client's final object merges: Ollama's two calls at one index (the quirk that fixture shows); its text and finish are compared. */
const CLIENT_MERGES_CALLS = new Set(['openai-ollama-calls-one-index']);

/** A call's arguments as a value where they are JSON (a whole answer's are its input's JSON, written anew: spacing and escapes differ from the stream's). */
const argsValue = (calls: { arguments: string; valid?: boolean }[]) => calls.map((c) => ({ ...c, arguments: c.valid ? JSON.parse(c.arguments) : c.arguments }));

describe('a whole answer reads as its stream: the official clients\' final object of every completed fixture', () => {
  for (const format of ['openai', 'anthropic', 'openai-responses'] as const) {
    it(format, async () => {
      const done = FIXTURES.filter((f) => f.format === format && f.expected.status === 'done' && f.expected.error === undefined);
      let compared = 0;
      for (const f of done) {
        let whole: unknown;
        try {
          whole = await FINAL[format](f.bytes);
        } catch (e) {
          expect(CLIENT_REFUSES.has(f.name), `${f.name}: ${String(e)}`).toBe(true);
          continue;
        }
        expect(CLIENT_REFUSES.has(f.name), f.name).toBe(false);
        const streamed = read(format, [f.bytes], f.choice);
        const got = atEveryCut(format, JSON.stringify(whole), f.choice);
        // what the clients' final objects keep: the text, the calls, the finish, the usage (openai-node
        // keeps the last reasoning_content delta, not their text joined)
        expect(got.text, f.name).toBe(streamed.text);
        expect(got.status, f.name).toBe('done');
        expect(got.finishReason, f.name).toBe(streamed.finishReason);
        if (!CLIENT_MERGES_CALLS.has(f.name)) expect(argsValue(got.calls), f.name).toEqual(argsValue(streamed.calls));
        expect(got.usage, f.name).toEqual(streamed.usage);
        if (format !== 'openai') {
          expect(got.reasoning, f.name).toBe(streamed.reasoning);
          expect(argsValue(got.serverCalls.map((c) => ({ ...c, valid: true }))), f.name).toEqual(argsValue(streamed.serverCalls.map((c) => ({ ...c, valid: true }))));
          expect(got.signatures, f.name).toEqual(streamed.signatures);
        }
        compared++;
      }
      expect(compared).toBe(done.filter((f) => !CLIENT_REFUSES.has(f.name)).length);
      expect(compared).toBeGreaterThanOrEqual(2);
    });
  }
});

describe('whole answers, exactly', () => {
  it('OpenAI: a chat completion with text, a refusal, two calls and usage', () => {
    const body = JSON.stringify({
      id: 'chatcmpl-7', object: 'chat.completion', created: 1700000000, model: 'gpt-4o',
      choices: [{
        index: 0, message: {
          role: 'assistant', content: 'Cafe\u0301 🇯🇵', refusal: null,
          tool_calls: [
            { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"東京"}' } },
            { id: 'call_b', type: 'function', function: { name: 'now', arguments: '{}' } },
          ],
        }, logprobs: null, finish_reason: 'tool_calls',
      }],
      usage: { prompt_tokens: 12, completion_tokens: 30, total_tokens: 42 },
    }, null, 2);
    const got = atEveryCut('openai', body);
    expect(got.text).toBe('Café 🇯🇵');
    expect(got.status).toBe('done');
    expect(got.finishReason).toBe('tool_calls');
    expect(got.calls).toEqual([
      { id: 'call_a', name: 'get_weather', arguments: '{"city":"東京"}', done: true, valid: true },
      { id: 'call_b', name: 'now', arguments: '{}', done: true, valid: true },
    ]);
    expect(got.usage).toEqual({ prompt_tokens: 12, completion_tokens: 30, total_tokens: 42 });
  });

  it('OpenAI: a message\'s reasoning (DeepSeek\'s reasoning_content, after its content in the message) comes before its text, as in its stream', () => {
    const body = JSON.stringify({
      id: 'c', object: 'chat.completion', created: 1, model: 'deepseek-reasoner',
      choices: [{ index: 0, message: { role: 'assistant', content: 'The answer.', reasoning_content: 'Let me think.' }, finish_reason: 'stop' }],
    });
    const chunk = (delta: unknown, finish: string | null) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'deepseek-reasoner', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const stream = enc.encode(`${chunk({ role: 'assistant', reasoning_content: 'Let me think.' }, null)}${chunk({ content: 'The answer.' }, 'stop')}data: [DONE]\n\n`);
    const blocks = (bytes: Uint8Array) => new TextDecoder().decode(relayed('openai', 'anthropic', [bytes])).split('\n')
      .filter((l) => l.startsWith('data: {"type":"content_block_start"')).map((l) => (JSON.parse(l.slice(6)) as { content_block: { type: string } }).content_block.type);
    expect(blocks(stream)).toEqual(['thinking', 'text']);
    expect(blocks(enc.encode(body))).toEqual(['thinking', 'text']);
    const parts = (bytes: Uint8Array) => {
      const r = new ModelPartReader(new ModelStream({ format: 'openai' }));
      return [...r.push(bytes), ...r.flush()];
    };
    expect(parts(enc.encode(body))).toEqual(parts(stream));
    expect(atEveryCut('openai', body)).toMatchObject({ text: 'The answer.', reasoning: 'Let me think.', status: 'done', finishReason: 'stop' });
  });

  it('white space (and a BOM) before the body, in reads of their own: the same answer, however cut', () => {
    const body = JSON.stringify({ id: 'c', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'Salut' }, finish_reason: 'stop' }] });
    const want = atEveryCut('openai', body);
    expect(want).toMatchObject({ text: 'Salut', status: 'done' });
    expect(atEveryCut('openai', ` \r\n\t${body}`)).toEqual(want);
    expect(atEveryCut('openai', `\uFEFF\n${body}`)).toEqual(want);
  });

  it('OpenAI: the choice followed, of several', () => {
    const body = JSON.stringify({
      id: 'c', object: 'chat.completion', created: 1, model: 'm',
      choices: [
        { index: 0, message: { role: 'assistant', content: 'first' }, finish_reason: 'stop' },
        { index: 1, message: { role: 'assistant', content: 'second' }, finish_reason: 'length' },
      ],
    });
    expect(atEveryCut('openai', body, 1)).toMatchObject({ text: 'second', finishReason: 'length', status: 'done' });
    expect(atEveryCut('openai', body, 0)).toMatchObject({ text: 'first', finishReason: 'stop', status: 'done' });
  });

  it('Anthropic: thinking, redacted thinking, a cited text, a server tool with its result, a call', () => {
    const citation = { type: 'web_search_result_location', url: 'https://example.com/w', title: 'Weather', encrypted_index: 'e1', cited_text: 'sunny' };
    const body = JSON.stringify({
      id: 'msg_9', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5',
      content: [
        { type: 'thinking', thinking: 'Let me look.', signature: 'sig-1' },
        { type: 'redacted_thinking', data: 'opaque' },
        { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'Zürich weather' } },
        { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [{ type: 'web_search_result', url: 'https://example.com/w', title: 'Weather', encrypted_content: 'x' }] },
        { type: 'text', text: 'It is sunny.', citations: [citation] },
        { type: 'tool_use', id: 'toolu_2', name: 'save_note', input: { text: '3°C' } },
      ],
      stop_reason: 'tool_use', stop_sequence: null,
      usage: { input_tokens: 20, output_tokens: 50, cache_read_input_tokens: 0 },
    });
    const got = atEveryCut('anthropic', body);
    expect(got.text).toBe('It is sunny.');
    expect(got.reasoning).toBe('Let me look.');
    expect(got.signatures).toEqual(['sig-1', 'opaque']);
    expect(got.finishReason).toBe('tool_use');
    expect(got.calls).toEqual([{ id: 'toolu_2', name: 'save_note', arguments: '{"text":"3°C"}', done: true, valid: true }]);
    expect(got.serverCalls).toEqual([{
      id: 'srvtoolu_1', name: 'web_search', arguments: '{"query":"Zürich weather"}',
      result: JSON.stringify({ type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [{ type: 'web_search_result', url: 'https://example.com/w', title: 'Weather', encrypted_content: 'x' }] }),
    }]);
    expect(got.citations.map((c) => c.url)).toEqual(['https://example.com/w']);
    expect(got.usage).toEqual({ input_tokens: 20, output_tokens: 50, cache_read_input_tokens: 0 });
  });

  it('Responses: reasoning summary, text with a citation, a call, a hosted call; incomplete', () => {
    const body = JSON.stringify({
      id: 'resp_1', object: 'response', created_at: 1, status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, model: 'gpt-5',
      output: [
        { id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: 'Plan.' }, { type: 'summary_text', text: 'Then act.' }] },
        { id: 'ws_1', type: 'web_search_call', status: 'completed', action: { type: 'search', query: 'rates' } },
        { id: 'msg_1', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Rates rose.', annotations: [{ type: 'url_citation', url: 'https://example.com/r', title: 'R', start_index: 0, end_index: 11 }] }] },
        { id: 'fc_1', type: 'function_call', call_id: 'call_1', name: 'convert', arguments: '{"amount":100}', status: 'completed' },
      ],
      usage: { input_tokens: 5, output_tokens: 9, total_tokens: 14 },
    });
    const got = atEveryCut('openai-responses', body);
    expect(got.text).toBe('Rates rose.');
    expect(got.reasoning).toBe('Plan.Then act.');
    expect(got.status).toBe('done');
    expect(got.finishReason).toBe('max_output_tokens');
    expect(got.calls).toEqual([{ id: 'call_1', name: 'convert', arguments: '{"amount":100}', done: true, valid: true }]);
    expect(got.serverCalls).toEqual([{ id: 'ws_1', name: 'web_search_call', arguments: '{"action":{"type":"search","query":"rates"}}', result: undefined }]);
    expect(got.citations.map((c) => c.url)).toEqual(['https://example.com/r']);
  });

  it('Responses: a response not finished (background: queued, in progress; cancelled) is an answer cut short, never a completion', () => {
    for (const status of ['queued', 'in_progress', 'cancelled']) {
      const body = JSON.stringify({
        id: 'resp_2', object: 'response', created_at: 1, status, background: true, model: 'gpt-5',
        output: status === 'cancelled' ? [{ id: 'msg_1', type: 'message', role: 'assistant', status: 'incomplete', content: [{ type: 'output_text', text: 'Part', annotations: [] }] }] : [],
        usage: null,
      });
      const m = new ModelStream({ format: 'openai-responses' });
      expect(m.push(enc.encode(body)), status).toBe('');
      expect(() => m.flush(), status).toThrow(expect.objectContaining({ code: 'ERR_STREAM_TRUNCATED' }));
      expect(m.status, status).toBe('truncated');
      const relay = new SseRelay({ from: 'openai-responses', to: 'openai' });
      relay.push(enc.encode(body));
      const out = new TextDecoder().decode(relay.flush());
      expect(out, status).not.toContain('[DONE]');
      expect(out, status).toContain('"code":"ERR_STREAM_TRUNCATED"');
    }
  });

  it('Responses: a failed response (its error beside its output) reads as its stream: the output it has, then its error, in a model stream and a relay', () => {
    const body = JSON.stringify({
      id: 'resp_3', object: 'response', created_at: 1, status: 'failed', model: 'gpt-5',
      error: { code: 'server_error', message: 'The model failed to finish.' },
      output: [{ id: 'msg_1', type: 'message', role: 'assistant', status: 'incomplete', content: [{ type: 'output_text', text: 'Half an', annotations: [] }] }],
      usage: null,
    });
    const events = describeFormat('openai-responses').wholeAnswerEvents(JSON.parse(body))!;
    const stream = enc.encode(events.map((e) => `event: ${e.event}\ndata: ${e.data}\n\n`).join(''));
    const parts = (bytes: Uint8Array) => {
      const r = new ModelPartReader(new ModelStream({ format: 'openai-responses' }));
      let got: unknown[] = [];
      try {
        got = [...r.push(bytes), ...r.flush()];
      } catch (e) {
        got.push(...r.take(''), { code: (e as ModelStreamError).code, providerMessage: (e as ModelStreamError).providerMessage });
      }
      return got;
    };
    // (the text held back at the error, its last character, is not given)
    expect(parts(stream)).toEqual([{ type: 'text', text: 'Half a' }, { code: 'ERR_PROVIDER', providerMessage: 'The model failed to finish.' }]);
    expect(parts(enc.encode(body))).toEqual(parts(stream));
    const relay = (bytes: Uint8Array) => {
      const r = new SseRelay({ from: 'openai-responses', to: 'anthropic' });
      const out = new TextDecoder().decode(r.push(bytes)) + new TextDecoder().decode(r.flush());
      return out.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)) as { type: string; delta?: unknown; error?: unknown });
    };
    const said = relay(enc.encode(body));
    expect(said.map((e) => e.type)).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'error']);
    expect(said[2].delta).toEqual({ type: 'text_delta', text: 'Half an' });
    expect(said[3].error).toEqual({ type: 'api_error', message: 'The model failed to finish.' });
    expect(said.slice(1)).toEqual(relay(stream).slice(1));
  });

  it('Gemini: a GenerateContentResponse, and a JSON array of them (streamGenerateContent without alt=sse)', () => {
    const a = { candidates: [{ content: { parts: [{ text: 'Thinking…', thought: true }, { text: 'Hello, ' }], role: 'model' }, index: 0 }], usageMetadata: { promptTokenCount: 3, totalTokenCount: 3 } };
    const b = { candidates: [{ content: { parts: [{ text: 'wörld' }, { functionCall: { name: 'f', args: { x: [1, 2] } } }], role: 'model' }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 4, totalTokenCount: 7 } };
    const one = atEveryCut('gemini', JSON.stringify(b));
    expect(one).toMatchObject({ text: 'wörld', status: 'done', finishReason: 'STOP', calls: [{ id: '', name: 'f', arguments: '{"x":[1,2]}', done: true, valid: true }] });
    const array = atEveryCut('gemini', `[${JSON.stringify(a)}\n,\r\n${JSON.stringify(b)}]`);
    expect(array).toMatchObject({ text: 'Hello, wörld', reasoning: 'Thinking…', status: 'done', finishReason: 'STOP', usage: b.usageMetadata });
    // without its finish reason the answer is cut short, as its stream would be
    expect(() => read('gemini', [enc.encode(JSON.stringify([a]))])).toThrow(expect.objectContaining({ code: 'ERR_STREAM_TRUNCATED' }));
  });

  it('Gemini: a JSON array whose last chunk has the usage alone (no candidates) reads as its stream', () => {
    const a = { candidates: [{ content: { parts: [{ text: 'Hi' }], role: 'model' }, index: 0 }], modelVersion: 'gemini-3-flash-preview' };
    const b = { candidates: [{ content: { parts: [{ text: ' there' }], role: 'model' }, finishReason: 'STOP', index: 0 }], modelVersion: 'gemini-3-flash-preview' };
    const usage = { usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2, totalTokenCount: 5 }, modelVersion: 'gemini-3-flash-preview' };
    const stream = [a, b, usage].map((c) => `data: ${JSON.stringify(c)}\r\n\r\n`).join('');
    const streamed = read('gemini', [enc.encode(stream)]);
    expect(streamed).toMatchObject({ text: 'Hi there', status: 'done', finishReason: 'STOP' });
    expect(atEveryCut('gemini', JSON.stringify([a, b, usage]))).toEqual(streamed);
    // (usage alone is no answer; an array of an error after its chunks is the error)
    expect(() => read('gemini', [enc.encode(JSON.stringify(usage))])).toThrow(expect.objectContaining({ code: 'ERR_BAD_EVENT' }));
    expect(() => read('gemini', [enc.encode(JSON.stringify([usage]))])).toThrow(expect.objectContaining({ code: 'ERR_BAD_EVENT' }));
    expect(() => read('gemini', [enc.encode(JSON.stringify([a, usage, { error: { code: 503, message: 'overloaded', status: 'UNAVAILABLE' } }]))]))
      .toThrow(expect.objectContaining({ code: 'ERR_PROVIDER', providerMessage: 'overloaded' }));
  });

  it('an error body is still the provider\'s error, and a JSON value of no answer\'s shape a bad event', () => {
    const err = () => read('openai', [enc.encode('{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}')]);
    expect(err).toThrow(expect.objectContaining({ code: 'ERR_PROVIDER', offset: 0, providerMessage: 'Rate limit reached' }));
    expect(() => read('anthropic', [enc.encode('{"type":"mystery","content":[]}')])).toThrow(expect.objectContaining({ code: 'ERR_BAD_EVENT', offset: 0 }));
    expect(() => read('openai-responses', [enc.encode('  {"object":"list","data":[]}')])).toThrow(expect.objectContaining({ code: 'ERR_BAD_EVENT', offset: 2 }));
  });

  it('strict: a whole answer that is not UTF-8 is ERR_INVALID_UTF8 at its first bad byte; not strict, U+FFFD', () => {
    const head = enc.encode(' {"choices":[{"index":0,"message":{"content":"caf');
    const bytes = new Uint8Array([...head, 0xe9, ...enc.encode('"},"finish_reason":"stop"}]}')]);
    for (const chunks of standardChunkings(bytes)) {
      let thrown: unknown;
      try {
        read('openai', chunks);
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(ModelStreamError);
      expect(thrown).toMatchObject({ code: 'ERR_INVALID_UTF8', offset: head.length });
    }
    const m = new ModelStream({ format: 'openai', fatal: false });
    expect(m.push(bytes) + m.flush()).toBe('caf\uFFFD');
  });

  it('limits: the body over maxEventBytes, its text over maxTextBytes', () => {
    const body = enc.encode(JSON.stringify({ choices: [{ index: 0, message: { content: 'x'.repeat(3000) }, finish_reason: 'stop' }] }));
    expect(() => new ModelStream({ format: 'openai', maxEventBytes: 1024 }).push(body)).toThrow(expect.objectContaining({ code: 'ERR_EVENT_TOO_LARGE', offset: 0 }));
    // (an error of the answer's events is at the body's start: here past the two spaces before it, its message's offset too)
    const m = new ModelStream({ format: 'openai', maxTextBytes: 1000 });
    m.push(enc.encode('  '));
    m.push(body);
    let thrown: unknown;
    try {
      m.flush();
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toMatchObject({ code: 'ERR_TEXT_TOO_LONG', offset: 2 });
    expect((thrown as Error).message).toMatch(/byte offset 2\b/);
  });

  it('the provider\'s error in a whole answer (a failed response, a turn Gemini says failed) is at the body\'s start, in the stream and in the relay\'s error event', () => {
    const failed = JSON.stringify({ id: 'r', object: 'response', status: 'failed', error: { code: 'server_error', message: 'No.' }, output: [{ id: 'm', type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hi', annotations: [] }] }] });
    const gemini = JSON.stringify({ candidates: [{ content: { parts: [{ text: 'Hi' }], role: 'model' }, finishReason: 'MALFORMED_FUNCTION_CALL', index: 0 }] });
    for (const [format, body] of [['openai-responses', failed], ['gemini', gemini]] as const) {
      for (const chunks of standardChunkings(enc.encode(`\n${body}`))) {
        expect(() => read(format, chunks), format).toThrow(expect.objectContaining({ code: 'ERR_PROVIDER', offset: 1 }));
      }
      const r = new SseRelay({ from: format, to: 'openai' });
      r.push(enc.encode(`\n${body}`));
      expect(new TextDecoder().decode(r.flush()), format).toContain('"code":"ERR_PROVIDER","offset":1');
    }
  });

  it('limits: a body within maxEventBytes reads whole, though its stream\'s events are longer than it (the envelope each carries, a call\'s index)', () => {
    const bodies: [Format, string][] = [
      ['openai-responses', JSON.stringify({ id: 'resp_1', object: 'response', status: 'completed', output: [{ id: 'm', type: 'message', content: [{ type: 'output_text', text: 'hi', annotations: [] }] }] })],
      ['openai', JSON.stringify({ choices: [{ index: 0, message: { content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } }] }, finish_reason: 'tool_calls' }] })],
    ];
    for (const [format, body] of bodies) {
      const bytes = enc.encode(body);
      const m = new ModelStream({ format, maxEventBytes: bytes.length });
      const text = m.push(bytes) + m.flush();
      expect([format, text, m.status]).toEqual([format, format === 'openai' ? '' : 'hi', 'done']);
      expect(() => new ModelStream({ format, maxEventBytes: bytes.length - 1 }).push(bytes)).toThrow(expect.objectContaining({ code: 'ERR_EVENT_TOO_LARGE', offset: 0 }));
      const r = new SseRelay({ from: format, to: 'anthropic', maxEventBytes: bytes.length });
      r.push(bytes);
      const out = new TextDecoder().decode(r.flush());
      expect([format, out.includes('event: message_stop'), out.includes('event: error')]).toEqual([format, true, false]);
    }
  });

  it('the format facts give the events; Ollama, ddg and Bedrock have none here', () => {
    expect(describeFormat('openai').wholeAnswerEvents({ choices: [{ index: 0, message: { content: 'hi' }, finish_reason: 'stop' }] })).toEqual([
      { data: '{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}' },
      { data: '[DONE]' },
    ]);
    expect(describeFormat('anthropic').wholeAnswerEvents({ type: 'message', content: [] })?.map((e) => e.event)).toEqual(['message_start', 'message_delta', 'message_stop']);
    expect(describeFormat('openai').wholeAnswerEvents({ error: { message: 'no' } })).toBeUndefined();
    for (const f of ['ollama', 'ddg', 'bedrock', 'bedrock-invoke'] as const) expect(describeFormat(f).wholeAnswerEvents({ choices: [{ message: {} }] })).toBeUndefined();
  });

  it('isWholeAnswer says which values wholeAnswerEvents reads, each format its own; beginsWholeAnswer, how their text begins', () => {
    const bodies: Record<string, unknown> = {
      openai: { id: 'c', object: 'chat.completion', choices: [{ index: 0, message: { content: 'hi' } }] },
      anthropic: { id: 'm', type: 'message', role: 'assistant', content: [] },
      'openai-responses': { id: 'r', object: 'response', output: [] },
      gemini: { candidates: [{ content: { parts: [{ text: 'hi' }] } }] },
      geminiArray: [{ candidates: [] }, { usageMetadata: { totalTokenCount: 1 } }],
      bedrock: { metrics: { latencyMs: 1 }, output: { message: { role: 'assistant', content: [{ text: 'hi' }] } }, stopReason: 'end_turn' },
      error: { error: { message: 'no' } },
      chunk: { object: 'chat.completion.chunk', choices: [{ index: 0, delta: {} }] },
      text: 'hi',
    };
    const whole: Record<string, string[]> = {};
    const begins: Record<string, string[]> = {};
    for (const [name, body] of Object.entries(bodies)) {
      whole[name] = [];
      begins[name] = [];
      for (const f of MODEL_FORMATS) {
        const facts = describeFormat(f);
        // (the two facts agree: a value is a whole answer exactly when its events are written)
        expect(facts.isWholeAnswer(body), `${f} of ${name}`).toBe(facts.wholeAnswerEvents(body) !== undefined);
        if (facts.isWholeAnswer(body)) whole[name].push(f);
        if (facts.beginsWholeAnswer(JSON.stringify(body).slice(0, 80))) begins[name].push(f);
      }
    }
    expect(whole).toEqual({
      openai: ['openai'], anthropic: ['anthropic', 'bedrock-invoke'], 'openai-responses': ['openai-responses'], gemini: ['gemini'],
      geminiArray: ['gemini'], bedrock: ['bedrock'], error: [], chunk: [], text: [],
    });
    expect(begins).toEqual({
      openai: ['openai'], anthropic: ['anthropic', 'bedrock-invoke'], 'openai-responses': ['openai-responses'], gemini: ['gemini'],
      geminiArray: [], bedrock: ['bedrock'], error: [], chunk: [], text: [],
    });
  });
});

describe('a whole answer\'s parts', () => {
  it('ModelPartReader gives them at flush in its events\' order, however the body was cut', () => {
    const body = enc.encode(JSON.stringify({
      id: 'msg_1', type: 'message', role: 'assistant', model: 'claude',
      content: [{ type: 'thinking', thinking: 'hmm', signature: 'sig' }, { type: 'tool_use', id: 'toolu_1', name: 'get', input: { a: 1 } }, { type: 'text', text: 'Done.' }],
      stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 1, output_tokens: 5 },
    }));
    for (const chunks of standardChunkings(body)) {
      const r = new ModelPartReader(new ModelStream({ format: 'anthropic' }));
      for (const c of chunks) expect(r.push(c)).toEqual([]);
      expect(r.flush()).toEqual([
        { type: 'reasoning', text: 'hmm', block: 0 },
        { type: 'tool-call', call: { index: 0, id: 'toolu_1', name: 'get', arguments: '{}', done: false }, delta: '{}' },
        { type: 'tool-call', call: { index: 0, id: 'toolu_1', name: 'get', arguments: '{"a":1}', done: false }, delta: '{"a":1}', replaces: true },
        { type: 'tool-call', call: { index: 0, id: 'toolu_1', name: 'get', arguments: '{"a":1}', done: true, valid: true }, delta: '' },
        { type: 'text', text: 'Done' },
        { type: 'text', text: '.' },
      ]);
    }
  });
});

describe('a whole answer relayed: what the official clients read of it is what they read of its stream', () => {
  const cases: [Format, string][] = [
    ['openai', JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model: 'gpt-4o', choices: [{ index: 0, message: { role: 'assistant', content: 'Grüße 👋', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] }, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } })],
    ['anthropic', JSON.stringify({ id: 'msg_1', type: 'message', role: 'assistant', model: 'claude', content: [{ type: 'text', text: 'Grüße 👋' }, { type: 'tool_use', id: 'toolu_1', name: 'f', input: { a: 1 } }], stop_reason: 'tool_use', stop_sequence: null, usage: { input_tokens: 1, output_tokens: 2 } })],
    ['openai-responses', JSON.stringify({ id: 'resp_1', object: 'response', status: 'completed', model: 'gpt-5', output: [{ id: 'msg_1', type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Grüße 👋', annotations: [] }] }, { id: 'fc_1', type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{"a":1}' }], usage: { input_tokens: 1, output_tokens: 2 } })],
    ['gemini', JSON.stringify({ candidates: [{ content: { parts: [{ text: 'Grüße 👋' }, { functionCall: { id: 'call_1', name: 'f', args: { a: 1 } } }], role: 'model' }, finishReason: 'STOP', index: 0 }] })],
  ];
  for (const [from, body] of cases) {
    for (const to of ['openai', 'anthropic'] as const) {
      it(`${from} → ${to}`, async () => {
        const bytes = enc.encode(body);
        let first: unknown;
        for (const chunks of standardChunkings(bytes)) {
          const got = await callsRead(to, relayed(from, to, chunks));
          first ??= got;
          expect(got).toEqual(first);
        }
        const finish = to === 'openai' ? 'tool_calls' : 'tool_use';
        const id = from === 'gemini' && to === 'anthropic' ? 'call_1' : 'call_1';
        expect(first).toEqual({
          text: 'Grüße 👋', finish,
          calls: to === 'openai'
            ? [{ id: from === 'anthropic' ? 'toolu_1' : id, type: 'function', function: { name: 'f', arguments: '{"a":1}' } }]
            : [{ id: from === 'anthropic' ? 'toolu_1' : id, name: 'f', input: { a: 1 } }],
        });
      });
    }
  }
});
