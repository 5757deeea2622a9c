// `seam-stream demo`: one multilingual model stream, cut at its nastiest bytes, through three
// consumers side by side: the hand-written decoder, the careful stack (TextDecoder with
// stream: true + eventsource-parser + JSON.parse), and seam. Every number it prints is computed
// here, on this run; `--json` prints them for machines (test/cli checks them).
import { wasmBackend } from 'seam-stream';
import type { Values } from './args.js';
import { DELTAS, beforeDone, demoBytes, nastyPositions } from './demo-stream.js';
import { formatCount } from './status.js';
import { ModelStream, type ModelReport } from './stream.js';


interface Run {
  /** The text on screen after each read. */
  shown: string[];
  final: string;
  /** Events read (JSON parsed or [DONE]). */
  seen: number;
  done: boolean;
  report?: ModelReport;
  truncated?: boolean;
}

type CreateParser = (c: { onEvent: (e: { data: string }) => void }) => { feed(s: string): void };

/** What people write first: decode each read on its own, split on blank lines. */
function handWritten(pieces: Uint8Array[]): Run {
  let buf = '';
  let text = '';
  let seen = 0;
  let done = false;
  const shown: string[] = [];
  for (const p of pieces) {
    // a new TextDecoder per read: a cut character becomes U+FFFD, and a BOM is stripped at every read's start
    buf += new TextDecoder().decode(p).replace(/\r\n?/g, '\n');
    const parts = buf.split('\n\n');
    buf = parts.pop()!;
    for (const part of parts) {
      const data = part.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
      if (data === '') continue;
      if (data === '[DONE]') {
        seen++;
        done = true;
        continue;
      }
      try {
        const c = JSON.parse(data).choices[0]?.delta?.content;
        seen++;
        if (typeof c === 'string') text += c;
      } catch {
        /* the event is lost */
      }
    }
    shown.push(text);
  }
  return { shown, final: text, seen, done };
}

/** The careful stack: TextDecoder with stream: true, eventsource-parser, JSON.parse; deltas printed as they come. */
function carefulStack(pieces: Uint8Array[], createParser: CreateParser): Run {
  const dec = new TextDecoder();
  let text = '';
  let seen = 0;
  let done = false;
  const shown: string[] = [];
  const parser = createParser({
    onEvent(e) {
      seen++;
      if (e.data === '[DONE]') {
        done = true;
        return;
      }
      const c = JSON.parse(e.data).choices[0]?.delta?.content;
      if (typeof c === 'string') text += c;
    },
  });
  for (const p of pieces) {
    parser.feed(dec.decode(p, { stream: true }));
    shown.push(text);
  }
  parser.feed(dec.decode());
  return { shown, final: text, seen, done };
}

/** seam: the model stream (SseParser + TextAssembler under it): whole graphemes in NFC, and a status. */
function withSeam(pieces: Uint8Array[]): Run {
  const m = new ModelStream({ format: 'openai' });
  let text = '';
  const shown: string[] = [];
  for (const p of pieces) {
    text += m.push(p);
    shown.push(text);
  }
  let truncated = false;
  try {
    text += m.flush();
  } catch (e) {
    truncated = (e as { code?: string }).code === 'ERR_STREAM_TRUNCATED';
    if (!truncated) throw e;
    text += (e as { text: string }).text;
  }
  const report = m.finish();
  return { shown, final: text, seen: report.events, done: m.status === 'done', report, truncated };
}

/** Grapheme boundaries of a text (UTF-16 offsets), by the runtime's Intl.Segmenter. */
function boundaries(text: string): Set<number> {
  const out = new Set<number>([text.length]);
  for (const s of new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(text)) out.add(s.index);
  return out;
}

/** Screen states (consecutive repeats dropped, the last read's excluded) that end inside a cluster of `target`. */
function halfClusters(shown: string[], target: string, cuts: Set<number>): number[] {
  const at: number[] = [];
  for (let i = 0; i < shown.length - 1; i++) {
    const s = shown[i];
    if (i > 0 && s === shown[i - 1]) continue;
    if (target.startsWith(s) && !cuts.has(s.length)) at.push(i);
  }
  return at;
}

export interface ConsumerCounts {
  wrongFinal: number;
  withFffd: number;
  lostEvents: number;
  halfClusterCuttings: number;
  halfClusterMoments: number;
  /** Cut right before `data: [DONE]`: whether the consumer says the stream is incomplete. */
  noticesCutBeforeDone: boolean;
  /** The first event lost to a read that ends inside the BOM. */
  bomCuttingsLosingFirstEvent: number;
}

export interface DemoResult {
  bytes: number;
  events: number;
  nastyPositions: number;
  cuttings: number;
  handWritten: ConsumerCounts;
  stack: (ConsumerCounts & { finalIsRawConcatenation: boolean }) | null;
  stackSkipped?: string;
  seam: ConsumerCounts;
  frames: { read: number; stack: string; seam: string }[];
  finalText: string;
  report: Omit<ModelReport, 'text'>;
}

async function loadEventsourceParser(): Promise<CreateParser | string> {
  // The demo runs from a source checkout, where eventsource-parser is a development dependency; an
  // installed package does not have it. The name is not written as a literal import so that the
  // bundle does not take it in.
  const name = ['eventsource', 'parser'].join('-');
  try {
    return ((await import(name)) as { createParser: CreateParser }).createParser;
  } catch {
    return `eventsource-parser is not installed here (it is a development dependency of a source checkout: npm ci there): that column is skipped`;
  }
}

export async function runDemo(): Promise<DemoResult> {
  const bytes = demoBytes();
  const message = DELTAS.join('');
  const nfc = message.normalize('NFC');
  const rawCuts = boundaries(message);
  const nfcCuts = boundaries(nfc);
  const nasty = nastyPositions(bytes);
  const cuttings: Uint8Array[][] = nasty.map((p) => [bytes.subarray(0, p), bytes.subarray(p)]);
  const allAtOnce = [0, ...nasty, bytes.length].slice(1).map((end, i, a) => bytes.subarray(i === 0 ? 0 : a[i - 1], end));
  cuttings.push(allAtOnce);
  cuttings.push(Array.from({ length: bytes.length }, (_, i) => bytes.subarray(i, i + 1)));
  const events = withSeam([bytes]).seen;
  const bomCuts = new Set(nasty.filter((p) => p < 3));
  const createParser = await loadEventsourceParser();

  const count = (run: (pieces: Uint8Array[]) => Run, target: string, cuts: Set<number>, noticed: boolean): ConsumerCounts => {
    const c: ConsumerCounts = {
      wrongFinal: 0, withFffd: 0, lostEvents: 0, halfClusterCuttings: 0, halfClusterMoments: 0,
      noticesCutBeforeDone: noticed, bomCuttingsLosingFirstEvent: 0,
    };
    cuttings.forEach((pieces, k) => {
      const r = run(pieces);
      if (r.final !== nfc) c.wrongFinal++;
      if (r.final.includes('\uFFFD')) c.withFffd++;
      c.lostEvents += events - r.seen;
      const half = halfClusters(r.shown, target, cuts);
      if (half.length) c.halfClusterCuttings++;
      c.halfClusterMoments += half.length;
      if (k < nasty.length && bomCuts.has(nasty[k]) && r.seen < events) c.bomCuttingsLosingFirstEvent++;
    });
    return c;
  };

  const cut = [bytes.subarray(0, beforeDone(bytes))];
  // the hand-written decoder and the stack skip [DONE] when it comes and do not look for it: a cut stream ends as a whole one does
  const handWrittenCounts = count(handWritten, message, rawCuts, false);
  const seamCounts = count(withSeam, nfc, nfcCuts, withSeam(cut).truncated === true);
  let stack: DemoResult['stack'] = null;
  let stackSkipped: string | undefined;
  const frames: DemoResult['frames'] = [];
  if (typeof createParser === 'string') stackSkipped = createParser;
  else {
    const run = (p: Uint8Array[]) => carefulStack(p, createParser);
    stack = { ...count(run, message, rawCuts, false), finalIsRawConcatenation: run([bytes]).final === message };
    const s = run(allAtOnce);
    const m = withSeam(allAtOnce);
    for (const i of halfClusters(s.shown, message, rawCuts)) frames.push({ read: i + 1, stack: s.shown[i], seam: m.shown[i] });
  }
  const whole = withSeam([bytes]);
  const { text: finalText, ...report } = whole.report!;
  return {
    bytes: bytes.length, events, nastyPositions: nasty.length, cuttings: cuttings.length,
    handWritten: handWrittenCounts, stack, stackSkipped, seam: seamCounts, frames, finalText, report,
  };
}

/** The end of a text as a terminal would show it, with the invisible joiners named. */
function tail(s: string, graphemes = 6): string {
  const segs = [...new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(s)].map((x) => x.segment);
  const t = segs.slice(-graphemes).join('').replace(/\n/g, '⏎').replace(/\u200d/g, '<ZWJ>').replace(/\ufe0f/g, '<VS16>');
  return `${segs.length > graphemes ? '…' : ''}${t}`;
}

function render(r: DemoResult): string {
  const n = formatCount(r.cuttings);
  const cols = [28, 22, 26, 26];
  const row = (...c: string[]) => c.map((x, i) => (i === c.length - 1 ? x : x.padEnd(cols[i]))).join('  ').trimEnd();
  const rule = '─'.repeat(108);
  const of = (k: number) => `${formatCount(k)} of ${n}`;
  const st = r.stack;
  const sk = (f: (c: ConsumerCounts) => string) => (st ? f(st) : 'skipped');
  const lines = [
    rule,
    `seam-stream demo: one model stream (OpenAI chat completions, ${formatCount(r.bytes)} bytes, ${r.events} events, CRLF line ends, a BOM in front;`,
    'Chinese, emoji ZWJ sequences, flags, combining accents, Hangul as jamo), read in '
      + `${n} ways: cut once at each of its ${r.nastyPositions} nasty byte positions`,
    '(inside a character or the BOM, between CR and LF, inside [DONE]), cut at all of them at once, and fed one byte at a time.',
    rule,
    row('', 'hand-written decoder', 'the careful stack', 'seam'),
    row('', 'TextDecoder per read,', 'TextDecoder stream: true', 'ModelStream: SseParser'),
    row('', 'split on blank lines', '+ eventsource-parser', '+ TextAssembler'),
    row('', '', '+ JSON.parse', ''),
    rule,
    row('final text ≠ NFC(message)', of(r.handWritten.wrongFinal), sk((c) => `${of(c.wrongFinal)}${st?.finalIsRawConcatenation ? ' (no NFC)' : ''}`), of(r.seam.wrongFinal)),
    row('U+FFFD in the text', of(r.handWritten.withFffd), sk((c) => of(c.withFffd)), of(r.seam.withFffd)),
    row('events lost', formatCount(r.handWritten.lostEvents), sk((c) => formatCount(c.lostEvents)), formatCount(r.seam.lostEvents)),
    row('half a cluster on screen', `${of(r.handWritten.halfClusterCuttings)}`, sk((c) => of(c.halfClusterCuttings)), of(r.seam.halfClusterCuttings)),
    row('  (times, all cuttings)', formatCount(r.handWritten.halfClusterMoments), sk((c) => formatCount(c.halfClusterMoments)), formatCount(r.seam.halfClusterMoments)),
    row('cut right before [DONE]', r.handWritten.noticesCutBeforeDone ? 'says truncated' : 'ends as if complete', sk((c) => (c.noticesCutBeforeDone ? 'says truncated' : 'ends as if complete')), r.seam.noticesCutBeforeDone ? 'status truncated (exit 3)' : 'ends as if complete'),
    row('a read ending inside the BOM', `first event lost (${r.handWritten.bomCuttingsLosingFirstEvent})`, sk((c) => (c.bomCuttingsLosingFirstEvent ? `first event lost (${c.bomCuttingsLosingFirstEvent})` : 'right: stripped once')), r.seam.bomCuttingsLosingFirstEvent ? 'first event lost' : 'right: stripped once'),
    rule,
  ];
  if (r.stackSkipped) lines.push(`(${r.stackSkipped})`);
  else {
    lines.push(
      'On the BOM the stack is right: TextDecoder strips it once, and eventsource-parser 3.1.1 strips only "ï»¿" (the BOM\'s bytes',
      'read as Latin-1), so nothing is stripped twice. A parser that strips U+FEFF itself under TextDecoderStream would.',
      'Normalizing each delta would not fix its final text either: "cafe" and U+0301 arrive in different deltas.',
      '',
      `What the screen shows after a read, with the stream cut at all ${r.nastyPositions} places at once (the stack shows half a cluster ${r.frames.length} times):`,
    );
    for (const f of r.frames.slice(0, 8)) lines.push(`  read ${String(f.read).padStart(3)}   stack: ${tail(f.stack).padEnd(30)} seam: ${tail(f.seam)}`);
    if (r.frames.length > 8) lines.push(`  … and ${r.frames.length - 8} more`);
  }
  const rep = r.report;
  lines.push(
    rule,
    `seam (SseParser + TextAssembler): ${r.seam.wrongFinal} of ${r.cuttings} cuttings differ from NFC of the message`,
    `final text: ${r.finalText.replace(/\n/g, ' ⏎ ')}`,
    `finish report: status ${rep.status}, finish reason ${JSON.stringify(rep.finishReason)}, usage ${JSON.stringify(rep.usage)};`,
    `  ${rep.utf8Bytes} UTF-8 bytes, ${rep.codePoints} code points, ${rep.utf16Units} UTF-16 units, ${rep.graphemes} graphemes; NFC changed the raw text: ${rep.normalizationChanged ? 'yes' : 'no'}`,
    `  sha256 ${rep.sha256}; core: WebAssembly (${wasmBackend()})`,
    rule,
    'Speed against the same alternatives: npm run bench (full) or seam-stream bench (quick); see BENCHMARKS.md.',
  );
  return lines.join('\n') + '\n';
}

export async function demo(values: Values): Promise<void> {
  const r = await runDemo();
  process.stdout.write(values.json === true ? `${JSON.stringify(r)}\n` : render(r));
  if (r.seam.wrongFinal !== 0 || r.seam.halfClusterCuttings !== 0) process.exitCode = 1;
}
