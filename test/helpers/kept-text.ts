// A raw model stream's text long enough to leave the core in several pieces (16,384 units each at
// most), with surrogate pairs at even and at odd units, so that one falls across each piece's end;
// read in OpenAI-shaped deltas of 1 to 997 units, each holding whole pairs.
import type { ModelReport, ModelStream } from '../../bindings/index.js';

/**
 * The texts: the same pairs after a lead of 0, 1 and 2 units; and lone surrogates, which reach the
 * stream as JSON escapes (`\ud800`: the text is the escape's unit, as JSON.parse reads it), inside
 * pieces of more than 256 units (where a runtime without Buffer takes a piece out by decoding it).
 */
export const KEPT_TEXTS = [
  ...['', 'x', 'xé'].map((lead) => lead + '😀'.repeat(20_000) + '中'.repeat(9_000) + '🙂 z'.repeat(3_000)),
  'a'.repeat(300) + 'x\ud800y' + '😀'.repeat(50) + '\udfff' + 'z'.repeat(20_000) + '\udc00\ud800end' + '中'.repeat(300) + '\ud83d',
];

const enc = (s: string) => new TextEncoder().encode(s);
const ev = (content: string) => enc(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`);

/** What a raw stream made by `make` returns for `all`, and its report. */
export function readKept(make: () => ModelStream, all: string): { out: string; report: ModelReport } {
  const m = make();
  let out = '';
  for (let i = 0; i < all.length;) {
    let n = 1 + (i % 997);
    if (/[\ud800-\udbff]/.test(all[i + n - 1] ?? '')) n++; // (JSON of a lone half would be an escape)
    out += m.push(ev(all.slice(i, i + n)));
    i += n;
  }
  out += m.push(enc('data: [DONE]\n\n'));
  return { out, report: m.finish() };
}
