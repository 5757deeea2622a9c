// The strings of lines and SSE events on the route this project runs (Node's Buffer copies, or
// with SEAM_STRINGS=textdecoder or textdecoder-whole the browsers' route: one TextDecoder call per push, sliced at the
// UTF-16 offsets the core counts): every chunking gives the output of the whole input, equal to
// TextDecoder + eventsource-parser (and a spec-literal reference); with fatal: false, bad bytes
// are replaced per line and per event exactly as TextDecoder does on each of them.
import { createParser } from 'eventsource-parser';
import { describe, expect, test } from 'vitest';
import { LineDecoder, SseParser } from '../../bindings/index.js';
import { frameTextMode, sseSplitMode } from '../../bindings/frames/frame-stream.js';
import { M_SPLIT, M_UTF16_POS, M_UTF8_OUT } from '../../bindings/core/generated/abi.js';
import { getCore } from '../../bindings/core/wasm.js';
import { referenceParse } from '../conformance/sse-reference.js';
import { run } from '../conformance/sse-harness.js';
import { SEED, cut, randomCuts, rng, standardChunkings } from '../helpers/random.js';

const enc = new TextEncoder();
const route = process.env.SEAM_STRINGS?.startsWith('textdecoder') ? 'textdecoder' : 'node';

/** Text with characters of every UTF-8 length (and surrogate pairs), in runs long enough for SIMD blocks. */
function text(r: () => number, n: number): string {
  const pieces = ['a', 'data', ' ', 'é', 'ß', '中', '文', '😀', '🙏🏽', '\u{10FFFF}', '\uFEFF', 'xyz0123456789', ':', '{"k":"v"}'];
  let s = '';
  while (s.length < n) s += pieces[Math.floor(r() * pieces.length)];
  return s;
}

/** An event stream of `events` events: data (one or more lines), types, IDs, comments, every line end. */
function sseStream(r: () => number, events: number, maxData: number): Uint8Array {
  const ends = ['\n', '\r\n', '\r'];
  let s = r() < 0.3 ? '\uFEFF' : '';
  for (let i = 0; i < events; i++) {
    const nl = ends[Math.floor(r() * ends.length)];
    if (r() < 0.2) s += `: ${text(r, 1 + Math.floor(r() * 20))}${nl}`;
    if (r() < 0.3) s += `event: ${r() < 0.5 ? 'delta' : text(r, 1 + Math.floor(r() * 8))}${nl}`;
    if (r() < 0.2) s += `id: ${text(r, 1 + Math.floor(r() * 8))}${nl}`;
    const lines = 1 + Math.floor(r() * (r() < 0.8 ? 1 : 4));
    for (let k = 0; k < lines; k++) s += `data:${r() < 0.8 ? ' ' : ''}${text(r, Math.floor(r() * maxData))}${nl}`;
    s += nl;
  }
  return enc.encode(s);
}

/** TextDecoder + eventsource-parser: each event's type and data. */
function peerEvents(bytes: Uint8Array): string[] {
  const out: string[] = [];
  const p = createParser({ onEvent: (e) => out.push(e.event ?? 'message', e.data) });
  const t = new TextDecoder().decode(bytes);
  // eventsource-parser holds a CR at the end of its input (it may begin a CRLF) and has no end of
  // stream that would let it go: an LF after it is the same line end
  p.feed(t.endsWith('\r') ? t + '\n' : t);
  return out;
}

function ourEvents(chunks: Uint8Array[], fatal = true): string[] {
  const p = new SseParser({ fatal });
  const out: string[] = [];
  for (const c of chunks) for (const e of p.push(c)) out.push(e.type, e.data);
  for (const e of p.flush()) out.push(e.type, e.data);
  return out;
}

function ourLines(chunks: Uint8Array[], fatal = true): string[] {
  const d = new LineDecoder({ fatal });
  const out: string[] = [];
  for (const c of chunks) out.push(...d.push(c));
  out.push(...d.flush());
  return out;
}

/** TextDecoder, then split at LF, CRLF and CR (the last, unterminated line kept when not empty). */
function peerLines(bytes: Uint8Array): string[] {
  const lines = new TextDecoder().decode(bytes).split(/\r\n|\r|\n/);
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * Every chunking of `bytes` checked: whole, each two-piece split and a one-byte drip (inputs up to
 * 4 KiB; longer ones whole and at 97 evenly spread splits), then seeded random splits.
 */
function everyChunking(bytes: Uint8Array, seed: number, check: (chunks: Uint8Array[], how: string) => void): void {
  let k = 0;
  if (bytes.length <= 4096) for (const chunks of standardChunkings(bytes)) check(chunks, `standard chunking ${k++}`);
  else for (let i = 0; i <= 96; i++) check(cut(bytes, [Math.floor((i * bytes.length) / 96)]), `split at ${i}/96`);
  const r = rng(seed);
  for (let i = 0; i < 40; i++) check(cut(bytes, randomCuts(bytes, r, 1 + Math.floor(r() * 600))), `random split ${i}`);
}

describe(`frame strings (${route} route)`, () => {
  test('the route this project asked for is the one that runs', () => {
    expect(frameTextMode(getCore())).toBe(route === 'textdecoder' ? M_UTF8_OUT | M_UTF16_POS : 0);
    // SSE data with non-ASCII text in pieces on that route as V8 takes it, whole as Firefox does (textdecoder-whole)
    expect(sseSplitMode(getCore())).toBe(process.env.SEAM_STRINGS === 'textdecoder' ? M_SPLIT : 0);
  });

  test(`SSE: every chunking gives the whole input's events, as TextDecoder + eventsource-parser (seed ${SEED})`, () => {
    for (let s = 0; s < 6; s++) {
      const seed = SEED + s;
      const bytes = sseStream(rng(seed), 3 + s * 2, 40);
      const want = peerEvents(bytes);
      const whole = run([bytes]);
      expect(whole).toEqual(referenceParse(bytes));
      everyChunking(bytes, seed, (chunks, how) => {
        expect(ourEvents(chunks), `seed ${seed}, ${how}`).toEqual(want);
      });
    }
  });

  test(`SSE: many events per push, long data (past the count's 2 KiB reduction), random reads (seed ${SEED + 100})`, () => {
    for (let s = 0; s < 4; s++) {
      const seed = SEED + 100 + s;
      const r = rng(seed);
      const bytes = sseStream(r, 300, s === 3 ? 5000 : 300);
      const want = peerEvents(bytes);
      for (let i = 0; i < 12; i++) {
        const chunks = cut(bytes, randomCuts(bytes, r, [16, 300, 4096, 70000][i % 4]));
        expect(ourEvents(chunks), `seed ${seed}, split ${i}`).toEqual(want);
        const full = run(chunks);
        expect(full, `seed ${seed}, split ${i}`).toEqual(referenceParse(bytes));
      }
    }
  });

  test(`lines: every chunking gives the whole input's lines, as TextDecoder + a split (seed ${SEED + 200})`, () => {
    for (let s = 0; s < 6; s++) {
      const seed = SEED + 200 + s;
      const r = rng(seed);
      const ends = ['\n', '\r\n', '\r'];
      let t = '';
      const n = 2 + s * 3;
      for (let i = 0; i < n; i++) t += text(r, Math.floor(r() * (s < 4 ? 30 : 3000))) + ends[Math.floor(r() * 3)];
      if (r() < 0.5) t += text(r, 5); // an unterminated last line
      const bytes = enc.encode(t);
      const want = peerLines(bytes); // TextDecoder drops one leading BOM, as LineDecoder does
      everyChunking(bytes, seed, (chunks, how) => {
        expect(ourLines(chunks), `seed ${seed}, ${how}`).toEqual(want);
      });
    }
  });
});

describe(`fatal: false replaces bad bytes per line and per event (${route} route)`, () => {
  // E2 82 AC is '€': cut between two events (or lines), each part is its own bad sequence. The
  // core writes the two spans next to each other, so one decode of both would make a '€'.
  const sse = new Uint8Array([...enc.encode('data: x'), 0xe2, 0x82, ...enc.encode('\n\ndata: '), 0xac, ...enc.encode('y\n\nevent: t\ndata: '),
    0xf0, 0x9f, ...enc.encode('\nid: '), 0x98, 0x80, ...enc.encode('\n\ndata: ok 中\n\n')]);

  test('SSE: each event is TextDecoder of its own bytes, for every chunking', () => {
    const want = ['message', 'x\uFFFD', 'message', '\uFFFDy', 't', '\uFFFD', 'message', 'ok 中'];
    expect(peerEvents(sse)).toEqual(want);
    everyChunking(sse, SEED + 300, (chunks, how) => {
      expect(ourEvents(chunks, false), how).toEqual(want);
      expect(run(chunks, { fatal: false }), how).toEqual(referenceParse(sse));
    });
  });

  test('SSE: a clean stream after a dirty one (flush) and clean events after a bad byte are exact', () => {
    const p = new SseParser({ fatal: false });
    expect(p.push(sse).map((e) => e.data)).toEqual(['x\uFFFD', '\uFFFDy', '\uFFFD', 'ok 中']);
    expect(p.push(enc.encode('data: 😀 after\n\ndata: é\n\n')).map((e) => e.data)).toEqual(['😀 after', 'é']);
    p.flush();
    expect(p.push(enc.encode('data: 😀 new stream\n\ndata: ß\n\n')).map((e) => e.data)).toEqual(['😀 new stream', 'ß']);
  });

  test('lines: each line is TextDecoder of its own bytes, for every chunking', () => {
    const bytes = new Uint8Array([...enc.encode('a'), 0xe2, 0x82, 0x0a, 0xac, ...enc.encode('b😀\r\n'), 0xf0, 0x9f, 0x98, 0x0d, 0x80, ...enc.encode('中')]);
    const want = ['a\uFFFD', '\uFFFDb😀', '\uFFFD', '\uFFFD中'];
    expect(peerLines(bytes)).toEqual(want);
    everyChunking(bytes, SEED + 400, (chunks, how) => {
      expect(ourLines(chunks, false), how).toEqual(want);
    });
  });
});
