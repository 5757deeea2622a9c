// Property tests of the text layer against the runtime's oracles: Intl.Segmenter (Node 20 here
// ships ICU 78 = Unicode 17.0), String.prototype.normalize, TextEncoder and node:crypto.
// fast-check prints the seed and path of a failing case; set SEAM_SEED to replay another run.
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TextAssembler } from '../../bindings/text/assembler.js';
import { BREAK, GraphemeCommitter, START_STATE, step } from '../../bindings/text/grapheme.js';
import { propOf } from '../../bindings/text/unicode/props.js';
import { NfcCommitter } from '../../bindings/text/nfc.js';
import { convertOffset } from '../../bindings/text/offsets.js';
import { countText } from '../../bindings/text/counts.js';
import { cut } from '../helpers/random.js';

const SEED = Number(process.env.SEAM_SEED ?? 0x7e47);
const RUNS = 1500;

const segmenter = new Intl.Segmenter('en', { granularity: 'grapheme' });
const boundaries = (s: string): number[] => [...[...segmenter.segment(s)].map((x) => x.index), s.length];
const graphemeCount = (s: string): number => [...segmenter.segment(s)].length;

// Pieces chosen to sit on every rule and every NFC edge case we know of.
const ATOMS = [
  // ASCII, controls, CR LF
  'a', 'e', 'Z', ' ', '.', '\r', '\n', '\r\n', '\t', '\u0000', '\u007f', '\u0085', '\u00ad', '\u200b',
  // combining marks (ccc 230, 220, 1, 202, 10...), in and out of canonical order
  '\u0301', '\u0308', '\u0323', '\u0334', '\u0327', '\u05b0', '\u0f71', '\u0f72', '\u1dce', '\u0345', '\u034f',
  // NFC changes: precomposed, singletons, exclusions, non-starter decompositions
  '\u00e9', 'A\u030a', '\u212b', '\u2126', '\u0958', '\u1e0a', '\u0344', '\u0f73', '\u1e9b\u0323',
  // Hangul syllables and conjoining jamo L V T
  '\uac00', '\uac01', '\u1100', '\u1161', '\u11a8', '\u1100\u1161\u11a8', '\ud7b0', '\u115f',
  // Indic conjuncts (GB9c), incl. U+0915 U+094D U+0937, nukta, ZWJ, spacing marks, prepend
  '\u0915', '\u094d', '\u0937', '\u093c', '\u093f', '\u0924', '\u200d', '\u0903', '\u0600', '\u0d4e', '\u0a95\u0acd\u0ab7',
  // emoji: ZWJ sequences, modifiers, VS16, keycaps, pictographs, tags
  '\u{1f469}\u200d\u{1f469}\u200d\u{1f467}', '\u{1f44d}\u{1f3fd}', '\u2764\ufe0f', '#\ufe0f\u20e3', '\u00a9', '\u{1f600}',
  '\u{1f3f4}\u{e0067}\u{e0062}\u{e0065}\u{e006e}\u{e0067}\u{e007f}', '\u{1f9d1}\u200d\u{1f4bb}', '\ufe0f', '\u{1f3fb}',
  // regional indicators alone, so runs of any length and parity occur
  '\u{1f1fa}', '\u{1f1f8}', '\u{1f1ef}\u{1f1f5}',
  // supplementary letters and marks, composing scripts new and old
  '\u{1d11e}', '\u{20000}', '\u{1d165}', '\u{1d15e}', '\u{11099}\u{110ba}', '\u{1611e}', '\u{16129}', '\u{1611f}',
  '\u{16d63}', '\u{16d67}', '\u{113c2}', '\u{113b8}', '\u{113c9}', '\u{11382}',
  // CJK
  '\u4e2d', '\u6587', '\u3002',
];

const textArb = fc.array(fc.constantFrom(...ATOMS), { minLength: 0, maxLength: 40 }).map((a) => a.join(''));
/** A text with cut points at any UTF-16 index (so cuts fall between surrogate halves too). */
const cutTextArb = textArb.chain((s) =>
  fc.tuple(fc.constant(s), fc.uniqueArray(fc.integer({ min: 0, max: s.length }), { maxLength: 24 })),
).map(([s, cuts]) => {
  const pieces = cut(s, [...cuts].sort((x, y) => x - y));
  return { s, pieces };
});

const isHigh = (c: number) => (c & 0xfc00) === 0xd800;

/** Where the committed text must end after `pushed` units of `s` were pushed. */
function expectedCommit(s: string, pushed: number, bounds: number[]): number {
  let end = pushed;
  if (end > 0 && isHigh(s.charCodeAt(end - 1))) end--; // the committer waits for the pair
  if (end === 0) return 0;
  // The start of the last complete code point: a boundary is final once the code point after it is known.
  const lastStart = end >= 2 && (s.charCodeAt(end - 1) & 0xfc00) === 0xdc00 && isHigh(s.charCodeAt(end - 2)) ? end - 2 : end - 1;
  let best = 0;
  for (const b of bounds) if (b <= lastStart) best = b;
  return best;
}

const params = { seed: SEED, numRuns: RUNS, endOnFailure: true };

describe('GraphemeCommitter vs Intl.Segmenter', () => {
  it('commits exactly at the last final boundary after every delta', () => {
    fc.assert(
      fc.property(cutTextArb, ({ s, pieces }) => {
        const bounds = boundaries(s);
        const c = new GraphemeCommitter();
        let committed = '';
        let pushed = 0;
        for (const p of pieces) {
          committed += c.push(p);
          pushed += p.length;
          expect(committed).toBe(s.slice(0, expectedCommit(s, pushed, bounds)));
          expect(committed + c.pending).toBe(s.slice(0, pushed));
        }
        committed += c.flush();
        expect(committed).toBe(s);
        expect(c.forcedCommits).toBe(0);
      }),
      params,
    );
  });

  it('countText agrees with the oracles', () => {
    fc.assert(
      fc.property(textArb, (s) => {
        expect(countText(s)).toEqual({
          utf8Bytes: new TextEncoder().encode(s).length,
          codePoints: [...s].length,
          utf16Units: s.length,
          graphemes: graphemeCount(s),
        });
      }),
      params,
    );
  });

  it('convertOffset maps every grapheme boundary between all units, and round-trips', () => {
    fc.assert(
      fc.property(textArb, (s) => {
        const enc = new TextEncoder();
        const bounds = boundaries(s);
        bounds.forEach((b, g) => {
          if (g === bounds.length - 1 && s.length === 0) return;
          const at = { utf16: b, utf8: enc.encode(s.slice(0, b)).length, codePoint: [...s.slice(0, b)].length, grapheme: g };
          for (const from of ['utf16', 'utf8', 'codePoint', 'grapheme'] as const) {
            for (const to of ['utf16', 'utf8', 'codePoint', 'grapheme'] as const) {
              expect(convertOffset(s, at[from], from, to)).toBe(at[to]);
            }
          }
        });
      }),
      { ...params, numRuns: 300 },
    );
  });
});

describe('NfcCommitter vs normalize()', () => {
  it('output is always a prefix of NFC(whole) and ends equal to it', () => {
    fc.assert(
      fc.property(cutTextArb, ({ s, pieces }) => {
        const want = s.normalize('NFC');
        const c = new NfcCommitter();
        let out = '';
        for (const p of pieces) {
          out += c.push(p);
          expect(want.startsWith(out)).toBe(true);
        }
        out += c.flush();
        expect(out).toBe(want);
      }),
      params,
    );
  });
});

describe('TextAssembler vs the oracles', () => {
  it('commits whole graphemes of NFC text; the report matches every oracle', () => {
    fc.assert(
      fc.property(cutTextArb, ({ s, pieces }) => {
        const want = s.normalize('NFC');
        const bounds = new Set(boundaries(want));
        const a = new TextAssembler();
        let out = '';
        for (const p of pieces) {
          out += a.push(p);
          expect(want.startsWith(out)).toBe(true);
          expect(bounds.has(out.length)).toBe(true);
        }
        if (pieces.length % 2 === 1) {
          // flush() first (half the cases): the tail, so that all the stream returned is the text
          out += a.flush();
          expect(out).toBe(want);
          expect(a.pending).toBe('');
          expect(a.flush()).toBe('');
        }
        const r = a.finish({ expected: s });
        expect(r.text).toBe(want);
        expect(r).toEqual({
          text: want,
          utf8Bytes: new TextEncoder().encode(want).length,
          codePoints: [...want].length,
          utf16Units: want.length,
          graphemes: graphemeCount(want),
          normalizationChanged: want !== s,
          sha256: createHash('sha256').update(want, 'utf8').digest('hex'),
          mismatch: false,
        });
        expect(a.forcedCommits).toBe(0);
      }),
      params,
    );
  });

  it('normalize: false commits the raw text at grapheme boundaries', () => {
    fc.assert(
      fc.property(cutTextArb, ({ s, pieces }) => {
        const bounds = new Set(boundaries(s));
        const a = new TextAssembler({ normalize: false });
        let out = '';
        for (const p of pieces) {
          out += a.push(p);
          expect(s.startsWith(out)).toBe(true);
          expect(bounds.has(out.length)).toBe(true);
        }
        const r = a.finish({ expected: s + 'x' });
        expect(r.text).toBe(s);
        expect(r.graphemes).toBe(graphemeCount(s));
        expect(r.utf8Bytes).toBe(Buffer.byteLength(s));
        expect(r.normalizationChanged).toBe(false);
        expect(r.mismatch).toBe(true);
      }),
      { ...params, numRuns: 500 },
    );
  });
});

/**
 * Where the committers cut with a small hold-back limit, worked out from the rule machine alone
 * (one step per code point, none of the committers' fast paths): a boundary before a code point
 * is known once that code point is whole; a cluster that passes `max` bytes since the last cut is
 * cut after the code point that passed it. Returns, for each count of units pushed, the end of
 * the committed text, and the number of forced cuts.
 */
function referenceCuts(s: string, max: number): { committedAt: (pushed: number) => number; forced: number } {
  const known: [end: number, cut: number][] = []; // after the code point ending at `end` is scanned, text up to `cut` is final
  let st = START_STATE;
  let bytes = 0;
  let forced = 0;
  for (let i = 0; i < s.length;) {
    const cp = s.codePointAt(i)!;
    const w = cp > 0xffff ? 2 : 1;
    st = step(st, propOf(cp));
    if (st & BREAK) {
      st ^= BREAK;
      known.push([i + w, i]);
      bytes = 0;
    }
    bytes += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    i += w;
    if (bytes > max) {
      known.push([i, i]);
      bytes = 0;
      forced++;
    }
  }
  return {
    committedAt: (pushed) => {
      let best = 0;
      for (const [end, at] of known) if (end <= pushed && at > best) best = at;
      return best;
    },
    forced,
  };
}

describe('a hold-back limit of a few bytes', () => {
  // Letters of 1, 2 and 3 UTF-8 bytes that take the committers' fast paths, among the rest.
  const PLAIN = ['ж', 'ß', 'é', 'ب', 'あ', '中', 'ｶ', 'x'];
  const arb = fc.tuple(
    fc.array(fc.constantFrom(...ATOMS, ...PLAIN, ...PLAIN), { minLength: 1, maxLength: 40 }).map((a) => a.join('')),
    fc.integer({ min: 1, max: 9 }),
  ).chain(([s, max]) => fc.tuple(fc.constant(s), fc.constant(max), fc.uniqueArray(fc.integer({ min: 0, max: s.length }), { maxLength: 24 })));

  it('GraphemeCommitter and TextAssembler (normalize: false) cut where the rule machine says, forced cuts included', () => {
    fc.assert(
      fc.property(arb, ([s, max, cuts]) => {
        const ref = referenceCuts(s, max);
        const c = new GraphemeCommitter({ maxPendingBytes: max });
        const a = new TextAssembler({ normalize: false, maxPendingBytes: max });
        let fromC = '';
        let fromA = '';
        let pushed = 0;
        for (const p of cut(s, [...cuts].sort((x, y) => x - y))) {
          fromC += c.push(p);
          fromA += a.push(p);
          pushed += p.length;
          expect(fromC).toBe(s.slice(0, ref.committedAt(pushed)));
          expect(fromA).toBe(fromC);
        }
        expect(c.forcedCommits).toBe(ref.forced);
        expect(a.forcedCommits).toBe(ref.forced);
        expect(fromC + c.flush()).toBe(s);
        expect(a.finish().text).toBe(s);
      }),
      params,
    );
  });
});
