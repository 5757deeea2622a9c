// Bedrock: the events the core writes for its model reader from AWS's event stream (esEvents in
// assembly/eventstream.ts): an event type written as JSON.stringify writes the text a replacing
// UTF-8 decoder makes of it (quotes, backslashes, control characters, non-ASCII, invalid bytes),
// payloads with line breaks of every kind, empty payloads, a type at the limit and past it, and
// reads of many messages (more records than one core call takes, events longer than the input
// window). Each stream is checked against AWS's codec + JSON.parse, whole, at every split where
// short, dripped, and in seeded random reads.
import { describe, expect, test } from 'vitest';
import { ModelStream, ModelStreamError, SseRelay } from '../../bindings/index.js';
import { codec, crc32Ref } from '../helpers/bedrock-fixtures.js';
import { readOpenAi } from '../helpers/clients.js';
import { concat, cut, randomCuts, rng } from '../helpers/random.js';

const enc = new TextEncoder();
const dec = new TextDecoder();

/** A message with string headers given as bytes (so that a type may be any bytes), encoded by hand. */
function message(headers: [string, Uint8Array][], payload: Uint8Array): Uint8Array {
  const hs: number[] = [];
  for (const [name, value] of headers) {
    const n = enc.encode(name);
    hs.push(n.length, ...n, 7, value.length >> 8, value.length & 0xff, ...value);
  }
  const total = 12 + hs.length + payload.length + 4;
  const out = new Uint8Array(total);
  const v = new DataView(out.buffer);
  v.setUint32(0, total);
  v.setUint32(4, hs.length);
  v.setUint32(8, crc32Ref(out.subarray(0, 8)));
  out.set(hs, 12);
  out.set(payload, 12 + hs.length);
  v.setUint32(total - 4, crc32Ref(out.subarray(0, total - 4)));
  return out;
}

const event = (type: Uint8Array | string, payload: string) =>
  message([[':message-type', enc.encode('event')], [':event-type', typeof type === 'string' ? enc.encode(type) : type], [':content-type', enc.encode('application/json')]], enc.encode(payload));


/** AWS's codec + JSON.parse: the text of the contentBlockDelta events, and the event messages' number. */
function reference(bytes: Uint8Array): { text: string; events: number } {
  let at = 0;
  let text = '';
  let events = 0;
  while (at < bytes.length) {
    const len = new DataView(bytes.buffer, bytes.byteOffset + at).getUint32(0);
    const m = codec.decode(bytes.subarray(at, at + len));
    at += len;
    if (m.headers[':message-type']?.value !== 'event') continue;
    events++;
    if (m.headers[':event-type']?.value !== 'contentBlockDelta') continue;
    const v = JSON.parse(m.body.length === 0 ? '{}' : dec.decode(m.body)) as { delta?: { text?: string } };
    if (typeof v.delta?.text === 'string') text += v.delta.text;
  }
  return { text, events };
}

function read(chunks: Uint8Array[]): { text: string; events: number; status: string } {
  const m = new ModelStream({ format: 'bedrock', raw: true });
  let text = '';
  for (const c of chunks) text += m.push(c);
  text += m.flush();
  const r = { text, events: m.events, status: m.status };
  m.dispose();
  return r;
}

const START = event('messageStart', '{"role":"assistant"}');
const END = concat([event('contentBlockStop', '{"contentBlockIndex":0}'), event('messageStop', '{"stopReason":"end_turn"}'),
  event('metadata', '{"usage":{"inputTokens":3,"outputTokens":5,"totalTokens":8},"metrics":{"latencyMs":9}}')]);
const delta = (t: string) => event('contentBlockDelta', JSON.stringify({ contentBlockIndex: 0, delta: { text: t } }));

const ODD_TYPES: [string, Uint8Array][] = [
  ['a quote and a backslash', enc.encode('con"tent\\Block')],
  ['control characters', Uint8Array.from([0x61, 0x01, 0x08, 0x09, 0x0a, 0x0c, 0x0d, 0x1f, 0x7f, 0x62])],
  ['non-ASCII', enc.encode('événement 東京 🚀')],
  ['invalid UTF-8', Uint8Array.from([0x61, 0xff, 0xc3, 0x28, 0xe0, 0x80, 0xaf, 0xed, 0xa0, 0x80, 0xf4, 0x90, 0x80, 0x80, 0xe2, 0x82])],
  ['empty', new Uint8Array(0)],
];

describe('bedrock: the events the core writes for its reader', () => {
  test.each(ODD_TYPES)('an event type with %s is an event of that name, read past like any unknown one, at every split', (_, type) => {
    const bytes = concat([START, delta('Hello'), event(type, '{"x":1}'), delta(', world'), event(type, ''), END]);
    const want = { ...reference(bytes), status: 'done' };
    expect(want.text).toBe('Hello, world');
    expect(read([bytes])).toEqual(want);
    for (let i = 1; i < bytes.length; i++) expect(read(cut(bytes, [i])), `cut at ${i}`).toEqual(want);
    expect(read(Array.from(bytes, (b) => Uint8Array.of(b)))).toEqual(want);
  });

  test('an event type of 1 to 24 bytes with a byte JSON escapes, or one not ASCII, at each place of it', () => {
    // the core copies a type that needs no escape as it is, eight bytes at a time: each byte it must not copy, at every place in a word and in the tail
    for (const b of [0x00, 0x0a, 0x1f, 0x22, 0x5c, 0x7f, 0x80, 0xc3, 0xff]) {
      for (let n = 1; n <= 24; n++) {
        for (let i = 0; i < n; i++) {
          const type = new Uint8Array(n).fill(0x78);
          type[i] = b;
          const bytes = concat([START, delta('a'), event(type, '{"x":1}'), delta('b'), END]);
          expect(read([bytes]), `byte ${b} at ${i} of ${n}`).toEqual({ ...reference(bytes), status: 'done' });
        }
      }
    }
  });

  test('header names and values a byte away from the words the reader acts on are not those words', () => {
    // (compared as their length and their first and last 8 bytes: every byte of each word changed, and one byte more or less)
    const near = (w: string): string[] => [
      ...Array.from(w, (_, i) => w.slice(0, i) + String.fromCharCode(w.charCodeAt(i) ^ 0x01) + w.slice(i + 1)),
      w.slice(0, -1), `${w}e`, `x${w}`,
    ];
    const headers = (mt: string, mtValue: string, et: string) =>
      message([[mt, enc.encode(mtValue)], [et, enc.encode('contentBlockDelta')]], enc.encode('{"contentBlockIndex":0,"delta":{"text":"b"}}'));
    // an event of no :event-type: skipped, as AWS's SDKs skip an event they do not know
    for (const m of near(':event-type').map((w) => headers(':message-type', 'event', w))) {
      const bytes = concat([START, delta('a'), m, delta('c'), END]);
      const want = { ...reference(bytes), status: 'done' };
      expect(want.text).toBe('ac');
      expect(read([bytes])).toEqual(want);
    }
    // a message of no :message-type, or of another: ERR_BAD_EVENT at it, as AWS's SDKs refuse it
    // ("Unrecognizable event type"), the text before it delivered
    const at = START.length + delta('a').length;
    const cases = [
      ...near(':message-type').map((w) => [headers(w, 'event', ':event-type'), 'has no :message-type header'] as const),
      ...[...near('event'), ...near('exception'), ...near('error')].map((w) => [headers(':message-type', w, ':event-type'), 'has a :message-type other than'] as const),
    ];
    for (const [m, says] of cases) {
      const bytes = concat([START, delta('a'), m, delta('c'), END]);
      for (const chunks of [[bytes], [bytes.subarray(0, at + 5), bytes.subarray(at + 5)]]) {
        const s = new ModelStream({ format: 'bedrock', raw: true });
        let text = '';
        let error: unknown;
        try {
          for (const c of chunks) text += s.push(c);
          text += s.flush();
        } catch (e) {
          error = e;
          text += (e as ModelStreamError).text;
        }
        expect(error).toBeInstanceOf(ModelStreamError);
        const e = error as ModelStreamError;
        expect([e.code, e.offset, text, s.status]).toEqual(['ERR_BAD_EVENT', at, 'a', 'failed']);
        expect(e.message).toContain(says);
      }
    }
    expect(read([concat([START, delta('a'), headers(':message-type', 'event', ':event-type'), delta('c'), END])]).text).toBe('abc');
  });

  test('payloads with line breaks of every kind (LF, CR, CRLF, CR LF apart), and an empty payload', () => {
    const pretty = (t: string, nl: string) => JSON.stringify({ contentBlockIndex: 0, delta: { text: t } }, null, 2).replaceAll('\n', nl);
    const bytes = concat([START, event('contentBlockDelta', pretty('a\nb', '\n')), event('contentBlockDelta', pretty('c', '\r')), event('contentBlockDelta', pretty('d', '\r\n')),
      event('contentBlockDelta', pretty('e', '\r\r\n\n')), event('contentBlockDelta', ''), event('contentBlockDelta', `\n${pretty('f', '\n')}\n`), END]);
    const want = { ...reference(bytes), status: 'done' };
    expect(want.text).toBe('a\nbcdef');
    expect(read([bytes])).toEqual(want);
    for (let i = 1; i < bytes.length; i++) expect(read(cut(bytes, [i])), `cut at ${i}`).toEqual(want);
  });

  test('an event type of 256 bytes is read; one of 257 is ERR_BAD_EVENT at its message, after the text before it', () => {
    const ok = concat([START, delta('a'), event('x'.repeat(256), '{}'), delta('b'), END]);
    expect(read([ok])).toEqual({ ...reference(ok), status: 'done' });
    const head = concat([START, delta('a')]);
    const bad = concat([head, event('x'.repeat(257), '{}'), delta('b'), END]);
    for (const chunks of [[bad], cut(bad, [head.length + 5]), cut(bad, [head.length - 3, head.length + 300])]) {
      const m = new ModelStream({ format: 'bedrock', raw: true });
      let text = '';
      let error: unknown;
      try {
        for (const c of chunks) text += m.push(c);
        m.flush();
      } catch (e) {
        error = e;
        text += (e as ModelStreamError).text;
      }
      expect(error).toBeInstanceOf(ModelStreamError);
      expect((error as ModelStreamError).code).toBe('ERR_BAD_EVENT');
      expect((error as ModelStreamError).offset).toBe(head.length);
      expect(text).toBe('a');
    }
  });

  test('reads of many messages: more records than a core call takes, events longer than the input window, seeded random reads', () => {
    const seed = 20261202;
    const r = rng(seed);
    const parts = [START];
    const words = ['The', ' quick', ' brown', ' fox', ' — ', '東京', ' 🚀', ' e\u0301', '\n', ' "quoted"', ' back\\slash'];
    for (let i = 0; i < 6000; i++) parts.push(delta(words[Math.floor(r() * words.length)]));
    parts.push(delta('x'.repeat(200_000)));
    parts.push(END);
    const bytes = concat(parts);
    const want = { ...reference(bytes), status: 'done' };
    expect(read([bytes]), `seed ${seed}`).toEqual(want);
    for (let k = 0; k < 4; k++) expect(read(cut(bytes, randomCuts(bytes, r, 50))), `seed ${seed}, round ${k}`).toEqual(want);
    expect(read(cut(bytes, Array.from({ length: Math.floor(bytes.length / 70_000) }, (_, i) => (i + 1) * 70_000))), `seed ${seed}`).toEqual(want);
  });

  test('a read that fits the input window and whose events do not (line breaks each written as a data line), and reads of one message each', () => {
    // 30,000 line breaks between the JSON's tokens: 30 KB of message, 210 KB of events
    const spread = `{"contentBlockIndex":0,${'\n'.repeat(30_000)}"delta":{"text":"wide"}}`;
    const messages = [START, delta('a'), event('contentBlockDelta', spread), delta('b'), event('contentBlockDelta', spread), END];
    const bytes = concat(messages);
    const want = { ...reference(bytes), status: 'done' };
    expect(want.text).toBe('awidebwide');
    expect(read([bytes])).toEqual(want);
    expect(read(messages)).toEqual(want);
    expect(read(cut(bytes, [START.length + 7, bytes.length - END.length - 100]))).toEqual(want);
  });

  test('the relay writes the same text for its client from every read pattern', () => {
    const bytes = concat([START, ...Array.from({ length: 300 }, (_, i) => delta(`w${i} ✓ `)), event(ODD_TYPES[3][1], '{}'), END]);
    const want = reference(bytes).text;
    for (const chunks of [[bytes], cut(bytes, randomCuts(bytes, rng(7), 40)), Array.from(bytes, (b) => Uint8Array.of(b))]) {
      const relay = new SseRelay({ from: 'bedrock' });
      const out = concat([...chunks.map((c) => relay.push(c).slice()), relay.flush().slice()]);
      const got = readOpenAi(out);
      expect(got.text).toBe(want);
      expect(got.done).toBe(true);
      relay.dispose();
    }
  });
});

describe('bedrock: an error in a message\'s event says the binary stream\'s offsets, and nothing of bytes that are not at them', () => {
  const event = (type: string, payload: Uint8Array) => codec.encode({
    headers: { ':event-type': { type: 'string', value: type }, ':content-type': { type: 'string', value: 'application/json' }, ':message-type': { type: 'string', value: 'event' } },
    body: payload,
  });
  const start = event('messageStart', enc.encode('{"role":"assistant"}'));
  const text = event('contentBlockDelta', enc.encode('{"contentBlockIndex":0,"delta":{"text":"Grüß "}}'));
  const before = concat([start, text]);
  const badUtf8 = enc.encode('{"contentBlockIndex":0,"delta":{"text":"ab?cd"}}');
  badUtf8[badUtf8.indexOf(0x3f)] = 0xff;
  const badJson = enc.encode('{"contentBlockIndex":0,"delta":{"text":"ab"}');
  // (before: "Invalid UTF-8 at byte offset <the message's> (bytes from there: FF 63 64 22)", bytes that are not there;
  // "Invalid JSON at byte offset <the message's>, in the event whose data begins at byte offset <an offset of the
  // events written from the messages>", a number of no byte the caller has)
  for (const [what, payload, code, message] of [
    ['invalid UTF-8', badUtf8, 'ERR_INVALID_UTF8', `Invalid UTF-8 in the event of the message at byte offset ${before.length} (its bytes from the bad one: FF 63 64 22)`],
    ['JSON cut short', badJson, 'ERR_BAD_EVENT', `Invalid JSON in the event of the message at byte offset ${before.length}: `],
  ] as const) {
    test(`${what}: at its message, whole, in 7-byte reads and dripped, raw or not, and through the relay`, () => {
      const bytes = concat([before, event('contentBlockDelta', payload)]);
      for (const step of [bytes.length, 7, 1]) {
        for (const make of [() => new ModelStream({ format: 'bedrock' }), () => new ModelStream({ format: 'bedrock', raw: true }), () => new SseRelay({ from: 'bedrock', to: 'openai' })]) {
          const r = make();
          let err: unknown;
          try {
            for (const piece of cut(bytes, Array.from({ length: Math.ceil(bytes.length / step) - 1 }, (_, i) => (i + 1) * step))) r.push(piece);
            r.flush();
          } catch (e) {
            err = e;
          }
          err ??= (r as SseRelay).error;
          const where = `${what}, reads of ${step}, ${r.constructor.name}`;
          expect(err, where).toBeInstanceOf(ModelStreamError);
          const e = err as ModelStreamError;
          expect([e.code, e.offset], where).toEqual([code, before.length]);
          if (code === 'ERR_BAD_EVENT') expect(e.message.startsWith(message), `${where}: ${e.message}`).toBe(true);
          else expect(e.message, where).toBe(message);
          expect(e.message.match(/byte offset \d+/g), where).toEqual([`byte offset ${before.length}`]);
        }
      }
    });
  }
});
