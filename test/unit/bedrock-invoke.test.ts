// Claude on Bedrock (format: 'bedrock-invoke'): InvokeModelWithResponseStream sends Anthropic's own
// Messages events, each as a `chunk` message of AWS's event stream whose payload is
// `{"bytes": base64}`. Every Anthropic fixture (test/helpers/model-fixtures.ts) is wrapped so by
// AWS's own codec, and must read exactly as Claude direct: the same text, reasoning, tool calls,
// finish reason, usage and status, and the same error (at the chunk that carried it), whole, at
// every split and dripped; relayed, a client reads the same message. Base64 that is not base64
// is ERR_BAD_EVENT at its chunk.
import { describe, expect, test } from 'vitest';
import { ModelEventStreamDecoder, ModelStream, ModelStreamError, SseRelay } from '../../bindings/index.js';
import { codec } from '../helpers/bedrock-fixtures.js';
import { readAnthropic, readOpenAi } from '../helpers/clients.js';
import { FIXTURES, reference } from '../helpers/model-fixtures.js';
import { concat, cut, randomCuts, rng } from '../helpers/random.js';
import { textOutcome } from '../helpers/thrown.js';

const enc = new TextEncoder();
const chunkMessage = (payload: string) => codec.encode({
  headers: { ':event-type': { type: 'string', value: 'chunk' }, ':content-type': { type: 'string', value: 'application/json' }, ':message-type': { type: 'string', value: 'event' } },
  body: enc.encode(payload),
});

/** Each SSE event of a fixture as a chunk message (its data in base64, with AWS's padding member), and where each begins. */
function wrap(body: string): { bytes: Uint8Array; starts: number[]; ends: number[] } {
  const ref = reference(body, 'anthropic');
  const parts: Uint8Array[] = [];
  const ends: number[] = [];
  for (const fr of ref.frames) {
    if (fr.kind !== 'event') continue;
    const b64 = Buffer.from(fr.data, 'utf8').toString('base64');
    parts.push(chunkMessage(`{"bytes":"${b64}","p":"abcdefghijklmnopqrstuvwxyzABCDEFGH"}`));
    ends.push(fr.end);
  }
  const starts: number[] = [];
  let n = 0;
  for (const p of parts) { starts.push(n); n += p.length; }
  return { bytes: concat(parts), starts, ends };
}

function read(format: 'anthropic' | 'bedrock-invoke', chunks: Uint8Array[]) {
  const m = new ModelStream({ format, raw: true });
  const { text, error: e } = textOutcome(m, chunks);
  const error = e && { code: e.code, offset: e.offset };
  return { text, reasoning: m.reasoning, status: m.status, finishReason: m.finishReason, usage: m.usage, toolCalls: m.toolCalls, blocks: m.reasoningBlocks, error };
}

// (fixtures whose stream is whole events: a plain error body is not an event stream, and an event cut by the end has no chunk)
const cases = FIXTURES.filter((f) => f.format === 'anthropic' && !reference(f.body, 'anthropic').plainBody);

describe.each(cases.map((f) => [f.name, f] as const))('Claude on Bedrock reads like Claude direct: %s', (_, f) => {
  const w = wrap(f.body);
  const direct = read('anthropic', [f.bytes]);
  const want = (bytes: Uint8Array) => {
    let error = direct.error;
    if (error !== undefined) {
      // the offset of the chunk that carried the event, or the stream's end
      const k = w.ends.findIndex((e) => e > error!.offset);
      error = { code: error.code, offset: error.code === 'ERR_STREAM_TRUNCATED' || k < 0 ? bytes.length : w.starts[k] };
    }
    return { ...direct, error };
  };

  test('whole, cut in two at every byte, dripped', () => {
    const chunkings = [[w.bytes], Array.from({ length: w.bytes.length }, (_, i) => w.bytes.subarray(i, i + 1))];
    for (let i = 1; i < w.bytes.length; i++) chunkings.push(cut(w.bytes, [i]));
    for (const chunks of chunkings) expect(read('bedrock-invoke', chunks), `${chunks.length} chunks`).toEqual(want(w.bytes));
  });

  test.each(['openai', 'anthropic'] as const)('relayed to %s, a client reads what it reads from Claude direct', (to) => {
    const relayed = (format: 'anthropic' | 'bedrock-invoke', bytes: Uint8Array) => {
      const r = new SseRelay({ from: format, to, id: 'x', model: 'm' });
      const out = concat([r.push(bytes).slice(), r.flush().slice()]);
      const m = to === 'openai' ? readOpenAi(out) : readAnthropic(out);
      // (the finish reason of a stream that did not complete: from Anthropic to Anthropic the upstream's own message_delta passed)
      return { text: m.text, reasoning: m.reasoning, calls: m.calls, finish: m.done ? m.finish : null, done: m.done, error: m.error !== null };
    };
    expect(relayed('bedrock-invoke', w.bytes)).toEqual(relayed('anthropic', f.bytes));
  });
});

describe('bedrock-invoke: reads of whole chunks', () => {
  // A read of whole messages is framed, decoded and read in one core call; a chunk that call
  // leaves to the reader (escaped base64, a decoded event with line breaks) sends the whole read
  // the other way. Every read pattern gives what one whole read gives.
  const otherEvent = codec.encode({
    headers: { ':event-type': { type: 'string', value: 'metadata' }, ':message-type': { type: 'string', value: 'event' } },
    body: enc.encode('{"bytes":"AAAA"}'),
  });
  const events: unknown[] = [
    { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], model: 'claude', usage: { input_tokens: 3, output_tokens: 1 } } },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
  ];
  const words = ['The', ' quick', ' — ', '東京', ' 🚀', ' e\u0301', '\n', ' "q"', ' a/b?>'];
  const seed = 20261205;
  const r = rng(seed);
  let want = '';
  for (let i = 0; i < 400; i++) {
    const t = words[Math.floor(r() * words.length)] + words[Math.floor(r() * words.length)];
    want += t;
    events.push({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: t } });
  }
  events.push({ type: 'content_block_stop', index: 0 }, { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 400 } }, { type: 'message_stop' });
  const kinds = { plain: 0, pretty: 0, escaped: 0, other: 0 };
  const messages: Uint8Array[] = [];
  for (const ev of events) {
    const x = r();
    // a decoded event with line breaks (pretty JSON), base64 written with escaped slashes, an event of another type before it
    const json = x < 0.1 ? JSON.stringify(ev, null, 1) : JSON.stringify(ev);
    let b64 = Buffer.from(json).toString('base64');
    if (x < 0.1) kinds.pretty++;
    else if (x < 0.6 && b64.includes('/')) { b64 = b64.replaceAll('/', '\\/'); kinds.escaped++; }
    else kinds.plain++;
    if (r() < 0.1) { messages.push(otherEvent); kinds.other++; }
    messages.push(chunkMessage(`{"bytes":"${b64}","p":"abc"}`));
  }
  const bytes = concat(messages);

  test('one, several or all of them a read, and random reads, as one whole read', () => {
    expect(kinds.pretty, JSON.stringify(kinds)).toBeGreaterThan(10);
    expect(kinds.escaped).toBeGreaterThan(5);
    expect(kinds.other).toBeGreaterThan(5);
    const whole = read('bedrock-invoke', [bytes]);
    expect(whole.text, `seed ${seed}`).toBe(want);
    expect(whole.status).toBe('done');
    const groups = (k: number) => Array.from({ length: Math.ceil(messages.length / k) }, (_, i) => concat(messages.slice(i * k, i * k + k)));
    for (const k of [1, 2, 3, 7]) expect(read('bedrock-invoke', groups(k)), `seed ${seed}, ${k} messages a read`).toEqual(whole);
    for (let round = 0; round < 3; round++) expect(read('bedrock-invoke', cut(bytes, randomCuts(bytes, r, 600))), `seed ${seed}, round ${round}`).toEqual(whole);
  });
});

describe('bedrock-invoke: a line break anywhere in a decoded event', () => {
  // A read's events are read where the core decoded them, or, where that way declines them (more
  // than 16 in a read, as here when the stream is one read), copied and framed as SSE: there an
  // event whose decoded bytes hold a line break goes the reader's way (several data lines). The
  // core's base64 decoder says whether it wrote a byte that could be one; each position of a CR,
  // an LF or a CRLF in an event (in its vector blocks, in the bytes after them) must be found.
  const start = { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], model: 'claude', usage: { input_tokens: 3, output_tokens: 1 } } };
  const delta = (text: string) => ({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } });
  const texts = Array.from({ length: 20 }, (_, i) => `Part ${i} of the answer — 東京 🚀 `.repeat(1 + (i % 3)));
  const want = texts.join('');
  const tail = [{ type: 'content_block_stop', index: 0 }, { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 20 } }, { type: 'message_stop' }];
  const events = [start, { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, ...texts.map(delta), ...tail];
  const message = (json: string) => chunkMessage(`{"bytes":"${Buffer.from(json).toString('base64')}"}`);
  /** Where white space may go in a document's JSON: each place a line break leaves its value as it is. */
  const placesOf = (json: string): number[] => {
    const places: number[] = [];
    for (let i = 1; i < json.length; i++) {
      try {
        if (JSON.stringify(JSON.parse(`${json.slice(0, i)}\n${json.slice(i)}`)) === json) places.push(i);
      } catch { /* (not a place for white space) */ }
    }
    return places;
  };
  // the stream's first event (its read is framed as SSE, as the first read of any stream is) and
  // a delta some blocks of base64 long
  const targets = [0, 7];

  test.each(['\n', '\r', '\r\n'])('%j at every place white space may be: whole (one read of 25 events) and a message a read', (brk) => {
    for (const i of targets) {
      const json = JSON.stringify(events[i]);
      const places = placesOf(json);
      expect(places.length).toBeGreaterThan(10);
      expect(json.length).toBeGreaterThan(64);
      for (const at of places) {
        const list = events.map((e) => JSON.stringify(e));
        list[i] = `${json.slice(0, at)}${brk}${json.slice(at)}`;
        const messages = list.map(message);
        const whole = read('bedrock-invoke', [concat(messages)]);
        expect({ text: whole.text, status: whole.status, error: whole.error }, `${JSON.stringify(brk)} at ${at} of event ${i}`).toEqual({ text: want, status: 'done', error: undefined });
        expect(read('bedrock-invoke', messages), `${JSON.stringify(brk)} at ${at} of event ${i}, a message a read`).toEqual(whole);
      }
    }
  });
});

describe('bedrock-invoke: chunks that are not', () => {
  const chunkOf = (event: string) => chunkMessage(`{"bytes":"${Buffer.from(event).toString('base64')}"}`);
  const start = '{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude","usage":{"input_tokens":3,"output_tokens":1}}}';
  const first = chunkOf(start);
  const good = concat([
    first,
    chunkOf('{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}'),
    chunkOf('{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Guten Tag"}}'),
  ]);
  const NOT_CHUNKS = [
    ['a byte that is not base64', '{"bytes":"eyJ0eX!lIjoi"}'],
    ['a length that is not a multiple of 4', '{"bytes":"eyJ0eXBlIjo"}'],
    ['= inside', '{"bytes":"ey=0eXBlIjoi"}'],
    ['bytes that are not a string', '{"bytes":42}'],
    ['no bytes', '{"p":"abc"}'],
    ['a payload that is not JSON', '{"bytes":"eyJ0eXBlIjoi"'],
  ] as const;
  test.each(NOT_CHUNKS)('%s: ERR_BAD_EVENT at its chunk, the text before it delivered', (_, payload) => {
    const m = new ModelStream({ format: 'bedrock-invoke', raw: true });
    expect(() => m.push(concat([good, chunkMessage(payload)]))).toThrow(expect.objectContaining({ code: 'ERR_BAD_EVENT', offset: good.length, text: 'Guten Tag' }));
    expect(m.status).toBe('failed');
  });

  test.each(NOT_CHUNKS)('%s: message by message (ModelEventStreamDecoder), the stream\'s own error at that chunk, the chunk before it decoded', (_, payload) => {
    const bytes = concat([first, chunkMessage(payload)]);
    const m = new ModelStream({ format: 'bedrock-invoke' });
    let error: ModelStreamError | undefined;
    try {
      m.push(bytes);
    } catch (e) {
      error = e as ModelStreamError;
    }
    const messages = new ModelEventStreamDecoder({ format: 'bedrock-invoke' }).push(bytes);
    expect(messages.map((x) => ({ offset: x.offset, data: x.data, error: x.error }))).toEqual([
      { offset: 0, data: start, error: undefined },
      { offset: first.length, data: '', error: { code: 'ERR_BAD_EVENT', message: error!.message } },
    ]);
  });

  test('Buffer\'s base64, which skips what is not in the alphabet, is not the format\'s: such a chunk is not one', () => {
    const b64 = Buffer.from(start).toString('base64');
    const bad = `${b64.slice(0, 8)}!!!!${b64.slice(8)}`;
    expect(Buffer.from(bad, 'base64').toString()).toBe(start);
    const [m] = new ModelEventStreamDecoder({ format: 'bedrock-invoke' }).push(chunkMessage(`{"bytes":"${bad}"}`));
    expect(m).toMatchObject({ offset: 0, data: '', error: { code: 'ERR_BAD_EVENT', message: 'The chunk at byte offset 0 is not one: its bytes are not base64 (at byte 8 of them)' } });
  });

  test('base64 with escaped slashes (\\/) as some JSON encoders write it is read', () => {
    const json = '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"???>>>"}}';
    const b64 = Buffer.from(json).toString('base64');
    expect(b64).toContain('/');
    const m = new ModelStream({ format: 'bedrock-invoke', raw: true, eof: 'allow' });
    expect(m.push(concat([good, chunkMessage(`{"bytes":"${b64.replaceAll('/', '\\/')}"}`)]))).toBe('Guten Tag???>>>');
  });

  test('inner is for bedrock-invoke, and anthropic is the format it reads', () => {
    expect(() => new ModelStream({ format: 'bedrock', inner: 'anthropic' })).toThrow(TypeError);
    expect(() => new ModelStream({ format: 'bedrock-invoke', inner: 'openai' as 'anthropic' })).toThrow(TypeError);
    expect(new ModelStream({ format: 'bedrock-invoke', inner: 'anthropic' }).format).toBe('bedrock-invoke');
  });
});

describe('bedrock-invoke: an exception after the completion', () => {
  // After Claude's message_stop an exception message is not the answer, as an error event after
  // message_stop is not in Claude direct: the stream stays done, at every split. Before it, it is
  // the stream's error.
  const events: unknown[] = [
    { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], model: 'claude', usage: { input_tokens: 3, output_tokens: 1 } } },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Fertig.' } },
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 3 } },
    { type: 'message_stop' },
  ];
  const chunks = events.map((ev) => chunkMessage(`{"bytes":"${Buffer.from(JSON.stringify(ev)).toString('base64')}","p":"abc"}`));
  const exception = codec.encode({
    headers: { ':exception-type': { type: 'string', value: 'internalServerException' }, ':content-type': { type: 'string', value: 'application/json' }, ':message-type': { type: 'string', value: 'exception' } },
    body: enc.encode('{"message":"The server encountered an error."}'),
  });

  test('after message_stop: done, whole and at every split', () => {
    const bytes = concat([...chunks, exception]);
    for (let i = 0; i < bytes.length; i++) {
      const got = read('bedrock-invoke', i === 0 ? [bytes] : cut(bytes, [i]));
      expect({ text: got.text, status: got.status, finishReason: got.finishReason, error: got.error }, `cut at ${i}`)
        .toEqual({ text: 'Fertig.', status: 'done', finishReason: 'end_turn', error: undefined });
    }
  });

  test('before message_stop: the stream\'s error, at the exception\'s first byte', () => {
    const bytes = concat([...chunks.slice(0, 5), exception, chunks[5]]);
    const at = concat(chunks.slice(0, 5)).length;
    for (let i = 0; i < bytes.length; i++) {
      const got = read('bedrock-invoke', i === 0 ? [bytes] : cut(bytes, [i]));
      expect({ text: got.text, status: got.status, error: got.error }, `cut at ${i}`)
        .toEqual({ text: 'Fertig.', status: 'failed', error: { code: 'ERR_PROVIDER', offset: at } });
    }
  });
});
