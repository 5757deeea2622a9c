// Differential fuzz of the framers against spec-literal references: SSE streams built from the
// tokens that matter (field names, colons, spaces, CR/LF/CRLF, BOM, NUL, digits, non-ASCII and
// bad bytes), cut into random chunks; lines likewise. Fixed seeds (printed in the test names:
// fast-check reports the seed and the shrunk counterexample on failure).
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { LineDecoder, SseParser, type SseEvent } from '../../bindings/index.js';
import { referenceParse } from '../conformance/sse-reference.js';
import { run } from '../conformance/sse-harness.js';

const SEED = 20261130;
const enc = new TextEncoder();

const tokens = [
  'data', 'data:', 'data: ', 'event', 'event:', 'id', 'id:', 'id: ', 'retry:', 'retry: ', ':', ' ', '\n', '\r', '\r\n',
  '\n\n', 'x', 'abc', '0', '12', '007', '\0', '\uFEFF', '\u00e9', '\u4e2d', '\u{1F600}', 'dat', 'foo:', '::',
];
const tokenBytes = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom(...tokens).map((t) => enc.encode(t)) },
  { weight: 1, arbitrary: fc.constantFrom([0xff], [0xe2, 0x82], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xf0, 0x9f]).map((b) => new Uint8Array(b)) },
);
const stream = (bad: boolean) => fc.array(bad ? tokenBytes : fc.constantFrom(...tokens).map((t) => enc.encode(t)), { maxLength: 60 })
  .map((parts) => { const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0)); let o = 0; for (const p of parts) { out.set(p, o); o += p.length; } return out; });

/** Cuts `bytes` at the given (sorted, deduplicated) fractions. */
function cut(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const at = [...new Set(cuts.map((c) => Math.floor(c * (bytes.length + 1))))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let prev = 0;
  for (const a of at) { if (a > prev && a < bytes.length) { out.push(bytes.subarray(prev, a)); prev = a; } }
  out.push(bytes.subarray(prev));
  return out;
}
const cuts = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 12 });

describe('SSE differential fuzz', () => {
  test(`valid UTF-8, strict, every path, seed ${SEED}`, () => {
    fc.assert(fc.property(stream(false), cuts, fc.boolean(), fc.boolean(), (bytes, c, dispatch, bytesPath) => {
      const eof = dispatch ? 'dispatch' as const : 'discard' as const;
      const want = referenceParse(bytes, { eof });
      expect(run(cut(bytes, c), { eof }, bytesPath)).toEqual(want);
    }), { seed: SEED, numRuns: 3000 });
  });

  test(`bad bytes with fatal: false equal TextDecoder + the reference, seed ${SEED + 1}`, () => {
    fc.assert(fc.property(stream(true), cuts, fc.boolean(), (bytes, c, dispatch) => {
      const eof = dispatch ? 'dispatch' as const : 'discard' as const;
      expect(run(cut(bytes, c), { eof, fatal: false })).toEqual(referenceParse(bytes, { eof }));
    }), { seed: SEED + 1, numRuns: 3000 });
  });

  test(`strict: events before the bad byte, then Utf8DecodeError at the absolute offset, seed ${SEED + 2}`, () => {
    fc.assert(fc.property(stream(true), cuts, (bytes, c) => {
      const text = new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes);
      const firstBad = text.indexOf('\uFFFD');
      const p = new SseParser();
      const got: SseEvent[] = [];
      let err: unknown = null;
      try {
        for (const chunk of cut(bytes, c)) got.push(...p.push(chunk));
        got.push(...p.flush());
      } catch (e) { err = e; }
      p.dispose();
      if (firstBad === -1) { expect(err).toBeNull(); return; }
      // the absolute offset of the first bad sequence (the tokens hold no real U+FFFD)
      const offset = enc.encode(text.slice(0, firstBad)).length;
      const e = err as { name: string; code: string; offset: number; events: SseEvent[] };
      expect(e.name).toBe('Utf8DecodeError');
      let streamOk = true;
      try { new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes, { stream: true }); } catch { streamOk = false; }
      expect(e.code).toBe(streamOk ? 'ERR_TRUNCATED_UTF8' : 'ERR_INVALID_UTF8');
      expect(e.offset).toBe(offset);
      // events before the bad byte are never lost: those returned plus those on the error
      const lineStart = Math.max(bytes.lastIndexOf(10, offset - 1), bytes.lastIndexOf(13, offset - 1)) + 1;
      expect([...got, ...e.events]).toEqual(referenceParse(bytes.subarray(0, lineStart)).events);
    }), { seed: SEED + 2, numRuns: 2000 });
  });
});

function referenceLines(bytes: Uint8Array): string[] {
  const text = new TextDecoder().decode(bytes);
  const lines = text.split(/\r\n|\r|\n/);
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

describe('lines differential fuzz', () => {
  test(`LineDecoder equals a split of TextDecoder's text, seed ${SEED + 3}`, () => {
    fc.assert(fc.property(stream(true), cuts, fc.boolean(), (bytes, c, fatal) => {
      let valid = true;
      try { new TextDecoder('utf-8', { fatal: true }).decode(bytes); } catch { valid = false; }
      if (fatal && !valid) return;
      const d = new LineDecoder({ fatal });
      const got: string[] = [];
      for (const chunk of cut(bytes, c)) got.push(...d.push(chunk));
      got.push(...d.flush());
      d.dispose();
      expect(got).toEqual(referenceLines(bytes));
    }), { seed: SEED + 3, numRuns: 3000 });
  });
});
