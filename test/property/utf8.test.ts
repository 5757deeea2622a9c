// Differential properties: Utf8Decoder against TextDecoder (strict and replacing) on random valid
// and corrupted input, under every kind of chunking. Seeded: set SEAM_SEED to replay.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Utf8Decoder, Utf8Validator, Utf8DecodeError } from '../../bindings/index.js';
import { SEED, cut, standardChunkings } from '../helpers/random.js';
import { decodeWith, replacingOracle, replacingOurs, strictOracle } from '../helpers/utf8-oracle.js';

const enc = new TextEncoder();
const params = (numRuns: number) => ({ seed: SEED, numRuns, endOnFailure: true });

// Runs of one kind of character, so that whole SIMD blocks of ASCII, 2-, 3- and 4-byte
// characters occur as well as mixtures at every alignment.
const codePointOf = [
  fc.integer({ min: 0x20, max: 0x7e }),
  fc.integer({ min: 0, max: 0x7f }),
  fc.integer({ min: 0x80, max: 0x7ff }),
  fc.integer({ min: 0x800, max: 0xffff }).filter((c) => (c < 0xd800 || c > 0xdfff) && c !== 0xfffd),
  fc.integer({ min: 0x10000, max: 0x10ffff }),
  fc.constantFrom(0xfeff, 0x4e16, 0x1f600, 0xe9, 0x0a, 0x0d),
];
const run = fc
  .tuple(fc.integer({ min: 0, max: codePointOf.length - 1 }), fc.integer({ min: 1, max: 40 }))
  .chain(([k, n]) => fc.array(codePointOf[k], { minLength: n, maxLength: n }));
const validText = fc.array(run, { maxLength: 12 }).map((runs) => String.fromCodePoint(...runs.flat()));

// Corruptions aimed at Table 3-7: bad leads, stray continuations, cut sequences, surrogates,
// overlongs and values above U+10FFFF.
const nasty = [0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xf8, 0xfe, 0xff];
// Sequences one byte away from valid: each boundary of Table 3-7 from both sides.
const edgy = [
  [0xed, 0xa0, 0x80], [0xed, 0x9f, 0xbf], [0xe0, 0x9f, 0xbf], [0xe0, 0xa0, 0x80], [0xf0, 0x8f, 0xbf, 0xbf],
  [0xf0, 0x90, 0x80, 0x80], [0xf4, 0x8f, 0xbf, 0xbf], [0xf4, 0x90, 0x80, 0x80], [0xc1, 0xbf], [0xc2, 0x80],
  [0xe1, 0x80], [0xf1, 0x80, 0x80], [0xef, 0xbb, 0xbf],
];
const mutation = fc.tuple(
  fc.nat(),
  fc.oneof(fc.constantFrom(...nasty), fc.integer({ min: 0, max: 255 }), fc.constantFrom(...edgy)),
  fc.constantFrom('set', 'insert', 'delete'),
);
const corrupted = fc.tuple(validText, fc.array(mutation, { minLength: 1, maxLength: 4 })).map(([s, muts]) => {
  const b = Array.from(enc.encode(s));
  for (const [at, v, op] of muts) {
    const i = b.length === 0 ? 0 : at % (b.length + (op === 'insert' ? 1 : 0));
    if (Array.isArray(v)) b.splice(i, op === 'set' ? v.length : 0, ...v);
    else if (op === 'set' && b.length) b[i] = v;
    else if (op === 'insert') b.splice(i, 0, v);
    else if (b.length) b.splice(i, 1);
  }
  return Uint8Array.from(b);
});
const noRealReplacement = (b: Uint8Array) => !Buffer.from(b).includes(Buffer.from([0xef, 0xbf, 0xbd]));

const cuts = (b: Uint8Array) =>
  fc.uniqueArray(fc.integer({ min: 0, max: b.length }), { maxLength: 12 }).map((a) => a.sort((x, y) => x - y));
const withCuts = (g: fc.Arbitrary<Uint8Array>) => g.chain((b) => cuts(b).map((at) => [b, at] as const));

describe('Utf8Decoder against TextDecoder', () => {
  it('valid text: any random chunking gives TextDecoder’s text', () => {
    fc.assert(
      fc.property(withCuts(validText.map((s) => enc.encode(s))), fc.boolean(), ([b, at], ignoreBOM) => {
        const pieces = cut(b, at);
        expect(decodeWith(new Utf8Decoder({ ignoreBOM }), pieces)).toEqual({
          text: new TextDecoder('utf-8', { ignoreBOM }).decode(b),
        });
        expect(replacingOurs(pieces, ignoreBOM)).toEqual(replacingOracle(pieces, ignoreBOM));
      }),
      params(1500),
    );
  });

  it('corrupted input, strict: same verdict, absolute offset and text before the error for any chunking', () => {
    fc.assert(
      fc.property(withCuts(corrupted.filter(noRealReplacement)), ([b, at]) => {
        expect(decodeWith(new Utf8Decoder(), cut(b, at))).toEqual(strictOracle(b));
      }),
      params(3000),
    );
  });

  it('corrupted input, replacing: identical to TextDecoder (stream: true) piece by piece', () => {
    fc.assert(
      fc.property(withCuts(corrupted), fc.boolean(), ([b, at], ignoreBOM) => {
        const pieces = cut(b, at);
        expect(replacingOurs(pieces, ignoreBOM)).toEqual(replacingOracle(pieces, ignoreBOM));
      }),
      params(3000),
    );
  });

  it('every two-piece split and the one-byte drip equal one whole chunk', () => {
    fc.assert(
      fc.property(fc.oneof(validText.map((s) => enc.encode(s)), corrupted).filter((b) => b.length <= 200), (b) => {
        const want = noRealReplacement(b) ? strictOracle(b) : decodeWith(new Utf8Decoder(), [b]);
        const wantReplaced = replacingOracle([b]).join('');
        for (const pieces of standardChunkings(b)) {
          expect(decodeWith(new Utf8Decoder(), pieces)).toEqual(want);
          expect(replacingOurs(pieces).join('')).toBe(wantReplaced);
        }
      }),
      params(150),
    );
  });

  it('pendingBytes after every push, and the bad bytes an error names, for any chunking', () => {
    fc.assert(
      fc.property(withCuts(fc.oneof(corrupted, validText.map((s) => enc.encode(s)))), fc.boolean(), ([b, at], ignoreBOM) => {
        const d = new Utf8Decoder({ ignoreBOM });
        const bom = !ignoreBOM && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf ? 3 : 0;
        let text = '';
        let pushed = 0;
        try {
          for (const p of cut(b, at)) {
            text += d.push(p);
            pushed += p.length;
            // held: what came in and is not in the text yet (a BOM split across reads is held too)
            const held = pushed - enc.encode(text).length - (pushed >= 3 ? bom : 0);
            expect(d.pendingBytes).toBe(held);
          }
          d.flush();
          expect(d.pendingBytes).toBe(0);
        } catch (e) {
          if (!(e instanceof Utf8DecodeError)) throw e;
          // the bad bytes as they lie in the input, at the error's offset; a truncated end is all the rest
          if (e.code === 'ERR_TRUNCATED_UTF8') expect([...e.bytes]).toEqual([...b.subarray(e.offset)]);
          else expect([...e.bytes]).toEqual([...b.subarray(e.offset, e.offset + e.bytes.length)]);
          expect(e.bytes.length).toBeGreaterThan(0);
        }
      }),
      params(1500),
    );
  });

  it('Utf8Validator agrees with the strict decoder', () => {
    fc.assert(
      fc.property(withCuts(fc.oneof(corrupted, validText.map((s) => enc.encode(s)))), ([b, at]) => {
        const v = new Utf8Validator({ ignoreBOM: false });
        const want = decodeWith(new Utf8Decoder(), [b]).error;
        let got: { code: string; offset: number } | undefined;
        try {
          for (const p of cut(b, at)) v.push(p);
          v.flush();
        } catch (e) {
          if (!(e instanceof Utf8DecodeError)) throw e;
          got = { code: e.code, offset: e.offset };
        }
        expect(got).toEqual(want);
      }),
      params(1500),
    );
  });
});

describe('bit flips of valid text (every bit of every byte)', () => {
  const samples = [
    'ASCII and é, 世界, 😀 — mixed.',
    'Привет, мир! Ελληνικά. عربى',
    '𝄞𝄢😀🙏🏽👩‍💻🇯🇵',
    '한국어 텍스트와 日本語のテキスト',
  ];
  it.each(samples)('%s', (s) => {
    const b = enc.encode(s);
    for (let i = 0; i < b.length; i++) {
      for (let bit = 0; bit < 8; bit++) {
        const f = b.slice();
        f[i] ^= 1 << bit;
        const want = noRealReplacement(f) ? strictOracle(f) : decodeWith(new Utf8Decoder(), [f]);
        expect(decodeWith(new Utf8Decoder(), [f])).toEqual(want);
        // and cut right at the flipped byte, and one after it
        expect(decodeWith(new Utf8Decoder(), cut(f, [i]))).toEqual(want);
        expect(decodeWith(new Utf8Decoder(), cut(f, [i + 1]))).toEqual(want);
        const pieces = cut(f, [i, Math.min(f.length, i + 2)]);
        expect(replacingOurs(pieces)).toEqual(replacingOracle(pieces));
      }
    }
  });
});

describe('long inputs cross SIMD blocks and input windows', () => {
  it('random long texts with random large pieces', () => {
    fc.assert(
      fc.property(
        fc.array(validText, { minLength: 20, maxLength: 60 }).map((a) => enc.encode(a.join(''))),
        fc.integer({ min: 1, max: 5000 }),
        (b, piece) => {
          const pieces = Array.from({ length: Math.ceil(b.length / piece) }, (_, i) => b.subarray(i * piece, (i + 1) * piece));
          expect(decodeWith(new Utf8Decoder(), pieces).text).toBe(new TextDecoder().decode(b));
          expect(replacingOurs(pieces)).toEqual(replacingOracle(pieces));
        },
      ),
      params(200),
    );
  });

  it('one error placed at every offset of a 200 KB stream (sampled) is found at that offset', () => {
    const base = enc.encode('abc 世界 😀 é '.repeat(10_000)); // > 3 input windows
    for (let k = 0; k < 200; k++) {
      const at = Math.floor((k / 200) * base.length) + (k % 7);
      const b = base.slice();
      b[at] = 0xff;
      expect(decodeWith(new Utf8Decoder(), [b])).toEqual(strictOracle(b));
    }
  });
});
