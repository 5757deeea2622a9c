// A finish reason that says the turn failed: Gemini's MALFORMED_FUNCTION_CALL (and its kin),
// Bedrock's malformed_tool_use and malformed_model_output. The model's output cannot be used, so
// the stream is not complete: it is the provider's error (ERR_PROVIDER, the reason its code, the
// candidate's finishMessage its message), after the text before it, whatever the reads. A relay
// writes the error, so an agent's client throws instead of taking an empty answer for the last.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import {
  MODEL_FORMATS, ModelEventReader, ModelStream, ModelStreamError, ModelTextStream, SseRelay, coreMemoryUsed, describeFormat, setCoreMemoryLimit,
} from '../../bindings/index.js';
import { encodeMessage } from '../helpers/bedrock-fixtures.js';
import { concat, standardChunkings } from '../helpers/random.js';
import { anthropicFinal, openaiFinal } from '../helpers/sdk-clients.js';
import { thrown } from '../helpers/thrown.js';

const enc = new TextEncoder();
const dec = new TextDecoder();
const gem = (o: unknown) => `data: ${JSON.stringify(o)}\r\n\r\n`;
const NOTE = 'Malformed function call: print(default_api.get_weather(city="Zürich"';
const head = gem({ candidates: [{ content: { role: 'model', parts: [{ text: 'Let me ' }] }, index: 0 }], usageMetadata: { promptTokenCount: 7 } })
  + gem({ candidates: [{ content: { role: 'model', parts: [{ text: 'check. 🌦️' }] }, index: 0 }], usageMetadata: { promptTokenCount: 7 } });
const last = (finishReason: string, more: Record<string, unknown> = {}) => gem({
  candidates: [{ content: { role: 'model', parts: [] }, finishReason, index: 0, ...more }],
  usageMetadata: { promptTokenCount: 7, candidatesTokenCount: 5, totalTokenCount: 12 },
});
const geminiBody = (reason: string, more?: Record<string, unknown>) => head + last(reason, more);
/** Where the last event's data begins: the offset of its error. */
const lastAt = (body: string) => enc.encode(body.slice(0, body.lastIndexOf('data: ') + 6)).length;

/** What a ModelStream makes of the bytes in these reads: its text, and the error it stopped with. */
function read(format: 'gemini' | 'bedrock', chunks: Uint8Array[], raw: boolean) {
  const m = new ModelStream({ format, raw });
  let text = '';
  const err = thrown<ModelStreamError>(() => {
    for (const c of chunks) text += m.push(c);
    text += m.flush();
  });
  return { m, text: text + err.text, err };
}

describe("Gemini's finish reasons that say the turn failed", () => {
  const FAILED: Record<string, string> = {
    MALFORMED_FUNCTION_CALL: 'the model wrote a function call that is not valid',
    UNEXPECTED_TOOL_CALL: 'the model called a tool that the request did not enable',
    TOO_MANY_TOOL_CALLS: 'the model called tools too many times in a row',
    MALFORMED_RESPONSE: 'the model wrote a response that is not valid',
    MISSING_THOUGHT_SIGNATURE: 'a call in the request lacks the thought signature it came with',
  };

  for (const raw of [false, true]) {
    it(`MALFORMED_FUNCTION_CALL with its finishMessage is ERR_PROVIDER at its event, after the text, whatever the reads${raw ? ' (raw)' : ''}`, () => {
      const body = geminiBody('MALFORMED_FUNCTION_CALL', { finishMessage: NOTE });
      for (const chunks of standardChunkings(enc.encode(body))) {
        const { m, text, err } = read('gemini', chunks, raw);
        expect(err).toBeInstanceOf(ModelStreamError);
        expect([err.code, err.offset, err.providerMessage, err.providerCode]).toEqual(['ERR_PROVIDER', lastAt(body), NOTE, 'MALFORMED_FUNCTION_CALL']);
        expect(err.message).toBe(`The provider sent an error at byte offset ${lastAt(body)}: ${NOTE} (MALFORMED_FUNCTION_CALL)`);
        expect(text).toBe('Let me check. 🌦️');
        expect([m.status, m.finishReason]).toEqual(['failed', 'MALFORMED_FUNCTION_CALL']);
        expect(m.usage).toEqual({ promptTokenCount: 7, candidatesTokenCount: 5, totalTokenCount: 12 });
      }
    });
  }

  it("a call whose arguments were streaming (Vertex's partialArgs) is left as it stood: not ended, not made whole", () => {
    const part = (fc: unknown) => gem({ candidates: [{ content: { role: 'model', parts: [{ functionCall: fc }] }, index: 0 }] });
    const body = head + part({ name: 'weather', willContinue: true })
      + part({ partialArgs: [{ jsonPath: '$.city', stringValue: 'Zü', willContinue: true }], willContinue: true })
      + last('MALFORMED_FUNCTION_CALL', { finishMessage: NOTE });
    for (const chunks of standardChunkings(enc.encode(body))) {
      const { m, err } = read('gemini', chunks, false);
      expect([err.code, err.providerCode, err.offset]).toEqual(['ERR_PROVIDER', 'MALFORMED_FUNCTION_CALL', lastAt(body)]);
      expect(m.toolCalls).toEqual([{ index: 0, id: '', name: 'weather', arguments: '{"city":"Zü', done: false }]);
    }
    // (with the finish STOP, the same call is ended and made whole)
    const m = new ModelStream({ format: 'gemini' });
    m.push(enc.encode(body.slice(0, body.lastIndexOf('data: ')) + last('STOP')));
    m.flush();
    expect(m.toolCalls).toEqual([{ index: 0, id: '', name: 'weather', arguments: '{"city":"Zü"}', done: true, valid: true }]);
  });

  it('each, without a finishMessage, is ERR_PROVIDER with what the reason means', () => {
    for (const [reason, meaning] of Object.entries(FAILED)) {
      const body = geminiBody(reason);
      const { err } = read('gemini', [enc.encode(body)], false);
      expect([err.code, err.offset, err.providerMessage, err.providerCode], reason).toEqual(['ERR_PROVIDER', lastAt(body), meaning, reason]);
    }
  });

  it('an empty finishMessage says nothing: the meaning is the message', () => {
    const { err } = read('gemini', [enc.encode(geminiBody('MALFORMED_FUNCTION_CALL', { finishMessage: '' }))], false);
    expect(err.providerMessage).toBe(FAILED.MALFORMED_FUNCTION_CALL);
  });

  it('the other reasons still complete the stream (a finishMessage beside them is not an error)', () => {
    for (const reason of ['STOP', 'MAX_TOKENS', 'NO_IMAGE', 'IMAGE_OTHER', 'IMAGE_RECITATION', 'OTHER', 'SOMETHING_NEW']) {
      const m = new ModelStream({ format: 'gemini' });
      const text = m.push(enc.encode(geminiBody(reason, { finishMessage: 'said' }))) + m.flush();
      expect([text, m.status, m.finishReason], reason).toEqual(['Let me check. 🌦️', 'done', reason]);
    }
  });

  it("a candidate the stream does not follow can fail without failing the stream", () => {
    const body = gem({ candidates: [
      { content: { role: 'model', parts: [{ text: 'Fine.' }] }, finishReason: 'STOP', index: 0 },
      { content: { role: 'model', parts: [] }, finishReason: 'MALFORMED_FUNCTION_CALL', finishMessage: NOTE, index: 1 },
    ] });
    const m = new ModelStream({ format: 'gemini' });
    expect(m.push(enc.encode(body)) + m.flush()).toBe('Fine.');
    expect(m.status).toBe('done');
    const other = new ModelStream({ format: 'gemini', choice: 1 });
    expect(thrown<ModelStreamError>(() => other.push(enc.encode(body)))).toMatchObject({ code: 'ERR_PROVIDER', providerCode: 'MALFORMED_FUNCTION_CALL', providerMessage: NOTE });
  });

  it('ModelEventReader: the reading has the error, with the reason as its detail, and is not the completion', () => {
    const r = new ModelEventReader({ format: 'gemini' });
    const reading = r.read(JSON.stringify({ candidates: [{ content: { parts: [] }, finishReason: 'MALFORMED_FUNCTION_CALL', finishMessage: NOTE, index: 0 }] }));
    expect(reading).toMatchObject({ done: false, finishReason: 'MALFORMED_FUNCTION_CALL', error: { message: NOTE, detail: 'MALFORMED_FUNCTION_CALL' } });
    const ok = r.read(JSON.stringify({ candidates: [{ content: { parts: [] }, finishReason: 'STOP', index: 0 }] }));
    expect(ok.done).toBe(true);
    expect(ok.error).toBeUndefined();
  });

  it('relayed, each client throws the provider\'s error after the text, at every cut; exact last event', async () => {
    const body = enc.encode(geminiBody('MALFORMED_FUNCTION_CALL', { finishMessage: NOTE }));
    const at = lastAt(geminiBody('MALFORMED_FUNCTION_CALL', { finishMessage: NOTE }));
    for (const to of ['openai', 'anthropic'] as const) {
      let first: string | undefined;
      for (const chunks of standardChunkings(body)) {
        const r = new SseRelay({ from: 'gemini', to });
        // (the ids and times a relay makes for a stream without them differ from relay to relay)
        const out = dec.decode(concat([...chunks.map((c) => r.push(c).slice()), r.flush().slice()])).replace(/seam[0-9a-z]+/g, 'seam').replace(/"created":\d+/g, '"created":0');
        first ??= out;
        expect(out, `${to}, ${chunks.length} reads`).toBe(first);
      }
      const lastEvent = first!.slice(first!.lastIndexOf('data: '));
      expect(lastEvent).toBe(to === 'openai'
        ? `data: ${JSON.stringify({ error: { message: NOTE, type: 'upstream_error', code: 'ERR_PROVIDER', offset: at, provider_code: 'MALFORMED_FUNCTION_CALL' } })}\n\n`
        : `data: ${JSON.stringify({ type: 'error', error: { type: 'api_error', message: NOTE } })}\n\n`);
      expect(first).not.toMatch(/"finish_reason":"stop"|"stop_reason":"end_turn"/);
      const bytes = enc.encode(first!);
      const e = await (to === 'openai' ? openaiFinal(bytes) : anthropicFinal(bytes)).then(() => undefined, (x: unknown) => x);
      expect(e).toBeInstanceOf(to === 'openai' ? OpenAI.APIError : Anthropic.APIError);
      expect((e as Error).message).toContain(NOTE);
    }
  });

  it('MISSING_THOUGHT_SIGNATURE is the request\'s fault: an invalid_request_error to Anthropic\'s clients', () => {
    const r = new SseRelay({ from: 'gemini', to: 'anthropic' });
    const out = dec.decode(r.push(enc.encode(geminiBody('MISSING_THOUGHT_SIGNATURE')))) + dec.decode(r.flush());
    expect(out.slice(out.lastIndexOf('data: '))).toBe(`data: ${JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: FAILED.MISSING_THOUGHT_SIGNATURE } })}\n\n`);
  });
});

describe("Bedrock's stop reasons that say the turn failed", () => {
  const messages = (stopReason: string) => [
    { event: 'messageStart', payload: '{"role":"assistant","p":"abc"}' },
    { event: 'contentBlockDelta', payload: '{"contentBlockIndex":0,"delta":{"text":"Calling é…"},"p":"ab"}' },
    { event: 'contentBlockStop', payload: '{"contentBlockIndex":0,"p":"abcd"}' },
    // (a call whose input had begun when the model's output broke)
    { event: 'contentBlockStart', payload: '{"contentBlockIndex":1,"start":{"toolUse":{"toolUseId":"tooluse_1","name":"weather"}},"p":"a"}' },
    { event: 'contentBlockDelta', payload: '{"contentBlockIndex":1,"delta":{"toolUse":{"input":"{\\"city\\":\\"Z"}},"p":"a"}' },
    { event: 'messageStop', payload: JSON.stringify({ stopReason, p: 'ab' }) },
    { event: 'metadata', payload: '{"usage":{"inputTokens":9,"outputTokens":4,"totalTokens":13},"metrics":{"latencyMs":80},"p":"a"}' },
  ].map(encodeMessage);

  for (const [reason, meaning] of [['malformed_tool_use', 'the model wrote a tool call that is not valid'], ['malformed_model_output', 'the model wrote output that is not valid']]) {
    for (const raw of [false, true]) {
      it(`${reason} is ERR_PROVIDER at its message, after the text, whatever the reads${raw ? ' (raw)' : ''}`, () => {
        const frames = messages(reason);
        const bytes = concat(frames);
        const start = frames.slice(0, 5).reduce((n, f) => n + f.length, 0);
        for (const chunks of standardChunkings(bytes)) {
          const { m, text, err } = read('bedrock', chunks, raw);
          expect([err.code, err.offset, err.providerMessage, err.providerCode]).toEqual(['ERR_PROVIDER', start, meaning, reason]);
          expect(text).toBe('Calling é…');
          expect([m.status, m.finishReason]).toEqual(['failed', reason]);
          // (the call is left as it stood; the metadata after the stop is read for the usage the
          // provider counted for the failed turn, then the stream fails at the stop)
          expect(m.toolCalls).toEqual([{ index: 0, id: 'tooluse_1', name: 'weather', arguments: '{"city":"Z', done: false }]);
          expect(m.usage).toEqual({ inputTokens: 9, outputTokens: 4, totalTokens: 13 });
        }
      });
    }
  }

  // What may follow the failed stop instead of its metadata: the stream fails at the stop all the
  // same (that came first), with no usage, and nothing after the stop is the answer.
  const after: [string, Uint8Array, boolean][] = [
    ['the end', new Uint8Array(0), false],
    ['a metadata message cut short', encodeMessage({ event: 'metadata', payload: '{"usage":{"inputTokens":9,"outputTokens":4,"totalTokens":13}}' }).subarray(0, 20), false],
    ['an exception message', encodeMessage({ exception: 'modelStreamErrorException', payload: '{"message":"The model stream failed."}' }), false],
    ['a message whose CRC is wrong', (() => { const b = encodeMessage({ event: 'metadata', payload: '{"usage":{"inputTokens":9}}' }).slice(); b[b.length - 1] ^= 1; return b; })(), false],
    ['text (not the answer), then the metadata', concat([
      encodeMessage({ event: 'contentBlockDelta', payload: '{"contentBlockIndex":2,"delta":{"text":"more"}}' }),
      encodeMessage({ event: 'metadata', payload: '{"usage":{"inputTokens":9}}' }),
    ]), false],
    ['the metadata, then a message whose CRC is wrong', concat([
      encodeMessage({ event: 'metadata', payload: '{"usage":{"inputTokens":9,"outputTokens":4,"totalTokens":13}}' }),
      (() => { const b = encodeMessage({ event: 'metadata', payload: '{}' }).slice(); b[9] ^= 1; return b; })(),
    ]), true],
  ];
  for (const [name, tail, usage] of after) {
    for (const raw of [false, true]) {
      it(`malformed_tool_use, then ${name}: ERR_PROVIDER at the stop, whatever the reads${raw ? ' (raw)' : ''}`, () => {
        const frames = messages('malformed_tool_use').slice(0, 6);
        const start = frames.slice(0, 5).reduce((n, f) => n + f.length, 0);
        for (const chunks of standardChunkings(concat([...frames, tail]))) {
          const { m, text, err } = read('bedrock', chunks, raw);
          expect([err.code, err.offset, err.providerCode], `${chunks.length} reads`).toEqual(['ERR_PROVIDER', start, 'malformed_tool_use']);
          expect(text).toBe('Calling é…');
          expect([m.status, m.finishReason]).toEqual(['failed', 'malformed_tool_use']);
          expect(m.usage).toEqual(usage ? { inputTokens: 9, outputTokens: 4, totalTokens: 13 } : undefined);
        }
      });
    }
  }

  it('relayed, the usage of the failed turn is read before the error is written (a gateway counts its tokens), at every cut', () => {
    const frames = messages('malformed_model_output');
    const at = frames.slice(0, 5).reduce((n, f) => n + f.length, 0);
    for (const to of ['openai', 'anthropic'] as const) {
      for (const chunks of standardChunkings(concat(frames))) {
        const r = new SseRelay({ from: 'bedrock', to });
        for (const c of chunks) r.push(c);
        r.flush();
        expect([r.status, r.usage, r.error?.offset], `${to}, ${chunks.length} reads`).toEqual(['failed', { inputTokens: 9, outputTokens: 4, totalTokens: 13 }, at]);
      }
    }
  });

  it('a relay aborted after the failed stop, before its metadata, writes the failed turn\'s error, not the abort\'s', () => {
    const frames = messages('malformed_tool_use');
    const at = frames.slice(0, 5).reduce((n, f) => n + f.length, 0);
    const r = new SseRelay({ from: 'bedrock', to: 'openai' });
    dec.decode(r.push(concat(frames.slice(0, 6))));
    expect(r.status).toBe('open');
    const out = dec.decode(r.abort({ kind: 'timeout', message: 'the upstream was idle' }));
    expect(out).toBe(`data: ${JSON.stringify({ error: { message: 'the model wrote a tool call that is not valid', type: 'upstream_error', code: 'ERR_PROVIDER', offset: at, provider_code: 'malformed_tool_use' } })}\n\n`);
    expect(r.status).toBe('failed');
  });

  // (text whose last cluster the text layer holds back, "e" + U+0301: the stop is its end)
  const held = [
    { event: 'messageStart', payload: '{"role":"assistant"}' },
    { event: 'contentBlockDelta', payload: '{"contentBlockIndex":0,"delta":{"text":"Calling e"}}' },
    { event: 'contentBlockDelta', payload: '{"contentBlockIndex":0,"delta":{"text":"\\u0301"}}' },
    { event: 'contentBlockStart', payload: '{"contentBlockIndex":1,"start":{"toolUse":{"toolUseId":"t1","name":"w"}}}' },
    { event: 'contentBlockDelta', payload: '{"contentBlockIndex":1,"delta":{"toolUse":{"input":"{\\"c"}}}' },
    { event: 'messageStop', payload: '{"stopReason":"malformed_tool_use"}' },
  ].map(encodeMessage);
  const heldStop = held.slice(0, -1).reduce((n, f) => n + f.length, 0);

  it('the text held back is given at the stop (nothing after it is the answer), before its metadata came', () => {
    const m = new ModelStream({ format: 'bedrock' });
    expect([m.push(concat(held)), m.status]).toEqual(['Calling é', 'open']);
    const e = thrown<ModelStreamError>(() => m.flush());
    expect([e.code, e.offset, e.text, m.status]).toEqual(['ERR_PROVIDER', heldStop, '', 'failed']);
  });

  it('ModelTextStream whose upstream breaks after the stop, before its metadata: the whole text, then the provider\'s error (it came first), the report too', async () => {
    const t = new ModelTextStream({ format: 'bedrock' });
    const body = new ReadableStream<Uint8Array>({
      start(c) { c.enqueue(concat(held)); },
      pull(c) { return new Promise((res) => setTimeout(() => { c.error(new Error('socket hang up')); res(); }, 20)); },
    });
    let text = '';
    let err: unknown;
    const reader = body.pipeThrough(t).getReader();
    try {
      for (let r = await reader.read(); !r.done; r = await reader.read()) text += r.value;
    } catch (e) { err = e; }
    const report = await t.report.catch((e: unknown) => e);
    expect([text, (err as ModelStreamError).code, (err as ModelStreamError).offset, (report as ModelStreamError).code]).toEqual(['Calling é', 'ERR_PROVIDER', heldStop, 'ERR_PROVIDER']);
  });

  it('a read the core cannot hold after the stop: the provider\'s error (it came first), not the memory\'s, to a stream and to each client', () => {
    const metadata = encodeMessage({ event: 'metadata', payload: `{"usage":{"inputTokens":9},"p":"${'x'.repeat(200_000)}"}` });
    for (const to of ['openai', 'anthropic'] as const) {
      const r = new SseRelay({ from: 'bedrock', to });
      r.push(concat(held));
      setCoreMemoryLimit(coreMemoryUsed() + 1000);
      try {
        r.push(metadata);
      } catch { /* (a CoreMemoryError would stop the relay; its flush writes its end) */ } finally {
        setCoreMemoryLimit(undefined);
      }
      const out = dec.decode(r.flush());
      expect([r.error?.code, r.error?.offset], to).toEqual(['ERR_PROVIDER', heldStop]);
      expect(out, to).toContain('the model wrote a tool call that is not valid');
    }
    const m = new ModelStream({ format: 'bedrock' });
    m.push(concat(held));
    setCoreMemoryLimit(coreMemoryUsed() + 1000);
    let e: unknown;
    try { m.push(metadata); } catch (x) { e = x; } finally { setCoreMemoryLimit(undefined); }
    expect([(e as ModelStreamError).code, (e as ModelStreamError).offset]).toEqual(['ERR_PROVIDER', heldStop]);
  });

  it('tool_use still completes the stream, its call ended, with the usage that follows it', () => {
    const m = new ModelStream({ format: 'bedrock' });
    expect(m.push(concat(messages('tool_use'))) + m.flush()).toBe('Calling é…');
    expect([m.status, m.finishReason, m.usage]).toEqual(['done', 'tool_use', { inputTokens: 9, outputTokens: 4, totalTokens: 13 }]);
    expect(m.toolCalls).toEqual([{ index: 0, id: 'tooluse_1', name: 'weather', arguments: '{"city":"Z', done: true, valid: false }]);
  });

  it('relayed, each client throws the error after the text, and no call is given whole, at every cut (exact last event)', async () => {
    const frames = messages('malformed_tool_use');
    const at = frames.slice(0, 5).reduce((n, f) => n + f.length, 0);
    const message = 'the model wrote a tool call that is not valid';
    for (const to of ['openai', 'anthropic'] as const) {
      let first: string | undefined;
      for (const chunks of standardChunkings(concat(frames))) {
        const r = new SseRelay({ from: 'bedrock', to });
        const out = dec.decode(concat([...chunks.map((c) => r.push(c).slice()), r.flush().slice()])).replace(/seam[0-9a-z]+/g, 'seam').replace(/"created":\d+/g, '"created":0');
        first ??= out;
        expect(out, `${to}, ${chunks.length} reads`).toBe(first);
      }
      expect(first!.slice(first!.lastIndexOf('data: '))).toBe(to === 'openai'
        ? `data: ${JSON.stringify({ error: { message, type: 'upstream_error', code: 'ERR_PROVIDER', offset: at, provider_code: 'malformed_tool_use' } })}\n\n`
        : `data: ${JSON.stringify({ type: 'error', error: { type: 'api_error', message } })}\n\n`);
      expect(first).not.toMatch(/finish_reason":"(stop|tool_calls)|stop_reason":"|content_block_stop","index":1/);
      const e = await (to === 'openai' ? openaiFinal(enc.encode(first!)) : anthropicFinal(enc.encode(first!))).then(() => undefined, (x: unknown) => x);
      expect(e).toBeInstanceOf(to === 'openai' ? OpenAI.APIError : Anthropic.APIError);
      expect((e as Error).message).toContain(message);
    }
  });
});

describe('describeFormat(format).failedTurn', () => {
  it('names what each failed reason means, and no other reason of any format', () => {
    expect(describeFormat('gemini').failedTurn('MALFORMED_FUNCTION_CALL')).toBe('the model wrote a function call that is not valid');
    expect(describeFormat('bedrock').failedTurn('malformed_tool_use')).toBe('the model wrote a tool call that is not valid');
    const failed = MODEL_FORMATS.flatMap((f) => ['STOP', 'stop', 'end_turn', 'tool_use', 'MAX_TOKENS', 'refusal', 'MALFORMED_FUNCTION_CALL', 'malformed_model_output', 'toString', '__proto__']
      .filter((r) => describeFormat(f).failedTurn(r) !== undefined).map((r) => `${f}:${r}`));
    expect(failed).toEqual(['gemini:MALFORMED_FUNCTION_CALL', 'bedrock:malformed_model_output']);
  });
});

describe("OpenAI-compatible servers' finish reasons that say the turn failed", () => {
  // Mistral's and vLLM's `error` (vLLM's request-level internal error), DeepSeek's
  // `insufficient_system_resource` (the inference system ran short and cut the answer) and vLLM's
  // `abort` (the engine aborted the request): the answer is cut short by the server, not finished.
  // They were a completion (status done, the reason as sent), which a relay wrote as the client's
  // finish: an agent took the cut answer for the last.
  const FAILED: Record<string, string> = {
    error: 'the server ended the turn with an error',
    insufficient_system_resource: 'the server ran short of resources and cut the answer short',
    abort: 'the server aborted the request',
  };
  const chunk = (delta: Record<string, unknown>, finish: string | null) => `data: ${JSON.stringify({
    id: 'cmpl-f', object: 'chat.completion.chunk', created: 1765000000, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }],
  })}\n\n`;
  const usage = `data: ${JSON.stringify({ id: 'cmpl-f', object: 'chat.completion.chunk', created: 1765000000, model: 'm', choices: [], usage: { prompt_tokens: 7, completion_tokens: 5, total_tokens: 12 } })}\n\n`;
  // (the last text in the chunk that fails: it is kept, before the error)
  const body = (reason: string) => chunk({ role: 'assistant', content: 'Grüße, ' }, null) + chunk({ content: 'bis gleich 👋🏽' }, null)
    + chunk({ content: ' und' }, reason) + usage + 'data: [DONE]\n\n';
  const failAt = (s: string) => enc.encode(s.slice(0, s.lastIndexOf('data: ', s.indexOf(usage) - 1) + 6)).length;

  for (const [reason, meaning] of Object.entries(FAILED)) {
    for (const raw of [false, true]) {
      it(`${reason} is ERR_PROVIDER at its chunk, after the text, whatever the reads${raw ? ' (raw)' : ''}`, () => {
        const s = body(reason);
        const at = failAt(s);
        for (const chunks of standardChunkings(enc.encode(s))) {
          const m = new ModelStream({ format: 'openai', raw });
          let text = '';
          const err = thrown<ModelStreamError>(() => {
            for (const c of chunks) text += m.push(c);
            text += m.flush();
          });
          expect(err, `${chunks.length} reads`).toBeInstanceOf(ModelStreamError);
          expect([err.code, err.offset, err.providerMessage, err.providerCode]).toEqual(['ERR_PROVIDER', at, meaning, reason]);
          expect(text + err.text).toBe('Grüße, bis gleich 👋🏽 und');
          expect([m.status, m.finishReason]).toEqual(['failed', reason]);
        }
      });
    }
  }

  it('relayed, each client throws the provider\'s error after the text, at every cut; exact last event', async () => {
    for (const [reason, meaning] of Object.entries(FAILED)) {
      const s = body(reason);
      const at = failAt(s);
      for (const to of ['openai', 'anthropic'] as const) {
        let first: string | undefined;
        for (const chunks of standardChunkings(enc.encode(s))) {
          const r = new SseRelay({ from: 'openai', to });
          const out = dec.decode(concat([...chunks.map((c) => r.push(c).slice()), r.flush().slice()])).replace(/msg_seam[0-9a-z]+/g, 'msg_seam');
          first ??= out;
          expect(out, `${reason} to ${to}, ${chunks.length} reads`).toBe(first);
        }
        expect(first!.slice(first!.lastIndexOf('data: '))).toBe(to === 'openai'
          ? `data: ${JSON.stringify({ error: { message: meaning, type: 'upstream_error', code: 'ERR_PROVIDER', offset: at, provider_code: reason } })}\n\n`
          : `data: ${JSON.stringify({ type: 'error', error: { type: reason === 'insufficient_system_resource' ? 'overloaded_error' : 'api_error', message: meaning } })}\n\n`);
        expect(first).not.toMatch(/"finish_reason":"(?:stop|error|abort|insufficient_system_resource)"|"stop_reason":"/);
        const bytes = enc.encode(first!);
        const e = await (to === 'openai' ? openaiFinal(bytes) : anthropicFinal(bytes)).then(() => undefined, (x: unknown) => x);
        expect(e, `${reason} to ${to}`).toBeInstanceOf(to === 'openai' ? OpenAI.APIError : Anthropic.APIError);
        expect((e as Error).message).toContain(meaning);
      }
    }
  });

  it('the other reasons still complete the stream', () => {
    for (const reason of ['stop', 'length', 'content_filter', 'tool_calls', 'model_length', 'repetition', 'something_new']) {
      const m = new ModelStream({ format: 'openai' });
      const text = m.push(enc.encode(body(reason))) + m.flush();
      expect([text, m.status, m.finishReason], reason).toEqual(['Grüße, bis gleich 👋🏽 und', 'done', reason]);
    }
    // (Mistral's model_length: the context window full, in each client's words; vLLM's repetition: an answer not finished)
    const f = describeFormat('openai');
    expect(['model_length', 'repetition'].map((r) => [f.finishReason(r, 'openai'), f.finishReason(r, 'anthropic')]))
      .toEqual([['length', 'model_context_window_exceeded'], ['length', 'max_tokens']]);
  });
});
