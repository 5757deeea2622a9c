// Bedrock's whole answers (asked without streaming) read as their streams: Converse's JSON body
// (`{output: {message: {content}}, stopReason, usage, metrics}`) as the ConverseStream events of
// the same answer, InvokeModel's Claude message as Anthropic's events of it. The oracle is the
// streaming reader itself: for every completed ConverseStream fixture the tests have, the Converse
// body of the same answer (built here from the fixture's messages, as AWS documents Converse's
// ContentBlock) reads to the same text, reasoning and signatures, calls, finish reason, usage and
// status as the stream, read whole, at every two-piece cut and a byte per read; relayed, the
// official clients read the same message of both.
import { describe, expect, it } from 'vitest';
import { ModelStream, ModelStreamError, SseRelay, describeFormat } from '../../bindings/index.js';
import { BEDROCK_FIXTURES, BEDROCK_THINKING_CALL, crc32Ref, encodeMessage, type Msg } from '../helpers/bedrock-fixtures.js';
import { SEED, concat, cut, randomCuts, rng, standardChunkings } from '../helpers/random.js';
import { anthropicFinal, openaiFinal } from '../helpers/sdk-clients.js';

const enc = new TextEncoder();
type Format = 'bedrock' | 'bedrock-invoke';
type Obj = Record<string, unknown>;

/** What a model stream makes of `chunks`: the answer as a caller sees it, or its error. */
function read(format: Format, chunks: Uint8Array[], options: { maxEventBytes?: number; raw?: boolean } = {}) {
  const m = new ModelStream({ format, ...options });
  let text = '';
  let error: { code: string; offset: number; message: string; providerMessage?: string; providerCode?: string } | undefined;
  try {
    for (const c of chunks) text += m.push(c);
    text += m.flush();
  } catch (e) {
    if (!(e instanceof ModelStreamError)) throw e;
    text += e.text;
    error = { code: e.code, offset: e.offset, message: e.message, providerMessage: e.providerMessage, providerCode: e.providerCode };
  }
  return {
    text, status: m.status, finishReason: m.finishReason, usage: m.usage, reasoning: m.reasoning,
    // (a whole answer's arguments are its input's JSON written anew: spacing and escapes differ from the stream's fragments)
    calls: m.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: c.valid ? JSON.parse(c.arguments) as unknown : c.arguments, done: c.done, valid: c.valid })),
    signatures: m.reasoningBlocks.map((b) => b.signature ?? b.redacted ?? null), citations: m.citations.map((c) => ({ url: c.url, title: c.title, citedText: c.citedText })),
    error,
  };
}

/** A CRC-32 as AWS's event stream writes it after what it covers: big-endian. */
function crcBytes(b: Uint8Array): Uint8Array {
  const c = crc32Ref(b);
  return new Uint8Array([c >>> 24, (c >>> 16) & 255, (c >>> 8) & 255, c & 255]);
}

/** `read` of the body whole, at every two-piece cut and a byte per read: the same each time; that reading. */
function atEveryCut(format: Format, body: string | Uint8Array, options: { maxEventBytes?: number; raw?: boolean } = {}) {
  const bytes = typeof body === 'string' ? enc.encode(body) : body;
  const first = read(format, [bytes], options);
  let runs = 0;
  for (const chunks of standardChunkings(bytes)) {
    expect(read(format, chunks, options), `${chunks.length} reads`).toEqual(first);
    runs++;
  }
  expect(runs).toBe(bytes.length + 3);
  return first;
}

/**
 * The Converse body of the answer a ConverseStream stream's messages say (its events; an exception
 * is none of the answer): each block at its index, its text, reasoning text and signature, redacted
 * content, or tool use (its input the fragments' JSON, `{}` for none), the stop reason, and the
 * metadata's usage, metrics and trace.
 */
function converseOf(messages: readonly Msg[]): Obj {
  const blocks = new Map<number, Obj>();
  const block = (i: number): Obj => {
    let b = blocks.get(i);
    if (b === undefined) blocks.set(i, (b = {}));
    return b;
  };
  const input = new Map<number, string>();
  const body: Obj = {};
  for (const m of messages) {
    if (!('event' in m)) continue;
    const p = JSON.parse(m.payload) as Obj;
    const i = p.contentBlockIndex as number;
    if (m.event === 'contentBlockStart') {
      const { toolUseId, name, type } = (p.start as { toolUse: Obj }).toolUse;
      block(i).toolUse = { toolUseId, name, ...(type !== undefined ? { type } : {}) };
      input.set(i, '');
    } else if (m.event === 'contentBlockDelta') {
      const d = p.delta as Obj;
      const b = block(i);
      if (typeof d.text === 'string') b.text = ((b.text as string | undefined) ?? '') + d.text;
      else if (d.toolUse !== undefined) input.set(i, (input.get(i) ?? '') + (d.toolUse as Obj).input as string);
      else {
        const r = d.reasoningContent as Obj;
        if (typeof r.redactedContent === 'string') b.reasoningContent = { redactedContent: r.redactedContent };
        else {
          const t = ((b.reasoningContent ??= { reasoningText: { text: '' } }) as { reasoningText: Obj }).reasoningText;
          if (typeof r.text === 'string') t.text = (t.text as string) + r.text;
          if (typeof r.signature === 'string') t.signature = r.signature;
        }
      }
    } else if (m.event === 'messageStop') {
      body.stopReason = p.stopReason;
    } else if (m.event === 'metadata') {
      for (const k of ['usage', 'metrics', 'trace']) if (p[k] !== undefined) body[k] = p[k];
    }
  }
  for (const [i, text] of input) (block(i).toolUse as Obj).input = text === '' ? {} : JSON.parse(text);
  const content = [...blocks.entries()].sort((a, b) => a[0] - b[0]).map(([, b]) => b);
  return { output: { message: { role: 'assistant', content } }, ...body };
}

/** Every completed ConverseStream the tests have (an exception after the completion is none of the answer). */
const STREAMS: [string, Msg[]][] = [
  ...BEDROCK_FIXTURES.filter((f) => f.expected.status === 'done').map((f) => [f.name, f.messages] as [string, Msg[]]),
  ['bedrock-thinking-call', [...BEDROCK_THINKING_CALL]],
];

describe('a Converse whole answer reads as its ConverseStream stream', () => {
  it('covers the fixtures', () => {
    expect(STREAMS.map(([n]) => n)).toEqual([
      'bedrock-basic', 'bedrock-tools', 'bedrock-tools-no-input', 'bedrock-reasoning', 'bedrock-guardrail', 'bedrock-exception-after-stop', 'bedrock-thinking-call',
    ]);
  });
  for (const [name, messages] of STREAMS) {
    for (const raw of [false, true]) {
      it(`${name}${raw ? ', raw' : ''}`, () => {
        const stream = read('bedrock', [concat(messages.map(encodeMessage))], { raw });
        expect(stream.status).toBe('done');
        const body = enc.encode(JSON.stringify(converseOf(messages)));
        expect(atEveryCut('bedrock', body, { raw })).toEqual(stream);
        // (and seeded random cuts, pieces of 0 to 40 bytes: SEAM_SEED replays a run)
        const next = rng(SEED);
        for (let round = 0; round < 20; round++) expect(read('bedrock', cut(body, randomCuts(body, next, 40)), { raw }), `seed ${SEED}, round ${round}`).toEqual(stream);
      });
    }
  }
});

describe('Converse whole answers, exactly', () => {
  const usage = { inputTokens: 12, outputTokens: 7, totalTokens: 19 };
  const answer = (content: unknown[], stopReason = 'end_turn', more: Obj = {}) => JSON.stringify({
    output: { message: { role: 'assistant', content } }, stopReason, usage, metrics: { latencyMs: 321 }, ...more,
  });

  it('text only: held back to whole graphemes, NFC', () => {
    expect(atEveryCut('bedrock', answer([{ text: 'Grüße, e\u0301te\u0301 👩‍💻' }]))).toEqual({
      text: 'Grüße, été 👩‍💻', status: 'done', finishReason: 'end_turn', usage, reasoning: '', calls: [], signatures: [], citations: [], error: undefined,
    });
  });

  it('pretty-printed, after white space: the same', () => {
    const body = `\n  ${JSON.stringify(JSON.parse(answer([{ text: 'Hallo' }, { text: ' Welt' }])), null, 2)}\n`;
    expect(atEveryCut('bedrock', body)).toMatchObject({ text: 'Hallo Welt', status: 'done', finishReason: 'end_turn', usage });
  });

  it('after more white space than a prelude (12 bytes), a BOM first, in reads of any size: the same (it is held, not framed as AWS\'s event stream)', () => {
    const lead = '\ufeff \n'.padEnd(16, ' ') + '\r\n\t';
    const r = atEveryCut('bedrock', lead + answer([{ text: 'Hallo' }]));
    expect(r).toMatchObject({ text: 'Hallo', status: 'done', finishReason: 'end_turn', usage, error: undefined });
    // (an error body after it: at its `{`)
    const e = atEveryCut('bedrock', `${lead}{"message":"Too many requests","__type":"ThrottlingException"}`);
    expect([e.status, e.error?.code, e.error?.offset]).toEqual(['failed', 'ERR_PROVIDER', enc.encode(lead).length]);
    // and relayed: the client gets the same bytes, whatever the reads (the time aside)
    const bytes = enc.encode(lead + answer([{ text: 'Hallo' }, { toolUse: { toolUseId: 't1', name: 'f', input: { a: 1 } } }], 'tool_use'));
    for (const to of ['openai', 'anthropic'] as const) {
      const whole = new TextDecoder().decode(relayed('bedrock', to, [bytes])).replace(/"created":\d+/g, '');
      expect(whole).toContain(to === 'openai' ? '"finish_reason":"tool_calls"' : '"stop_reason":"tool_use"');
      for (const chunks of standardChunkings(bytes)) expect(new TextDecoder().decode(relayed('bedrock', to, chunks)).replace(/"created":\d+/g, ''), `${chunks.length} reads`).toBe(whole);
    }
  });

  it('white space, then what is not a body: AWS\'s event stream, framed from its first byte as before, whatever the reads', () => {
    // (a prelude that begins with white space says a message of at least 0x09000000 bytes: past maxEventBytes here, at byte 0)
    const prelude = new Uint8Array([0x0a, 0x20, 0x00, 0x10, 0, 0, 0, 0]);
    const big = concat([prelude, crcBytes(prelude), new Uint8Array(8)]);
    const tooLarge = atEveryCut('bedrock', big);
    expect([tooLarge.status, tooLarge.error?.code, tooLarge.error?.offset]).toEqual(['failed', 'ERR_EVENT_TOO_LARGE', 0]);
    // (twelve bytes of white space are a prelude whose CRC fails: no white space of 12 bytes has its CRC after it)
    for (const lead of [' '.repeat(12), '\n'.repeat(20), '\ufeff'.concat(' '.repeat(9))]) {
      const r = atEveryCut('bedrock', `${lead}\u0000`);
      expect([r.status, r.error?.code, r.error?.offset]).toEqual(['failed', 'ERR_CRC_MISMATCH', 0]);
      expect(atEveryCut('bedrock', lead).error?.code).toBe('ERR_CRC_MISMATCH');
    }
    // (less is a prelude cut short: the stream ended inside its first message)
    const short = atEveryCut('bedrock', ' \n ');
    expect([short.status, short.error?.code, short.error?.offset]).toEqual(['truncated', 'ERR_STREAM_TRUNCATED', 3]);
    // and a stream read after white space that proved to be one (reset between them) reads as it does alone
    const stream = concat(STREAMS[0][1].map(encodeMessage));
    const m = new ModelStream({ format: 'bedrock' });
    m.push(enc.encode('   '));
    m.reset();
    for (const chunks of standardChunkings(stream)) {
      m.reset();
      let text = '';
      for (const c of chunks) text += m.push(c);
      text += m.flush();
      expect([text, m.status]).toEqual([read('bedrock', [stream]).text, 'done']);
    }
  });

  it('the events written, exactly, in ConverseStream\'s order: each block at its index, then messageStop and the metadata with all of its members', () => {
    const body = {
      metrics: { latencyMs: 321 },
      output: { message: { role: 'assistant', content: [
        { reasoningContent: { reasoningText: { text: 'Hm.', signature: 'EqoB' } } }, { reasoningContent: { redactedContent: 'UmVk' } }, { text: 'Ja.' },
        { cachePoint: { type: 'default' } },
        { toolUse: { toolUseId: 'srv_1', name: 'web_search', type: 'server_tool_use', input: { q: 'x' } } }, { toolUse: { toolUseId: 't_2', name: 'get', input: {} } },
        { citationsContent: { content: [{ text: 'Grün.' }], citations: [{ title: 'T', sourceContent: [{ text: 'green' }], location: { web: { url: 'https://e.org' } } }] } },
      ] } },
      stopReason: 'tool_use', usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3, cacheReadInputTokens: 4, cacheWriteInputTokens: 5 },
      additionalModelResponseFields: { stop_sequence: null }, trace: { guardrail: { modelOutput: ['x'] } }, performanceConfig: { latency: 'optimized' }, serviceTier: { type: 'priority' },
    };
    const d = (contentBlockIndex: number, delta: Obj) => ({ contentBlockDelta: { contentBlockIndex, delta } });
    const stop = (contentBlockIndex: number) => ({ contentBlockStop: { contentBlockIndex } });
    expect(describeFormat('bedrock').wholeAnswerEvents(body)!.map((e) => [e.event, JSON.parse(e.data) as unknown])).toEqual([
      { messageStart: { role: 'assistant' } },
      d(0, { reasoningContent: { text: 'Hm.' } }), d(0, { reasoningContent: { signature: 'EqoB' } }), stop(0),
      d(1, { reasoningContent: { redactedContent: 'UmVk' } }), stop(1),
      d(2, { text: 'Ja.' }), stop(2),
      { contentBlockStart: { contentBlockIndex: 4, start: { toolUse: { toolUseId: 'srv_1', name: 'web_search', type: 'server_tool_use' } } } }, d(4, { toolUse: { input: '{"q":"x"}' } }), stop(4),
      { contentBlockStart: { contentBlockIndex: 5, start: { toolUse: { toolUseId: 't_2', name: 'get' } } } }, d(5, { toolUse: { input: '{}' } }), stop(5),
      d(6, { citation: { title: 'T', sourceContent: [{ text: 'green' }], location: { web: { url: 'https://e.org' } } } }), d(6, { text: 'Grün.' }), stop(6),
      { messageStop: { stopReason: 'tool_use', additionalModelResponseFields: { stop_sequence: null } } },
      { metadata: { usage: body.usage, metrics: body.metrics, trace: body.trace, performanceConfig: body.performanceConfig, serviceTier: body.serviceTier } },
    ].map((v) => [undefined, v]));
  });

  it('a tool call with `{}` input, and one with arguments (its JSON as written anew)', () => {
    const r = atEveryCut('bedrock', answer([
      { text: 'Moment.' },
      { toolUse: { toolUseId: 'tooluse_1', name: 'list_alerts', input: {} } },
      { toolUse: { toolUseId: 'tooluse_2', name: 'get_weather', input: { city: 'Zürich', days: [1, 2] } } },
    ], 'tool_use'));
    expect(r).toEqual({
      text: 'Moment.', status: 'done', finishReason: 'tool_use', usage, reasoning: '', signatures: [], citations: [], error: undefined,
      calls: [
        { id: 'tooluse_1', name: 'list_alerts', arguments: {}, done: true, valid: true },
        { id: 'tooluse_2', name: 'get_weather', arguments: { city: 'Zürich', days: [1, 2] }, done: true, valid: true },
      ],
    });
    const m = new ModelStream({ format: 'bedrock' });
    m.push(enc.encode(answer([{ toolUse: { toolUseId: 'tooluse_1', name: 'list_alerts', input: {} } }, { toolUse: { toolUseId: 't2', name: 'g', input: { city: 'Zürich' } } }], 'tool_use')));
    m.flush();
    expect(m.toolCalls.map((c) => c.arguments)).toEqual(['{}', '{"city":"Zürich"}']);
  });

  it('a server tool\'s call (its `type`) is the provider\'s, not the client\'s', () => {
    const m = new ModelStream({ format: 'bedrock' });
    m.push(enc.encode(answer([{ toolUse: { toolUseId: 'srv_1', name: 'web_search', type: 'server_tool_use', input: { q: 'x' } } }, { text: 'Found.' }])));
    expect(m.flush()).toBe('Found.');
    expect([m.toolCalls.length, m.serverToolCalls.map((c) => [c.id, c.name, c.arguments])]).toEqual([0, [['srv_1', 'web_search', '{"q":"x"}']]]);
  });

  it('reasoning with its signature, and redacted reasoning', () => {
    expect(atEveryCut('bedrock', answer([
      { reasoningContent: { reasoningText: { text: 'Erst denken, e\u0301.', signature: 'EqoBCkgIARAB' } } },
      { reasoningContent: { redactedContent: 'UmVkYWN0ZWQ=' } },
      { text: 'Fertig.' },
    ]))).toEqual({
      text: 'Fertig.', status: 'done', finishReason: 'end_turn', usage, reasoning: 'Erst denken, e\u0301.', calls: [], signatures: ['EqoBCkgIARAB', 'UmVkYWN0ZWQ='],
      citations: [], error: undefined,
    });
  });

  it('citationsContent: its citations, then its generated text', () => {
    const citation = { title: 'Facts', sourceContent: [{ text: 'Grass is green.' }], location: { web: { url: 'https://example.org/g', domain: 'example.org' } } };
    expect(atEveryCut('bedrock', answer([{ text: 'Per the source: ' }, { citationsContent: { content: [{ text: 'grass is green.' }], citations: [citation] } }]))).toMatchObject({
      text: 'Per the source: grass is green.', status: 'done', citations: [{ url: 'https://example.org/g', title: 'Facts', citedText: 'Grass is green.' }],
    });
  });

  it('blocks a stream never sends (a guardrail\'s content, an image) are passed over', () => {
    expect(atEveryCut('bedrock', answer([{ guardContent: { text: { text: 'x' } } }, { text: 'Ja.' }, { image: { format: 'png', source: { bytes: 'AA==' } } }]))).toMatchObject({
      text: 'Ja.', status: 'done', finishReason: 'end_turn',
    });
  });

  it('the usage with the cache\'s counts, as the stream\'s metadata gives it', () => {
    const u = { inputTokens: 5, outputTokens: 2, totalTokens: 263, cacheReadInputTokens: 256, cacheWriteInputTokens: 0 };
    const m = new ModelStream({ format: 'bedrock' });
    m.push(enc.encode(JSON.stringify({ output: { message: { role: 'assistant', content: [{ text: 'x' }] } }, stopReason: 'max_tokens', usage: u })));
    m.flush();
    expect([m.finishReason, m.usage, m.finish().status]).toEqual(['max_tokens', u, 'done']);
  });

  it('a stop reason that says the turn failed: ERR_PROVIDER at the body, with the text and the usage', () => {
    for (const chunks of standardChunkings(enc.encode(answer([{ text: 'Halb' }], 'malformed_model_output')))) {
      const r = read('bedrock', chunks);
      expect([r.text, r.status, r.usage, r.error?.code, r.error?.offset]).toEqual(['Halb', 'failed', usage, 'ERR_PROVIDER', 0]);
    }
  });

  it('an error body is ERR_PROVIDER, as before: AWS\'s message and its type', () => {
    for (const [body, message, type] of [
      ['{"message":"Malformed input request: #: extraneous key [foo] is not permitted","__type":"com.amazon.bedrock#ValidationException"}',
        'Malformed input request: #: extraneous key [foo] is not permitted', 'com.amazon.bedrock#ValidationException'],
      ['  {"Message":"Too many requests, please wait before trying again."}', 'Too many requests, please wait before trying again.', undefined],
    ] as const) {
      for (const format of ['bedrock', 'bedrock-invoke'] as const) {
        const r = atEveryCut(format, body);
        expect([r.text, r.status, r.error?.code, r.error?.offset, r.error?.providerMessage, r.error?.providerCode]).toEqual(['', 'failed', 'ERR_PROVIDER', body.indexOf('{'), message, type]);
      }
    }
  });

  it('a body that is not JSON, or JSON that is neither an answer nor an error: ERR_BAD_EVENT at its start', () => {
    for (const format of ['bedrock', 'bedrock-invoke'] as const) {
      const notJson = atEveryCut(format, ' {"output": {"message": ');
      expect([notJson.status, notJson.error?.code, notJson.error?.offset, notJson.error?.message]).toEqual(['failed', 'ERR_BAD_EVENT', 1, `The ${format} response, from byte offset 1, is neither an event stream nor valid JSON`]);
      const other = atEveryCut(format, '{"output":{"text":"hi"},"stopReason":"end_turn"}');
      expect([other.status, other.error?.code, other.error?.offset, other.error?.message]).toEqual(['failed', 'ERR_BAD_EVENT', 0, `The ${format} response is a JSON body, not an event stream`]);
    }
  });

  it('a strict stream\'s body must be UTF-8: ERR_INVALID_UTF8 at its first bad byte', () => {
    const body = enc.encode(`\n${answer([{ text: 'Gut' }])}`);
    const at = body.indexOf(0x47); // (the G of the text)
    body[at] = 0xff;
    const r = atEveryCut('bedrock', body);
    expect([r.text, r.status, r.error?.code, r.error?.offset]).toEqual(['', 'failed', 'ERR_INVALID_UTF8', at]);
  });

  it('a body larger than maxEventBytes: ERR_EVENT_TOO_LARGE at its start, nothing read', () => {
    const body = answer([{ text: 'x'.repeat(2000) }]);
    const r = read('bedrock', [enc.encode(body)], { maxEventBytes: 1024 });
    expect([r.text, r.status, r.error?.code, r.error?.offset]).toEqual(['', 'failed', 'ERR_EVENT_TOO_LARGE', 0]);
    expect(read('bedrock', [enc.encode(body)], { maxEventBytes: body.length }).text).toBe('x'.repeat(2000));
  });

  it('the events are written within the whole answer\'s budget: none past it (describeFormat\'s null)', () => {
    // (a block's events are its own, but each has an envelope: a body of many tiny blocks within
    // maxEventBytes is read as events ~9 times its size, past the budget, 4 × maxEventBytes and 1 MiB)
    const calls = Array.from({ length: 400 }, (_, i) => ({ toolUse: { toolUseId: `t${i}`, name: 'n', input: {} } }));
    const body = answer(calls, 'tool_use');
    expect(describeFormat('bedrock').wholeAnswerEvents(JSON.parse(body), 1000)).toBeNull();
    expect(describeFormat('bedrock').wholeAnswerEvents(JSON.parse(body))!.length).toBe(1 + 400 * 3 + 2);
    const tiny = enc.encode(answer(Array.from({ length: 80_000 }, () => ({ text: 'a' }))));
    const max = 1024 * 1024;
    expect(tiny.length).toBeLessThan(max);
    const r = read('bedrock', [tiny], { maxEventBytes: max });
    expect([r.text, r.status, r.error?.code, r.error?.offset, r.error?.message]).toEqual(['', 'failed', 'ERR_EVENT_TOO_LARGE', 0,
      `The bedrock response, a whole answer of ${tiny.length} bytes, would be read as events of more than ${5 * max} bytes (4 × maxEventBytes and 1 MiB): not read`]);
    // (within a larger budget, the same body is read whole: its 80 000 blocks' text)
    expect(read('bedrock', [tiny], { maxEventBytes: 4 * max }).text).toBe('a'.repeat(80_000));
  });
});

describe('InvokeModel\'s whole answer of a Claude model (bedrock-invoke): Anthropic\'s message, read as Claude direct reads it', () => {
  const message = JSON.stringify({
    id: 'msg_bdrk_01', type: 'message', role: 'assistant', model: 'claude-sonnet-4',
    content: [
      { type: 'thinking', thinking: 'Kurz, e\u0301.', signature: 'EqQBCgIYAhIM' }, { type: 'redacted_thinking', data: 'RXJy' },
      { type: 'text', text: 'Grüße 👋' }, { type: 'tool_use', id: 'toolu_1', name: 'get', input: {} }, { type: 'tool_use', id: 'toolu_2', name: 'put', input: { a: [1, 'é'] } },
    ],
    stop_reason: 'tool_use', stop_sequence: null, usage: { input_tokens: 10, output_tokens: 20 },
  });
  it('the same as the anthropic format\'s reading of it, at every cut', () => {
    const r = atEveryCut('bedrock-invoke', message);
    expect(r).toEqual({
      text: 'Grüße 👋', status: 'done', finishReason: 'tool_use', usage: { input_tokens: 10, output_tokens: 20 }, reasoning: 'Kurz, e\u0301.',
      calls: [{ id: 'toolu_1', name: 'get', arguments: {}, done: true, valid: true }, { id: 'toolu_2', name: 'put', arguments: { a: [1, 'é'] }, done: true, valid: true }],
      signatures: ['EqQBCgIYAhIM', 'RXJy'], citations: [], error: undefined,
    });
    const m = new ModelStream({ format: 'anthropic' });
    m.push(enc.encode(message));
    m.flush();
    expect([m.reasoning, m.toolCalls.map((c) => c.arguments)]).toEqual([r.reasoning, ['{}', '{"a":[1,"é"]}']]);
  });
  it('a Converse body is not Claude\'s message: ERR_BAD_EVENT', () => {
    expect(read('bedrock-invoke', [enc.encode('{"output":{"message":{"role":"assistant","content":[{"text":"x"}]}},"stopReason":"end_turn"}')]).error?.code).toBe('ERR_BAD_EVENT');
  });
});

/** A relay's bytes for `chunks`. */
function relayed(from: Format, to: 'openai' | 'anthropic', chunks: Uint8Array[]): Uint8Array {
  const r = new SseRelay({ from, to, id: 'x', model: 'm' });
  return concat([...chunks.map((c) => r.push(c).slice()), r.flush().slice()]);
}

/** What the official client reads of a relay's bytes, with what is the relay's own per run (the time) set aside, and the calls' arguments as values. */
async function clientRead(to: 'openai' | 'anthropic', bytes: Uint8Array): Promise<unknown> {
  if (to === 'anthropic') return anthropicFinal(bytes);
  const c = await openaiFinal(bytes);
  // (openai-node keeps the last reasoning delta only, not their join: the stream's differs from the whole answer's one; ModelStream's reasoning is compared above)
  const { reasoning_content: _, tool_calls, ...message } = c.choices[0].message as unknown as Obj & { tool_calls?: { function: { arguments: string } }[] };
  return {
    ...c, created: 0, choices: [{
      ...c.choices[0], message: { ...message, tool_calls: tool_calls?.map((t) => ({ ...t, function: { ...t.function, arguments: JSON.parse(t.function.arguments) as unknown } })) },
    }],
  };
}

describe('a Converse whole answer relayed: the official clients read of it what they read of its stream', () => {
  for (const [name, messages] of STREAMS) {
    for (const to of ['openai', 'anthropic'] as const) {
      it(`${name} → ${to}`, async () => {
        const stream = await clientRead(to, relayed('bedrock', to, [concat(messages.map(encodeMessage))]));
        const body = enc.encode(JSON.stringify(converseOf(messages)));
        for (const chunks of standardChunkings(body)) expect(await clientRead(to, relayed('bedrock', to, chunks)), `${chunks.length} reads`).toEqual(stream);
      });
    }
  }
  it('an error body: the client reads the provider\'s error', async () => {
    const body = enc.encode('{"message":"Too many requests","__type":"ThrottlingException"}');
    const out = new TextDecoder().decode(relayed('bedrock', 'anthropic', [body]));
    expect(out).toBe('event: error\ndata: {"type":"error","error":{"type":"rate_limit_error","message":"Too many requests"}}\n\n');
  });
});
