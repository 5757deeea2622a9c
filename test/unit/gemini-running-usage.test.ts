// Gemini sends its usage in every chunk, the totals so far (`usageMetadata`), and the last chunk's
// is the turn's. A stream cut short (or failed) before its finishing chunk reports the last one
// that came: what a gateway bills for a client that left or an upstream that broke. The core keeps
// it from every event it reads, quiet text chunks (read in full, or matched against their shape)
// and events read in JavaScript alike. The oracle is JSON.parse of the chunks that were whole.
import { describe, expect, test } from 'vitest';
import { ModelEventReader, ModelStream, ModelStreamError, SseRelay } from '../../bindings/index.js';
import { getCore } from '../../bindings/core/wasm.js';
import { SEED, cut, randomCuts, rng, standardChunkings } from '../helpers/random.js';

const enc = new TextEncoder();

interface Chunk { wire: string; usage?: Record<string, unknown> }

/** A chunk as the Gemini API writes it (its keys in this order), with its running usage. */
function textChunk(text: string, n: number, extra: Record<string, unknown> = {}, usageFirst = false): Chunk {
  const usage = { promptTokenCount: 9, candidatesTokenCount: n, totalTokenCount: 9 + n, promptTokensDetails: [{ modality: 'TEXT', tokenCount: 9 }], ...extra };
  const cand = `"candidates": [{"content": {"parts": [{"text": ${JSON.stringify(text)}}],"role": "model"},"index": 0}]`;
  const use = `"usageMetadata": ${JSON.stringify(usage)}`;
  const rest = '"modelVersion": "gemini-2.5-flash","responseId": "r-1"';
  return { wire: `data: {${usageFirst ? `${use},${cand}` : `${cand},${use}`},${rest}}\r\n\r\n`, usage };
}

/** A chunk of reasoning (read in JavaScript), with its usage. */
function thoughtChunk(text: string, n: number, thoughts: number): Chunk {
  const usage = { promptTokenCount: 9, candidatesTokenCount: n, totalTokenCount: 9 + n + thoughts, thoughtsTokenCount: thoughts };
  return { wire: `data: {"candidates": [{"content": {"parts": [{"text": ${JSON.stringify(text)},"thought": true}],"role": "model"},"index": 0}],"usageMetadata": ${JSON.stringify(usage)}}\r\n\r\n`, usage };
}

const FINISH: Chunk = (() => {
  const usage = { promptTokenCount: 9, candidatesTokenCount: 140, totalTokenCount: 149 };
  return { wire: `data: {"candidates": [{"content": {"parts": [{"text": ""}],"role": "model"},"finishReason": "STOP","index": 0}],"usageMetadata": ${JSON.stringify(usage)}}\r\n\r\n`, usage };
})();

/** A stream of reasoning, text chunks whose counts grow past 9, 99, a call, more text (usage first in some), then the finish. */
function stream(): Chunk[] {
  const out: Chunk[] = [thoughtChunk('Weighing it.', 0, 7), thoughtChunk(' Done.', 0, 12)];
  for (let i = 0; i < 14; i++) out.push(textChunk(`Teil ${i} ist grün. `, 1 + i * 8));
  out.push({ wire: `data: {"candidates": [{"content": {"parts": [{"functionCall": {"name": "f","args": {"q": 1}}}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 9,"candidatesTokenCount": 120,"totalTokenCount": 129}}\r\n\r\n`, usage: { promptTokenCount: 9, candidatesTokenCount: 120, totalTokenCount: 129 } });
  for (let i = 0; i < 4; i++) out.push(textChunk(`Mehr ${i}. `, 121 + i, {}, true));
  out.push(textChunk('Ohne. ', 130, { cachedContentTokenCount: 4 }));
  out.push({ wire: 'data: {"candidates": [{"content": {"parts": [{"text": "Nichts gezählt. "}],"role": "model"},"index": 0}]}\r\n\r\n' });
  out.push(FINISH);
  return out;
}

/** The usage of the last of the first `k` chunks that has one. */
function usageAfter(chunks: Chunk[], k: number): Record<string, unknown> | undefined {
  for (let i = k - 1; i >= 0; i--) if (chunks[i].usage !== undefined) return chunks[i].usage;
  return undefined;
}

type Reader = ModelStream | SseRelay;
const makers: [string, () => Reader][] = [
  ['ModelStream', () => new ModelStream({ format: 'gemini' })],
  ['ModelStream raw', () => new ModelStream({ format: 'gemini', raw: true })],
  ['SseRelay to openai', () => new SseRelay({ from: 'gemini', to: 'openai' })],
  ['SseRelay to anthropic', () => new SseRelay({ from: 'gemini', to: 'anthropic' })],
];

/** Reads the pieces and the end; returns the reader and the code of its error, if any. */
function run(make: () => Reader, pieces: Uint8Array[]): { r: Reader; code?: string } {
  const r = make();
  try {
    for (const p of pieces) r.push(p);
    r.flush();
  } catch (e) {
    if (!(e instanceof ModelStreamError)) throw e;
    return { r, code: e.code };
  }
  const err = (r as SseRelay).error as ModelStreamError | null | undefined;
  return { r, code: err?.code };
}

/** Where the stream may be cut: after each whole chunk, and inside the next (its data's start, middle, last brace). */
function cutPoints(chunks: Chunk[]): { at: number; whole: number }[] {
  const out: { at: number; whole: number }[] = [];
  let end = 0;
  for (let k = 0; k < chunks.length - 1; k++) {
    end += enc.encode(chunks[k].wire).length;
    const next = enc.encode(chunks[k + 1].wire).length;
    for (const into of [0, 7, next >> 1, next - 5]) out.push({ at: end + into, whole: k + 1 });
  }
  return out;
}

describe('gemini: a stream cut short reports the last running usage', () => {
  const chunks = stream();
  const bytes = enc.encode(chunks.map((c) => c.wire).join(''));

  test.each(makers)('%s: cut after each chunk and inside the next, whole, in seeded random pieces and dripped', (_, make) => {
    const next = rng(SEED);
    for (const { at, whole } of cutPoints(chunks)) {
      const body = bytes.subarray(0, at);
      const want = usageAfter(chunks, whole);
      const chunkings = [[body], cut(body, randomCuts(body, next, 40)), cut(body, randomCuts(body, next, 400)), Array.from(body, (_, i) => body.subarray(i, i + 1))];
      for (const pieces of chunkings) {
        const { r, code } = run(make, pieces);
        const where = `cut at ${at} (${whole} chunks whole), ${pieces.length} pieces, seed ${SEED}`;
        expect(code, where).toBe('ERR_STREAM_TRUNCATED');
        expect(r.usage, where).toEqual(want);
      }
    }
  });

  test('a cut inside the text chunks, at every two-piece split and dripped', () => {
    const k = 12;
    const at = enc.encode(chunks.slice(0, k).map((c) => c.wire).join('')).length + 40;
    const body = bytes.subarray(0, at);
    for (const pieces of standardChunkings(body)) {
      const { r, code } = run(makers[0][1], pieces);
      expect(code, `${pieces.length} pieces`).toBe('ERR_STREAM_TRUNCATED');
      expect(r.usage, `${pieces.length} pieces`).toEqual(chunks[k - 1].usage);
    }
  });

  test.each(makers)('%s: the whole stream reports its finishing chunk\'s usage', (_, make) => {
    for (const pieces of [[bytes], cut(bytes, randomCuts(bytes, rng(SEED), 64))]) {
      const { r, code } = run(make, pieces);
      expect(code).toBeUndefined();
      expect(r.status).toBe('done');
      expect(r.usage).toEqual(FINISH.usage);
    }
  });

  test.each(makers)('%s: an error chunk mid-stream is ERR_PROVIDER, with the usage of the chunks before it', (_, make) => {
    const k = 10;
    const error = 'data: {"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}\r\n\r\n';
    const body = enc.encode(chunks.slice(0, k).map((c) => c.wire).join('') + error);
    for (const pieces of [[body], Array.from(body, (_, i) => body.subarray(i, i + 1))]) {
      const { r, code } = run(make, pieces);
      expect(code).toBe('ERR_PROVIDER');
      expect(r.usage).toEqual(chunks[k - 1].usage);
    }
  });

  test('near its text limit (every event read in JavaScript) the running usage is kept still', () => {
    // (maxTextBytes within the text of the chunks, so that each read may pass it: the stream reads every event itself)
    for (const k of [4, 9, 16, 22]) {
      const body = bytes.subarray(0, enc.encode(chunks.slice(0, k).map((c) => c.wire).join('')).length + 25);
      const want = usageAfter(chunks, k);
      for (const pieces of [[body], cut(body, randomCuts(body, rng(SEED), 30)), Array.from(body, (_, i) => body.subarray(i, i + 1))]) {
        for (const raw of [false, true]) {
          const { r, code } = run(() => new ModelStream({ format: 'gemini', maxTextBytes: 2000, raw }), pieces);
          const where = `${k} chunks whole, ${pieces.length} pieces, raw ${raw}, seed ${SEED}`;
          expect(code, where).toBe('ERR_STREAM_TRUNCATED');
          expect(r.usage, where).toEqual(want);
        }
      }
    }
  });

  test('ModelEventReader: each chunk\'s reading has its running usage, the one a stream cut after it reports', () => {
    const reader = new ModelEventReader({ format: 'gemini' });
    let last: Record<string, unknown> | undefined;
    chunks.forEach((c, k) => {
      const data = c.wire.slice('data: '.length, -4);
      const reading = reader.read(k % 2 === 0 ? data : enc.encode(data));
      expect(reading.usage, `chunk ${k}`).toEqual(c.usage);
      expect(reading.done, `chunk ${k}`).toBe(k === chunks.length - 1);
      if (reading.usage !== undefined) last = reading.usage;
      if (k < chunks.length - 1) expect(last, `chunk ${k}`).toEqual(usageAfter(chunks, k + 1));
    });
    expect(last).toEqual(FINISH.usage);
  });

  test('a usage past 2048 bytes is not kept, and an older one not reported in its place', () => {
    const big = textChunk('Groß. ', 50, { promptTokensDetails: Array.from({ length: 80 }, (_, i) => ({ modality: `M${i}`, tokenCount: i })) });
    expect(JSON.stringify(big.usage).length).toBeGreaterThan(2048);
    const after = textChunk('Danach. ', 51);
    for (const [list, want] of [[[...chunks.slice(0, 8), big], undefined], [[...chunks.slice(0, 8), big, after], after.usage]] as const) {
      const body = enc.encode(list.map((c) => c.wire).join(''));
      for (const pieces of [[body], cut(body, randomCuts(body, rng(SEED), 100))]) {
        const { r, code } = run(makers[0][1], pieces);
        expect(code).toBe('ERR_STREAM_TRUNCATED');
        expect(r.usage).toEqual(want);
      }
    }
  });

  test.each(makers)('%s: what was kept goes back to the core when the stream ends, is cut or is disposed', (_, make) => {
    const core = getCore();
    const start = core.x.heapInUse();
    const cutBody = bytes.subarray(0, enc.encode(chunks.slice(0, 9).map((c) => c.wire).join('')).length + 30);
    for (const body of [bytes, cutBody]) {
      const { r } = run(make, [body]);
      expect(r.usage).toBeDefined();
      r.dispose();
      expect(core.x.heapInUse()).toBe(start);
    }
    // (a stream left open, disposed: its usage is taken first)
    const r = make();
    r.push(cutBody);
    r.dispose();
    expect(r.usage).toEqual(chunks[8].usage);
    expect(core.x.heapInUse()).toBe(start);
  });
});
