// The string routes (bindings/core/strings.ts): which one each runtime takes, and that every route
// gives the same text and the same errors (code, offset, text before) as every other, forced one
// after the other in this process, on conformance inputs and on seeded random streams; the same
// for the validator's routes (the core, or the platform's buffer.isUtf8 with the core's carry),
// and for SseParser's reads validated by the platform before the core frames them.
import { afterEach, describe, expect, test } from 'vitest';
import { LineDecoder, ModelStream, NdjsonDecoder, SseByteEvents, SseParser, SseRelay, Utf8DecodeError, Utf8Decoder, Utf8Validator } from '../../bindings/index.js';
import { jsEngine, runtimeName } from '../../bindings/core/runtime.js';
import { chooseRoutes, forceStringRoute, stringRoutes } from '../../bindings/core/strings.js';
import { SEED, concat, cut, randomCuts, rng } from '../helpers/random.js';
import { outcome } from '../helpers/thrown.js';
import { type Outcome, strictOracle } from '../helpers/utf8-oracle.js';

const enc = new TextEncoder();
const ROUTES = ['core', 'split', 'platform', 'textdecoder', 'textdecoder-whole'] as const;
/**
 * Every route, Bun's (short reads of ASCII text by the platform) and Node 26's (isUtf8 and
 * utf8Slice, and TextDecoder for long reads of text that is not ASCII: from 2 KiB here rather than
 * its 8 KiB, so that these streams' reads reach it, on whatever runtime runs this), forced in turn.
 */
const EACH = [...ROUTES, 'bun', 'node26'] as const;
type Route = (typeof EACH)[number];
const forced = (route: Route) => route === 'bun' ? chooseRoutes('bun', '1.4.5', true) : route === 'node26' ? { ...chooseRoutes('node', '26.12.1', true), utf8DecoderFrom: 2048 } : route;

afterEach(() => forceStringRoute(undefined));

describe('the route each runtime takes', () => {
  test('this runtime: the routes its name, version and Buffer call for (or SEAM_STRINGS)', () => {
    const { name, version } = runtimeName();
    const env = process.env.SEAM_STRINGS;
    const r = stringRoutes();
    expect(r).toEqual(chooseRoutes(name, version, true, env, env === undefined ? 'detected' : 'SEAM_STRINGS'));
    if (env === undefined) {
      // vitest runs on Node: 20 and 22 take the core route, 24 and later the split one
      expect(name).toBe('node');
      expect(r.utf8).toBe(Number(version.split('.')[0]) >= 24 ? 'split' : 'core');
      expect(r.frames).toBe('core');
    }
  });

  test('core: Node 20 and 22 and Deno (the core transcodes, one Buffer copy makes the string; Node validates reads from 1 KiB with buffer.isUtf8)', () => {
    for (const [name, version] of [['node', '20.20.2'], ['node', '22.23.5'], ['deno', '2.9.6']]) {
      expect(chooseRoutes(name, version, true)).toEqual({
        runtime: `${name} ${version}`, utf8: 'core', utf8PlatformFrom: Infinity, utf8Platform: name === 'node' ? 'buffer' : 'textdecoder', utf8DecoderFrom: Infinity, utf8ShortAscii: 'core', frames: 'core', sseData: 'whole', sseCoreTo: 0,
        validateFrom: name === 'node' ? 1024 : Infinity, sseValidFrom: Infinity, shortUnits: 32, by: 'detected',
      });
    }
  });

  test('split: Node 24 and 26 and Bun from 1 KiB reads (the platform decodes above, the core below, and on Bun ASCII below; Node by isUtf8 and utf8Slice, Node 26 by TextDecoder from 8 KiB of text that is not ASCII; the validator from 256 B on Node, every read on Bun)', () => {
    for (const version of ['24.22.3', '26.12.1']) {
      expect(chooseRoutes('node', version, true)).toEqual({
        runtime: `node ${version}`, utf8: 'split', utf8PlatformFrom: 1024, utf8Platform: 'buffer', utf8DecoderFrom: version === '24.22.3' ? Infinity : 8192, utf8ShortAscii: 'core', frames: 'core', sseData: 'whole', sseCoreTo: 0, validateFrom: 256, sseValidFrom: 1024, shortUnits: 32, by: 'detected',
      });
    }
    // (Bun: short reads of ASCII text by its TextDecoder too, the others through the core; every
    // read validated by its buffer.isUtf8)
    expect(chooseRoutes('bun', '1.4.5', true)).toEqual({ runtime: 'bun 1.4.5', utf8: 'split', utf8PlatformFrom: 1024, utf8Platform: 'textdecoder', utf8DecoderFrom: Infinity, utf8ShortAscii: 'platform', frames: 'core', sseData: 'whole', sseCoreTo: 0, validateFrom: 0, sseValidFrom: Infinity, shortUnits: 1, by: 'detected' });
  });

  test('workerd with a global Buffer (nodejs_compat, on by default from compatibility date 2026-08-04): the core route, as Node 22 and Deno take it, with no platform validation', () => {
    // (docs/runtimes.md, *workerd*: this route against the browsers' there, 1.1–2.7× but for ASCII
    // at 16 KiB reads; TextDecoder for long reads while the text is ASCII measured but not taken)
    expect(chooseRoutes('workerd', '', true)).toEqual({
      runtime: 'workerd', utf8: 'core', utf8PlatformFrom: Infinity, utf8Platform: 'textdecoder', utf8DecoderFrom: Infinity, utf8ShortAscii: 'core', frames: 'core', sseData: 'whole', sseCoreTo: 0,
      validateFrom: Infinity, sseValidFrom: Infinity, shortUnits: 32, by: 'detected',
    });
  });

  test('without a Buffer copy out of WebAssembly memory (browsers, workerd without nodejs_compat): reads up to 128 B through the core, longer ones by TextDecoder; frames by TextDecoder, SSE data in pieces in V8, whole in SpiderMonkey; SSE reads up to 384 B through the core in V8, none in SpiderMonkey', () => {
    for (const name of ['browser', 'workerd']) {
      expect(chooseRoutes(name, '', false)).toEqual({ runtime: name, utf8: 'split', utf8PlatformFrom: 129, utf8Platform: 'textdecoder', utf8DecoderFrom: Infinity, utf8ShortAscii: 'js', frames: 'textdecoder', sseData: 'pieces', sseCoreTo: 384, validateFrom: Infinity, sseValidFrom: Infinity, shortUnits: 16, by: 'detected' });
    }
    expect(chooseRoutes('browser', '', false, undefined, 'detected', 'spidermonkey')).toEqual({
      runtime: 'browser', utf8: 'split', utf8PlatformFrom: 129, utf8Platform: 'textdecoder', utf8DecoderFrom: Infinity, utf8ShortAscii: 'js', frames: 'textdecoder', sseData: 'whole', sseCoreTo: 0, validateFrom: Infinity, sseValidFrom: Infinity, shortUnits: 16, by: 'detected',
    });
    // (a runtime with a Buffer copy takes the core route, which writes UTF-16: nothing to split, whatever the engine)
    expect(chooseRoutes('node', '24.22.3', true, undefined, 'detected', 'spidermonkey')).toMatchObject({ frames: 'core', sseData: 'whole', sseCoreTo: 0 });
  });

  test('the engine: SpiderMonkey only where its own global is', () => {
    expect(jsEngine()).toBe('other'); // (vitest runs on Node: V8)
    const g = globalThis as { InternalError?: unknown };
    try {
      g.InternalError = class InternalError extends Error {}; // a page's own: not the engine's
      expect(jsEngine()).toBe('other');
      g.InternalError = Error.bind(null); // a native function, as SpiderMonkey's is
      expect(jsEngine()).toBe('spidermonkey');
    } finally {
      delete g.InternalError;
    }
  });

  test('SEAM_STRINGS forces a route; anything else is a TypeError', () => {
    expect(chooseRoutes('node', '20.20.2', true, 'platform', 'SEAM_STRINGS')).toMatchObject({ utf8: 'split', utf8PlatformFrom: 0, frames: 'core', validateFrom: 0, sseValidFrom: 0 });
    expect(chooseRoutes('node', '20.20.2', true, 'split', 'SEAM_STRINGS')).toMatchObject({ utf8: 'split', utf8PlatformFrom: 2048, validateFrom: 1024, sseValidFrom: 2048 });
    expect(chooseRoutes('deno', '2.9.6', true, 'split', 'SEAM_STRINGS')).toMatchObject({ utf8: 'split', utf8PlatformFrom: 2048, validateFrom: 2048 });
    expect(chooseRoutes('node', '24.22.3', true, 'core', 'SEAM_STRINGS')).toMatchObject({ utf8: 'core', frames: 'core', validateFrom: Infinity, sseValidFrom: Infinity });
    // (the browsers' routes: Utf8Decoder as there, on the split route from 129 B)
    expect(chooseRoutes('node', '24.22.3', true, 'textdecoder', 'SEAM_STRINGS')).toMatchObject({ utf8: 'split', utf8PlatformFrom: 129, utf8Platform: 'textdecoder', utf8ShortAscii: 'js', frames: 'textdecoder', sseData: 'pieces', sseCoreTo: 384 });
    expect(chooseRoutes('node', '24.22.3', true, 'textdecoder-whole', 'SEAM_STRINGS')).toMatchObject({ utf8: 'split', utf8PlatformFrom: 129, utf8Platform: 'textdecoder', utf8ShortAscii: 'js', frames: 'textdecoder', sseData: 'whole', sseCoreTo: 0 });
    expect(() => chooseRoutes('node', '24.22.3', true, 'fast')).toThrow(new TypeError('SEAM_STRINGS must be "core", "split", "platform", "textdecoder" or "textdecoder-whole", got "fast"'));
  });

  test('a forced route is the one decoders made after it take', () => {
    for (const route of ROUTES) {
      forceStringRoute(route);
      expect(stringRoutes().utf8).toBe(route === 'core' ? 'core' : 'split');
      expect(stringRoutes().sseData).toBe(route === 'textdecoder' ? 'pieces' : 'whole');
      expect(stringRoutes().by).toBe('forced');
    }
    forceStringRoute(chooseRoutes('bun', '1.4.5', true));
    expect(stringRoutes()).toMatchObject({ runtime: 'bun 1.4.5', utf8ShortAscii: 'platform', by: 'forced' });
  });
});

/** Each route's outcome of a stream, decoded by a decoder made on that route (and, strict, validated by a validator made there). */
function onEachRoute(pieces: Uint8Array[], fatal: boolean, ignoreBOM: boolean): Record<Route, StrictOutcome | string[]> {
  const out = {} as Record<Route, StrictOutcome | string[]>;
  for (const route of EACH) {
    forceStringRoute(forced(route));
    const d = new Utf8Decoder({ fatal, ignoreBOM });
    if (fatal) out[route] = { ...strictWith(d, pieces), validator: validated(pieces, ignoreBOM) };
    else out[route] = [...pieces.map((p) => d.push(p)), d.flush()];
    d.dispose();
  }
  forceStringRoute(undefined);
  return out;
}

/** A strict decoder's outcome, with what a failure leaves besides code, offset and text: its bad bytes and the bytes counted in. */
type DecoderOutcome = Outcome & { bytes?: number[]; bytesIn: number };
type StrictOutcome = DecoderOutcome & { validator: ReturnType<typeof validated> };
function strictWith(d: Utf8Decoder, pieces: Uint8Array[]): DecoderOutcome {
  let text = '';
  try {
    for (const p of pieces) text += d.push(p);
    text += d.flush();
    return { text, bytesIn: d.bytesIn };
  } catch (e) {
    if (!(e instanceof Utf8DecodeError)) throw e;
    return { text: text + e.text, error: { code: e.code, offset: e.offset }, bytes: [...e.bytes], bytesIn: d.bytesIn };
  }
}

/** A validator's outcome of a stream: its error, the bad bytes on it and the bytes counted in. */
function validated(pieces: Uint8Array[], ignoreBOM: boolean): { error?: Outcome['error']; bytes?: number[]; bytesIn: number } {
  const v = new Utf8Validator({ ignoreBOM });
  try {
    for (const p of pieces) v.push(p);
    v.flush();
    return { bytesIn: v.bytesIn };
  } catch (e) {
    if (!(e instanceof Utf8DecodeError)) throw e;
    return { error: { code: e.code, offset: e.offset }, bytes: [...e.bytes], bytesIn: v.bytesIn };
  } finally {
    v.dispose();
  }
}

function expectSame(pieces: Uint8Array[], fatal: boolean, ignoreBOM: boolean, what: string): Outcome | string[] {
  const all = onEachRoute(pieces, fatal, ignoreBOM);
  for (const route of EACH) expect(all[route], `${what}: ${route} route against core`).toEqual(all.core);
  if (!fatal) return all.core;
  // (for the oracle: text and error; the validator's error is the strict decoder's)
  const { bytes, bytesIn, validator, ...outcome } = all.core as StrictOutcome;
  expect(validator, `${what}: the validator against the strict decoder`).toEqual(outcome.error === undefined ? { bytesIn } : { error: outcome.error, bytes, bytesIn });
  return outcome;
}

/** Malformed and edge sequences of the UTF-8 conformance lists (Kuhn's stress test, WHATWG, Unicode 3.9). */
const conformance: [string, number[]][] = [
  ['lone continuation', [0x80]], ['two continuations', [0x80, 0xbf]], ['C0 overlong', [0xc0, 0xaf]], ['C1 overlong', [0xc1, 0xbf]],
  ['E0 overlong', [0xe0, 0x80, 0xaf]], ['E0 9F overlong', [0xe0, 0x9f, 0xbf]], ['F0 overlong', [0xf0, 0x80, 0x80, 0xaf]],
  ['F0 8F overlong', [0xf0, 0x8f, 0xbf, 0xbf]], ['surrogate D800', [0xed, 0xa0, 0x80]], ['surrogate DFFF', [0xed, 0xbf, 0xbf]],
  ['paired surrogates', [0xed, 0xa0, 0x80, 0xed, 0xb0, 0x80]], ['F4 90 above U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
  ['F5', [0xf5, 0x80, 0x80, 0x80]], ['FE', [0xfe]], ['FF', [0xff]], ['truncated 2', [0xc3]], ['truncated 3/1', [0xe4]],
  ['truncated 3/2', [0xe4, 0xb8]], ['truncated 4/3', [0xf0, 0x9f, 0x98]], ['lead then ASCII', [0xe4, 0x41]],
  ['U+FFFF', [0xef, 0xbf, 0xbf]], ['U+10FFFF', [0xf4, 0x8f, 0xbf, 0xbf]], ['U+0080', [0xc2, 0x80]], ['U+07FF', [0xdf, 0xbf]],
  ['U+0800', [0xe0, 0xa0, 0x80]], ['U+D7FF', [0xed, 0x9f, 0xbf]], ['U+E000', [0xee, 0x80, 0x80]], ['U+10000', [0xf0, 0x90, 0x80, 0x80]],
  ['BOM', [0xef, 0xbb, 0xbf]], ['half a BOM', [0xef, 0xbb]], ['5-byte form', [0xf8, 0x88, 0x80, 0x80, 0x80]],
];

describe('every route gives the same text and errors', () => {
  const filler = (n: number, r: () => number) => {
    const alphabet = ['a', 'data: ', 'é', 'ж', '中文', '😀', '🇯🇵', '\n'];
    let s = '';
    while (s.length < n) s += alphabet[Math.floor(r() * alphabet.length)];
    return enc.encode(s);
  };

  test('conformance sequences at the start, inside and at the end of 5 KB streams, in reads of 1 B to all of it', () => {
    const r = rng(SEED);
    const reads = [1, 3, 64, 1000, 2048, 4096, 1 << 20];
    let checked = 0;
    for (const [name, seq] of conformance) {
      const body = filler(2500, r);
      for (const at of [0, 1, body.length >> 1, body.length]) {
        const bytes = new Uint8Array(body.length + seq.length);
        bytes.set(body.subarray(0, at));
        bytes.set(seq, at);
        bytes.set(body.subarray(at), at + seq.length);
        for (const read of reads) {
          const pieces = cut(bytes, Array.from({ length: Math.ceil(bytes.length / read) - 1 }, (_, i) => (i + 1) * read));
          for (const ignoreBOM of [false, true]) {
            const strict = expectSame(pieces, true, ignoreBOM, `${name} at ${at}, reads of ${read}, ignoreBOM ${ignoreBOM}`);
            expect(strict, `${name} at ${at}: the oracle`).toEqual(strictOracle(bytes, ignoreBOM));
            expectSame(pieces, false, ignoreBOM, `${name} at ${at}, reads of ${read}, replacing`);
            checked++;
          }
        }
      }
    }
    expect(checked).toBe(conformance.length * 4 * reads.length * 2);
  });

  test('a character cut between reads, completed or rejected by a long read after a short or a long one', () => {
    const r = rng(SEED + 2);
    let checked = 0;
    for (const [name, seq] of conformance) {
      for (const headBytes of [40, 300]) {
        const head = filler(headBytes, r);
        const tail = filler(600, r);
        const bytes = new Uint8Array(head.length + seq.length + tail.length);
        bytes.set(head);
        bytes.set(seq, head.length);
        bytes.set(tail, head.length + seq.length);
        for (let k = 1; k < seq.length; k++) {
          // the first read ends k bytes into the sequence; the second, long, holds the rest
          const pieces = cut(bytes, [head.length + k]);
          const what = `${name}, ${head.length} B before it, cut ${k} bytes in`;
          expect(expectSame(pieces, true, false, what), `${what}: the oracle`).toEqual(strictOracle(bytes));
          expectSame(pieces, false, false, `${what}, replacing`);
          checked++;
        }
      }
    }
    expect(checked).toBe(2 * conformance.reduce((n, [, seq]) => n + seq.length - 1, 0));
  });

  test(`random streams, random reads of up to 6 KB, some corrupted (seed ${SEED})`, () => {
    const r = rng(SEED + 1);
    for (let i = 0; i < 150; i++) {
      const bytes = Uint8Array.from(filler(200 + Math.floor(r() * 12000), r));
      if (i % 3 === 0) bytes[Math.floor(r() * bytes.length)] = [0x80, 0xc0, 0xed, 0xf4, 0xff][i % 5];
      if (i % 7 === 0) bytes.set([0xef, 0xbb, 0xbf], 0);
      const pieces = cut(bytes, randomCuts(bytes, r, i % 2 === 0 ? 6000 : 300));
      const ignoreBOM = i % 4 === 1;
      const strict = expectSame(pieces, true, ignoreBOM, `stream ${i} (seed ${SEED + 1})`);
      expect(strict, `stream ${i} (seed ${SEED + 1}): the oracle`).toEqual(strictOracle(bytes, ignoreBOM));
      expectSame(pieces, false, ignoreBOM, `stream ${i} replacing (seed ${SEED + 1})`);
    }
  });
});

describe('SseParser: reads validated by the platform (sseValidFrom) give what the core gives', () => {
  const enc2 = (s: string) => enc.encode(s);
  /** A stream of OpenAI- and Anthropic-shaped events, comments, IDs and CRLF ends, with ASCII and non-ASCII data. */
  const stream = (r: () => number, n: number): Uint8Array => {
    const words = ['hello', 'w\u00f6rld', '\u4e2d\u6587', '\ud83d\ude00', 'a b c', '"q"', 'caf\u00e9'];
    let s = '';
    for (let i = 0; i < n; i++) {
      const eol = r() < 0.2 ? '\r\n' : '\n';
      const text = Array.from({ length: 1 + Math.floor(r() * 12) }, () => words[Math.floor(r() * words.length)]).join(' ');
      if (r() < 0.1) s += `: ping${eol}`;
      if (r() < 0.3) s += `event: content_block_delta${eol}`;
      if (r() < 0.05) s += `id: ${i}${eol}`;
      s += `data: {"delta":{"text":${JSON.stringify(text)}}}${eol}`;
      if (r() < 0.1) s += `data: second line${eol}`;
      s += eol;
    }
    return enc2(s);
  };

  /** A stream's reads through a string and a byte parser made on `route`: their events and errors. */
  const onRoute = (route: 'core' | 'platform', reads: Uint8Array[]) => {
    forceStringRoute(route);
    const a = new SseParser();
    const b = new SseParser();
    forceStringRoute(undefined);
    const strings = outcome(a, reads, 'events');
    // the byte path's events as [type, data, id], those on its error too
    const rows = (e: SseByteEvents) => Array.from({ length: e.length }, (_, i) => [e.type(i), e.dataText(i), e.id(i)]);
    const got: string[][] = [];
    let err: string | null = null;
    try {
      for (const c of reads) got.push(...rows(b.pushBytes(c)));
      got.push(...rows(b.flushBytes()));
    } catch (e) {
      const x = e as { code: string; offset: number; events: SseByteEvents };
      got.push(...rows(x.events));
      err = `${x.code} ${x.offset}`;
    }
    return { strings, bytes: { got, err } };
  };

  test(`random streams in reads of 1 B to 64 KiB, some corrupted, on both paths: the platform's route against the core's (seed ${SEED + 3})`, () => {
    const r = rng(SEED + 3);
    let corrupted = 0;
    for (let i = 0; i < 120; i++) {
      const bytes = stream(r, 5 + Math.floor(r() * 300));
      if (i % 4 === 3) {
        bytes[Math.floor(r() * bytes.length)] = [0x80, 0xc0, 0xed, 0xff][i % 4];
        corrupted++;
      }
      const maxPiece = [8, 300, 3000, 70000][i % 4];
      const reads = cut(bytes, randomCuts(bytes, r, maxPiece));
      const what = `stream ${i}, reads up to ${maxPiece} B (seed ${SEED + 3})`;
      const core = onRoute('core', reads);
      expect(onRoute('platform', reads), what).toEqual(core);
      // (the string path's events are the byte path's)
      expect(core.strings.got.map((e) => [e.type, e.data, e.id]), what).toEqual(core.bytes.got);
    }
    expect(corrupted).toBe(30);
  });

  test(`LineDecoder and NdjsonDecoder: the same streams as lines, in reads of up to 8 B to 70 KB, some corrupted, on both routes (seed ${SEED + 6})`, () => {
    const r = rng(SEED + 6);
    const made = (route: 'core' | 'platform') => {
      forceStringRoute(route);
      const d = [new LineDecoder(), new NdjsonDecoder()];
      forceStringRoute(undefined);
      return d;
    };
    let corrupted = 0;
    for (let i = 0; i < 80; i++) {
      const text = new TextDecoder().decode(stream(r, 5 + Math.floor(r() * 300)));
      // as lines, and as NDJSON: each event's JSON a line
      const bytes = [enc2(text), enc2(text.split(/\r?\n/).filter((l) => l.startsWith('data: {')).map((l) => l.slice(6)).join('\n') + '\n')];
      for (const b of bytes) {
        if (i % 4 === 3) {
          b[Math.floor(r() * b.length)] = [0x80, 0xc0, 0xed, 0xff][i % 4];
          corrupted++;
        }
      }
      const cuts = [8, 300, 3000, 70000][Math.floor(i / 4) % 4];
      const reads = bytes.map((b) => cut(b, randomCuts(b, r, cuts)));
      const [lc, nc] = made('core');
      const [lp, np] = made('platform');
      const what = `stream ${i}, reads up to ${cuts} B (seed ${SEED + 6})`;
      expect(outcome(lp, reads[0], 'lines'), what).toEqual(outcome(lc, reads[0], 'lines'));
      expect(outcome(np, reads[1], 'lines'), what).toEqual(outcome(nc, reads[1], 'lines'));
    }
    expect(corrupted).toBe(40);
  });

  test(`reads of whole events (those framed in one step), ASCII and not, some corrupted: the platform's route against the core's (seed ${SEED + 4})`, () => {
    const r = rng(SEED + 4);
    const words = ['hello', 'world', 'a b', '"q"', 'w\u00f6rld', '\u4e2d\u6587', '\ud83d\ude00'];
    let corrupted = 0;
    for (let i = 0; i < 96; i++) {
      // OpenAI-shaped (data only) or Anthropic-shaped (one type throughout); a third of the streams ASCII
      const typed = i % 2 === 1;
      const ascii = i % 3 === 0;
      const events: Uint8Array[] = [];
      for (let k = 0, n = 20 + Math.floor(r() * 60); k < n; k++) {
        const text = Array.from({ length: 1 + Math.floor(r() * 12) }, () => words[Math.floor(r() * (ascii ? 4 : words.length))]).join(' ');
        events.push(enc2(`${typed ? 'event: content_block_delta\n' : ''}data: {"delta":{"text":${JSON.stringify(text)}}}\n\n`));
      }
      if (i % 4 === 3) {
        const e = events[Math.floor(r() * events.length)];
        e[Math.floor(r() * e.length)] = [0x80, 0xc0, 0xed, 0xff][corrupted % 4];
        corrupted++;
      }
      // reads of 1, 3, 8 or 16 events, or of 1 to 20 at random
      const per = [1, 3, 8, 16, 0][i % 5];
      const reads: Uint8Array[] = [];
      for (let k = 0; k < events.length;) {
        const m = Math.min(events.length - k, per || 1 + Math.floor(r() * 20));
        reads.push(concat(events.slice(k, k + m)));
        k += m;
      }
      const what = `stream ${i}, ${per || 'random'} events a read (seed ${SEED + 4})`;
      const core = onRoute('core', reads);
      expect(onRoute('platform', reads), what).toEqual(core);
      expect(core.strings.got.map((e) => [e.type, e.data, e.id]), what).toEqual(core.bytes.got);
    }
    expect(corrupted).toBe(24);
  });
});

describe('ModelStream and SseRelay: reads validated by the platform give what the core gives', () => {
  type Shape = 'openai' | 'anthropic' | 'ollama';
  /** An OpenAI- or Anthropic-shaped (SSE) or Ollama-shaped (NDJSON) stream of `n` text deltas, its completion at the end. */
  const stream = (r: () => number, shape: Shape, n: number, ascii: boolean): Uint8Array => {
    const words = ascii ? ['hello', 'a b', '"q"', 'x\\y'] : ['hello', 'w\u00f6rld', '\u4e2d\u6587', '\ud83d\ude00', 'e\u0301', '"q"'];
    let s = shape === 'anthropic' ? 'event: message_start\ndata: {"type":"message_start","message":{"id":"m","role":"assistant"}}\n\n' : '';
    for (let i = 0; i < n; i++) {
      const text = JSON.stringify(Array.from({ length: 1 + Math.floor(r() * 8) }, () => words[Math.floor(r() * words.length)]).join(' '));
      s += shape === 'anthropic'
        ? `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":${text}}}\n\n`
        : shape === 'openai'
          ? `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":${text}},"finish_reason":null}]}\n\n`
          : `{"model":"m","message":{"role":"assistant","content":${text}},"done":false}\n`;
    }
    s += shape === 'anthropic'
      ? 'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"}}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n'
      : shape === 'openai'
        ? 'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
        : '{"model":"m","message":{"role":"assistant","content":""},"done_reason":"stop","done":true}\n';
    return enc.encode(s);
  };

  /** What a stream made on `route` gives for the reads: its text (raw and with the defaults), report and error, and a relay's bytes. */
  const onRoute = (route: 'core' | 'platform', reads: Uint8Array[], format: Shape) => {
    forceStringRoute(route);
    const streams = [new ModelStream({ format, raw: true }), new ModelStream({ format })];
    const relay = new SseRelay({ from: format });
    forceStringRoute(undefined);
    const out: unknown[] = streams.map((m) => {
      let text = '';
      let err = '';
      try {
        for (const c of reads) text += m.push(c);
        text += m.flush();
      } catch (e) {
        const x = e as { code: string; offset: number };
        err = `${x.code} ${x.offset}`;
      }
      const r = m.finish();
      return { text, err, status: r.status, report: r.text, finish: r.finishReason };
    });
    let relayed = '';
    const dec = new TextDecoder();
    try {
      for (const c of reads) relayed += dec.decode(relay.push(c), { stream: true });
      relayed += dec.decode(relay.flush());
    } catch (e) {
      const x = e as { code: string; offset: number };
      out.push(`${x.code} ${x.offset}`);
    }
    // (each relay names its completion, and stamps the second it was made where the upstream has no `created`)
    out.push(relayed.replace(/chatcmpl-seam\w+/g, 'chatcmpl-seam').replace(/"created":\d+/g, '"created":0'));
    return out;
  };

  test(`seeded OpenAI-, Anthropic- and Ollama-shaped streams in reads of whole events and of up to 70 KB, a fifth ASCII, a quarter corrupted (seed ${SEED + 5})`, () => {
    const r = rng(SEED + 5);
    let corrupted = 0;
    for (let i = 0; i < 96; i++) {
      const shape = (['openai', 'anthropic', 'ollama'] as const)[i % 3];
      const bytes = stream(r, shape, 20 + Math.floor(r() * 400), i % 5 === 0);
      if (i % 4 === 3) {
        bytes[200 + Math.floor(r() * (bytes.length - 300))] = [0x80, 0xc0, 0xed, 0xff][corrupted % 4];
        corrupted++;
      }
      let reads: Uint8Array[];
      if (i % 8 < 2) {
        // eight whole events (or lines) a read
        const ends: number[] = [];
        for (let k = 1, n = 0; k < bytes.length; k++) if (bytes[k] === 10 && (shape === 'ollama' || bytes[k - 1] === 10) && ++n % 8 === 0) ends.push(k + 1);
        reads = cut(bytes, ends.filter((e) => e < bytes.length));
      } else {
        reads = cut(bytes, randomCuts(bytes, r, [300, 3000, 70_000][Math.floor(i / 3) % 3]));
      }
      const what = `stream ${i} (seed ${SEED + 5})`;
      expect(onRoute('platform', reads, shape), what).toEqual(onRoute('core', reads, shape));
    }
    expect(corrupted).toBe(24);
  });
});
