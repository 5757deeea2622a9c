import { describe, expect, it } from 'vitest';
import { GraphemeCommitter } from '../../bindings/text/grapheme.js';
import { countText } from '../../bindings/text/counts.js';
import { graphemeCases } from './unicode-data.js';

const cases = graphemeCases();

/** Pushes the pieces and records each non-empty commit; the flush is the last cluster. */
function commits(pieces: string[]): string[] {
  const c = new GraphemeCommitter();
  const out: string[] = [];
  for (const p of pieces) {
    const got = c.push(p);
    if (got) out.push(got);
  }
  const rest = c.flush();
  if (rest) out.push(rest);
  return out;
}

describe('GraphemeBreakTest-17.0.0.txt', () => {
  it('has 766 cases', () => expect(cases).toHaveLength(766));

  it('one code point at a time: every commit is exactly one expected cluster', () => {
    let passed = 0;
    for (const t of cases) {
      const c = new GraphemeCommitter();
      const got: string[] = [];
      // After pushing code point k, the committer must have returned exactly the clusters that
      // end at or before the last boundary before code point k.
      t.codePoints.forEach((cp, k) => {
        const out = c.push(cp);
        const expected = k > 0 && t.breaks[k] ? t.clusters[got.length] : '';
        expect(out, `line ${t.line}, after code point ${k}`).toBe(expected);
        if (out) got.push(out);
      });
      got.push(c.flush());
      expect(got, `line ${t.line}`).toEqual(t.clusters);
      passed++;
    }
    expect(passed).toBe(766);
  });

  it('one UTF-16 unit at a time (cuts between surrogate halves)', () => {
    for (const t of cases) {
      expect(commits(t.codePoints.join('').split('')), `line ${t.line}`).toEqual(t.clusters);
    }
  });

  it('whole: commits everything before the last cluster', () => {
    for (const t of cases) {
      const s = t.codePoints.join('');
      const c = new GraphemeCommitter();
      expect(c.push(s), `line ${t.line}`).toBe(t.clusters.slice(0, -1).join(''));
      expect(c.pending).toBe(t.clusters[t.clusters.length - 1]);
      expect(c.flush()).toBe(t.clusters[t.clusters.length - 1]);
    }
  });

  it('countText counts the expected clusters', () => {
    for (const t of cases) expect(countText(t.codePoints.join('')).graphemes, `line ${t.line}`).toBe(t.clusters.length);
  });
});
