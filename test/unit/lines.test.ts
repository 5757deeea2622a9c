// LineDecoder, NdjsonDecoder and LineDecoderStream: terminators across chunks, errors with
// offsets, limits, lines longer than the output window, linearity.
import { describe, expect, test } from 'vitest';
import {
  LineDecoder, LineDecoderStream, LineLimitError, NdjsonDecoder, NdjsonParseError, Utf8DecodeError, wasmBackend,
} from '../../bindings/index.js';
import { measureAppends } from '../helpers/linear.js';
import { concat, rng } from '../helpers/random.js';
import { outcome } from '../helpers/thrown.js';

const enc = (s: string) => new TextEncoder().encode(s);
const feed = (d: LineDecoder, parts: (string | Uint8Array)[]) => [...parts.flatMap((p) => d.push(typeof p === 'string' ? enc(p) : p)), ...d.flush()];

describe(`LineDecoder (${wasmBackend()})`, () => {
  test('LF, CRLF, lone CR, and a CRLF split across chunks', () => {
    expect(feed(new LineDecoder(), ['a\nb\r\nc\rd\r', '\ne\r', 'f\n\n\r\r\n'])).toEqual(['a', 'b', 'c', 'd', 'e', 'f', '', '', '']);
    expect(feed(new LineDecoder(), ['x\r', '', '\n', 'y'])).toEqual(['x', 'y']);
    expect(feed(new LineDecoder(), ['x\r', new Uint8Array([0xc3]), new Uint8Array([0xa9, 0x0a])])).toEqual(['x', '\u00e9']);
    expect(feed(new LineDecoder(), ['\uFEFFone\n\uFEFFtwo'])).toEqual(['one', '\uFEFFtwo']);
  });

  test('every split of a mixed input gives the same lines', () => {
    const bytes = enc('h\u00e9llo\r\nw\u00f6rld\r\r\n\u4e2d\u{1F600}\nend\r');
    const want = ['h\u00e9llo', 'w\u00f6rld', '', '\u4e2d\u{1F600}', 'end'];
    for (let i = 0; i <= bytes.length; i++) {
      for (let j = i; j <= bytes.length; j += 3) {
        expect(feed(new LineDecoder(), [bytes.subarray(0, i), bytes.subarray(i, j), bytes.subarray(j)]), `${i}/${j}`).toEqual(want);
      }
    }
  });

  test('invalid UTF-8: the absolute offset, the lines before it on the error; replacement when not fatal', () => {
    const d = new LineDecoder();
    expect(d.push(enc('one\ntw'))).toEqual(['one']);
    let err: unknown;
    try { d.push(new Uint8Array([0x6f, 0x0a, 0x74, 0x68, 0xc3, 0x28, 0x0a])); } catch (e) { err = e; }
    expect(err).toBeInstanceOf(Utf8DecodeError);
    expect(err).toMatchObject({ code: 'ERR_INVALID_UTF8', offset: 10, lines: ['two'] });
    // later calls throw the same error again, without the lines the first throw delivered
    expect(() => d.push(enc('x\n'))).toThrow(expect.objectContaining({ code: 'ERR_INVALID_UTF8', offset: 10, lines: [] }));
    d.reset();
    expect(feed(d, ['ok\n'])).toEqual(['ok']);
    expect(feed(new LineDecoder({ fatal: false }), [new Uint8Array([0x61, 0xc3]), new Uint8Array([0x28, 0x0a, 0xe2, 0x82])])).toEqual(['a\uFFFD(', '\uFFFD']);
    const t = new LineDecoder();
    t.push(enc('abc\nde'));
    t.push(new Uint8Array([0xf0, 0x9f, 0x98]));
    expect(() => t.flush()).toThrow(expect.objectContaining({ code: 'ERR_TRUNCATED_UTF8', offset: 6 }));
  });

  test('maxLineBytes: LineLimitError with the line start, before buffering past the limit', () => {
    const d = new LineDecoder({ maxLineBytes: 10 });
    expect(d.push(enc('0123456789\nabc'))).toEqual(['0123456789']);
    expect(d.pendingBytes).toBe(3);
    let err: unknown;
    try { d.push(enc('defghijk')); } catch (e) { err = e; }
    expect(err).toBeInstanceOf(LineLimitError);
    expect(err).toMatchObject({ code: 'ERR_LINE_TOO_LONG', offset: 11, limit: 10, lines: [] });
    expect(() => d.push(enc('\n'))).toThrow(err as Error);
    d.reset();
    expect(() => d.push(enc('ok\n01234567890\n'))).toThrow(expect.objectContaining({ offset: 3, lines: ['ok'] }));
    expect(() => new LineDecoder({ maxLineBytes: 0 })).toThrow(TypeError);
  });

  test('a line past its limit and an invalid byte after it in one read: the same first error as the bytes one at a time', () => {
    const r = rng(41);
    let both = 0;
    for (let t = 0; t < 400; t++) {
      const text = Array.from({ length: 1 + Math.floor(r() * 6) }, () => 'é'.repeat(Math.floor(r() * 20)) + (r() < 0.5 ? '\n' : '\r\n')).join('');
      const good = enc(text);
      const at = Math.floor(r() * good.length);
      const bytes = concat([good.subarray(0, at), new Uint8Array([0xff]), good.subarray(at)]);
      const max = 8 + Math.floor(r() * 30);
      const whole = outcome(new LineDecoder({ maxLineBytes: max }), [bytes], 'lines');
      const drip = outcome(new LineDecoder({ maxLineBytes: max }), Array.from(bytes, (b) => new Uint8Array([b])), 'lines');
      expect(whole, `case ${t} (seed 41)`).toEqual(drip);
      if (whole.err?.startsWith('ERR_LINE_TOO_LONG') && bytes.indexOf(0xff) > 0) both++;
    }
    expect(both).toBeGreaterThan(20); // reads where the limit comes before the invalid byte
  });

  test('lines longer than the output window and than the input window', () => {
    for (const line of ['a'.repeat(300_000), '\u00e9\u4e2d'.repeat(50_000)]) {
      const bytes = enc(`x\n${line}\ny\n${line}`);
      for (const size of [64, 5000, 70_000, bytes.length]) {
        const d = new LineDecoder();
        const out: string[] = [];
        for (let i = 0; i < bytes.length; i += size) out.push(...d.push(bytes.subarray(i, i + size)));
        out.push(...d.flush());
        expect(out.length, `${size}`).toBe(4);
        expect(out.map((l) => l.length), `${size}`).toEqual([1, line.length, 1, line.length]);
        expect(out[1] === line && out[3] === line && out[0] === 'x' && out[2] === 'y', `${size}`).toBe(true);
      }
    }
  });

  test('retainedBytes: the record and the unfinished line; a large line buffer is returned at the next push', () => {
    const d = new LineDecoder();
    expect(d.retainedBytes).toBeGreaterThan(0);
    expect(d.retainedBytes).toBeLessThan(256);
    const piece = enc('x'.repeat(16384));
    for (let i = 0; i < 64; i++) expect(d.push(piece)).toEqual([]);
    expect(d.pendingBytes).toBe(1 << 20);
    expect(d.retainedBytes).toBeGreaterThan(1 << 20);
    expect(d.push(enc('\n'))).toEqual(['x'.repeat(1 << 20)]);
    expect(d.push(enc('a\n'))).toEqual(['a']);
    expect(d.retainedBytes).toBeLessThan(256);
    d.dispose();
    expect(d.retainedBytes).toBe(0);
  });

  test('linear: an 8 MiB line in 64-byte pieces: growth copies under 3× the line, late pushes as fast as early ones', () => {
    const d = new LineDecoder();
    const work = measureAppends(d, enc('z'.repeat(64)), (8 << 20) / 64);
    expect(d.push(enc('\n'))).toEqual(['z'.repeat(8 << 20)]);
    expect(work.retained).toBeGreaterThanOrEqual(8 << 20);
    expect(work.retained).toBeLessThan(3 * (8 << 20));
    expect(work.copied).toBeLessThan(3 * (8 << 20));
    expect(work.lateOverEarly).toBeLessThan(8);
    d.dispose();
  });
});

describe(`NdjsonDecoder (${wasmBackend()})`, () => {
  test('values of non-blank lines across chunks', () => {
    const d = new NdjsonDecoder();
    expect(d.push(enc('{"a":1}\n\n  \r\n[2,'))).toEqual([{ a: 1 }]);
    expect(d.push(enc('3]\r'))).toEqual([[2, 3]]);
    expect(d.push(enc('\n"\u00e9"\n4'))).toEqual(['\u00e9']);
    expect(d.flush()).toEqual([4]);
  });

  test('a bad line: 1-based line number, absolute offset, earlier values kept on the error', () => {
    const d = new NdjsonDecoder();
    expect(d.push(enc('1\n\n2\n'))).toEqual([1, 2]);
    let err: unknown;
    try { d.push(enc('3\n{bad}\n4\n')); } catch (e) { err = e; }
    expect(err).toBeInstanceOf(NdjsonParseError);
    expect(err).toMatchObject({ code: 'ERR_NDJSON_PARSE', line: 5, offset: 7, text: '{bad}', values: [3] });
    expect(() => d.push(enc('5\n'))).toThrow(expect.objectContaining({ code: 'ERR_NDJSON_PARSE', line: 5, offset: 7, values: [] }));
    d.reset();
    expect(d.push(enc('5\n'))).toEqual([5]);
  });

  test('a framing error keeps the values parsed before it', () => {
    const d = new NdjsonDecoder({ maxLineBytes: 8 });
    expect(() => d.push(enc('1\n"two"\n"three-long"\n'))).toThrow(expect.objectContaining({ name: 'LineLimitError', lines: [1, 'two'] }));
  });
});

describe('LineDecoderStream', () => {
  test('pipes bytes to lines', async () => {
    const lines: string[] = [];
    await new ReadableStream<Uint8Array>({ start(c) { c.enqueue(enc('a\r')); c.enqueue(enc('\nb\nc')); c.close(); } })
      .pipeThrough(new LineDecoderStream())
      .pipeTo(new WritableStream({ write(l) { lines.push(l); } }));
    expect(lines).toEqual(['a', 'b', 'c']);
  });
});
