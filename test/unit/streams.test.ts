// The batch streams (one array per push), against the decoders' own push/flush on every way of
// cutting a stream in two and on seeded random cuttings; their error path; readChunks.
import { describe, expect, it } from 'vitest';
import {
  LineBatchDecoderStream, LineDecoder, LineDecoderStream, ModelPartStream, ModelTextStream, SseBatchDecoderStream, SseDecoderStream, SseParser,
  SseRelayStream, Utf8DecodeError, Utf8DecoderStream, readChunks,
} from '../../bindings/index.js';
import { SEED, cut, randomCuts, rng } from '../helpers/random.js';

const enc = (s: string) => new TextEncoder().encode(s);
const stream = 'data: a\r\n\r\nid: 7\nevent: x\ndata: 世界 👩‍💻\ndata: e\u0301\n\n: ping\n\ndata: last\n\n';
const bytes = enc(stream);

const from = (chunks: Uint8Array[]) => new ReadableStream<Uint8Array>({
  start(c) { for (const x of chunks) c.enqueue(x); c.close(); },
});

async function all<T>(readable: ReadableStream<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of readChunks(readable)) out.push(x);
  return out;
}

/** What push and flush return for these chunks: the arrays a batch stream must enqueue. */
function pushes<T>(decoder: { push(c: Uint8Array): T[]; flush(): T[] }, chunks: Uint8Array[]): T[][] {
  return [...chunks.map((c) => decoder.push(c)), decoder.flush()].filter((x) => x.length > 0);
}

describe('SseBatchDecoderStream and LineBatchDecoderStream', () => {
  it('enqueue each push\'s output as one array, never an empty one, for every cut in two', async () => {
    for (let i = 0; i <= bytes.length; i++) {
      const chunks = [bytes.subarray(0, i), bytes.subarray(i)];
      expect(await all(from(chunks).pipeThrough(new SseBatchDecoderStream())), `cut at ${i}`).toEqual(pushes(new SseParser(), chunks));
      expect(await all(from(chunks).pipeThrough(new LineBatchDecoderStream())), `cut at ${i}`).toEqual(pushes(new LineDecoder(), chunks));
    }
  });

  it('give the same items as the per-item streams on random cuttings', async () => {
    const seed = SEED;
    const next = rng(seed);
    for (let k = 0; k < 50; k++) {
      const chunks = cut(bytes, randomCuts(bytes, next, 9));
      const batches = await all(from(chunks).pipeThrough(new SseBatchDecoderStream()));
      expect(batches.flat(), `seed ${seed}`).toEqual(await all(from(chunks).pipeThrough(new SseDecoderStream())));
      expect(batches.every((b) => b.length > 0), `seed ${seed}`).toBe(true);
      const lines = await all(from(chunks).pipeThrough(new LineBatchDecoderStream()));
      expect(lines.flat(), `seed ${seed}`).toEqual(await all(from(chunks).pipeThrough(new LineDecoderStream())));
    }
  });

  it('enqueue the events before an error as one array, then error the stream', async () => {
    const bad = new Uint8Array([...enc('data: ok\n\ndata: two\n\ndata: '), 0xff]);
    const s = new SseBatchDecoderStream();
    const got: unknown[] = [];
    const reader = from([bad]).pipeThrough(s).getReader();
    let error: unknown;
    try {
      for (;;) {
        const r = await reader.read();
        if (r.done) break;
        got.push(r.value);
      }
    } catch (err) { error = err; }
    expect(got).toEqual([[{ type: 'message', data: 'ok', id: '' }, { type: 'message', data: 'two', id: '' }]]);
    expect(error).toBeInstanceOf(Utf8DecodeError);
    expect((error as Utf8DecodeError).offset).toBe(27);
    expect(s.parser.lastEventId).toBe('');
  });
});

describe('readChunks', () => {
  it('reads a stream to its end through a reader, and releases it', async () => {
    const r = from([enc('a'), enc('b')]);
    expect((await all(r)).map((c) => String.fromCharCode(...c))).toEqual(['a', 'b']);
    expect(r.locked).toBe(false);
  });

  it('cancels the stream when the loop is left early', async () => {
    let cancelled: unknown = 'no';
    const r = new ReadableStream<number>({ pull(c) { c.enqueue(1); }, cancel(reason) { cancelled = reason; } });
    for await (const x of readChunks(r)) { expect(x).toBe(1); break; }
    expect(cancelled).toBe(undefined);
    expect(r.locked).toBe(false);
  });

  it('throws the stream\'s error', async () => {
    const boom = new Error('boom');
    const r = new ReadableStream({ start(c) { c.enqueue(1); c.error(boom); } });
    await expect(all(r)).rejects.toBe(boom);
  });
});

describe('what the streams take, as TextDecoderStream and CompressionStream take it', () => {
  // an OpenAI stream (every stream here reads it: as lines, as events, as a model's), written as
  // every kind of BufferSource, and a detached view between them (its producer gave its buffer away)
  const openai = enc([
    'data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"Grüße, "}}]}',
    'data: {"choices":[{"index":0,"delta":{"content":"世界 👩‍💻"}}]}',
    'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}',
    'data: [DONE]', '',
  ].join('\n\n'));
  // (a Node Buffer where the runtime has one)
  const nodeBuffer = (globalThis as { Buffer?: { from(b: Uint8Array): Uint8Array } }).Buffer;
  const given = (): Uint8Array => {
    const v = enc('lost');
    structuredClone(v.buffer, { transfer: [v.buffer] });
    return v;
  };
  /** `bytes` in pieces of 7, each as another kind of chunk (each its own copy), with a detached view after each. */
  const kinds = (bytes: Uint8Array): unknown[] => {
    const out: unknown[] = [];
    for (let i = 0, k = 0; i < bytes.length; i += 7, k++) {
      const piece = bytes.slice(i, i + 7);
      const padded = new Uint8Array(piece.length + 3);
      padded.set(piece, 3);
      out.push([piece.buffer, new DataView(padded.buffer, 3), new Int8Array(padded.buffer, 3), nodeBuffer?.from(piece) ?? piece.subarray(0), piece][k % 5], given());
    }
    return out;
  };
  const STREAMS: [string, () => TransformStream<never, unknown>][] = [
    ['Utf8DecoderStream', () => new Utf8DecoderStream() as never],
    ['LineDecoderStream', () => new LineDecoderStream() as never],
    ['LineBatchDecoderStream', () => new LineBatchDecoderStream() as never],
    ['SseDecoderStream', () => new SseDecoderStream() as never],
    ['SseBatchDecoderStream', () => new SseBatchDecoderStream() as never],
    ['SseRelayStream', () => new SseRelayStream({ from: 'openai' }) as never],
    ['ModelTextStream', () => new ModelTextStream({ format: 'openai' }) as never],
    ['ModelPartStream', () => new ModelPartStream({ format: 'openai' }) as never],
  ];
  const through = async (stream: TransformStream<never, unknown>, chunks: unknown[]): Promise<unknown[]> => {
    const w = stream.writable.getWriter();
    const reading = all(stream.readable);
    // (the relay ends the client's stream at the upstream's completion: what follows is not written)
    for (const c of chunks) await w.write(c as never).catch(() => {});
    await w.close().catch(() => {});
    return reading;
  };
  const bytesOut = (out: unknown[]) => out.map((x) => (x instanceof Uint8Array ? ['bytes', new TextDecoder().decode(x)] : x));

  for (const [name, make] of STREAMS) {
    it(`${name}: an ArrayBuffer, a DataView, any typed array and a Buffer as their bytes, a detached view as no bytes; what Uint8Arrays give`, async () => {
      const want = bytesOut(await through(make(), cut(openai, Array.from({ length: Math.ceil(openai.length / 7) - 1 }, (_, i) => (i + 1) * 7))));
      expect(want.length).toBeGreaterThan(0);
      expect(bytesOut(await through(make(), kinds(openai)))).toEqual(want);
    });
  }

  it('a string is still a TypeError that says to encode it, and a number one that says what was expected', async () => {
    for (const [name, make] of STREAMS) {
      for (const [bad, said] of [['data: x\n\n', /got a string\. Encode it first/], [7, /expects (a Uint8Array|an ArrayBuffer).*, got number/]] as const) {
        const s = make();
        const reading = all(s.readable).then(() => 'closed', (e: unknown) => e);
        await s.writable.getWriter().write(bad as never).catch(() => {});
        const e = await reading;
        expect(e, name).toBeInstanceOf(TypeError);
        expect((e as Error).message, name).toMatch(said);
      }
    }
  });
});
