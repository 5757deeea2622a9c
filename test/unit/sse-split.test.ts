// SSE data with non-ASCII text on every route. On the browsers' route as V8 takes it (the
// textdecoder-route projects) the core keeps each such data's ASCII head and tail in the batch's
// text and gives its middle apart (M_SPLIT), and the parser joins the three; as Firefox takes it
// (textdecoder-whole) and on the core route the same events must come out.
// Every case is checked against the spec-literal reference, whole, cut everywhere, and in random
// pieces.
import { describe, expect, test } from 'vitest';
import { SseParser, wasmBackend, type SseEvent } from '../../bindings/index.js';
import { getCore } from '../../bindings/core/wasm.js';
import { frameTextMode, sseSplitMode } from '../../bindings/frames/frame-stream.js';
import { M_SPLIT, M_UTF16_POS, M_UTF8_OUT } from '../../bindings/core/generated/abi.js';
import { referenceParse } from '../conformance/sse-reference.js';
import { SEED, cut, randomCuts, rng } from '../helpers/random.js';

const enc = (s: string) => new TextEncoder().encode(s);

function parseIn(chunks: Uint8Array[]): SseEvent[] {
  const p = new SseParser();
  const out: SseEvent[] = [];
  for (const c of chunks) out.push(...p.push(c));
  out.push(...p.flush());
  p.dispose();
  return out;
}

/** Data lines whose non-ASCII text sits at the start, the end, the middle, all over, or nowhere. */
const DATAS = [
  'é', 'é at the start', 'at the end é', 'a {"content":"每个事件都是一小段文本，"} b', '👩‍💻🇯🇵', 'ab😀cd😀ef',
  'no accents at all', '', 'x', 'caf\u0065\u0301 déjà vu, ünïcödé', '{"delta":{"text":"🙏🏽🚀✨"},"n":1}',
  '\u00a0', 'ascii then \u0800 then ascii then \uffff end', '\u{10ffff}',
];

function stream(seed: number, events: number): string {
  const r = rng(seed);
  let s = '';
  for (let i = 0; i < events; i++) {
    const k = Math.floor(r() * 6);
    const d = DATAS[Math.floor(r() * DATAS.length)];
    if (k === 0) s += `event: typé\ndata: ${d}\n\n`; // a type with non-ASCII text: not split
    else if (k === 1) s += `id: ïd${i}\ndata: ${d}\ndata: ${DATAS[i % DATAS.length]}\n\n`; // two data lines
    else if (k === 2) s += `: comment ${d}\ndata:${d}\r\n\r\n`;
    else if (k === 3) s += `event: t\ndata: ${d}\n\n`;
    else s += `data: ${d}\n\n`;
  }
  return s;
}

describe(`SSE data with non-ASCII text (${wasmBackend()}, ${frameTextMode(getCore()) === 0 ? 'UTF-16 route' : sseSplitMode(getCore()) !== 0 ? 'TextDecoder route, data in pieces' : 'TextDecoder route, data whole'})`, () => {
  test('the parser frames with the mode this runtime chose (data in pieces only on the browsers\' route in V8)', () => {
    const p = new SseParser();
    // (which mode each project's route chooses: test/property/frames-strings.test.ts)
    expect((p as unknown as { mode: number }).mode & (M_SPLIT | M_UTF8_OUT | M_UTF16_POS)).toBe(sseSplitMode(getCore()) | frameTextMode(getCore()));
    p.dispose();
  });

  test('each data shape, alone and after an ASCII event, every two-piece split and a one-byte drip', () => {
    for (const d of DATAS) {
      const bytes = enc(`data: ascii\n\ndata: ${d}\n\nevent: t\ndata: ${d}\ndata: ${d}\n\n`);
      const want = referenceParse(bytes).events;
      expect(parseIn([bytes])).toEqual(want);
      for (let i = 0; i <= bytes.length; i++) expect(parseIn(cut(bytes, [i])), `${JSON.stringify(d)} cut at ${i}`).toEqual(want);
      expect(parseIn(Array.from(bytes, (_, i) => bytes.subarray(i, i + 1)))).toEqual(want);
    }
  });

  test('a read that is one large event, typed or not, as APIs flush them (framed in one step only when sure to fit the batch)', () => {
    // near and past the size whose text a split batch's halves hold: the one-step paths must leave
    // those to the general path, never drop them
    for (const bytesOfData of [1000, 30000, 34000, 36000, 40000, 60000, 65000]) {
      for (const fill of ['é', 'a', '中', '😀']) {
        const d = fill.repeat(Math.floor(bytesOfData / new TextEncoder().encode(fill).length));
        for (const typed of [false, true]) {
          const head = enc(typed ? 'event: t\ndata: x\n\n' : 'data: x\n\n');
          const big = enc(`${typed ? 'event: t\n' : ''}data: ${d}\n\n`);
          if (big.length > 65536) continue; // (one read is one input window at most)
          const want = referenceParse(new Uint8Array([...head, ...big])).events;
          expect(parseIn([head, big]), `${typed ? 'typed' : 'untyped'}, ${big.length} bytes of ${JSON.stringify(fill)}`).toEqual(want);
        }
      }
    }
  });

  test('mixed streams of typed, multi-line, commented and plain events in random pieces (seeded)', () => {
    for (let t = 0; t < 40; t++) {
      const seed = SEED + t;
      const bytes = enc(stream(seed, 200));
      const want = referenceParse(bytes).events;
      const next = rng(seed ^ 0x5eed);
      for (const max of [1, 7, 64, 1024, 1 << 16]) {
        expect(parseIn(cut(bytes, randomCuts(bytes, next, max))), `seed ${seed}, pieces up to ${max} B`).toEqual(want);
      }
    }
  });

  test('one push of many split events fills the output window: several batches, the same events', () => {
    // 60,000 events of 40 bytes, nearly all with a middle: the batch ends on its room for text and
    // middles together, then goes on
    let s = '';
    for (let i = 0; i < 60000; i++) s += `data: ${i} 每个事件 ${i % 7 === 0 ? '' : 'é'}!\n\n`;
    const bytes = enc(s);
    expect(parseIn([bytes])).toEqual(referenceParse(bytes).events);
    expect(parseIn(cut(bytes, [65536, 131072, 200000]))).toEqual(referenceParse(bytes).events);
  });

  test('a nearly full window: a middle with ASCII inside (more UTF-16 bytes than UTF-8), then a long type or ID', () => {
    // the middle's UTF-16 takes 2 bytes per ASCII byte inside it; the type and ID are written
    // after it and must not run into it (the data held from earlier pieces fills the window)
    const data = `${'h'.repeat(137138)}é${'a'.repeat(296)}é${'t'.repeat(10)}`;
    for (const head of [`event: ${'T'.repeat(2000)}\n`, `id: ${'I'.repeat(1500)}\n`]) {
      for (const tail of ['\n\n', '\n']) {
        const bytes = enc(`${head}data: ${data}${tail}`);
        const want = referenceParse(bytes, { eof: 'dispatch' }).events;
        for (const at of [[], [60000, 120000], [65536, 131072]]) {
          const p = new SseParser({ eof: 'dispatch' });
          const got: SseEvent[] = [];
          for (const c of cut(bytes, at)) got.push(...p.push(c));
          got.push(...p.flush());
          p.dispose();
          expect(got, `${head.slice(0, 4)} ${JSON.stringify(tail)} cut at ${at}`).toEqual(want);
        }
      }
    }
  });

  test('a data value of 100,000 characters with non-ASCII text at both ends and nothing between', () => {
    const d = `é${'a'.repeat(100000)}😀`;
    const bytes = enc(`data: x\n\ndata: ${d}\n\ndata: ${d.slice(1, -2)}\n\n`);
    expect(parseIn([bytes])).toEqual(referenceParse(bytes).events);
    expect(parseIn(cut(bytes, [10, 50000, 100010]))).toEqual(referenceParse(bytes).events);
  });
});
