// AWS's binary event stream framed in the core (assembly/eventstream.ts, EventStreamDecoder),
// against AWS's own codec (@smithy/eventstream-codec, the one every AWS SDK for JavaScript decodes
// Bedrock's streams with) as the oracle: random messages with every header type and payload
// sizes from 0 to past the input window, encoded by the codec, read whole, at every split,
// dripped and cut at random; then every corruption: a bit flipped in each byte of a message, a
// length that lies (its prelude CRC made right), a header type that does not exist, a message
// past the limit, a stream cut at every byte. Each is an error at the damaged message's offset,
// with every message before it delivered as the codec reads it and nothing after it. The CRC32
// against known vectors and a bit-by-bit reference; the core's base64 (InvokeModelWithResponseStream's
// chunks) against Buffer, and a byte that is not base64 at each place.
import { EventStreamCodec, Int64 } from '@smithy/eventstream-codec';
import { describe, expect, test } from 'vitest';
import {
  EventStreamDecoder, EventStreamError, ModelStream, coreMemoryLimit, coreMemoryUsed, setCoreMemoryLimit, type EventStreamMessage,
} from '../../bindings/index.js';
import { getCore } from '../../bindings/core/wasm.js';
import { crc32Ref } from '../helpers/bedrock-fixtures.js';
import { SEED, concat, cut, randomCuts, rng } from '../helpers/random.js';

const enc = new TextEncoder();
const dec = new TextDecoder();
const codec = new EventStreamCodec((b: Uint8Array) => dec.decode(b), (s: string) => enc.encode(s));


function coreCrc(b: Uint8Array, start = 0): number {
  const core = getCore();
  core.sync();
  core.u8.set(b, core.inPtr);
  return core.x.crc32(core.inPtr, b.length, start) >>> 0;
}

/** The core's base64 decoding of `text` (written at the input window, decoded after it or in place): bytes, or the offset of the first byte that is not base64. */
function coreB64(text: string | Uint8Array, inPlace: boolean): Uint8Array | number {
  const core = getCore();
  core.sync();
  const src = core.inPtr;
  const bytes = typeof text === 'string' ? enc.encode(text) : text;
  core.u8.set(bytes, src);
  const dst = inPlace ? src : src + bytes.length + 64;
  if (!inPlace) core.u8.fill(0xa5, dst, dst + bytes.length + 64);
  const n = core.x.b64Decode(src, bytes.length, dst);
  core.sync();
  // it writes into the `len` bytes of room it is given, never past them (the SIMD blocks write 16 bytes for 12)
  if (!inPlace) expect(core.u8.subarray(dst + bytes.length, dst + bytes.length + 64).every((b) => b === 0xa5), `${bytes.length} bytes`).toBe(true);
  return n < 0 ? -n - 1 : core.u8.slice(dst, dst + n);
}

describe('base64 in the core (InvokeModelWithResponseStream\'s chunks)', () => {
  test('every byte value at every place, every length to 80 bytes, in place and not: as Buffer decodes it', () => {
    const r = rng(SEED);
    for (let len = 0; len <= 80; len++) {
      for (let k = 0; k < 8; k++) {
        const b = Uint8Array.from({ length: len }, (_, i) => (k < 4 ? (i * 37 + k * 101 + len) & 0xff : Math.floor(r() * 256)));
        const text = Buffer.from(b).toString('base64');
        for (const inPlace of [false, true]) expect(coreB64(text, inPlace), `seed ${SEED}, ${len} bytes, ${text}`).toEqual(Uint8Array.from(b));
      }
    }
    const all = Uint8Array.from({ length: 768 }, (_, i) => i & 0xff);
    expect(coreB64(Buffer.from(all).toString('base64'), false)).toEqual(all);
  });

  test('a byte that is not base64 at each place of 4 to 100 characters: its offset (each one of the 256 not in the alphabet, and =)', () => {
    const alphabet = new Set(Array.from('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/', (c) => c.charCodeAt(0)));
    const bad = Array.from({ length: 256 }, (_, i) => i).filter((c) => !alphabet.has(c) && c !== 0x3d);
    const good = Buffer.from(Uint8Array.from({ length: 75 }, (_, i) => i * 7)).toString('base64'); // 100 characters, no padding
    for (const n of [4, 16, 20, 32, 48, 64, 100]) {
      const text = good.slice(0, n);
      for (let at = 0; at < n; at++) {
        for (const c of at % 7 === 0 ? bad : [bad[at % bad.length], 0x3d]) {
          if (c === 0x3d && at >= n - 2) continue; // (padding where padding may be)
          const t = text.slice(0, at) + String.fromCharCode(c) + text.slice(at + 1);
          expect(coreB64(Uint8Array.from(t, (ch) => ch.charCodeAt(0)), false), `${n} characters, byte ${c} at ${at}`).toBe(at);
        }
      }
    }
  });
});

describe('CRC32 in the core', () => {
  test('known vectors', () => {
    expect(coreCrc(enc.encode(''))).toBe(0);
    expect(coreCrc(enc.encode('a'))).toBe(0xe8b7be43);
    expect(coreCrc(enc.encode('123456789'))).toBe(0xcbf43926);
    expect(coreCrc(enc.encode('The quick brown fox jumps over the lazy dog'))).toBe(0x414fa339);
    expect(coreCrc(new Uint8Array(32))).toBe(0x190a55ad);
    expect(coreCrc(new Uint8Array(32).fill(0xff))).toBe(0xff6cab0b);
  });

  test('every length from 0 to 300 and every alignment, random bytes, against the bit-by-bit reference; continued', () => {
    const r = rng(SEED + 41);
    const buf = Uint8Array.from({ length: 320 }, () => Math.floor(r() * 256));
    for (let n = 0; n <= 300; n++) {
      for (const a of [0, 1, 3, 7]) {
        const b = buf.subarray(a, a + n);
        expect(coreCrc(b), `length ${n} at ${a}`).toBe(crc32Ref(b));
      }
    }
    // continued: crc(a ‖ b) from crc(a)
    const whole = buf.subarray(0, 200);
    const first = coreCrc(whole.subarray(0, 77));
    expect(coreCrc(whole.subarray(77), first)).toBe(crc32Ref(whole));
  });
});

// ---------------------------------------------------------------------------------------------
// Random messages, encoded by AWS's codec

type CodecHeaders = Parameters<typeof codec.encode>[0]['headers'];
type Rnd = () => number;
// (not `__proto__`: AWS's codec sets its result's prototype with it and loses the header; the decoder keeps it, tested below)
const NAMES = [':message-type', ':event-type', ':content-type', ':exception-type', 'x', 'a-much-longer-header-name-of-some-length', 'é', 'dup', 'constructor'];

function randomHeaders(r: Rnd): CodecHeaders {
  const h: CodecHeaders = {};
  const n = Math.floor(r() * 7);
  for (let i = 0; i < n; i++) {
    const name = r() < 0.6 ? NAMES[Math.floor(r() * NAMES.length)] : `h${Math.floor(r() * 1000)}`;
    const t = Math.floor(r() * 9);
    let v: CodecHeaders[string];
    switch (t) {
      case 0: v = { type: 'boolean', value: r() < 0.5 }; break;
      case 1: v = { type: 'byte', value: Math.floor(r() * 256) - 128 }; break;
      case 2: v = { type: 'short', value: Math.floor(r() * 65536) - 32768 }; break;
      case 3: v = { type: 'integer', value: Math.floor(r() * 2 ** 32) - 2 ** 31 }; break;
      case 4: {
        // (the codec's Int64 from 8 big-endian bytes)
        const b = Uint8Array.from({ length: 8 }, () => Math.floor(r() * 256));
        v = { type: 'long', value: new Int64(b) };
        break;
      }
      case 5: v = { type: 'binary', value: Uint8Array.from({ length: Math.floor(r() * 40) }, () => Math.floor(r() * 256)) }; break;
      case 6: v = { type: 'string', value: ['event', 'exception', 'contentBlockDelta', 'application/json', '', 'ünïcödé 🚀'][Math.floor(r() * 6)] }; break;
      case 7: v = { type: 'timestamp', value: new Date(Math.floor(r() * 4e12)) }; break;
      default: {
        const hx = Array.from({ length: 32 }, () => Math.floor(r() * 16).toString(16)).join('');
        v = { type: 'uuid', value: `${hx.slice(0, 8)}-${hx.slice(8, 12)}-${hx.slice(12, 16)}-${hx.slice(16, 20)}-${hx.slice(20)}` };
      }
    }
    Object.defineProperty(h, name, { value: v, enumerable: true, configurable: true, writable: true });
  }
  return h;
}

function randomPayload(r: Rnd): Uint8Array {
  const x = r();
  const n = x < 0.1 ? 0 : x < 0.7 ? Math.floor(r() * 200) : x < 0.95 ? Math.floor(r() * 5000) : 66000 + Math.floor(r() * 3000);
  if (r() < 0.5) return enc.encode(JSON.stringify({ contentBlockDelta: { delta: { text: 'x'.repeat(n) } } }).slice(0, Math.max(n, 2)));
  return Uint8Array.from({ length: n }, () => Math.floor(r() * 256));
}

interface Built { bytes: Uint8Array; starts: number[]; messages: Uint8Array[] }

function build(r: Rnd, count: number): Built {
  const messages: Uint8Array[] = [];
  for (let i = 0; i < count; i++) messages.push(codec.encode({ headers: randomHeaders(r), body: randomPayload(r) }));
  return join(messages);
}

function join(messages: Uint8Array[]): Built {
  const starts: number[] = [];
  let n = 0;
  for (const m of messages) {
    starts.push(n);
    n += m.length;
  }
  const bytes = new Uint8Array(n);
  messages.forEach((m, i) => bytes.set(m, starts[i]));
  return { bytes, starts, messages };
}

/** A message as the codec decodes it, in the decoder's terms. */
function oracle(bytes: Uint8Array, offset: number): EventStreamMessage {
  const m = codec.decode(bytes);
  const headers: EventStreamMessage['headers'] = {};
  for (const [k, h] of Object.entries(m.headers)) {
    const v = h.value as unknown;
    let out: EventStreamMessage['headers'][string];
    if (h.type === 'long') out = { type: 'long', value: new DataView((v as { bytes: Uint8Array }).bytes.buffer, (v as { bytes: Uint8Array }).bytes.byteOffset, 8).getBigInt64(0) };
    else if (h.type === 'binary') out = { type: 'binary', value: Uint8Array.from(v as Uint8Array) };
    else out = h as unknown as EventStreamMessage['headers'][string];
    Object.defineProperty(headers, k, { value: out, enumerable: true, configurable: true, writable: true });
  }
  return { headers, payload: Uint8Array.from(m.body), offset, length: bytes.length };
}

const norm = (ms: EventStreamMessage[]) => ms.map((m) => ({ ...m, headers: Object.entries(m.headers), payload: Array.from(m.payload) }));

function readAll(chunks: Uint8Array[], max?: number): { messages: EventStreamMessage[]; error?: EventStreamError } {
  const d = new EventStreamDecoder(max === undefined ? {} : { maxMessageBytes: max });
  const messages: EventStreamMessage[] = [];
  try {
    for (const c of chunks) messages.push(...d.push(c));
    d.flush();
  } catch (e) {
    if (!(e instanceof EventStreamError)) throw e;
    messages.push(...e.messages);
    return { messages, error: e };
  } finally {
    d.dispose();
  }
  return { messages };
}

describe('EventStreamDecoder against AWS\'s codec', () => {
  test(`random streams (every header type, payloads from 0 bytes to past the input window), whole, at random cuts and dripped, seed ${SEED}`, () => {
    const r = rng(SEED + 42);
    for (let s = 0; s < 60; s++) {
      const b = build(r, 1 + Math.floor(r() * 6));
      const want = norm(b.messages.map((m, i) => oracle(m, b.starts[i])));
      const where = `seed ${SEED}, stream ${s}`;
      const chunkings = [[b.bytes], cut(b.bytes, randomCuts(b.bytes, r, 30)), cut(b.bytes, randomCuts(b.bytes, r, 3000))];
      if (b.bytes.length < 4000) chunkings.push(Array.from({ length: b.bytes.length }, (_, i) => b.bytes.subarray(i, i + 1)));
      for (const chunks of chunkings) {
        const got = readAll(chunks);
        expect(got.error, where).toBeUndefined();
        expect(norm(got.messages), `${where}, ${chunks.length} chunks`).toEqual(want);
      }
    }
  });

  test('a header named __proto__ is a header like any other (own, enumerable; the prototype untouched)', () => {
    const h: CodecHeaders = {};
    Object.defineProperty(h, '__proto__', { value: { type: 'string', value: 'x' }, enumerable: true, configurable: true, writable: true });
    const [m] = readAll([codec.encode({ headers: h, body: new Uint8Array(0) })]).messages;
    expect(Object.getPrototypeOf(m.headers)).toBe(Object.prototype);
    expect(Object.entries(m.headers)).toEqual([['__proto__', { type: 'string', value: 'x' }]]);
  });

  test('a small stream at every split into two and three pieces', () => {
    const r = rng(SEED + 43);
    const b = join([0, 1, 2].map(() => codec.encode({ headers: randomHeaders(r), body: enc.encode('{"p":"abc"}') })));
    const want = norm(b.messages.map((m, i) => oracle(m, b.starts[i])));
    for (let i = 0; i <= b.bytes.length; i++) {
      expect(norm(readAll(cut(b.bytes, [i])).messages), `cut at ${i}`).toEqual(want);
      for (let j = i; j <= b.bytes.length; j += 7) expect(norm(readAll(cut(b.bytes, [i, j])).messages), `cut at ${i}, ${j}`).toEqual(want);
    }
  });
});

describe('damage: an error at the damaged message\'s offset, the messages before it delivered, nothing after', () => {
  const r = rng(SEED + 44);
  const b = join([0, 1, 2, 3].map((i) => codec.encode({ headers: randomHeaders(r), body: enc.encode(`{"n":${i},"text":"bonjour 🌍"}`) })));
  const K = 2; // the damaged message
  const before = norm(b.messages.slice(0, K).map((m, i) => oracle(m, b.starts[i])));
  const at = b.starts[K];
  const len = b.messages[K].length;

  function damaged(edit: (m: Uint8Array) => Uint8Array): Uint8Array {
    return join([...b.messages.slice(0, K), edit(b.messages[K].slice()), ...b.messages.slice(K + 1)]).bytes;
  }
  const setU32 = (m: Uint8Array, o: number, v: number) => new DataView(m.buffer, m.byteOffset).setUint32(o, v >>> 0);
  const fixPrelude = (m: Uint8Array) => { setU32(m, 8, crc32Ref(m.subarray(0, 8))); return m; };
  const fixMessage = (m: Uint8Array) => { setU32(m, m.length - 4, crc32Ref(m.subarray(0, m.length - 4))); return m; };

  function expectDamage(bytes: Uint8Array, code: string, where: string, pieces: Uint8Array[][] = [[bytes], cut(bytes, [at + 5]), cut(bytes, randomCuts(bytes, rng(SEED + bytes.length), 9))]): void {
    for (const chunks of pieces) {
      const got = readAll(chunks);
      expect(got.error?.code, `${where}, ${chunks.length} chunks`).toBe(code);
      expect(got.error?.offset, `${where}: the offset`).toBe(at);
      expect(norm(got.messages), `${where}: the messages before it`).toEqual(before);
    }
  }

  test('a bit flipped in each byte of the message: a CRC mismatch (the prelude\'s in its first 12 bytes), which AWS\'s codec also refuses', () => {
    for (let i = 0; i < len; i++) {
      const bit = 1 << (i % 8);
      const bytes = damaged((m) => { m[i] ^= bit; return m; });
      const m = bytes.subarray(at, at + len);
      expect(() => codec.decode(m), `byte ${i}`).toThrow();
      expectDamage(bytes, 'ERR_CRC_MISMATCH', `bit ${bit} of byte ${i}`, [[bytes], Array.from({ length: bytes.length }, (_, k) => bytes.subarray(k, k + 1))]);
      const err = readAll([bytes]).error!;
      expect(err.crc, `byte ${i}`).toBe(i < 12 ? 'prelude' : 'message');
    }
  });

  test('a total length that lies, its prelude CRC made right: shorter is a message CRC mismatch, under 16 a bad frame', () => {
    for (const d of [-1, -4, -9]) expectDamage(damaged((m) => { setU32(m, 0, len + d); return fixPrelude(m); }), 'ERR_CRC_MISMATCH', `length ${d}`);
    for (const v of [0, 1, 12, 15]) expectDamage(damaged((m) => { setU32(m, 0, v); return fixPrelude(m); }), 'ERR_BAD_FRAME', `length ${v}`);
    // longer: the message takes bytes of the next one, whose CRC then fails (or the stream ends inside it)
    const longer = damaged((m) => { setU32(m, 0, len + 3); return fixPrelude(m); });
    const got = readAll([longer]);
    expect(got.error?.offset).toBe(at);
    expect(['ERR_CRC_MISMATCH', 'ERR_STREAM_TRUNCATED']).toContain(got.error?.code);
  });

  test('headers longer than the message holds, a header type that does not exist, a header running past the headers: bad frames', () => {
    expectDamage(damaged((m) => { setU32(m, 4, len); return fixMessage(fixPrelude(m)); }), 'ERR_BAD_FRAME', 'headers length');
    // a message of one header whose type is 10, its CRCs right
    const bad = (type: number, valueLen: number) => {
      const h = [1, 0x78, type, ...new Array(valueLen).fill(0)];
      const m = new Uint8Array(16 + h.length);
      setU32(m, 0, m.length);
      setU32(m, 4, h.length);
      m.set(h, 12);
      return fixMessage(fixPrelude(m));
    };
    const withType = (t: number, n: number) => join([...b.messages.slice(0, K), bad(t, n), ...b.messages.slice(K + 1)]).bytes;
    expect(() => codec.decode(bad(10, 0))).toThrow(/Unrecognized header type/);
    for (const t of [10, 11, 200, 255]) expectDamage(withType(t, 0), 'ERR_BAD_FRAME', `type ${t}`);
    expectDamage(withType(4, 2), 'ERR_BAD_FRAME', 'an integer with 2 bytes');
    expectDamage(withType(7, 1), 'ERR_BAD_FRAME', 'a string without its length');
  });

  test('a message past maxMessageBytes is ERR_FRAME_TOO_LARGE at its prelude: nothing of it buffered, even one claiming 4 GiB', () => {
    const huge = damaged((m) => { setU32(m, 0, 0xffffffff); return fixPrelude(m); });
    expectDamage(huge, 'ERR_FRAME_TOO_LARGE', '4 GiB');
    // at the prelude: the 12th byte of the message raises it, with nothing held
    const d = new EventStreamDecoder();
    d.push(huge.subarray(0, at + 11));
    expect(d.pendingBytes).toBe(11);
    expect(() => d.push(huge.subarray(at + 11, at + 12))).toThrow(expect.objectContaining({ code: 'ERR_FRAME_TOO_LARGE', offset: at }));
    expect(d.pendingBytes).toBe(0);
    // a limit under a real message
    const got = readAll([b.bytes], len - 1);
    expect(got.error?.code).toBe('ERR_FRAME_TOO_LARGE');
    expect(got.messages.length).toBeLessThanOrEqual(K + 2);
  });

  test('a stream cut at every byte: ERR_STREAM_TRUNCATED at its end inside a message, the messages before the cut delivered', () => {
    const all = norm(b.messages.map((m, i) => oracle(m, b.starts[i])));
    for (let c = 0; c <= b.bytes.length; c++) {
      const whole = b.starts.filter((s, i) => s + b.messages[i].length <= c).length;
      const boundary = c === b.bytes.length || b.starts.includes(c);
      for (const chunks of [[b.bytes.subarray(0, c)], cut(b.bytes.subarray(0, c), [c >> 1])]) {
        const got = readAll(chunks);
        expect(norm(got.messages), `cut at ${c}`).toEqual(all.slice(0, whole));
        if (boundary) expect(got.error, `cut at ${c}`).toBeUndefined();
        else expect(got.error, `cut at ${c}`).toMatchObject({ code: 'ERR_STREAM_TRUNCATED', offset: c });
      }
    }
  });

  test('after an error the decoder stays failed (the same code and offset, no messages) until reset()', () => {
    const bytes = damaged((m) => { m[len - 1] ^= 1; return m; });
    const d = new EventStreamDecoder();
    expect(() => d.push(bytes)).toThrow(EventStreamError);
    expect(() => d.push(b.bytes)).toThrow(expect.objectContaining({ code: 'ERR_CRC_MISMATCH', offset: at, messages: [] }));
    d.reset();
    expect(d.push(b.bytes).length).toBe(4);
    d.flush();
  });
});

describe('memory', () => {
  test('one-byte reads of a 300 KiB message hold at most that message; the core\'s heap is back where it was after dispose()', () => {
    const core = getCore();
    const start = core.x.heapInUse();
    const m = codec.encode({ headers: { ':event-type': { type: 'string', value: 'chunk' } }, body: new Uint8Array(300 * 1024).fill(0x61) });
    const d = new EventStreamDecoder();
    let got = 0;
    for (let i = 0; i < m.length; i++) {
      got += d.push(m.subarray(i, i + 1)).length;
      expect(core.x.heapInUse() - start).toBeLessThan(2 * m.length + 4096);
    }
    expect(got).toBe(1);
    d.dispose();
    expect(core.x.heapInUse()).toBe(start);
  });

  /** A prelude that claims `total` bytes (no headers), its CRC right. */
  function preludeOf(total: number): Uint8Array {
    const p = new Uint8Array(12);
    const v = new DataView(p.buffer);
    v.setUint32(0, total);
    v.setUint32(8, crc32Ref(p.subarray(0, 8)));
    return p;
  }

  test('a prelude claiming 16 MiB − 1 and a few bytes, on 256 streams: the core memory each holds grows with what arrived, not with the length claimed', () => {
    const claim = 16 * 1024 * 1024 - 1; // (under the default limit: not refused at the prelude)
    const was = coreMemoryLimit();
    const streams: (EventStreamDecoder | ModelStream)[] = [];
    const r = rng(SEED + 7);
    try {
      // a budget 16 MiB streams would pass at the second one (and the core's memory never shrinks)
      setCoreMemoryLimit(coreMemoryUsed() + 32 * 1024 * 1024);
      for (let i = 0; i < 256; i++) streams.push(i % 2 === 0 ? new EventStreamDecoder() : new ModelStream({ format: 'bedrock' }));
      const idle = coreMemoryUsed();
      let received = 0;
      streams.forEach((s, i) => {
        const more = Uint8Array.from({ length: [0, 4, 40, 300, 3000][i % 5] + Math.floor(r() * 20) }, () => Math.floor(r() * 256));
        // the prelude alone, then the bytes after it; or both in one read
        if (i % 3 === 0) {
          s.push(preludeOf(claim));
          s.push(more);
        } else {
          s.push(concat([preludeOf(claim), more]));
        }
        received += 12 + more.length;
        if (s instanceof EventStreamDecoder) expect(s.pendingBytes).toBe(12 + more.length);
      });
      // each stream's buffer: at most twice what arrived of its message, and never under 256 bytes
      const held = coreMemoryUsed() - idle;
      expect(held, `seed ${SEED + 7}`).toBeLessThanOrEqual(2 * received + 256 * streams.length);
    } finally {
      for (const s of streams) s.dispose();
      setCoreMemoryLimit(was);
    }
  });

  /** A message of about `n` bytes as a ConverseStream event, its payload random (seeded) bytes. */
  function large(r: Rnd, n: number): Uint8Array {
    return codec.encode({
      headers: { ':event-type': { type: 'string', value: 'contentBlockDelta' }, ':message-type': { type: 'string', value: 'event' }, x: { type: 'integer', value: n } },
      body: Uint8Array.from({ length: n }, () => Math.floor(r() * 256)),
    });
  }

  /** As norm, the payloads as hex (one string compare for a large payload). */
  const normHex = (ms: EventStreamMessage[]) => ms.map((m) => ({ ...m, headers: Object.entries(m.headers), payload: Buffer.from(m.payload).toString('hex') }));

  /** Reads `chunks` with one decoder, checking after each read that the core memory it holds is at most `bound(bytes read)`. */
  function readHeld(chunks: Uint8Array[], bound: (received: number) => number, what: string): EventStreamMessage[] {
    const start = coreMemoryUsed();
    const d = new EventStreamDecoder();
    const got: EventStreamMessage[] = [];
    let received = 0;
    try {
      for (const c of chunks) {
        for (const m of d.push(c)) got.push(m);
        received += c.length;
        const held = coreMemoryUsed() - start;
        if (held > bound(received)) expect(held, `${what}: core memory held after ${received} bytes read`).toBeLessThanOrEqual(bound(received));
      }
      d.flush();
    } finally {
      d.dispose();
    }
    expect(coreMemoryUsed(), what).toBe(start);
    return got;
  }

  test('a 1 MiB message in one-byte reads: decoded as AWS\'s codec decodes it, holding at most twice the bytes that arrived', () => {
    const m = large(rng(SEED + 8), 1024 * 1024);
    const got = readHeld(Array.from({ length: m.length }, (_, i) => m.subarray(i, i + 1)), (n) => 2 * n + 4096, `one-byte reads, seed ${SEED + 8}`);
    expect(normHex(got)).toEqual(normHex([oracle(m, 0)]));
  });

  test(`large messages among small ones in random reads: decoded as AWS's codec decodes them, the core memory held in proportion to the bytes read, seed ${SEED + 9}`, () => {
    const r = rng(SEED + 9);
    for (let round = 0; round < 6; round++) {
      const ms: Uint8Array[] = [];
      for (let i = 0; i < 8; i++) ms.push(i % 2 === 1 ? large(r, Math.floor(r() * 250_000) + 70_000) : codec.encode({ headers: randomHeaders(r), body: randomPayload(r) }));
      const b = join(ms);
      const maxPiece = [1, 7, 100, 1000, 20_000, 200_000][round];
      const chunks = cut(b.bytes, randomCuts(b.bytes, r, maxPiece));
      const what = `seed ${SEED + 9}, round ${round}, pieces of at most ${maxPiece} bytes`;
      // (the buffer: at most twice what arrived; the one a completed message lay in kept until the next read)
      const got = readHeld(chunks, (n) => 4 * n + 8192, what);
      expect(normHex(got), what).toEqual(normHex(b.messages.map((m, i) => oracle(m, b.starts[i]))));
    }
  });
});

