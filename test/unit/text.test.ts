import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { TextAssembler, createHasher } from '../../bindings/text/assembler.js';
import { DEFAULT_MAX_PENDING_BYTES, GraphemeCommitter } from '../../bindings/text/grapheme.js';
import { NfcCommitter } from '../../bindings/text/nfc.js';
import { convertOffset, type OffsetUnit } from '../../bindings/text/offsets.js';
import { countText } from '../../bindings/text/counts.js';
import { TextRangeError } from '../../bindings/text/errors.js';
import { SEED, rng } from '../helpers/random.js';

const code = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(TextRangeError);
    expect(e).toBeInstanceOf(RangeError);
    return (e as TextRangeError).code;
  }
  throw new Error('did not throw');
};

describe('convertOffset', () => {
  it('converts exact values', () => {
    expect(convertOffset('né', 3, 'utf8', 'utf16')).toBe(2);
    expect(convertOffset('né', 2, 'utf16', 'utf8')).toBe(3);
    expect(convertOffset('😀a', 4, 'utf8', 'utf16')).toBe(2);
    expect(convertOffset('😀a', 2, 'utf16', 'codePoint')).toBe(1);
    expect(convertOffset('😀a', 1, 'grapheme', 'utf8')).toBe(4);
    expect(convertOffset('😀a', 2, 'codePoint', 'utf16')).toBe(3);
    // 🇯🇵🇺🇸: two clusters of two code points (four UTF-16 units) each
    expect(convertOffset('🇯🇵🇺🇸', 1, 'grapheme', 'utf16')).toBe(4);
    expect(convertOffset('🇯🇵🇺🇸', 2, 'grapheme', 'utf8')).toBe(16);
    expect(convertOffset('🇯🇵🇺🇸', 8, 'utf16', 'grapheme')).toBe(2);
    // क्ष (U+0915 U+094D U+0937) is one cluster (GB9c)
    expect(convertOffset('क्षa', 3, 'utf16', 'grapheme')).toBe(1);
    expect(convertOffset('क्षa', 2, 'grapheme', 'utf8')).toBe(10);
    // inside a cluster is fine between non-grapheme units
    expect(convertOffset('e\u0301x', 1, 'utf16', 'utf8')).toBe(1);
    expect(convertOffset('e\u0301x', 2, 'codePoint', 'utf8')).toBe(3);
    expect(convertOffset('', 0, 'grapheme', 'utf8')).toBe(0);
    expect(convertOffset('abc', 3, 'utf16', 'utf16')).toBe(3);
    expect(convertOffset('abc', 3, 'grapheme', 'grapheme')).toBe(3);
  });

  it('throws inside a character, never rounds', () => {
    expect(code(() => convertOffset('né', 2, 'utf8', 'utf16'))).toBe('ERR_OFFSET_INSIDE_CHARACTER');
    expect(code(() => convertOffset('😀a', 1, 'utf16', 'utf8'))).toBe('ERR_OFFSET_INSIDE_CHARACTER');
    expect(code(() => convertOffset('😀a', 1, 'utf16', 'utf16'))).toBe('ERR_OFFSET_INSIDE_CHARACTER');
    expect(code(() => convertOffset('😀a', 3, 'utf8', 'codePoint'))).toBe('ERR_OFFSET_INSIDE_CHARACTER');
  });

  it('throws inside a grapheme cluster when converting to or from graphemes', () => {
    expect(code(() => convertOffset('e\u0301x', 1, 'utf16', 'grapheme'))).toBe('ERR_OFFSET_INSIDE_GRAPHEME');
    expect(code(() => convertOffset('🇯🇵🇺🇸', 1, 'codePoint', 'grapheme'))).toBe('ERR_OFFSET_INSIDE_GRAPHEME');
    expect(code(() => convertOffset('क्ष', 2, 'codePoint', 'grapheme'))).toBe('ERR_OFFSET_INSIDE_GRAPHEME');
    expect(code(() => convertOffset('\r\n', 1, 'utf8', 'grapheme'))).toBe('ERR_OFFSET_INSIDE_GRAPHEME');
  });

  it('throws out of range and on bad units', () => {
    expect(code(() => convertOffset('abc', 4, 'utf16', 'utf8'))).toBe('ERR_OFFSET_OUT_OF_RANGE');
    expect(code(() => convertOffset('abc', 4, 'grapheme', 'utf8'))).toBe('ERR_OFFSET_OUT_OF_RANGE');
    expect(code(() => convertOffset('é', 3, 'utf8', 'utf16'))).toBe('ERR_OFFSET_OUT_OF_RANGE');
    expect(code(() => convertOffset('abc', -1, 'utf16', 'utf8'))).toBe('ERR_OFFSET_OUT_OF_RANGE');
    expect(code(() => convertOffset('abc', 1.5, 'utf16', 'utf8'))).toBe('ERR_OFFSET_OUT_OF_RANGE');
    expect(code(() => convertOffset('abc', 1, 'bytes' as OffsetUnit, 'utf8'))).toBe('ERR_INVALID_UNIT');
    expect(code(() => convertOffset('abc', 1, 'utf8', 'char' as OffsetUnit))).toBe('ERR_INVALID_UNIT');
  });

  it('counts an unpaired surrogate as one code point and 3 UTF-8 bytes (U+FFFD)', () => {
    expect(convertOffset('a\ud800b', 2, 'utf16', 'utf8')).toBe(4);
    expect(convertOffset('a\ud800b', 2, 'codePoint', 'utf16')).toBe(2);
  });
});

describe('countText', () => {
  it('counts exact values', () => {
    expect(countText('')).toEqual({ utf8Bytes: 0, codePoints: 0, utf16Units: 0, graphemes: 0 });
    expect(countText('Hello, 世界! 👩‍👩‍👧 e\u0301\r\n')).toEqual({ utf8Bytes: 39, codePoints: 21, utf16Units: 24, graphemes: 15 });
    expect(countText('a\ud800')).toEqual({ utf8Bytes: 4, codePoints: 2, utf16Units: 2, graphemes: 2 });
  });
});

describe('GraphemeCommitter', () => {
  it('holds only the last cluster', () => {
    const c = new GraphemeCommitter();
    expect(c.push('Hel')).toBe('He');
    expect(c.pending).toBe('l');
    expect(c.push('lo 👩')).toBe('llo ');
    expect(c.push('\u200d')).toBe('');
    expect(c.push('👧!')).toBe('👩\u200d👧');
    expect(c.flush()).toBe('!');
    expect(c.pending).toBe('');
  });

  it('holds a lone high surrogate at the end of a delta until its pair arrives', () => {
    const c = new GraphemeCommitter();
    expect(c.push('a\ud83d')).toBe('');
    expect(c.pending).toBe('a\ud83d');
    expect(c.push('\ude00')).toBe('a');
    expect(c.push('b')).toBe('😀');
    expect(c.flush()).toBe('b');
  });

  it('passes unpaired surrogates through as code points (Grapheme_Cluster_Break Other)', () => {
    const c = new GraphemeCommitter();
    expect(c.push('x\ud800y')).toBe('x\ud800');
    expect(c.push('\udc00\u0301z')).toBe('y\udc00\u0301');
    expect(c.push('\ud800')).toBe('');
    expect(c.flush()).toBe('z\ud800'); // a lone high surrogate at the end of the stream is kept
  });

  it('holds 10,000 combining marks within the default limit', () => {
    expect(DEFAULT_MAX_PENDING_BYTES).toBe(65536);
    const c = new GraphemeCommitter();
    let out = c.push('a');
    for (let k = 0; k < 10_000; k++) out += c.push('\u0301');
    expect(out).toBe('');
    expect(c.pending.length).toBe(10_001);
    expect(c.push('b')).toBe('a' + '\u0301'.repeat(10_000));
    expect(c.forcedCommits).toBe(0);
  });

  it('commits inside a runaway cluster past maxPendingBytes, dropping nothing', () => {
    const c = new GraphemeCommitter({ maxPendingBytes: 1024 });
    const input = 'a' + '\u0301'.repeat(10_000) + 'b';
    let out = '';
    const commits: number[] = [];
    for (const ch of input) {
      const got = c.push(ch);
      if (got) commits.push(got.length);
      out += got;
      expect(Buffer.byteLength(c.pending)).toBeLessThanOrEqual(1024);
    }
    // 'a' + 512 marks = 1025 bytes > 1024, then every 513 marks (1026 bytes): 19 forced cuts.
    expect(c.forcedCommits).toBe(19);
    expect(commits.slice(0, 2)).toEqual([513, 513]);
    out += c.flush();
    expect(out).toBe(input);
    // The rule machine kept its state: 'b' still starts a new cluster.
    expect(commits[commits.length - 1]).toBe(10_001 - 513 - 18 * 513);
  });

  it('rejects bad limits with a typed error', () => {
    expect(code(() => new GraphemeCommitter({ maxPendingBytes: 0 }))).toBe('ERR_INVALID_OPTION');
    expect(code(() => new GraphemeCommitter({ maxPendingBytes: 1.5 }))).toBe('ERR_INVALID_OPTION');
    expect(new GraphemeCommitter({ maxPendingBytes: Infinity }).maxPendingBytes).toBe(Infinity);
  });
});

describe('NfcCommitter', () => {
  it('commits only before stable starters', () => {
    const c = new NfcCommitter();
    expect(c.push('cafe')).toBe('caf');
    expect(c.push('\u0301')).toBe('');
    expect(c.push(' ok')).toBe('\u00e9 o');
    expect(c.flush()).toBe('k');
  });

  it('waits for the Kirat Rai and Gurung Khema compositions that a pairs-only table misses', () => {
    // U+16D68 = U+16D67 U+16D67, and U+16D6A = U+16D69 U+16D67 = U+16D63 U+16D67 U+16D67.
    const c = new NfcCommitter();
    const out = c.push('\u{16d63}') + c.push('\u{16d67}') + c.push('\u{16d67}') + c.push('x') + c.flush();
    expect(out).toBe('\u{16d6a}x');
    expect(out).toBe('\u{16d63}\u{16d67}\u{16d67}x'.normalize('NFC'));
    const d = new NfcCommitter();
    expect(d.push('\u{1611e}\u{1611e}') + d.push('\u{1611f}') + d.flush()).toBe('\u{16126}');
  });

  it('commits inside a runaway sequence past maxPendingBytes and counts it', () => {
    const c = new NfcCommitter({ maxPendingBytes: 1024 });
    let out = c.push('a');
    for (let k = 0; k < 10_000; k++) out += c.push('\u0301');
    out += c.flush();
    expect(c.forcedCommits).toBe(19);
    expect(out).toBe('\u00e1' + '\u0301'.repeat(9_999));
  });

  it('keeps unpaired surrogates', () => {
    const c = new NfcCommitter();
    expect(c.push('e\ud800\u0301') + c.push('\ud800') + c.flush()).toBe('e\ud800\u0301\ud800');
  });
});

describe('TextAssembler', () => {
  it('reports exact values', () => {
    const a = new TextAssembler();
    const deltas = ['Hel', 'lo, 世', '界! 👩\u200d', '👩\u200d👧 e', '\u0301\r', '\n'];
    const committed = deltas.map((d) => a.push(d));
    expect(committed).toEqual(['He', 'llo, ', '世界! ', '👩\u200d👩\u200d👧 ', '\u00e9', '']);
    const text = 'Hello, 世界! 👩‍👩‍👧 \u00e9\r\n';
    expect(a.finish({ expected: 'Hello, 世界! 👩‍👩‍👧 e\u0301\r\n' })).toEqual({
      text,
      utf8Bytes: 38,
      codePoints: 20,
      utf16Units: 23,
      graphemes: 15,
      normalizationChanged: true,
      sha256: createHash('sha256').update(text).digest('hex'),
      mismatch: false,
    });
    // finish() starts a new stream
    expect(a.push('ab')).toBe('a');
    expect(a.finish({ expected: 'abc' })).toMatchObject({ text: 'ab', graphemes: 2, normalizationChanged: false, mismatch: true });
  });

  it('keeps unpaired surrogates and counts them as U+FFFD bytes', () => {
    const a = new TextAssembler();
    // The lone low surrogate at the end is a whole code point, so the boundary before it is final.
    expect(a.push('a\ud800b\udc00')).toBe('a\ud800b');
    expect(a.push('\ud800')).toBe('');
    const r = a.finish();
    expect(r.text).toBe('a\ud800b\udc00\ud800');
    expect(r).toMatchObject({ utf8Bytes: 11, codePoints: 5, utf16Units: 5, graphemes: 5 });
    expect(r.sha256).toBe(createHash('sha256').update(r.text, 'utf8').digest('hex'));
  });

  it('survives 10,000 combining marks with a small limit, and counts one grapheme', () => {
    const a = new TextAssembler({ maxPendingBytes: 1024 });
    let out = a.push('a');
    for (let k = 0; k < 10_000; k++) out += a.push('\u0301');
    const r = a.finish();
    expect(a.forcedCommits).toBe(19);
    expect(r.text.startsWith(out)).toBe(true);
    expect(r.text).toBe('\u00e1' + '\u0301'.repeat(9_999));
    expect(r).toMatchObject({ graphemes: 1, codePoints: 10_000, utf8Bytes: 2 + 2 * 9_999, normalizationChanged: true });
  });

  it('hashes large texts in batches identically', () => {
    const a = new TextAssembler();
    const chunk = 'The quick brown fox 🦊 jumps over the lazy dog. 中文。';
    let whole = '';
    for (let k = 0; k < 3_000; k++) {
      a.push(chunk);
      whole += chunk;
    }
    const r = a.finish();
    expect(r.text).toBe(whole);
    expect(r.sha256).toBe(createHash('sha256').update(whole).digest('hex'));
  });

  it('hashes seeded random deltas over many batches, with flushes, and the stream after finish() from nothing', () => {
    const next = rng(SEED);
    // letters, combining marks (NFC changes e + U+0301), clusters, CRLF, Hangul jamo, a ligature
    const parts = ['a', 'the ', '\u00e9', 'e\u0301', '\u4e2d\u6587', '\ud83d\udc69\u200d\ud83d\udc67', '\ud83c\uddeb\ud83c\uddf7', '\r\n', '\ufb01', '\u1100\u1161', '\u0301'];
    const a = new TextAssembler();
    for (let round = 0; round < 2; round++) {
      let out = '';
      for (let k = 0; k < 6_000; k++) {
        let d = '';
        for (let n = 1 + Math.floor(next() * 8); n > 0; n--) d += parts[Math.floor(next() * parts.length)];
        out += a.push(d);
        if (next() < 0.01) out += a.flush();
      }
      out += a.flush();
      const r = a.finish();
      expect(out.length, `seed ${SEED}`).toBeGreaterThan(3 * 16 * 1024); // several hash batches
      expect(r.text, `seed ${SEED}, stream ${round}`).toBe(out);
      expect(r.utf16Units, `seed ${SEED}, stream ${round}`).toBe(out.length);
      expect(r.sha256, `seed ${SEED}, stream ${round}`).toBe(createHash('sha256').update(out, 'utf8').digest('hex'));
    }
  });

  it('uses the same digest with @noble/hashes (the browser path)', () => {
    const text = 'a\u00e9😀\ud800';
    const noble = createHasher(false);
    noble.update(text.slice(0, 2));
    noble.update(text.slice(2));
    expect(noble.digest()).toBe(createHash('sha256').update(text, 'utf8').digest('hex'));
  });

  it('rejects bad options and enforces maxTextBytes', () => {
    expect(code(() => new TextAssembler({ normalize: 'NFD' as 'NFC' }))).toBe('ERR_INVALID_OPTION');
    expect(code(() => new TextAssembler({ maxPendingBytes: -1 }))).toBe('ERR_INVALID_OPTION');
    const a = new TextAssembler({ maxTextBytes: 10 });
    expect(a.push('0123456789')).toBe('012345678');
    expect(code(() => a.push('ab'))).toBe('ERR_TEXT_TOO_LONG');
    // the refused delta changed nothing: the held '9' is still there, and finish() reports 10 bytes
    expect(a.pending).toBe('9');
    const r = a.finish();
    expect([r.text, r.utf8Bytes, r.codePoints, r.graphemes]).toEqual(['0123456789', 10, 10, 10]);
    expect(r.sha256).toBe(createHash('sha256').update('0123456789', 'utf8').digest('hex'));
  });
});
