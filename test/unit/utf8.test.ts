import { describe, expect, it } from 'vitest';
import { Utf8DecodeError, Utf8Decoder, Utf8DecoderStream, Utf8Validator, readChunks, wasmBackend } from '../../bindings/index.js';
import { standardChunkings } from '../helpers/random.js';
import { decodeWith, replacingOracle, replacingOurs, strictOracle } from '../helpers/utf8-oracle.js';

const bytes = (...b: number[]) => new Uint8Array(b);
const utf8 = (s: string) => new TextEncoder().encode(s);

function thrown(f: () => unknown): Utf8DecodeError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(Utf8DecodeError);
    return e as Utf8DecodeError;
  }
  throw new Error('expected a Utf8DecodeError');
}

/** `make`'s view (or the buffer itself) of a buffer then given away (transferred), as a producer that posts or reuses its buffer leaves it. */
function givenAway<T>(make: (b: ArrayBuffer) => T): T {
  const b = utf8('gone').buffer as ArrayBuffer;
  const v = make(b);
  structuredClone(b, { transfer: [b] });
  return v;
}
const detached = () => givenAway((b) => new Uint8Array(b));
const detachedBuffer = () => givenAway((b) => b);

describe('backend', () => {
  it('runs the build the test project asked for', () => {
    expect(wasmBackend()).toBe(process.env.SEAM_WASM);
  });
});

describe('Utf8Decoder: valid input', () => {
  it('decodes ASCII, 2-, 3- and 4-byte characters', () => {
    const d = new Utf8Decoder();
    expect(d.push(utf8('plain ascii'))).toBe('plain ascii');
    expect(d.push(utf8('é ß ж'))).toBe('é ß ж');
    expect(d.push(utf8('世界 한국어 ∑'))).toBe('世界 한국어 ∑');
    expect(d.push(utf8('😀👩‍👩‍👧 𝄞'))).toBe('😀👩‍👩‍👧 𝄞');
    expect(d.flush()).toBe('');
    expect(d.encoding).toBe('utf-8');
    expect(d.fatal).toBe(true);
    expect(d.ignoreBOM).toBe(false);
  });

  it('holds back an incomplete tail of at most 3 bytes and counts bytes', () => {
    const d = new Utf8Decoder();
    const e = utf8('a😀'); // 61 F0 9F 98 80
    expect(d.push(e.subarray(0, 2))).toBe('a');
    expect(d.pendingBytes).toBe(1);
    expect(d.push(e.subarray(2, 4))).toBe('');
    expect(d.pendingBytes).toBe(3);
    expect(d.bytesIn).toBe(4);
    expect(d.push(e.subarray(4))).toBe('😀');
    expect(d.pendingBytes).toBe(0);
    expect(d.bytesIn).toBe(5);
    expect(d.flush()).toBe('');
    expect(d.bytesIn).toBe(0);
  });

  it('handles empty chunks anywhere', () => {
    const d = new Utf8Decoder();
    expect(d.push(bytes())).toBe('');
    expect(d.push(bytes(0xe4))).toBe('');
    expect(d.push(bytes())).toBe('');
    expect(d.push(bytes(0xb8, 0x96))).toBe('世');
    expect(d.flush()).toBe('');
  });

  it('decodes chunks larger than the input window, across the piece boundaries', () => {
    const text = '世界😀é'.repeat(30_000) + 'end'; // ~330 KB: several windows, cuts inside characters
    const d = new Utf8Decoder();
    expect(d.push(utf8(text)) + d.flush()).toBe(text);
    const ascii = 'x'.repeat(200_001);
    expect(d.push(utf8(ascii)) + d.flush()).toBe(ascii);
  });

  it('drops one leading BOM per stream, also when it is split', () => {
    const d = new Utf8Decoder();
    expect(d.push(bytes(0xef))).toBe('');
    expect(d.push(bytes(0xbb))).toBe('');
    expect(d.push(bytes(0xbf, 0x41, 0xef, 0xbb, 0xbf))).toBe('A\uFEFF');
    expect(d.flush()).toBe('');
    // a new stream after flush: the BOM is dropped again
    expect(d.push(bytes(0xef, 0xbb, 0xbf, 0xef, 0xbb, 0xbf, 0x42))).toBe('\uFEFFB');
    expect(d.flush()).toBe('');
  });

  it('keeps the BOM with ignoreBOM', () => {
    const d = new Utf8Decoder({ ignoreBOM: true });
    expect(d.push(bytes(0xef, 0xbb, 0xbf, 0x41)) + d.flush()).toBe('\uFEFFA');
  });

  it('a BOM-like prefix that turns out not to be one is decoded as text', () => {
    const d = new Utf8Decoder({ fatal: false });
    expect(d.push(bytes(0xef, 0xbb))).toBe('');
    expect(d.push(bytes(0x41))).toBe('\uFFFDA');
    expect(d.flush()).toBe('');
  });
});

describe('Utf8Decoder: the transcoder at every alignment', () => {
  // The SIMD transcoder works on 16-byte blocks, the last bytes of a run on the block that ends there;
  // a character may start at any byte of a block, a 4-byte one's low surrogate may fall into the
  // next block, and a block may begin inside a character. Each mix below is shifted through
  // every offset by an ASCII prefix and cut to every length, each run decoded in one chunk.
  const mixes = [
    '😀 🙏🏽 👩‍💻 🇯🇵 ❤️ 🎉 👨‍👩‍👧‍👦 🏳️‍🌈 ✨🔥🤖',
    'the 模型 stream 😀 é token 字符 ü delta 🚀 ß',
    'é€😀aб中𝄞ß',
    '😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀',
    'ab中文ab中文ab中文ab中文ab中文ab中文',
    'ж\u0800\uffff\u{10000}\u{10ffff}\u07ff\x7f\u0080\ud7ff\ue000',
    // 2-byte characters up to a 3- or 4-byte one (the block of 2-byte leads whose last lead starts
    // a longer character), and ASCII next to the largest BMP units and surrogates
    'ééééééé中ééééééé😀ééééééé\uffffé',
    'a\uffffb\ufff0c😀d\u{10ffff}e\ue000\x7f',
  ];
  it.each(mixes)('%s', (mix) => {
    const td = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
    for (let shift = 0; shift < 17; shift++) {
      const all = utf8('x'.repeat(shift) + mix + mix);
      for (let len = 0; len <= all.length; len++) {
        if (len < all.length && (all[len] & 0xc0) === 0x80) continue; // whole characters only
        const run = all.subarray(0, len);
        const d = new Utf8Decoder({ ignoreBOM: true });
        expect(d.push(run)).toBe(td.decode(run));
      }
    }
  });
});

describe('Utf8Decoder: validation of a run\'s last block at every length', () => {
  // The SIMD validator checks a run's last partial block with its bytes from the run's end on
  // masked to zero; every length and position of a bad sequence in it, and before it.
  const bad = [[0xff], [0x80], [0xe4, 0xb8, 0x61], [0xf0, 0x9f, 0x98, 0x61], [0xc3], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80]];
  it('finds a bad sequence at every position, in one chunk, as TextDecoder does', () => {
    const mix = utf8('aé中😀'.repeat(20));
    for (let len = 1; len <= 50; len++) {
      for (let at = 0; at < len; at++) {
        // whole characters of a mix before the bad sequence, ASCII after it
        let whole = at;
        while (whole > 0 && (mix[whole] & 0xc0) === 0x80) whole--;
        for (const seq of bad) {
          const b = new Uint8Array(len).fill(0x61);
          b.set(mix.subarray(0, whole));
          b.set(seq.slice(0, len - at), at);
          expect(decodeWith(new Utf8Decoder(), [b])).toEqual(strictOracle(b));
        }
      }
    }
  });
});

describe('Utf8Decoder: strict errors', () => {
  it('reports an invalid byte with its absolute offset and the text before it', () => {
    const d = new Utf8Decoder();
    expect(d.push(utf8('héllo '))).toBe('héllo ');
    const e = thrown(() => d.push(bytes(0x77, 0x6f, 0xff, 0x72)));
    expect(e.code).toBe('ERR_INVALID_UTF8');
    expect(e.offset).toBe(9);
    expect(e.text).toBe('wo');
    expect(e.message).toBe('Invalid UTF-8 at byte offset 9 (bytes from there: FF 72)');
    expect(e).toBeInstanceOf(TypeError);
  });

  it('an error in a sequence started in the previous chunk points at its lead byte', () => {
    const d = new Utf8Decoder();
    expect(d.push(bytes(0x61, 0x62, 0xe4, 0xb8))).toBe('ab');
    const e = thrown(() => d.push(bytes(0x41)));
    expect(e.offset).toBe(2);
    expect(e.text).toBe('');
  });

  it.each([
    ['overlong 2-byte', [0xc0, 0xaf], 0],
    ['overlong 3-byte', [0x41, 0xe0, 0x80, 0xaf], 1],
    ['overlong 4-byte', [0xf0, 0x80, 0x80, 0xaf], 0],
    ['surrogate', [0x41, 0x42, 0xed, 0xa0, 0x80], 2],
    ['above U+10FFFF', [0xf4, 0x90, 0x80, 0x80], 0],
    ['F5 lead', [0xf5, 0x80, 0x80, 0x80], 0],
    ['stray continuation', [0x41, 0x80], 1],
    ['lead then ASCII', [0xc3, 0x41], 0],
    ['3-byte lead cut by a lead', [0xe4, 0xb8, 0xe4, 0xb8, 0x96], 0],
    ['too many continuations', [0xc3, 0xa9, 0xa9], 2],
  ])('%s', (_name, input, offset) => {
    const e = thrown(() => new Utf8Decoder().push(bytes(...input)));
    expect(e.code).toBe('ERR_INVALID_UTF8');
    expect(e.offset).toBe(offset);
  });

  it('an invalid partial sequence at the end of a chunk fails at once, as TextDecoder does', () => {
    const td = new TextDecoder('utf-8', { fatal: true });
    expect(() => td.decode(bytes(0x41, 0xe0, 0x80), { stream: true })).toThrow(TypeError);
    const e = thrown(() => new Utf8Decoder().push(bytes(0x41, 0xe0, 0x80)));
    expect(e.offset).toBe(1);
    expect(e.text).toBe('A');
  });

  it('reports a truncated character at flush with the offset of its lead', () => {
    const d = new Utf8Decoder();
    expect(d.push(bytes(0x41, 0x42, 0xf0, 0x9f, 0x98))).toBe('AB');
    const e = thrown(() => d.flush());
    expect(e.code).toBe('ERR_TRUNCATED_UTF8');
    expect(e.offset).toBe(2);
    expect(e.text).toBe('');
    expect(Array.from(e.bytes)).toEqual([0xf0, 0x9f, 0x98]);
  });

  it('stays failed until reset, then decodes a new stream from offset 0', () => {
    const d = new Utf8Decoder();
    const first = thrown(() => d.push(bytes(0x41, 0xff)));
    expect(first.text).toBe('A');
    // later calls throw it again without the text the first throw delivered
    const later = thrown(() => d.push(utf8('more')));
    expect(later).not.toBe(first);
    expect([later.code, later.offset, later.text, Array.from(later.bytes)]).toEqual(['ERR_INVALID_UTF8', 1, '', [0xff]]);
    expect(thrown(() => d.flush())).toBe(later);
    d.reset();
    expect(d.bytesIn).toBe(0);
    expect(d.push(utf8('fine')) + d.flush()).toBe('fine');
    const again = thrown(() => d.push(bytes(0x80)));
    expect(again.offset).toBe(0);
  });

  it('offsets keep counting across many chunks and window-sized pieces', () => {
    const d = new Utf8Decoder();
    const big = utf8('界'.repeat(50_000)); // 150,000 bytes
    expect(d.push(big)).toBe('界'.repeat(50_000));
    const bad = new Uint8Array(100_000).fill(0x61);
    bad[99_990] = 0xc0;
    const e = thrown(() => d.push(bad));
    expect(e.offset).toBe(150_000 + 99_990);
    expect(e.text).toBe('a'.repeat(99_990)); // all the text of this call before the bad byte, across pieces
  });

  it('rejects what is not bytes with a TypeError that says what was expected', () => {
    const d = new Utf8Decoder();
    expect(() => d.push('text' as unknown as Uint8Array)).toThrow(
      'Utf8Decoder.push() expects a Uint8Array (or Buffer) of bytes, got a string. Encode it first (new TextEncoder().encode(text)), or skip decoding: it is already text.',
    );
    expect(() => d.push([1, 2] as unknown as Uint8Array)).toThrow('got an array');
    expect(() => d.push(undefined as unknown as Uint8Array)).toThrow('got undefined');
    expect(() => new Utf8Decoder(5 as never)).toThrow(TypeError);
  });

  it('accepts Node Buffers', () => {
    expect(new Utf8Decoder().push(Buffer.from('büffer'))).toBe('büffer');
  });
});

describe('Utf8Decoder: replacement (fatal: false)', () => {
  it.each([
    [[0x41, 0x80, 0x42]],
    [[0xc0, 0xaf, 0xe0, 0x80, 0xbf, 0xf0, 0x81, 0x82, 0x41]],
    [[0xed, 0xa0, 0x80, 0xed, 0xbf, 0xbf, 0xed, 0xaf, 0x41]],
    [[0xf4, 0x91, 0x92, 0x93, 0xff, 0x41, 0x80, 0xbf, 0x42]],
    [[0xe1, 0x80, 0xe2, 0xf0, 0x91, 0x92, 0xf1, 0xbf, 0x41]],
    [[0xf0, 0x9f, 0x98]],
    [[0xef, 0xbb, 0xbf, 0xef, 0xbb, 0xbf]],
  ])('equals TextDecoder for %j at every chunking', (input) => {
    const b = bytes(...input);
    for (const pieces of standardChunkings(b)) {
      expect(replacingOurs(pieces)).toEqual(replacingOracle(pieces));
    }
  });

  it('one U+FFFD per maximal subpart (Unicode 3.9 example)', () => {
    const b = bytes(0x61, 0xf1, 0x80, 0x80, 0xe1, 0x80, 0xc2, 0x62, 0x80, 0x63, 0x80, 0xbf, 0x64);
    expect(new Utf8Decoder({ fatal: false }).decode(b)).toBe('a\uFFFD\uFFFD\uFFFDb\uFFFDc\uFFFD\uFFFDd');
  });
});

describe('Utf8Decoder.decode: the TextDecoder contract', () => {
  it('streams with stream: true and flushes without it', () => {
    const d = new Utf8Decoder();
    const e = utf8('€uro');
    expect(d.decode(e.subarray(0, 2), { stream: true })).toBe('');
    expect(d.decode(e.subarray(2), { stream: true })).toBe('€uro');
    expect(d.decode()).toBe('');
    expect(d.decode(e.buffer.slice(0, 3))).toBe('€');
    expect(d.decode(new DataView(e.buffer, 3))).toBe('uro');
  });

  it('a non-streaming call starts fresh after an error, like TextDecoder', () => {
    const d = new Utf8Decoder();
    expect(() => d.decode(bytes(0xff))).toThrow(Utf8DecodeError);
    expect(d.decode(utf8('ok'))).toBe('ok');
  });

  it('a detached buffer, or a view of one, is no bytes, as TextDecoder reads it (it was an engine TypeError from copying it)', () => {
    for (const input of [detached(), detachedBuffer(), givenAway((b) => new DataView(b)), givenAway((b) => new Uint16Array(b, 2))]) {
      const d = new Utf8Decoder();
      expect(d.decode(utf8('a'), { stream: true }) + d.decode(input, { stream: true }) + d.decode(utf8('b'))).toBe(new TextDecoder().decode(input) + 'ab');
    }
  });

  it('truncation without stream is an error in strict mode and U+FFFD otherwise', () => {
    expect(() => new Utf8Decoder().decode(bytes(0xe4, 0xb8))).toThrow('Truncated UTF-8');
    expect(new Utf8Decoder({ fatal: false }).decode(bytes(0xe4, 0xb8))).toBe('\uFFFD');
  });
});

describe('Utf8Validator', () => {
  it('validates without building text and reports the same errors', () => {
    const v = new Utf8Validator();
    v.push(utf8('ok 世'));
    v.push(bytes(0xe4, 0xb8));
    expect(v.pendingBytes).toBe(2);
    v.push(bytes(0x96));
    v.flush();
    v.push(bytes(0x41, 0x42));
    const e = thrown(() => v.push(bytes(0x43, 0xed, 0xa0, 0x80)));
    expect(e.offset).toBe(3);
    expect(e.code).toBe('ERR_INVALID_UTF8');
    v.reset();
    v.push(bytes(0xf0));
    expect(thrown(() => v.flush()).code).toBe('ERR_TRUNCATED_UTF8');
  });
});

describe('Utf8DecoderStream', () => {
  it('decodes a byte stream cut anywhere, like TextDecoderStream', async () => {
    const text = 'data: {"delta":"日本語 😀"}\n\n';
    const b = utf8(text);
    const source = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < b.length; i += 5) c.enqueue(b.subarray(i, i + 5));
        c.close();
      },
    });
    let out = '';
    const reader = source.pipeThrough(new Utf8DecoderStream()).getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) out += r.value;
    expect(out).toBe(text);
  });

  it('takes what TextDecoderStream takes: an ArrayBuffer, any view, a detached buffer as no bytes; a string is a TypeError naming the stream', async () => {
    const e = utf8('€');
    const chunks: unknown[] = [utf8('a'), e.buffer.slice(0, 1), new DataView(e.buffer, 1, 1), detached(), detachedBuffer(), givenAway((b) => new DataView(b, 1)), new Uint8Array(e.buffer, 2), new Uint16Array(utf8('bc').buffer)];
    const decode = async (stream: TransformStream<never, string>) => {
      const w = stream.writable.getWriter();
      const reading = (async () => { let out = ''; for await (const x of readChunks(stream.readable)) out += x; return out; })();
      for (const c of chunks) await w.write(c as never);
      await w.close();
      return reading;
    };
    expect(await decode(new TextDecoderStream() as never)).toBe('a€bc');
    expect(await decode(new Utf8DecoderStream() as never)).toBe('a€bc');
    const s = new Utf8DecoderStream();
    const w = s.writable.getWriter();
    const reading = s.readable.getReader().read().then(() => undefined, (e: unknown) => e);
    const written = await w.write('text' as never).then(() => undefined, (e: unknown) => e);
    expect(written).toBeInstanceOf(TypeError);
    expect((written as Error).message).toBe('Utf8DecoderStream expects an ArrayBuffer or an ArrayBuffer view, got a string. Encode it first (new TextEncoder().encode(text)), or skip decoding: it is already text.');
    expect(await reading).toBe(written);
  });

  it('errors the stream on invalid input', async () => {
    const source = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(bytes(0x41));
        c.enqueue(bytes(0xc3));
        c.close();
      },
    });
    const reader = source.pipeThrough(new Utf8DecoderStream()).getReader();
    expect(await reader.read()).toEqual({ done: false, value: 'A' });
    await expect(reader.read()).rejects.toMatchObject({ code: 'ERR_TRUNCATED_UTF8', offset: 1 });
  });
});

describe('strict oracle agrees on fixed cases', () => {
  it.each([
    [[0x41, 0xe4, 0xb8]],
    [[0x41, 0xe4, 0xb8, 0x41]],
    [[0xef, 0xbb, 0xbf, 0x41, 0xff]],
    [[0xf0, 0x90, 0x80, 0x80, 0xf0, 0x80]],
  ])('%j at every chunking', (input) => {
    const b = bytes(...input);
    const want = strictOracle(b);
    for (const pieces of standardChunkings(b)) expect(decodeWith(new Utf8Decoder(), pieces)).toEqual(want);
  });
});
