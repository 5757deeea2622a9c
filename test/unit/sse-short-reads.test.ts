// SseParser's short reads in the browsers (bindings/core/strings.ts, `sseCoreTo`): through a core
// made without Buffer, as a page's is, V8's routes frame reads of up to 384 B through the core
// (Latin-1 or UTF-16 text, its string made by a plain array) and longer ones through TextDecoder.
// Which mode each read takes, and that every mix of the two gives the same events, comments and
// errors (code, offset, the events before) as either alone and as the core's route with a Buffer.
// The SSE suites then run again on these routes.
import '../helpers/core-without-buffer.js';
import { afterEach, describe, expect, test } from 'vitest';
import { SseParser, type SseEvent } from '../../bindings/index.js';
import { chooseRoutes, forceStringRoute, stringRoutes, type StringRoutes } from '../../bindings/core/strings.js';
import { M_UTF8_OUT } from '../../bindings/core/generated/abi.js';
import { SEED, cut, randomCuts, rng } from '../helpers/random.js';
import '../unit/sse.test.js';
import '../unit/sse-split.test.js';
import '../conformance/sse-wpt.test.js';

const enc = new TextEncoder();
afterEach(() => forceStringRoute(undefined));

describe('SseParser without a Buffer: short reads through the core', () => {
  test('V8\'s routes here: SSE reads up to 384 B through the core, data in pieces above; SpiderMonkey\'s: none', () => {
    // (vitest runs on Node: V8; a project may force another route with SEAM_STRINGS)
    if (process.env.SEAM_STRINGS === undefined) expect(stringRoutes()).toMatchObject({ frames: 'textdecoder', sseData: 'pieces', sseCoreTo: 384, by: 'detected' });
    expect(chooseRoutes('browser', '', false, undefined, 'detected', 'other')).toMatchObject({ frames: 'textdecoder', sseData: 'pieces', sseCoreTo: 384 });
    expect(chooseRoutes('browser', '', false, undefined, 'detected', 'spidermonkey')).toMatchObject({ frames: 'textdecoder', sseData: 'whole', sseCoreTo: 0 });
  });

  test('a read of up to 384 B is framed in the core\'s mode (no UTF-8 out), a longer one in TextDecoder\'s', () => {
    const modes: number[] = [];
    const proto = SseParser.prototype as unknown as { pushCore(len: number, mode: number): number };
    const original = proto.pushCore;
    proto.pushCore = function (this: typeof proto, len: number, mode: number): number {
      modes.push(mode);
      return original.call(this, len, mode);
    };
    try {
      forceStringRoute(chooseRoutes('browser', '', false, undefined, 'detected', 'other'));
      const p = new SseParser();
      const event = (n: number) => enc.encode(`data: ${'é'.repeat((n - 8) >> 1)}${'x'.repeat((n - 8) & 1)}\n\n`);
      for (const n of [9, 128, 384, 385, 4096]) {
        modes.length = 0;
        const read = event(n);
        expect(read.length).toBe(n);
        const got = p.push(read);
        expect(got).toEqual([{ type: 'message', data: new TextDecoder().decode(read.subarray(6, n - 2)), id: '' }]);
        expect(modes.length).toBe(1);
        expect((modes[0] & M_UTF8_OUT) !== 0, `${n} B`).toBe(n > 384);
      }
      p.dispose();
    } finally {
      proto.pushCore = original;
    }
  });

  /** Events, comments, IDs, types, retry, CR/LF/CRLF ends, ASCII and not, some longer than 1,024 units (PADDED). */
  const stream = (r: () => number, n: number, ascii: boolean): Uint8Array => {
    const words = ascii ? ['hello', 'world', 'a b c', '"q"', 'delta', '{}'] : ['hello', 'w\u00f6rld', '\u4e2d\u6587', '\ud83d\ude00', 'a b c', '"q"', 'caf\u00e9'];
    let s = '';
    for (let i = 0; i < n; i++) {
      const eol = r() < 0.1 ? '\r\n' : r() < 0.05 ? '\r' : '\n';
      const len = r() < 0.1 ? 100 + Math.floor(r() * 300) : 1 + Math.floor(r() * 20);
      const text = Array.from({ length: len }, () => words[Math.floor(r() * words.length)]).join(' ');
      if (r() < 0.1) s += `: ping ${words[i % words.length]}${eol}`;
      if (r() < 0.3) s += `event: ${r() < 0.5 ? 'content_block_delta' : words[i % words.length]}${eol}`;
      if (r() < 0.05) s += `id: ${i}${words[i % words.length]}${eol}`;
      if (r() < 0.02) s += `retry: ${i}${eol}`;
      s += `data: {"delta":{"text":${JSON.stringify(text)}}}${eol}`;
      if (r() < 0.1) s += `data: ${words[(i + 3) % words.length]}${eol}`;
      s += eol;
    }
    return enc.encode(s);
  };

  const v8 = chooseRoutes('browser', '', false, undefined, 'detected', 'other');
  const firefox = chooseRoutes('browser', '', false, undefined, 'detected', 'spidermonkey');
  const ROUTES: [string, StringRoutes][] = [
    ['V8 as chosen', v8], ['V8, no read through the core', { ...v8, sseCoreTo: 0 }], ['V8, every read through the core', { ...v8, sseCoreTo: Infinity }],
    ['Firefox as chosen', firefox], ['Firefox, reads up to 384 B through the core', { ...firefox, sseCoreTo: 384 }],
  ];

  /** The reads' events, comments and error on `routes`. */
  const outcome = (routes: StringRoutes, reads: Uint8Array[], fatal: boolean) => {
    forceStringRoute(routes);
    const comments: string[] = [];
    const p = new SseParser({ fatal, onComment: (c) => comments.push(c) });
    forceStringRoute(undefined);
    const got: SseEvent[] = [];
    let err: string | null = null;
    try {
      for (const c of reads) got.push(...p.push(c));
      got.push(...p.flush());
    } catch (e) {
      const x = e as { code?: string; offset?: number; events?: SseEvent[] };
      got.push(...(x.events ?? []));
      err = `${x.code} ${x.offset}`;
    }
    const out = { got, comments, err, retry: p.retry, lastEventId: p.lastEventId };
    p.dispose();
    return out;
  };

  test(`random streams in reads of 1 B to 2 KB around 384 B, a third ASCII, some corrupted, strict and not: every mix of the routes gives the same (seed ${SEED + 7})`, () => {
    const r = rng(SEED + 7);
    let corrupted = 0;
    for (let i = 0; i < 60; i++) {
      const bytes = stream(r, 5 + Math.floor(r() * 40), i % 3 === 0);
      if (r() < 0.3) {
        const at = Math.floor(r() * bytes.length);
        bytes[at] = [0xff, 0xc0, 0xed, 0x80, 0xf4][Math.floor(r() * 5)];
        corrupted++;
      }
      const kind = i % 4;
      const every = (n: number) => Array.from({ length: Math.ceil(bytes.length / n) - 1 }, (_, k) => (k + 1) * n);
      const reads = cut(bytes, kind === 0 ? every(384) : kind === 1 ? every(385) : randomCuts(bytes, r, kind === 2 ? 500 : 2048));
      for (const fatal of [true, false]) {
        const want = outcome(ROUTES[1][1], reads, fatal);
        for (const [name, routes] of ROUTES) expect(outcome(routes, reads, fatal), `stream ${i}, ${name}, fatal ${fatal}`).toEqual(want);
      }
    }
    expect(corrupted).toBeGreaterThan(5);
  });
});
