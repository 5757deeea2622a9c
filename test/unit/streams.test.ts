// The batch streams (one array per push), against the decoders' own push/flush on every way of
// cutting a stream in two and on seeded random cuttings; their error path; readChunks.
import { describe, expect, it } from 'vitest';
import {
  LineBatchDecoderStream, LineDecoder, LineDecoderStream, SseBatchDecoderStream, SseDecoderStream, SseParser, Utf8DecodeError,
  readChunks,
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
