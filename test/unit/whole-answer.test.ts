// wholeAnswer / wholeError: a stream's whole answer (`stream: false`) in a client's API, written
// from a ModelStream. The oracle: the official clients' final object of SseRelay's stream of the
// same upstream bytes (openai-node's finalChatCompletion(), the Anthropic SDK's finalMessage()),
// and for a failed stream the object of the relay's error event; for every fixture of every format
// and both clients, the upstream read whole, at every two-piece split and a byte per read, to the
// same answer. Set aside: the ids and times each makes for itself, and what the clients' readers
// keep of their own (test/gateway/whole-answers.test.ts's head says which):
// - openai-node assigns each `reasoning_content` delta over the last: the whole answer's is checked
//   against the relay's deltas joined; its `parsed`, `refusal: null`, `logprobs: null` are its own;
//   a message of calls alone has the relay's role chunk's content '' where a whole answer has null.
// - the Anthropic SDK's `parsed_output` is its own; text after a call is a block per run in the
//   stream and one text block (a block per kind) in the whole answer.
import { describe, expect, it } from 'vitest';
import { MODEL_FORMATS, ModelStream, ModelStreamError, SseRelay, wholeAnswer, wholeError } from '../../bindings/index.js';
import { BEDROCK_FIXTURES, BEDROCK_THINKING_CALL, encodeMessage } from '../helpers/bedrock-fixtures.js';
import { FIXTURES, type Fixture } from '../helpers/model-fixtures.js';
import { concat, standardChunkings } from '../helpers/random.js';
import { anthropicFinal, openaiFinal } from '../helpers/sdk-clients.js';

type Client = 'openai' | 'anthropic';

/** The ids and times a whole answer and a relay make for themselves: `ID`, time 0, a made call id `call_ID_<n>` / `toolu_ID_<n>`. */
function normalized(v: unknown): unknown {
  return JSON.parse(JSON.stringify(v), (k, x: unknown) => (k === 'created' ? 0
    : k === 'id' && typeof x === 'string' && /^(msg_|chatcmpl-)/.test(x) ? 'ID'
      : typeof x === 'string' ? x.replace(/^(call|toolu)_seam\w*_(\d+)$/, '$1_ID_$2') : x));
}

/** What a caller of the library answers for `chunks` of the fixture: the whole answer, or the error body (and which). */
function answer(f: Fixture, to: Client, chunks: Uint8Array[]): { kind: 'answer' | 'error' | 'bad-arguments'; body: unknown } {
  const ms = new ModelStream({ format: f.format as never, normalize: false, ...(f.choice === undefined ? {} : { choice: f.choice }) });
  let text = '';
  try {
    for (const c of chunks) text += ms.push(c);
    text += ms.flush();
  } catch (e) {
    if (!(e instanceof ModelStreamError)) throw e;
    return { kind: 'error', body: wholeError(e, { from: f.format as never, to }) };
  }
  try {
    return { kind: 'answer', body: normalized(wholeAnswer(ms, text, { to, model: f.name })) };
  } catch (e) {
    if (e instanceof ModelStreamError && e.code === 'ERR_BAD_ARGUMENTS') return { kind: 'bad-arguments', body: { message: e.message, offset: e.offset } };
    throw e;
  }
}

/** SseRelay's bytes for the fixture, to `to`. */
function relayed(f: Fixture, to: Client): Buffer {
  const r = new SseRelay({ from: f.format as never, to, model: f.name, ...(f.choice === undefined ? {} : { choice: f.choice }) });
  return Buffer.from(concat([r.push(f.bytes).slice(), r.flush().slice()]));
}

/** The relay's error event's object (the last event of a failed stream's). */
function relayedError(wire: Buffer): unknown {
  const data = wire.toString('utf8').split('\n').filter((l) => l.startsWith('data: ')).at(-1)!;
  return JSON.parse(data.slice(6));
}

/** The stream's `delta.reasoning_content` pieces joined, as written ('' for none). */
function streamedReasoning(wire: Buffer): string {
  let out = '';
  for (const line of wire.toString('utf8').split('\n')) {
    if (!line.startsWith('data: {')) continue;
    const r = (JSON.parse(line.slice(6)) as { choices?: { delta?: { reasoning_content?: string } }[] }).choices?.[0]?.delta?.reasoning_content;
    if (typeof r === 'string') out += r;
  }
  return out;
}

/** The fixtures whose text comes on after a call: a text block per run in the stream, one text block (the first's place) in the whole answer. */
const INTERLEAVED = new Set(['openai-tool-calls']);

/** What the official client makes of the relay's stream, in the whole answer's terms (the head of this file). */
async function finalOfStream(to: Client, wire: Buffer, name: string): Promise<unknown> {
  if (to === 'anthropic') {
    const { parsed_output: _parsed, ...read } = await anthropicFinal(wire);
    const message = read as Omit<typeof read, 'content'> & { content: { type: string; text?: string }[] };
    const texts = message.content.filter((b) => b.type === 'text');
    expect(texts.length > 1, name).toBe(INTERLEAVED.has(name));
    if (texts.length > 1) {
      // (a block per kind: the text's runs joined in its first block)
      const at = message.content.indexOf(texts[0]);
      const joined = { ...texts[0], text: texts.map((b) => b.text).join('') };
      message.content = message.content.flatMap((b, i) => (i === at ? [joined] : b.type === 'text' ? [] : [b]));
    }
    return normalized(message);
  }
  const done = await openaiFinal(wire);
  const reasoning = streamedReasoning(wire);
  const { choices, ...rest } = done;
  return normalized({
    ...rest,
    choices: choices.map(({ logprobs: _logprobs, message: read, ...choice }) => {
      const { parsed: _parsed, refusal, reasoning_content: kept, content, ...message } = read as typeof read & { reasoning_content?: string };
      // (openai-node keeps the stream's last piece of reasoning_content: a piece at the end of it all)
      expect([kept === undefined, reasoning.endsWith(kept ?? '')]).toEqual([reasoning === '', true]);
      const whole: Record<string, unknown> = { ...message, content: content === '' && (message.tool_calls !== undefined || refusal !== null) ? null : content };
      if (refusal !== null) whole.refusal = refusal;
      if (reasoning !== '') whole.reasoning_content = reasoning;
      return { ...choice, message: whole };
    }),
  });
}

const tally = { compared: 0, errors: 0 };

describe('wholeAnswer and wholeError of every fixture equal what the official clients read of SseRelay\'s stream of it', () => {
  // (and Bedrock's ConverseStream fixtures, AWS's binary event stream: a signed thinking block, a redacted one, text and a call among them)
  const bedrock = [...BEDROCK_FIXTURES, { name: 'bedrock-thinking-call', bytes: concat(BEDROCK_THINKING_CALL.map((m) => encodeMessage(m))) }]
    .map((b) => ({ name: b.name, format: 'bedrock', bytes: b.bytes }) as unknown as Fixture);
  const cases = [...FIXTURES, ...bedrock].flatMap((f) => (['openai', 'anthropic'] as const).map((to) => [f.name, to, f] as const));
  it.each(cases)('%s to an %s client: the same at every cutting, and the client\'s reading', async (_name, to, f) => {
    const first = answer(f, to, [f.bytes]);
    let runs = 0;
    for (const chunks of standardChunkings(f.bytes)) {
      expect(answer(f, to, chunks), `${chunks.length} reads`).toEqual(first);
      runs++;
    }
    expect(runs).toBe(f.bytes.length + 3);
    const wire = relayed(f, to);
    if (first.kind === 'error') {
      // (the relay's error event carries the same object)
      expect(first.body).toEqual(relayedError(wire));
      tally.errors++;
      return;
    }
    if (first.kind === 'bad-arguments') {
      // (a call the client's reader would hand over unparsed: none of its calls' arguments is one JSON value)
      expect((first.body as { message: string }).message).toMatch(/has arguments that are not one JSON value$/);
      return;
    }
    // (from the client's own API the relay passes the upstream's events as they came, its model and
    // fields of its own among them: compared to the stream translated is the answer written anew)
    if (f.format === to) return;
    expect(spanningAll(first.body)).toEqual(await finalOfStream(to, wire, f.name));
    tally.compared++;
  });

  /**
   * An OpenAI answer with each source's annotations made one that spans the whole content: a source
   * the stream placed in its text (Gemini's grounding spans) has an annotation at each span in the
   * whole answer, where the relay, which keeps no text, writes one spanning the content (the
   * spans are checked in test/unit/grounding.test.ts).
   */
  function spanningAll(body: unknown): unknown {
    const message = (body as { choices?: { message?: { content: string | null; annotations?: { url_citation: { url: string } }[] } }[] }).choices?.[0]?.message;
    if (message?.annotations === undefined) return body;
    const seen = new Set<string>();
    const chars = [...(message.content ?? '')].length;
    const annotations = message.annotations.filter((a) => !seen.has(a.url_citation.url) && seen.add(a.url_citation.url))
      .map((a) => ({ ...a, url_citation: { ...a.url_citation, start_index: 0, end_index: chars } }));
    const b = structuredClone(body) as { choices: { message: { annotations: unknown } }[] };
    b.choices[0].message.annotations = annotations;
    return b;
  }

  it('compared: the whole answers of the completed fixtures against the clients\' readings, the failed ones\' errors against the relay\'s', () => {
    // (as many as the fixtures gave when this was written, or more: a fixture added adds to them)
    expect([tally.compared >= 72, tally.errors >= 74], JSON.stringify(tally)).toEqual([true, true]);
  });
});

/** The message of the TypeError `f` throws (it must throw one). */
function typeError(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(TypeError);
    return (e as Error).message;
  }
  throw new Error('no error');
}

describe('wholeAnswer, exactly', () => {
  const enc = new TextEncoder();
  /** Every cutting's answer (the same each time, checked), to `to`. */
  const each = (format: string, body: string, to: Client) => {
    const f = { name: 'm', format, bytes: enc.encode(body) } as unknown as Fixture;
    const first = answer(f, to, [f.bytes]);
    for (const chunks of standardChunkings(f.bytes)) expect(answer(f, to, chunks), `${chunks.length} reads`).toEqual(first);
    return { first, wire: relayed(f, to) };
  };

  it('a prompt the provider refused (Gemini\'s promptFeedback.blockReason, a reason of no word of its own): the clients\' filter, content_filter and refusal, as the relay says it', async () => {
    const body = `data: ${JSON.stringify({ promptFeedback: { blockReason: 'OTHER' }, usageMetadata: { promptTokenCount: 5, totalTokenCount: 5 }, modelVersion: 'gemini-2.5-flash' })}\r\n\r\n`;
    const openai = each('gemini', body, 'openai');
    expect(openai.first.body).toEqual({
      id: 'ID', object: 'chat.completion', created: 0, model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'content_filter' }],
      usage: { prompt_tokens: 5, completion_tokens: 0, total_tokens: 5 },
    });
    expect(openai.first.body).toEqual(await finalOfStream('openai', openai.wire, 'm'));
    const anthropic = each('gemini', body, 'anthropic');
    expect(anthropic.first.body).toEqual({
      id: 'ID', type: 'message', role: 'assistant', model: 'm', content: [], stop_reason: 'refusal', stop_sequence: null, usage: { input_tokens: 5, output_tokens: 0 },
    });
    expect(anthropic.first.body).toEqual(await finalOfStream('anthropic', anthropic.wire, 'm'));
  });

  it('Anthropic\'s refusal explained (stop_details): to Anthropic its stop_details, not text, as the client reads the relay\'s stream; to OpenAI its refusal', async () => {
    const ev = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
    const details = { type: 'refusal', category: 'cyber', explanation: 'This request may enable "cyber" harm — café 🚫.' };
    const body = ev('message_start', { message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], model: 'claude', stop_reason: null, stop_sequence: null, stop_details: null, usage: { input_tokens: 9, output_tokens: 1 } } })
      + ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } })
      + ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Here is how to ' } })
      + ev('content_block_stop', { index: 0 })
      + ev('message_delta', { delta: { stop_reason: 'refusal', stop_sequence: null, stop_details: details }, usage: { output_tokens: 5 } })
      + ev('message_stop', {});
    const anthropic = each('anthropic', body, 'anthropic');
    expect(anthropic.first.body).toEqual({
      id: 'ID', type: 'message', role: 'assistant', model: 'm', content: [{ type: 'text', text: 'Here is how to ' }], stop_reason: 'refusal', stop_sequence: null,
      stop_details: details, usage: { input_tokens: 9, output_tokens: 5 },
    });
    // (the relay passes Anthropic's events as they came, its id and model among them)
    expect({ ...(anthropic.first.body as object), model: 'claude' }).toEqual(await finalOfStream('anthropic', anthropic.wire, 'm'));
    const openai = each('anthropic', body, 'openai');
    expect(openai.first.body).toEqual({
      id: 'ID', object: 'chat.completion', created: 0, model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Here is how to ', refusal: details.explanation }, finish_reason: 'content_filter' }],
      usage: { prompt_tokens: 9, completion_tokens: 5, total_tokens: 14 },
    });
    expect(openai.first.body).toEqual(await finalOfStream('openai', openai.wire, 'm'));
  });

  it('a call whose arguments are not one JSON value: ModelStreamError ERR_BAD_ARGUMENTS (offset -1: no one byte), to either client', () => {
    const chunk = (delta: unknown, finish: string | null = null) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'x', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const body = chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":' } }] }) + chunk({}, 'tool_calls') + 'data: [DONE]\n\n';
    for (const to of ['openai', 'anthropic'] as const) {
      expect(each('openai', body, to).first).toEqual({ kind: 'bad-arguments', body: { message: 'the upstream\'s tool call 0 (f) has arguments that are not one JSON value', offset: -1 } });
    }
  });

  it('a stream not done (not flushed, or cut short and read with eof: \'allow\'): a TypeError, never an answer', () => {
    const ms = new ModelStream({ format: 'anthropic', eof: 'allow' });
    const text = ms.push(enc.encode('event: message_start\ndata: {"type":"message_start","message":{"id":"m","usage":{"input_tokens":1}}}\n\n'));
    expect(() => wholeAnswer(ms, text)).toThrow(/the stream is open, not done/);
    ms.flush();
    expect(ms.status).toBe('truncated');
    expect(() => wholeAnswer(ms, text, { to: 'anthropic' })).toThrow(TypeError);
    expect(() => wholeError(new Error('x') as never, { from: 'openai' })).toThrow(TypeError);
    // (a model or id that is not a string, as SseRelay refuses it: it would be written into the answer as it is)
    const done = new ModelStream({ format: 'ollama' });
    const said = done.push(enc.encode('{"message":{"content":"hi"},"done":true}\n')) + done.flush();
    expect(wholeAnswer(done, said, { model: 'm' })).toMatchObject({ model: 'm', choices: [{ message: { content: 'hi' }, finish_reason: 'stop' }] });
    expect(() => wholeAnswer(done, said, { model: 7 as never })).toThrow(new TypeError('wholeAnswer: model must be a string, got 7'));
    expect(() => wholeAnswer(done, said, { id: {} as never })).toThrow(new TypeError('wholeAnswer: id must be a string, got an object'));
    expect(() => wholeAnswer(done, said, { to: 'gemini' as never })).toThrow(TypeError);
  });

  it('options are checked as SseRelay\'s are: a value of the wrong type, and an unknown key, are a TypeError that says so (one was written into the answer as it was, or passed over)', () => {
    const done = () => {
      const ms = new ModelStream({ format: 'openai' });
      const said = ms.push(enc.encode(`data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'x', choices: [{ index: 0, delta: { reasoning_content: 'hm', content: 'hi' }, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`)) + ms.flush();
      return [ms, said] as const;
    };
    const [ms, said] = done();
    const valid = 'valid options: to, model, id, created, callId, reasoning';
    for (const [options, message] of [
      [{ to: 'gemini' }, "to must be 'openai' or 'anthropic', got 'gemini'"],
      [{ to: 7 }, "to must be 'openai' or 'anthropic', got 7"],
      [{ reasoning: 'keep' }, "reasoning must be 'pass' or 'drop', got 'keep'"],
      [{ reasoning: false }, "reasoning must be 'pass' or 'drop', got false"],
      [{ reasoning: 'drop', to: 'anthropic', created: '1700000000' }, "created must be a non-negative integer, got '1700000000' (a string: give the number 1700000000)"],
      [{ created: 1700000000.5 }, 'created must be a non-negative integer, got 1700000000.5'],
      [{ created: -1 }, 'created must be a non-negative integer, got -1'],
      [{ created: new Date(0) }, 'created must be a non-negative integer, got a Date'],
      [{ callId: 'call_1' }, "callId must be a function, got 'call_1'"],
      [{ callID: () => 'x' }, `unknown option 'callID' (did you mean 'callId'?); ${valid}`],
      [{ from: 'openai' }, `unknown option 'from' (the stream's format is the stream's own: wholeAnswer reads it there); ${valid}`],
      [{ stream: false }, `unknown option 'stream'; ${valid}`],
      [null, 'options must be an object, got null'],
    ] as const) {
      expect(typeError(() => wholeAnswer(ms, said, options as never)), JSON.stringify(options)).toBe(`wholeAnswer: ${message}`);
    }
    expect(typeError(() => wholeAnswer(ms, 7 as never))).toBe("wholeAnswer: text must be the string the stream's push() and flush() returned, got 7");
    // (each option, of its type, taken as it is)
    const answer = wholeAnswer(ms, said, { to: 'openai', model: 'm', id: 'chatcmpl-1', created: 0, callId: () => 'call_1', reasoning: 'drop' });
    expect(answer).toEqual({ id: 'chatcmpl-1', object: 'chat.completion', created: 0, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }] });
    expect((wholeAnswer(ms, said, { reasoning: 'pass', created: Number.MAX_SAFE_INTEGER }) as { choices: { message: unknown }[] }).choices[0].message).toEqual({ role: 'assistant', content: 'hi', reasoning_content: 'hm' });
    expect(wholeAnswer(ms, said, undefined)).toMatchObject({ object: 'chat.completion', model: 'openai' });
    ms.dispose();
  });

  it('wholeError\'s options are checked too: from is required and one of the formats, to one of the clients (another was answered as OpenAI), no other key', () => {
    const error = new ModelStreamError('ERR_STREAM_TRUNCATED', 9, 'cut', '');
    const formats = `${MODEL_FORMATS.slice(0, -1).map((f) => `'${f}'`).join(', ')} or '${MODEL_FORMATS[MODEL_FORMATS.length - 1]}'`;
    for (const [options, message] of [
      [undefined, "options are required: wholeError(error, { from: 'openai' })"],
      [{}, `from must be ${formats}, got undefined`],
      [{ from: 'claude' }, `from must be ${formats}, got 'claude'`],
      [{ from: 'openai', to: 'gemini' }, "to must be 'openai' or 'anthropic', got 'gemini'"],
      [{ from: 'openai', to: 'Anthropic' }, "to must be 'openai' or 'anthropic', got 'Anthropic' (did you mean 'anthropic'?)"],
      [{ from: 'openai', format: 'openai' }, "unknown option 'format'; valid options: from, to"],
      ['openai', "options must be an object, got 'openai'"],
    ] as const) {
      expect(typeError(() => wholeError(error, options as never)), JSON.stringify(options)).toBe(`wholeError: ${message}`);
    }
    expect(typeError(() => wholeError(new Error('x') as never, { from: 'openai' }))).toBe('wholeError: error must be a ModelStreamError (what the stream threw), got an Error');
    expect(wholeError(error, { from: 'anthropic', to: 'anthropic' })).toEqual({ type: 'error', error: { type: 'api_error', message: expect.any(String) as unknown } });
  });
});
