// SseParser beyond the format cases: errors with offsets, limits, reset, the byte-level path,
// events larger than the output window, many parsers on the shared instance, memory, encodeSse,
// SseDecoderStream.
import { describe, expect, test } from 'vitest';
import {
  SseByteEvents, SseDecoderStream, SseLimitError, SseParser, Utf8DecodeError, encodeSse, wasmBackend, type SseEvent,
} from '../../bindings/index.js';
import { getCore } from '../../bindings/core/wasm.js';
import { referenceParse } from '../conformance/sse-reference.js';
import { measureAppends } from '../helpers/linear.js';
import { cut, randomCuts } from '../helpers/random.js';
import { outcome } from '../helpers/thrown.js';

const enc = (s: string) => new TextEncoder().encode(s);
const ev = (data: string, type = 'message', id = '') => ({ type, data, id });
const concat = (...parts: Uint8Array[]) => { const o = new Uint8Array(parts.reduce((n, p) => n + p.length, 0)); let i = 0; for (const p of parts) { o.set(p, i); i += p.length; } return o; };

/** Deterministic PRNG (mulberry32). */
function rng(seed: number) {
  return () => { seed |= 0; seed = (seed + 0x6d2b79f5) | 0; let t = Math.imul(seed ^ (seed >>> 15), 1 | seed); t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t; return ((t ^ (t >>> 14)) >>> 0) / 4294967296; };
}

/**
 * Feeds the events `parts` to a parser's string path and to another's byte path, `per` events a
 * read: 0 all in one read, 1 one, 2 one to three, 3 one to twenty (drawn from `r`); the string
 * parser is flushed.
 */
function feedEvents(parts: string[], per: number, r: () => number): { got: SseEvent[]; gotBytes: SseEvent[] } {
  const p = new SseParser();
  const b = new SseParser();
  const got: SseEvent[] = [];
  const gotBytes: SseEvent[] = [];
  for (let i = 0; i < parts.length;) {
    const k = per === 0 ? parts.length : per === 1 ? 1 : 1 + Math.floor(r() * (per === 2 ? 3 : 20));
    const c = enc(parts.slice(i, i + k).join(''));
    i += k;
    got.push(...p.push(c));
    const be = b.pushBytes(c);
    for (let j = 0; j < be.length; j++) gotBytes.push({ type: be.type(j), data: be.dataText(j), id: be.id(j) });
  }
  got.push(...p.flush());
  return { got, gotBytes };
}

describe(`SseParser (${wasmBackend()})`, () => {
  test('invalid UTF-8 inside an event: Utf8DecodeError at the absolute offset, earlier events on the error', () => {
    const p = new SseParser();
    expect(p.push(enc('data: one\n\ndata: tw'))).toEqual([ev('one')]);
    const chunk = concat(enc('o\n\ndata: three\n\ndata: x'), new Uint8Array([0xe2, 0x28]), enc('\n\n'));
    let err: unknown;
    try { p.push(chunk); } catch (e) { err = e; }
    expect(err).toBeInstanceOf(Utf8DecodeError);
    const e = err as Utf8DecodeError & { events: SseEvent[] };
    expect(e.code).toBe('ERR_INVALID_UTF8');
    expect(e.offset).toBe(19 + 23);
    expect(e.events).toEqual([ev('two'), ev('three')]);
    expect(() => p.push(enc('data: y\n\n'))).toThrow(expect.objectContaining({ code: 'ERR_INVALID_UTF8', offset: 42, events: [] }));
    p.reset();
    expect(p.push(enc('data: y\n\n'))).toEqual([ev('y')]);
  });

  test('a bad byte in the carry of the previous chunk is reported at its absolute offset', () => {
    const p = new SseParser();
    p.push(enc('data: ab'));
    p.push(new Uint8Array([0xf0, 0x9f]));
    expect(() => p.push(new Uint8Array([0x41]))).toThrow(expect.objectContaining({ offset: 8, code: 'ERR_INVALID_UTF8' }));
  });

  test('a stream ending inside a character: ERR_TRUNCATED_UTF8 at flush', () => {
    const p = new SseParser();
    p.push(enc('data: a\n\ndata: '));
    p.push(new Uint8Array([0xe2, 0x82]));
    expect(() => p.flush()).toThrow(expect.objectContaining({ code: 'ERR_TRUNCATED_UTF8', offset: 15 }));
  });

  test('maxEventBytes: SseLimitError before the memory is spent, earlier events kept, failed until reset', () => {
    const p = new SseParser({ maxEventBytes: 100 });
    const pending0 = p.pendingBytes;
    expect(pending0).toBe(0);
    let err: unknown;
    try { p.push(enc(`data: small\n\ndata: ${'x'.repeat(60)}\ndata: ${'y'.repeat(60)}\n\n`)); } catch (e) { err = e; }
    expect(err).toBeInstanceOf(SseLimitError);
    const e = err as SseLimitError;
    expect(e.code).toBe('ERR_SSE_EVENT_TOO_LARGE');
    expect(e.limit).toBe(100);
    expect(e.offset).toBe(13 + 67);
    expect(e.events).toEqual([ev('small')]);
    expect(() => p.push(enc('data: a\n\n'))).toThrow(expect.objectContaining({ code: 'ERR_SSE_EVENT_TOO_LARGE', offset: 80, events: [] }));
    p.reset();
    expect(p.push(enc(`data: ${'z'.repeat(90)}\n\n`))).toEqual([ev('z'.repeat(90))]);
  });

  test('maxEventBytes counts an unfinished line fed in small pieces, and never allocates past it', () => {
    const core = getCore();
    const p = new SseParser({ maxEventBytes: 4096 });
    const piece = enc('x'.repeat(64));
    p.push(enc('data: '));
    let thrown = 0;
    for (let i = 0; i < 100 && thrown === 0; i++) {
      try { p.push(piece); } catch (e) { expect(e).toBeInstanceOf(SseLimitError); expect((e as SseLimitError).offset).toBe(0); thrown = i; }
    }
    expect(thrown).toBe(64); // 6 + 64·64 = 4102 > 4096
    expect(core.x.framePending((p as unknown as { st: number }).st)).toBeLessThanOrEqual(4096);
  });

  test('maxEventBytes at the exact boundary, for an event read whole from one chunk and for one fed in pieces', () => {
    // An event holds its data plus the LF each data line adds: 'x'.repeat(n) holds n + 1 bytes.
    for (const bytesPath of [false, true]) {
      const events = (p: SseParser, c: Uint8Array) => (bytesPath ? p.pushBytes(c).length : p.push(c).length);
      const fits = new SseParser({ maxEventBytes: 100 });
      expect(events(fits, enc(`data: ${'x'.repeat(99)}\n\n`))).toBe(1);
      const over = new SseParser({ maxEventBytes: 100 });
      expect(() => events(over, enc(`data: ${'x'.repeat(100)}\n\n`))).toThrow(SseLimitError);
      const pieces = new SseParser({ maxEventBytes: 100 });
      events(pieces, enc('data: '));
      for (let i = 0; i < 99; i++) expect(events(pieces, enc('x'))).toBe(0);
      expect(events(pieces, enc('\n\n'))).toBe(1);
      for (const end of ['\n', '\n\n', '\r\n\r\n']) {
        const piecesOver = new SseParser({ maxEventBytes: 100 });
        events(piecesOver, enc('data: '));
        for (let i = 0; i < 100; i++) expect(events(piecesOver, enc('x'))).toBe(0); // 100 bytes held
        // the data line's LF is one byte too many
        expect(() => events(piecesOver, enc(end))).toThrow(expect.objectContaining({ offset: 0, limit: 100 }));
      }
    }
  });

  test('reset() starts a new connection but keeps lastEventId and retry', () => {
    const p = new SseParser();
    expect(p.push(enc('retry: 1500\nid: 42\ndata: a\n\ndata: partial'))).toEqual([ev('a', 'message', '42')]);
    p.push(enc('\nid: 43\n'));
    p.reset();
    expect(p.lastEventId).toBe('42');
    expect(p.retry).toBe(1500);
    expect(p.push(enc('data: b\n\n'))).toEqual([ev('b', 'message', '42')]);
    expect(p.push(enc('\uFEFFdata: c\n\n'))).toEqual([]); // the BOM is only skipped at the start
    p.reset();
    expect(p.push(enc('\uFEFFdata: c\n\n'))).toEqual([ev('c', 'message', '42')]);
  });

  test('flush sets truncated and begins a new stream', () => {
    const p = new SseParser();
    p.push(enc('data: a\n\ndata: b'));
    expect(p.flush()).toEqual([]);
    expect(p.truncated).toBe(true);
    expect(p.push(enc('\uFEFFdata: c\n\n'))).toEqual([ev('c')]);
    expect(p.truncated).toBe(false);
    expect(p.flush()).toEqual([]);
    expect(p.truncated).toBe(false);
  });

  test('onComment is called after the events of the push; comments are skipped without it', () => {
    const seen: string[] = [];
    const p = new SseParser({ onComment: (t) => seen.push(t) });
    expect(p.push(enc(': hello\n:x\ndata: a\n\n:  two spaces\n'))).toEqual([ev('a')]);
    expect(seen).toEqual(['hello', 'x', ' two spaces']);
  });

  test('the comments before an error go to onComment, whatever read the error comes in (string and byte paths)', () => {
    const bytes = Uint8Array.from([...enc(': one\ndata: a\n\n: two\ndata: b'), 0xff, ...enc('\n\n: three\n')]);
    const bad = bytes.indexOf(0xff);
    for (const bytePath of [false, true]) {
      for (const at of [bytes.length, 3, 12, bad - 1, bad, bad + 1]) {
        const seen: string[] = [];
        const p = new SseParser({ onComment: (t) => seen.push(t) });
        const events: string[] = [];
        let code = '';
        for (const c of [bytes.subarray(0, at), bytes.subarray(at)]) {
          const take = (evs: SseEvent[] | SseByteEvents) => {
            if (Array.isArray(evs)) for (const e of evs) events.push(e.data);
            else for (let i = 0; i < evs.length; i++) events.push(evs.dataText(i));
          };
          try {
            take(bytePath ? p.pushBytes(c) : p.push(c));
          } catch (e) {
            const x = e as { code: string; events: SseEvent[] | SseByteEvents };
            take(x.events);
            code = x.code;
            break;
          }
        }
        expect([seen, events, code], `cut at ${at}${bytePath ? ', bytes' : ''}`).toEqual([['one', 'two'], ['a'], 'ERR_INVALID_UTF8']);
      }
    }
  });

  test('an onComment handler that uses another parser before an error leaves the error this stream\'s', () => {
    const other = new SseParser();
    const p = new SseParser({ onComment: () => { try { other.push(Uint8Array.of(0x64, 0x61, 0x74, 0x61, 0x3a, 0xfe, 0x0a)); } catch { /* its own */ } } });
    const bytes = Uint8Array.from([...enc(': one\ndata: a\n\ndata: b'), 0xff, ...enc('cd\n')]);
    const e = (() => { try { p.push(bytes); } catch (x) { return x as Utf8DecodeError; } })();
    expect([e?.code, e?.offset, [...(e?.bytes ?? [])]]).toEqual(['ERR_INVALID_UTF8', 22, [0xff, 0x63, 0x64, 0x0a]]);
  });

  test('events larger than the output window (128 KiB), ASCII and not, string and byte paths', () => {
    const r = rng(7);
    const alphabet = ['a', 'é', '中', '😀', ' ', '{', '"'];
    for (const size of [70_000, 200_000, 1_000_000]) {
      let s = '';
      while (s.length < size) s += alphabet[Math.floor(r() * alphabet.length)];
      for (const data of [s, 'A'.repeat(size)]) {
        const bytes = enc(`event: big\nid: 9\ndata: ${data}\ndata: ${data.slice(0, 10)}\n\ndata: after\n\n`);
        const want = referenceParse(bytes).events;
        for (const chunk of [64, 1000, 65536, bytes.length]) {
          const p = new SseParser();
          const got: SseEvent[] = [];
          const b = new SseParser();
          const gotBytes: SseEvent[] = [];
          for (let i = 0; i < bytes.length; i += chunk) {
            got.push(...p.push(bytes.subarray(i, i + chunk)));
            const be = b.pushBytes(bytes.subarray(i, i + chunk));
            for (let k = 0; k < be.length; k++) gotBytes.push({ type: be.type(k), data: be.dataText(k), id: be.id(k) });
          }
          expect(got).toEqual(want);
          expect(gotBytes).toEqual(want);
          p.dispose();
          b.dispose();
        }
      }
    }
  });

  test('thousands of events in one push (several output batches)', () => {
    const text = Array.from({ length: 5000 }, (_, i) => `data: ${i % 3 === 0 ? 'é' : ''}${i}\n\n`).join('');
    const p = new SseParser();
    expect(p.push(enc(text))).toEqual(referenceParse(enc(text)).events);
    expect(p.push(enc('data\n\n'.repeat(20000))).length).toBe(20000);
    // the byte-level path across batches, with the types and IDs changing between plain events
    const mixed = Array.from({ length: 6000 }, (_, i) => (i % 1000 === 7 ? `id: ${i}\n` : '') + (i % 700 === 3 ? 'event: t\n' : '') + `data: ${i % 3 === 0 ? 'é' : ''}${i}\n\n`).join('');
    const b = new SseParser().pushBytes(enc(mixed));
    const got = Array.from({ length: b.length }, (_, i) => ({ type: b.type(i), data: b.dataText(i), id: b.id(i) }));
    expect(got).toEqual(referenceParse(enc(mixed)).events);
  });

  test('the byte-level path: validated bytes, types and ids, re-encoded for forwarding', () => {
    const p = new SseParser();
    const b = p.pushBytes(enc('event: delta\ndata: {"t":"h\u00e9"}\n\nevent: delta\nid: 1\ndata: a\ndata: b\n\ndata: c\n\n'));
    expect(b.length).toBe(3);
    expect(Array.from({ length: 3 }, (_, i) => [b.type(i), b.dataText(i), b.id(i)])).toEqual([
      ['delta', '{"t":"h\u00e9"}', ''], ['delta', 'a\nb', '1'], ['message', 'c', '1'],
    ]);
    expect(b.data(0)).toEqual(enc('{"t":"h\u00e9"}'));
    expect(new TextDecoder().decode(b.encode())).toBe('event: delta\ndata: {"t":"h\u00e9"}\n\nevent: delta\nid: 1\ndata: a\ndata: b\n\ndata: c\n\n');
    // a read with no whole event (most small reads): nothing to forward, the next read completes it
    const empty = p.pushBytes(enc('data: {"t":')).encode();
    expect(empty).toBeInstanceOf(Uint8Array);
    expect(empty.length).toBe(0);
    expect(new TextDecoder().decode(p.pushBytes(enc('1}\n\n')).encode())).toBe('data: {"t":1}\n\n');
    expect(p.flushBytes().encode().length).toBe(0);
    expect(() => new SseParser({ fatal: false }).pushBytes(enc(''))).toThrow(TypeError);
  });

  test('the byte-level path re-encodes a read whose types and IDs are more bytes than the core holds for them', () => {
    // An upstream that gives every event an ID, read while it was ahead of the reader: one read
    // holds hundreds of events, and their IDs are more UTF-8 than the writer's strings area (the
    // JS writer takes the batch). Then a batch that fits again, and one that fits only once the
    // area starts over.
    const events = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ type: i % 3 === 0 ? `t${i % 7}` : 'message', id: `${tag}-${i}-${'x'.repeat(16 + (i % 5))}`, data: `{"i":${i}}` }));
    const body = (evs: { type: string; id: string; data: string }[]) => evs.map((e) => `${e.type === 'message' ? '' : `event: ${e.type}\n`}id: ${e.id}\ndata: ${e.data}\n\n`).join('');
    const p = new SseParser();
    const long = [{ type: 'é'.repeat(3000), id: 'z'.repeat(6000), data: 'one' }, { type: 'message', id: '1', data: 'two' }];
    for (const [what, evs] of [
      ['300 events', events(300, 'evt')], ['12 events', events(12, 'a')], ['150 events', events(150, 'b')], ['150 more', events(150, 'c')],
      ['400 events, IDs not ASCII', events(400, 'ïd')], ['a type and an ID each larger than the area', long], ['12 again', events(12, 'a')],
    ] as const) {
      const b = p.pushBytes(enc(body(evs)));
      expect(b.length).toBe(evs.length);
      expect(new TextDecoder().decode(b.encode()), what).toBe(body(evs));
    }
  });

  test('typed events of one type in a row (the Anthropic shape), cut anywhere, on both paths', () => {
    // The core takes "event: T" + one data line + a blank line in one step when T repeats the
    // last type; every variation below must come out as the standard says.
    const seed = 7;
    const r = rng(seed);
    const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)];
    const parts: string[] = [];
    for (let i = 0; i < 400; i++) {
      const nl = pick(['\n', '\r\n', '\r']);
      const type = pick(['content_block_delta', 'content_block_delta', 'content_block_delta', 'ping', 'content_block_delta ', '']);
      const data = pick(['', '{"text":"h\u00e9"}', 'x'.repeat(Math.floor(r() * 300)), '\u4e2d'.repeat(20)]);
      let ev = `event:${pick([' ', ''])}${type}${nl}`;
      if (r() < 0.05) ev += `id: ${i}${nl}`;
      if (r() < 0.05) ev += `: note${nl}`;
      ev += `data:${pick([' ', ''])}${data}${nl}`;
      if (r() < 0.05) ev += `data: more${nl}`;
      parts.push(ev + nl);
    }
    const bytes = enc(parts.join(''));
    const want = referenceParse(bytes).events;
    for (const maxPiece of [bytes.length, 4096, 1024, 300, 64]) {
      const at = maxPiece === bytes.length ? [] : randomCuts(bytes, r, maxPiece);
      const chunks = cut(bytes, at);
      const p = new SseParser();
      const got: SseEvent[] = [];
      const b = new SseParser();
      const gotBytes: SseEvent[] = [];
      for (const c of chunks) {
        got.push(...p.push(c));
        const be = b.pushBytes(c);
        for (let k = 0; k < be.length; k++) gotBytes.push({ type: be.type(k), data: be.dataText(k), id: be.id(k) });
      }
      expect(got, `seed ${seed}, pieces of up to ${maxPiece}`).toEqual(want);
      expect(gotBytes, `seed ${seed}, pieces of up to ${maxPiece}`).toEqual(want);
    }
    // read as real APIs flush: one event per read (which the core frames whole when its type
    // repeats the last one), then one to three per read
    for (const per of [1, 2]) {
      const { got, gotBytes } = feedEvents(parts, per, r);
      expect(got, `seed ${seed}, ${per === 1 ? 'one event' : 'one to three events'} per read`).toEqual(want);
      expect(gotBytes, `seed ${seed}, ${per === 1 ? 'one event' : 'one to three events'} per read`).toEqual(want);
    }
    // the limit counts the type and the data's LF
    const typed = (n: number) => enc(`event: t\ndata: a\n\nevent: t\ndata: ${'x'.repeat(n)}\n\n${' '.repeat(80)}`);
    expect(new SseParser({ maxEventBytes: 100 }).pushBytes(typed(98)).length).toBe(2); // 1 + 98 + 1
    expect(() => new SseParser({ maxEventBytes: 100 }).pushBytes(typed(99))).toThrow(SseLimitError);
    expect(() => new SseParser({ maxEventBytes: 100 }).push(typed(99))).toThrow(SseLimitError);
  });

  test('untyped events of one data line (the OpenAI and Gemini shapes), one or a few per read, cut anywhere, on both paths', () => {
    // The core takes a read that is exactly "data: X" + a blank line (LF LF or CRLF CRLF at its
    // end), or up to 16 such events, in one step when nothing is held; every variation below must
    // come out as the standard says.
    for (const seed of [11, 12, 13]) {
      const r = rng(seed);
      const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)];
      const parts: string[] = [];
      for (let i = 0; i < 400; i++) {
        const nl = pick(['\n', '\n', '\r\n', '\r\n', '\r']);
        const data = pick(['', 'x', ' lead', '{"choices":[{"delta":{"content":"h\u00e9 \ud83d\ude80"}}]}', 'a:b', 'y'.repeat(Math.floor(r() * 300)), '\u4e2d'.repeat(20), '[DONE]']);
        let ev = '';
        if (r() < 0.04) ev += `event: t${nl}`;
        if (r() < 0.04) ev += `id: ${i}${nl}`;
        if (r() < 0.03) ev += `retry: ${i}${nl}`;
        if (r() < 0.03) ev += `: note${nl}`;
        ev += `data:${pick([' ', ' ', ''])}${data}${nl}`;
        if (r() < 0.04) ev += `data: more${nl}`;
        if (r() < 0.02) ev += `data${nl}`;
        parts.push(ev + (r() < 0.03 ? `\r${nl}` : nl));
      }
      const bytes = enc(parts.join(''));
      const want = referenceParse(bytes).events;
      expect(want.length).toBeGreaterThan(350);
      for (const per of [0, 1, 2, 3]) {
        const { got, gotBytes } = feedEvents(parts, per, r);
        const how = `seed ${seed}, ${['the whole stream', 'one event', 'one to three events', 'one to twenty events'][per]} per read`;
        expect(got, how).toEqual(want);
        expect(gotBytes, how).toEqual(want);
      }
    }
    // one event per read at the limit (the data and its LF), and past it
    for (const n of [99, 100]) {
      for (const end of ['\n\n', '\r\n\r\n']) {
        const p = new SseParser({ maxEventBytes: 100 });
        expect(p.push(enc(`data: a${end}`))).toEqual([ev('a')]);
        if (n === 99) expect(p.push(enc(`data: ${'x'.repeat(n)}${end}`))).toEqual([ev('x'.repeat(n))]);
        else expect(() => p.push(enc(`data: ${'x'.repeat(n)}${end}`))).toThrow(SseLimitError);
      }
    }
    // invalid UTF-8 in a read of one event: the same offset and events as the general path
    for (const fatal of [true, false]) {
      const one = new SseParser({ fatal });
      const first = enc('data: ok\n\n');
      const bad = new Uint8Array([...enc('data: a'), 0xff, ...enc('b\n\n')]);
      expect(one.push(first)).toEqual([ev('ok')]);
      if (fatal) {
        let err: unknown;
        try { one.push(bad); } catch (e) { err = e; }
        expect(err).toBeInstanceOf(Utf8DecodeError);
        expect((err as Utf8DecodeError).offset).toBe(first.length + 7);
      } else {
        expect(one.push(bad)).toEqual([ev('a\ufffdb')]);
      }
    }
  });

  test('a read of a few untyped events: each one\'s limit, line ends and bytes as on the general path', () => {
    // k events of one data line in one read (up to 16 are framed in one step once the stream's
    // first read has settled its BOM: each parser reads `first` before), the i-th of them past the
    // limit or holding an invalid byte: the events before it are delivered (on the error), the
    // error is at its offset, and the events after it are not invented.
    const first = enc('data: 0\n\n');
    const primed = (opts?: ConstructorParameters<typeof SseParser>[0]) => {
      const p = new SseParser(opts);
      expect(p.push(first)).toEqual([ev('0')]);
      return p;
    };
    const one = (j: number, data = `e${j}`, end = j % 2 ? '\r\n\r\n' : '\n\n') => `data: ${data}${end}`;
    for (const k of [2, 3, 15, 16, 17, 20]) {
      const parts = Array.from({ length: k }, (_, j) => one(j));
      const want = parts.map((_, j) => ev(`e${j}`));
      const p = primed();
      expect(p.push(enc(parts.join(''))), `${k} events`).toEqual(want);
      const b = new SseParser();
      b.pushBytes(first);
      const got = b.pushBytes(enc(parts.join('')));
      expect(Array.from({ length: got.length }, (_, j) => ev(got.dataText(j))), `${k} events, pushBytes`).toEqual(want);
      for (const i of [0, 1, k - 1]) {
        // the i-th event's data one byte past the limit (100: its data and LF), and at it
        const at = (n: number) => enc(parts.map((x, j) => (j === i ? one(j, 'x'.repeat(n)) : x)).join(''));
        expect(primed({ maxEventBytes: 100 }).push(at(99)).length).toBe(k);
        let err: unknown;
        try { primed({ maxEventBytes: 100 }).push(at(100)); } catch (e) { err = e; }
        expect(err, `limit, ${k} events, the ${i}th`).toBeInstanceOf(SseLimitError);
        expect((err as SseLimitError & { events: SseEvent[] }).events).toEqual(want.slice(0, i));
        // an invalid byte in the i-th event's data
        const pre = enc(parts.slice(0, i).join('') + 'data: a');
        const bad = concat(pre, new Uint8Array([0xc3, 0x28]), enc(`b\n\n${parts.slice(i + 1).join('')}`));
        err = undefined;
        try { primed().push(bad); } catch (e) { err = e; }
        expect(err, `UTF-8, ${k} events, the ${i}th`).toBeInstanceOf(Utf8DecodeError);
        expect((err as Utf8DecodeError).offset).toBe(first.length + pre.length);
        expect((err as Utf8DecodeError & { events: SseEvent[] }).events).toEqual(want.slice(0, i));
        expect(primed({ fatal: false }).push(bad)).toEqual([...want.slice(0, i), ev('a\ufffd(b'), ...want.slice(i + 1)]);
      }
    }
    // against the same bytes dripped a byte a read (never a one-step read), with an ID held from
    // before, limits near the events' sizes and now and then a bad byte: the same events, and the
    // same error at the same offset
    for (const seed of [31, 32, 33, 34]) {
      const r = rng(seed);
      for (let t = 0; t < 150; t++) {
        const head = enc(`id: ${'i'.repeat(Math.floor(r() * 20))}\ndata: 0\n\n`);
        const k = 1 + Math.floor(r() * 18);
        const parts = Array.from({ length: k }, (_, j) => one(j, 'é'.repeat(Math.floor(r() * 30)), r() < 0.5 ? '\n\n' : '\r\n\r\n'));
        let read = enc(parts.join(''));
        if (r() < 0.2) {
          const at = Math.floor(r() * read.length);
          read = concat(read.subarray(0, at), new Uint8Array([0xff]), read.subarray(at));
        }
        const max = 20 + Math.floor(r() * 60);
        const whole = outcome(new SseParser({ maxEventBytes: max }), [head, read], 'events');
        const bytes = concat(head, read);
        const drip = outcome(new SseParser({ maxEventBytes: max }), Array.from(bytes, (b) => new Uint8Array([b])), 'events');
        expect(whole, `seed ${seed}, case ${t}`).toEqual(drip);
      }
    }
    // reads a step must leave to the general path: a field other than data after the first event,
    // a second data line, an ID, a lone CR, a line end of LF then CRLF, a comment; and empty values
    const cases: [string, SseEvent[]][] = [
      ['data: a\n\nid: 7\ndata: b\n\n', [ev('a'), ev('b', 'message', '7')]],
      ['data: a\n\ndata: b\ndata: c\n\n', [ev('a'), ev('b\nc')]],
      ['data: a\n\nevent: t\ndata: b\n\n', [ev('a'), ev('b', 't')]],
      ['data: a\r\rdata: b\n\n', [ev('a'), ev('b')]],
      ['data: a\n\r\ndata: b\r\n\n', [ev('a'), ev('b')]],
      ['data: a\n\n: note\ndata: b\n\n', [ev('a'), ev('b')]],
      ['data:\n\ndata:b\n\ndata: \n\n', [ev(''), ev('b'), ev('')]],
      ['data: a\n\ndata', [ev('a')]],
    ];
    for (const [text, events] of cases) {
      const bytes = enc(text);
      expect(referenceParse(concat(first, bytes)).events.slice(1), text).toEqual(events);
      expect(primed().push(bytes), JSON.stringify(text)).toEqual(events);
    }
  });

  test('a chunk that continues a data value: its line end found at every position, after tabs or not', () => {
    for (const filler of ['y', '\t']) {
      for (let j = 0; j < 200; j++) {
        for (const end of ['\n\n', '\r\r', '\r\n\r\n', '\n']) {
          const p = new SseParser();
          expect(p.push(enc('data: x'))).toEqual([]);
          const got = p.push(enc(`${filler.repeat(j)}${end}data: z\n\n`));
          const want = end === '\n' ? [] : [ev(`x${filler.repeat(j)}`), ev('z')];
          if (end === '\n') expect(got).toEqual([ev(`x${filler.repeat(j)}\nz`)]);
          else expect(got, `${JSON.stringify(filler)} × ${j} ${JSON.stringify(end)}`).toEqual(want);
          p.dispose();
        }
      }
    }
  });

  test('the byte-level path: an event finished in the next chunk, whatever the size of its first part', () => {
    // The first part is placed before the chunk in the core's window when it fits (4 KiB), so
    // that the event is one span; larger parts, a carried character or a line that does not end
    // the event take the general route. All must give the same bytes.
    const other = new SseParser();
    for (const held of [0, 1, 15, 16, 17, 4095, 4096, 4097, 10000]) {
      for (const cut of ['', 'é']) {
        const first = `data: ${'a'.repeat(held)}${cut}`;
        const firstBytes = enc(first);
        // with cut 'é': end the first chunk inside it, so its first byte is carried
        const split = cut === '' ? firstBytes.length : firstBytes.length - 1;
        const text = `${first}bc\u4e2d\n\ndata: next\n\nevent: t\ndata: typed\n\n`;
        const bytes = enc(text);
        const want = referenceParse(bytes).events.map((e) => [e.type, e.data]);
        const p = new SseParser();
        expect(p.pushBytes(bytes.subarray(0, split)).length).toBe(0);
        // another stream joins a large event right before: none of its bytes may show in ours
        other.pushBytes(enc(`data: ${'Q'.repeat(3000)}`));
        expect(other.pushBytes(enc('Q\n\n')).length).toBe(1);
        const chunk = bytes.slice(split);
        const b = p.pushBytes(chunk);
        const read = () => Array.from({ length: b.length }, (_, i) => [b.type(i), b.dataText(i)]);
        expect(read(), `held ${held} cut ${JSON.stringify(cut)}`).toEqual(want);
        expect(b.bytes.subarray(0, b.byteLength).includes(0x51)).toBe(false);
        chunk.fill(0x78);
        for (let i = 0; i < 3; i++) other.pushBytes(enc(`data: ${'y'.repeat(5000)}\n\ndata: ${'z'.repeat(5000)}`));
        expect(read()).toEqual(want);
        p.dispose();
      }
    }
  });

  test('the byte-level path: events read from the chunk and from held bytes in one push; the reader owns its bytes', () => {
    const p = new SseParser();
    const other = new SseParser();
    expect(p.pushBytes(enc('data: first half ')).length).toBe(0);
    // one event finished from held bytes, two read straight from this chunk (one with two lines)
    const chunk = enc('and the rest \u4e2d\n\ndata: two\n\nevent: t\ndata: three\ndata: \u00e9\n\ndata: four\r\n\r\n');
    const b = p.pushBytes(chunk);
    const want = [['message', 'first half and the rest \u4e2d'], ['message', 'two'], ['t', 'three\n\u00e9'], ['message', 'four']];
    const read = () => Array.from({ length: b.length }, (_, i) => [b.type(i), b.dataText(i)]);
    expect(read()).toEqual(want);
    // neither overwriting the caller's chunk nor another parser's calls on the shared core change them
    chunk.fill(0x78);
    for (let i = 0; i < 50; i++) other.pushBytes(enc(`data: ${'y'.repeat(3000)}\n\n`));
    expect(read()).toEqual(want);
    expect(new TextDecoder().decode(b.encode())).toBe('data: first half and the rest \u4e2d\n\ndata: two\n\nevent: t\ndata: three\ndata: \u00e9\n\ndata: four\n\n');
    p.dispose();
    other.dispose();
  });

  test('the core keeps a large event buffer while large events come, and returns it after 4× its size of input without', () => {
    const p = new SseParser();
    const small0 = p.retainedBytes;
    expect(small0).toBeLessThan(1024);
    const big = enc(`data: ${'x'.repeat(1 << 20)}\n\n`);
    const feed = (bytes: Uint8Array) => { let n = 0; for (let i = 0; i < bytes.length; i += 16384) n += p.pushBytes(bytes.subarray(i, i + 16384)).length; return n; };
    expect(feed(big)).toBe(1);
    const grown = p.retainedBytes;
    expect(grown).toBeGreaterThan(1 << 20);
    expect(grown).toBeLessThan(3 << 20); // growth by 1.5× to 64 KiB, then 2×: at most twice the event
    expect(feed(big)).toBe(1);
    expect(p.retainedBytes).toBe(grown); // reused, not grown again
    // small events: the buffer stays for 4× its size of input, then goes back to the heap
    const small = enc('data: s\n\n'.repeat(1000));
    let fed = 0;
    while (fed < 3.5 * grown) { expect(p.pushBytes(small).length).toBe(1000); fed += small.length; }
    expect(p.retainedBytes).toBe(grown);
    while (fed < 4.5 * grown) { p.pushBytes(small); fed += small.length; }
    expect(p.retainedBytes).toBeLessThan(64 * 1024);
    expect(p.pushBytes(enc('data: after\n\n')).dataText(0)).toBe('after');
  });

  test('the byte reader keeps a large buffer while large events come and drops it after 4× its size without', () => {
    const p = new SseParser();
    const big = enc(`data: ${'x'.repeat(1 << 20)}\n\n`);
    const b = p.pushBytes(big);
    expect(b.dataEnd(0) - b.dataStart(0)).toBe(1 << 20);
    const grown = b.bytes;
    expect(grown.length).toBeGreaterThanOrEqual(1 << 20);
    expect(p.pushBytes(big).bytes).toBe(grown); // reused, not allocated again
    const small = enc('data: {"delta":"hi"}\n\n'.repeat(1000)); // 23 KB
    let pushed = 0;
    while (pushed <= 4 * grown.length) {
      expect(p.pushBytes(small).length).toBe(1000);
      pushed += small.length;
      if (pushed < 4 * grown.length - small.length) expect(b.bytes).toBe(grown);
    }
    expect(p.pushBytes(small).bytes.length).toBeLessThan(64 * 1024);
    expect(b.dataText(999)).toBe('{"delta":"hi"}');
    p.dispose();
  });

  test('hundreds of parsers interleaved on the shared instance never see each other\'s bytes', () => {
    const r = rng(1234);
    const n = 300;
    const streams = Array.from({ length: n }, (_, k) => {
      const parts: string[] = [];
      for (let e = 0; e < 6; e++) {
        const big = r() < 0.2 ? '\u00e9'.repeat(Math.floor(r() * 3000)) : '';
        parts.push(`${r() < 0.3 ? `event: t${k}\n` : ''}${r() < 0.3 ? `id: ${k}-${e}\n` : ''}data: ${k}:${e}${big}\ndata: \u4e2d${k}\n\n`);
      }
      let bytes = enc(parts.join(''));
      if (k % 10 === 3) bytes = concat(bytes.subarray(0, bytes.length >> 1), new Uint8Array([0xff]), bytes.subarray(bytes.length >> 1));
      return bytes;
    });
    const parsers = streams.map(() => new SseParser());
    const got: SseEvent[][] = streams.map(() => []);
    const errors: (number | null)[] = streams.map(() => null);
    const pos = streams.map(() => 0);
    const resetAt = streams.map((s, k) => (k % 10 === 7 ? s.length >> 1 : -1));
    const kept = streams.map(() => '');
    for (let round = 0; pos.some((p, k) => p < streams[k].length); round++) {
      for (let k = 0; k < n; k++) {
        if (pos[k] >= streams[k].length) continue;
        const size = 1 + Math.floor(r() * 97);
        const chunk = streams[k].subarray(pos[k], pos[k] + size);
        if (resetAt[k] >= 0 && pos[k] >= resetAt[k]) {
          // a reconnect midway: the new stream starts clean, with the last event ID kept
          parsers[k].reset();
          kept[k] = parsers[k].lastEventId;
          got[k].length = 0;
          const rest = streams[k].subarray(pos[k]);
          streams[k] = concat(enc('data: restart\n\n'), rest.subarray(rest.indexOf(10) + 1));
          pos[k] = 0;
          resetAt[k] = -1;
          continue;
        }
        pos[k] += size;
        if (errors[k] !== null) continue;
        try { got[k].push(...parsers[k].push(chunk)); } catch (e) { errors[k] = (e as Utf8DecodeError).offset; got[k].push(...(e as { events: SseEvent[] }).events); }
      }
    }
    for (let k = 0; k < n; k++) {
      const bytes = streams[k];
      if (k % 10 === 3) {
        // the bad sequence may begin before the 0xFF (a cut character): where TextDecoder puts U+FFFD
        const text = new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes);
        const bad = enc(text.slice(0, text.indexOf('\uFFFD'))).length;
        expect(bad).toBeGreaterThan(bytes.indexOf(0xff) - 2);
        expect(errors[k]).toBe(bad);
        const lineStart = Math.max(bytes.lastIndexOf(10, bad), bytes.lastIndexOf(13, bad)) + 1;
        expect(got[k]).toEqual(referenceParse(bytes.subarray(0, lineStart)).events);
      } else {
        expect(errors[k]).toBeNull();
        expect(got[k]).toEqual(referenceParse(bytes, { lastEventId: kept[k] }).events);
      }
      parsers[k].dispose();
    }
  });

  test.each(['push', 'pushBytes'] as const)('10,000 parsers each holding a 1 KiB unfinished event fit in 32 MiB (WASM memory + JS heap), %s', (path) => {
    const gc = (globalThis as { gc?: () => void }).gc;
    gc?.();
    const core = getCore();
    const wasm0 = core.x.memory.buffer.byteLength;
    const heap0 = process.memoryUsage().heapUsed;
    const done = enc('data: {"delta":"hello"}\n\n'); // one event delivered first: the byte path's reader exists
    const event = enc(`data: ${'x'.repeat(1023)}\n`); // 1 KiB of data (with its LF) held: no blank line yet
    const parsers: SseParser[] = [];
    for (let i = 0; i < 10_000; i++) {
      const p = new SseParser();
      if (path === 'push') {
        expect(p.push(done).length).toBe(1);
        expect(p.push(event)).toEqual([]);
      } else {
        expect(p.pushBytes(done).length).toBe(1);
        expect(p.pushBytes(event).length).toBe(0);
      }
      parsers.push(p);
    }
    gc?.();
    const wasm = core.x.memory.buffer.byteLength - wasm0;
    const heap = process.memoryUsage().heapUsed - heap0;
    console.log(`10,000 parsers × 1 KiB unfinished event (${path}): WASM memory +${(wasm / 2 ** 20).toFixed(1)} MiB, JS heap +${(heap / 2 ** 20).toFixed(1)} MiB`);
    expect(wasm + Math.max(0, heap)).toBeLessThanOrEqual(32 * 2 ** 20);
    for (const p of parsers) expect(p.pendingBytes).toBe(1024);
    for (const p of parsers) p.dispose();
  });

  test('linear: an 8 MiB line fed in 64-byte pieces: growth copies under 3× the line, late pushes as fast as early ones', () => {
    const p = new SseParser();
    p.push(enc('data: '));
    const work = measureAppends(p, enc('y'.repeat(64)), (8 << 20) / 64);
    const out = p.push(enc('\n\n'));
    expect(out[0].data).toBe('y'.repeat(8 << 20));
    console.log(`8 MiB line in 64 B pieces: ${work.copied} bytes copied growing to ${work.retained}; late/early pushes ${work.lateOverEarly.toFixed(2)}`);
    expect(work.retained).toBeGreaterThanOrEqual(8 << 20);
    expect(work.retained).toBeLessThan(3 * (8 << 20));
    expect(work.copied).toBeLessThan(3 * (8 << 20)); // growing by a fixed step would copy gigabytes
    expect(work.lateOverEarly).toBeLessThan(8); // a rescan of the buffered megabytes: thousands
    p.dispose();
  });
});

describe('encodeSse', () => {
  test('multi-line data becomes several data lines; round trip through the parser', () => {
    expect(encodeSse({ data: 'a\nb\r\nc\rd' })).toBe('data: a\ndata: b\ndata: c\ndata: d\n\n');
    expect(encodeSse({ data: ' x', type: 'delta', id: '7', retry: 1000 })).toBe('event: delta\nid: 7\nretry: 1000\ndata:  x\n\n');
    expect(encodeSse({ data: '', id: '' })).toBe('id\ndata: \n\n');
    const events = [{ data: ' lead', type: 't' }, { data: 'x\ny', id: 'i' }, { data: '' }];
    const p = new SseParser();
    expect(p.push(enc(events.map(encodeSse).join('')))).toEqual([ev(' lead', 't'), ev('x\ny', 'message', 'i'), ev('', 'message', 'i')]);
  });

  test('CR or LF in id or event, NUL in id, a bad retry are TypeErrors', () => {
    expect(() => encodeSse({ data: 'x', id: 'a\nb' })).toThrow(TypeError);
    expect(() => encodeSse({ data: 'x', type: 'a\rb' })).toThrow(TypeError);
    expect(() => encodeSse({ data: 'x', id: 'a\0' })).toThrow(TypeError);
    expect(() => encodeSse({ data: 'x', retry: -1 })).toThrow(TypeError);
    expect(() => encodeSse({ data: 1 as unknown as string })).toThrow(TypeError);
  });
});

describe('SseDecoderStream', () => {
  test('pipes bytes to events; errors after enqueuing the events before the error', async () => {
    const chunks = [enc('data: a\n\nda'), enc('ta: b\n\n')];
    const events: SseEvent[] = [];
    await new ReadableStream<Uint8Array>({ start(c) { for (const x of chunks) c.enqueue(x); c.close(); } })
      .pipeThrough(new SseDecoderStream())
      .pipeTo(new WritableStream({ write(e) { events.push(e); } }));
    expect(events).toEqual([ev('a'), ev('b')]);

    const got: SseEvent[] = [];
    const bad = new ReadableStream<Uint8Array>({ start(c) { c.enqueue(concat(enc('data: ok\n\ndata: '), new Uint8Array([0xff]))); c.close(); } })
      .pipeThrough(new SseDecoderStream())
      .pipeTo(new WritableStream({ write(e) { got.push(e); } }));
    await expect(bad).rejects.toBeInstanceOf(Utf8DecodeError);
    expect(got).toEqual([ev('ok')]);
  });
});
