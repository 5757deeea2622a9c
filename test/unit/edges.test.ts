// The contract at the edges: what happens after an error, at the end of a stream, inside a
// callback, and to a careless caller. Each case failed before its fix.
import { describe, expect, it } from 'vitest';
import {
  DisposedError, LineDecoder, LineDecoderStream, LineLimitError, NdjsonDecoder, ReentrantCallError, SseCallbackError,
  SseDecoderStream, SseLimitError, SseParser, Utf8DecodeError, Utf8Decoder, Utf8DecoderStream, Utf8Validator,
} from '../../bindings/index.js';
import { thrown } from '../helpers/thrown.js';

const enc = (s: string) => new TextEncoder().encode(s);
const b = (...x: number[]) => Uint8Array.from(x);
/** Bytes of a string of code units 0..255, one byte each (\xff stays the byte FF). */
const raw = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));

/** Everything a TransformStream gives before it errors, and its error, to a reader that reads slowly. */
async function drain<I, O>(stream: TransformStream<I, O>, chunks: I[]): Promise<{ out: O[]; error?: unknown }> {
  const writer = stream.writable.getWriter();
  const reader = stream.readable.getReader();
  const out: O[] = [];
  const reading = (async () => {
    for (;;) {
      const r = await reader.read();
      if (r.done) return;
      out.push(r.value);
      await new Promise((resolve) => setTimeout(resolve, 3));
    }
  })();
  for (const c of chunks) writer.write(c).catch(() => {});
  writer.close().catch(() => {});
  try {
    await reading;
    return { out };
  } catch (error) {
    return { out, error };
  }
}

describe('after an error', () => {
  it('Utf8Decoder.decode() starts afresh after a throw, as TextDecoder does', () => {
    const d = new Utf8Decoder({ fatal: true });
    expect(() => d.decode(b(0xc0), { stream: true })).toThrow(Utf8DecodeError);
    expect(() => d.decode(b(0xff), { stream: true })).toThrow(Utf8DecodeError);
    expect(d.decode()).toBe('');
    const e = new Utf8Decoder();
    expect(() => e.decode(b(0xfd, 0xef), { stream: true })).toThrow(Utf8DecodeError);
    expect(e.decode()).toBe('');
    expect(e.decode(b(0xe4, 0xb8), { stream: true }) + e.decode(b(0x96))).toBe('世');
    // the same calls on TextDecoder
    const td = new TextDecoder('utf-8', { fatal: true });
    expect(() => td.decode(b(0xfd, 0xef), { stream: true })).toThrow(TypeError);
    expect(td.decode()).toBe('');
    // push/flush keep their sticky failure
    const p = new Utf8Decoder();
    expect(() => p.push(b(0xff))).toThrow(Utf8DecodeError);
    expect(() => p.flush()).toThrow(Utf8DecodeError);
  });

  it('later throws are copies with the same code and offset, without the output already delivered', () => {
    const p = new SseParser();
    const first = thrown(() => p.push(raw('data: one\n\ndata: \xff')));
    expect(first).toBeInstanceOf(Utf8DecodeError);
    expect([first.code, first.offset, first.events]).toEqual(['ERR_INVALID_UTF8', 17, [{ type: 'message', data: 'one', id: '' }]]);
    for (const call of [() => p.push(enc('data: x\n\n')), () => p.pushBytes(enc('x')), () => p.flush()]) {
      const again = thrown(call);
      expect(again).not.toBe(first);
      expect(again).toBeInstanceOf(Utf8DecodeError);
      expect([again.code, again.offset, again.message, again.events]).toEqual(['ERR_INVALID_UTF8', 17, first.message, []]);
    }
    const l = new LineDecoder({ maxLineBytes: 4 });
    const lim = thrown(() => l.push(enc('ab\ncdefgh\n')));
    expect(lim).toBeInstanceOf(LineLimitError);
    expect(lim.lines).toEqual(['ab']);
    const limAgain = thrown(() => l.push(enc('x\n')));
    expect([limAgain.code, limAgain.offset, limAgain.lines]).toEqual(['ERR_LINE_TOO_LONG', 3, []]);
    const s = new SseParser({ maxEventBytes: 8 });
    const big = thrown(() => s.push(enc('data: a\n\ndata: 123456789\n\n')));
    expect(big).toBeInstanceOf(SseLimitError);
    expect(thrown(() => s.push(enc('')))).toMatchObject({ code: 'ERR_SSE_EVENT_TOO_LARGE', offset: 9, events: [] });
    const n = new NdjsonDecoder();
    expect(thrown(() => n.push(enc('1\nx\n'))).values).toEqual([1]);
    expect(thrown(() => n.push(enc('2\n')))).toMatchObject({ code: 'ERR_NDJSON_PARSE', line: 2, offset: 2, values: [] });
  });

  it('a LineDecoder flush with a truncated character keeps the line before it, names the bytes, and stays failed', () => {
    const d = new LineDecoder();
    expect(d.push(enc('abc\nde'))).toEqual(['abc']);
    expect(d.push(b(0xf0, 0x9f, 0x98))).toEqual([]);
    const e = thrown(() => d.flush());
    expect(e).toBeInstanceOf(Utf8DecodeError);
    expect([e.code, e.offset, e.lines, Array.from(e.bytes as Uint8Array)]).toEqual(['ERR_TRUNCATED_UTF8', 6, ['de'], [0xf0, 0x9f, 0x98]]);
    expect(e.message).toBe('Truncated UTF-8: the stream ended inside a character that starts at byte offset 6 (F0 9F 98)');
    const again = thrown(() => d.flush());
    expect([again.code, again.offset, again.lines]).toEqual(['ERR_TRUNCATED_UTF8', 6, []]);
    d.reset();
    expect(d.push(enc('ok\n'))).toEqual(['ok']);
    // NDJSON: the value of the line before it
    const n = new NdjsonDecoder();
    n.push(enc('1\n[2]'));
    n.push(b(0xe4));
    expect(thrown(() => n.flush())).toMatchObject({ code: 'ERR_TRUNCATED_UTF8', offset: 5, lines: [[2]] });
  });

  it('truncated-character errors of SseParser name their bytes', () => {
    const p = new SseParser();
    p.push(enc('data: x'));
    p.push(b(0xe4, 0xb8));
    const e = thrown(() => p.flush());
    expect([e.code, e.offset, Array.from(e.bytes as Uint8Array)]).toEqual(['ERR_TRUNCATED_UTF8', 7, [0xe4, 0xb8]]);
    expect(e.message).toContain('(E4 B8)');
  });
});

describe('streams enqueue what was decoded before an error in the same chunk', () => {
  const chunk = raw('data: one\n\nline2\n\nhello \xff\n\n');
  it('SseDecoderStream, LineDecoderStream, Utf8DecoderStream', async () => {
    const sse = await drain(new SseDecoderStream(), [chunk]);
    expect(sse.out.map((e) => e.data)).toEqual(['one']);
    expect(sse.error).toBeInstanceOf(Utf8DecodeError);
    const lines = await drain(new LineDecoderStream(), [chunk]);
    expect(lines.out).toEqual(['data: one', '', 'line2', '']);
    expect(lines.error).toBeInstanceOf(Utf8DecodeError);
    const text = await drain(new Utf8DecoderStream(), [chunk]);
    expect(text.out).toEqual(['data: one\n\nline2\n\nhello ']);
    expect((text.error as Utf8DecodeError).offset).toBe(24);
    // and at the end: the line before a truncated character
    const end = await drain(new LineDecoderStream(), [enc('a\nb'), b(0xe4)]);
    expect(end.out).toEqual(['a', 'b']);
    expect((end.error as Utf8DecodeError).code).toBe('ERR_TRUNCATED_UTF8');
  });
});

describe('onComment', () => {
  it('a handler that throws stops the parser; the events of the call are on the error', () => {
    const boom = new Error('boom');
    const p = new SseParser({ onComment: () => { throw boom; } });
    const e = thrown(() => p.push(enc('data: a\n\n: ping\n\ndata: b\n\n')));
    expect(e).toBeInstanceOf(SseCallbackError);
    expect([e.code, e.cause, e.events]).toEqual(['ERR_SSE_CALLBACK', boom, [{ type: 'message', data: 'a', id: '' }, { type: 'message', data: 'b', id: '' }]]);
    expect(thrown(() => p.push(enc('data: c\n\n')))).toMatchObject({ code: 'ERR_SSE_CALLBACK', events: [] });
    p.reset();
    const q = new SseParser({ onComment: () => { throw boom; } });
    const r = thrown(() => q.pushBytes(enc('data: a\n\n: ping\n')));
    expect((r.events as { length: number; dataText(i: number): string }).dataText(0)).toBe('a');
  });

  it('a call on the parser from inside the handler is refused', () => {
    let inner: unknown;
    const p = new SseParser({
      onComment: () => {
        try {
          p.pushBytes(enc('data: inner\n\n'));
        } catch (e) {
          inner = e;
        }
      },
    });
    const r = p.pushBytes(enc('data: outer\n\n: ping\n'));
    expect(inner).toBeInstanceOf(ReentrantCallError);
    expect((inner as ReentrantCallError).code).toBe('ERR_REENTRANT');
    expect((inner as Error).message).toMatch(/^SseParser\.pushBytes\(\) was called from inside onComment/);
    expect([r.length, r.dataText(0)]).toEqual([1, 'outer']);
    expect(p.push(enc('data: next\n\n'))).toEqual([{ type: 'message', data: 'next', id: '' }]);
  });
});

describe('careless callers', () => {
  it('options of the wrong type, unknown options and habits from other libraries', () => {
    const msg = (f: () => unknown) => {
      const e = thrown(f);
      expect(e).toBeInstanceOf(TypeError);
      return e.message;
    };
    expect(msg(() => new Utf8Decoder({ fatal: 'no' as never }))).toBe("Utf8Decoder: fatal must be true or false, got 'no'");
    expect(msg(() => new Utf8Validator(5 as never))).toBe('Utf8Validator: options must be an object, got 5');
    expect(msg(() => new Utf8Decoder('utf-8' as never))).toContain('these decoders read UTF-8 only');
    expect(msg(() => new Utf8Decoder({ stream: true } as never))).toContain('stream is an option of decode(input, { stream: true })');
    expect(msg(() => new SseParser({ onEvent: () => {} } as never))).toContain('events are returned by push(chunk)');
    expect(msg(() => new SseParser({ onEvent: () => {} } as never))).toContain('onEvent');
    expect(msg(() => new SseParser({ maxEventByte: 5 } as never))).toContain('maxEventBytes');
    expect(msg(() => new SseParser({ eof: 'keep' as never }))).toContain("eof must be 'discard' or 'dispatch', got 'keep'");
    expect(msg(() => new SseParser({ onComment: 'x' as never }))).toBe("SseParser: onComment must be a function, got 'x'");
    expect(msg(() => new LineDecoder({ maxEventBytes: 5 } as never))).toContain('maxLineBytes');
    expect(msg(() => new NdjsonDecoder({ maxLineBytes: '9' as never }))).toContain('NdjsonDecoder: maxLineBytes must be an integer number of bytes');
  });

  it('after dispose(), calls throw DisposedError with its code', () => {
    for (const d of [new Utf8Decoder(), new LineDecoder(), new SseParser()]) {
      d.dispose();
      const e = thrown(() => d.push(enc('x\n')));
      expect(e).toBeInstanceOf(DisposedError);
      expect(e.code).toBe('ERR_DISPOSED');
    }
  });
});
