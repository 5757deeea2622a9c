// Text layer benchmarks: grapheme commit and the whole assembler on LLM-sized deltas.
//
//   npm run build && node build/bench/run.js --only text [--full]
//
// Contenders (outputs are checked equal before anything is timed):
//   grapheme commit: seam GraphemeCommitter vs a hold-back committer on Intl.Segmenter (commit
//     all segments but the last) and on unicode-segmenter's splitGraphemes.
//   text assembler: seam TextAssembler (graphemes + NFC + counts + SHA-256) vs the approach in
//     the field's guides: Intl.Segmenter hold-back, normalize('NFC') on each commit, counts
//     (TextEncoder, spread, segment count) and node:crypto SHA-256 at the end; and, as a
//     non-streaming floor, joining all deltas and doing NFC + counts + hash once at the end.
import { createHash } from 'node:crypto';
import { splitGraphemes, countGraphemes as usCount } from 'unicode-segmenter/grapheme';
import { TextAssembler, type FinalReport } from '../bindings/text/assembler.js';
import { GraphemeCommitter } from '../bindings/text/grapheme.js';
import { prng } from './corpus.js';
import { type BenchOptions, QUICK, type Row, assertSame, compare } from './harness.js';

const rng = prng;

const WORDS = ('the of and to in is that for it as was with be by on not he this are or his from at which but have an they you were ' +
  'their one all we can her has there been if more when will would who so no model stream token response decoder text grapheme ' +
  'function returns value because however example therefore').split(' ');
const HANZI = '的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处理府研质';
const EMOJI = ['😀', '😂', '👍', '👍🏽', '❤️', '🔥', '🎉', '👩‍💻', '👨‍👩‍👧‍👦', '🏳️‍🌈', '🇯🇵', '🇺🇸', '✅', '#️⃣', '🙏🏻', '🧑🏿‍🚀', '✨', '🤔'];

function english(next: () => number, bytes: number): string {
  let s = '';
  while (Buffer.byteLength(s) < bytes) {
    let sentence = '';
    const n = 6 + Math.floor(next() * 14);
    for (let k = 0; k < n; k++) sentence += (k ? ' ' : '') + WORDS[Math.floor(next() * WORDS.length)];
    s += sentence[0].toUpperCase() + sentence.slice(1) + (next() < 0.15 ? '.\n\n' : '. ');
  }
  return s;
}
function chinese(next: () => number, bytes: number): string {
  let s = '';
  while (Buffer.byteLength(s) < bytes) {
    const n = 8 + Math.floor(next() * 24);
    for (let k = 0; k < n; k++) s += HANZI[Math.floor(next() * HANZI.length)];
    s += next() < 0.7 ? '，' : next() < 0.8 ? '。\n' : '。';
  }
  return s;
}
function emojiHeavy(next: () => number, bytes: number): string {
  let s = '';
  while (Buffer.byteLength(s) < bytes) {
    s += next() < 0.5 ? EMOJI[Math.floor(next() * EMOJI.length)] : WORDS[Math.floor(next() * WORDS.length)];
    s += next() < 0.6 ? ' ' : '';
  }
  return s;
}

/** Cuts `s` into deltas of 1..20 code points, as a model's token stream would. */
function deltas(s: string, next: () => number): string[] {
  const cps = [...s];
  const out: string[] = [];
  for (let i = 0; i < cps.length; ) {
    const n = 1 + Math.floor(next() * 20);
    out.push(cps.slice(i, i + n).join(''));
    i += n;
  }
  return out;
}

export interface Corpus {
  name: string;
  deltas: string[];
  bytes: number;
}

export function corpora(size = 64 * 1024): Corpus[] {
  const next = rng(0x7e47b);
  return [
    ['english', english(next, size)],
    ['chinese', chinese(next, size)],
    ['emoji', emojiHeavy(next, size)],
  ].map(([name, text]) => ({ name, deltas: deltas(text, next), bytes: Buffer.byteLength(text) }));
}

// ---- contenders --------------------------------------------------------------------------------

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** Runs a committer over the deltas; returns the commits (the flush last). */
type Committer = (ds: string[]) => string[];

const seamCommit: Committer = (ds) => {
  const c = new GraphemeCommitter();
  const out: string[] = [];
  for (const d of ds) out.push(c.push(d));
  out.push(c.flush());
  return out;
};

const intlCommit: Committer = (ds) => {
  let held = '';
  const out: string[] = [];
  for (const d of ds) {
    const buf = held + d;
    let last = 0;
    for (const seg of segmenter.segment(buf)) last = seg.index;
    out.push(buf.slice(0, last));
    held = buf.slice(last);
  }
  out.push(held);
  return out;
};

const unicodeSegmenterCommit: Committer = (ds) => {
  let held = '';
  const out: string[] = [];
  for (const d of ds) {
    const buf = held + d;
    let last = '';
    for (const g of splitGraphemes(buf)) last = g;
    const at = buf.length - last.length;
    out.push(buf.slice(0, at));
    held = last;
  }
  out.push(held);
  return out;
};

type Assemble = (ds: string[]) => FinalReport;

const seamAssemble: Assemble = (ds) => {
  const a = new TextAssembler();
  for (const d of ds) a.push(d);
  return a.finish();
};

const report = (text: string, graphemes: number, changed: boolean): FinalReport => ({
  text,
  utf8Bytes: new TextEncoder().encode(text).length,
  codePoints: [...text].length,
  utf16Units: text.length,
  graphemes,
  normalizationChanged: changed,
  sha256: createHash('sha256').update(text, 'utf8').digest('hex'),
});

/** The field's guides: Intl.Segmenter hold-back, normalize('NFC') on each commit, counts at the end. */
const fieldAssemble: Assemble = (ds) => {
  let held = '';
  let text = '';
  let graphemes = 0;
  let changed = false;
  for (const d of ds) {
    const buf = held + d;
    let last = 0;
    let n = 0;
    for (const seg of segmenter.segment(buf)) {
      last = seg.index;
      n++;
    }
    const commit = buf.slice(0, last);
    const nfc = commit.normalize('NFC');
    if (nfc !== commit) changed = true;
    text += nfc;
    graphemes += n - 1;
    held = buf.slice(last);
  }
  if (held) {
    const nfc = held.normalize('NFC');
    if (nfc !== held) changed = true;
    text += nfc;
    graphemes++;
  }
  return report(text, graphemes, changed);
};

/** Not streaming: join everything, then NFC, counts (unicode-segmenter) and hash once. */
const wholeAtEnd: Assemble = (ds) => {
  const raw = ds.join('');
  const text = raw.normalize('NFC');
  return report(text, usCount(text), text !== raw);
};

/** Runs every text comparison; `log` sees each row as it completes. */
export function runTextBench(opts: BenchOptions = QUICK, log: (r: Row) => void = () => {}): Row[] {
  const rows: Row[] = [];
  let sink = 0;
  for (const c of corpora()) {
    const chunk = '1–20 chars';
    const ours = seamCommit(c.deltas);
    assertSame(`${c.name} Intl.Segmenter`, ours, intlCommit(c.deltas));
    assertSame(`${c.name} unicode-segmenter`, ours, unicodeSegmenterCommit(c.deltas));
    const seam = () => void (sink += seamCommit(c.deltas).length);
    for (const [peerName, peer] of [['Intl.Segmenter hold-back', intlCommit], ['unicode-segmenter hold-back', unicodeSegmenterCommit]] as const) {
      const row = compare({ layer: 'text', case: 'GraphemeCommitter', corpus: c.name, chunk, peerName }, c.bytes, seam, () => void (sink += peer(c.deltas).length), opts);
      rows.push(row);
      log(row);
    }
    const mine = seamAssemble(c.deltas);
    assertSame(`${c.name} field assembler`, mine, fieldAssemble(c.deltas));
    assertSame(`${c.name} whole-at-end`, mine, wholeAtEnd(c.deltas));
    const seamA = () => void (sink += seamAssemble(c.deltas).graphemes);
    for (const [peerName, peer] of [
      ['Intl.Segmenter hold-back + NFC per commit + counts', fieldAssemble],
      ['join, then NFC + counts once (not streaming)', wholeAtEnd],
    ] as const) {
      const row = compare({ layer: 'text', case: 'TextAssembler', corpus: c.name, chunk, peerName }, c.bytes, seamA, () => void (sink += peer(c.deltas).graphemes), opts);
      rows.push(row);
      log(row);
    }
  }
  if (sink === -1) console.log(sink);
  return rows;
}
