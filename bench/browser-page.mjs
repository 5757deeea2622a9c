// Runs inside the browser page (plain JS, served as is by bench/browser.ts): seam's ESM build
// against what a page does without it, on the same bytes, interleaved, medians.
//   utf8   Utf8Decoder against TextDecoder (fatal, stream)
//   sse    SseParser.push (string events) against TextDecoder (stream) + eventsource-parser
//   model  ModelStream (defaults: graphemes, NFC, counts, SHA-256) against TextDecoder (stream) +
//          eventsource-parser + JSON.parse + an Intl.Segmenter hold-back of the last cluster + NFC
//          per commit
//   fetch  the same two over fetch(): a 50 MB stream from the server, to the last text, and fetch
//          with a reader loop alone; whole runs timed (each takes far longer than a clock step)
// With a base build (`/base/index.js`, another commit's dist), its SseParser and ModelStream run
// in the same rounds: before/after in one page.
//
// The page's clock has 100 µs steps: every sample repeats its work until at least 10 ms went by
// and is that time divided by the repetitions.
const MIN_SAMPLE_MS = 10;

import { holdBack } from '/peer-commit.mjs';

const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];

/** Milliseconds per call of fn, over at least `ms` (MIN_SAMPLE_MS) of calls. */
function sample(fn, ms = MIN_SAMPLE_MS) {
  let reps = 0;
  const t0 = performance.now();
  let t = t0;
  do {
    fn();
    reps++;
    t = performance.now();
  } while (t - t0 < ms);
  return (t - t0) / reps;
}

/**
 * Milliseconds each contender runs, in three turns, before a row's rounds: a JIT's state moves the
 * rows (Firefox's ModelStream at 64 B reads: 119–131 MB/s after three passes, 156–164 after 3 s
 * more of it), and users' pages and workers run long. Set by run({ warm }).
 */
let warmMs = 300;

/** Interleaved rounds of every contender (a rotating order), after their warm-up; their median ms per call. */
function race(contenders, rounds) {
  for (let turn = 0; turn < 3 && warmMs > 0; turn++) for (const fn of contenders) sample(fn, warmMs / 3);
  const times = contenders.map(() => []);
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < contenders.length; k++) {
      const i = (k + r) % contenders.length;
      times[i].push(sample(contenders[i]));
    }
  }
  return times.map(median);
}

/** Reads of `size` bytes, or of exactly one event each (size 0: what real APIs flush). */
function reads(bytes, size) {
  const out = [];
  if (size > 0) {
    for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
    return out;
  }
  let start = 0;
  for (let i = 0; i + 1 < bytes.length; i++) {
    if (bytes[i] === 10 && bytes[i + 1] === 10) {
      out.push(bytes.subarray(start, i + 2));
      start = i + 2;
      i++;
    }
  }
  if (start < bytes.length) out.push(bytes.subarray(start));
  return out;
}

const readName = (size) => (size === 0 ? '1 event' : size >= 1 << 20 ? `${size >> 20} MiB` : size >= 1024 ? `${size >> 10} KiB` : `${size} B`);

function same(what, a, b) {
  if (a.length !== b.length) throw new Error(`${what}: ${a.length} items against ${b.length}`);
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) throw new Error(`${what}: item ${i} differs`);
}

function utf8Rows(m, rounds) {
  const rnd = ((a) => () => ((a = (a * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff))(5);
  const words = 'the model stream token response delta content chunk network boundary'.split(' ');
  const emoji = ['😀', '🙏🏽', '👩‍💻', '🇯🇵', '✨', '🚀'];
  const corpora = {
    ASCII: () => words[Math.floor(rnd() * words.length)] + ' ',
    Chinese: () => String.fromCodePoint(0x4e00 + Math.floor(rnd() * 0x5000)),
    mixed: () => {
      const x = rnd();
      return x < 0.6 ? words[Math.floor(rnd() * words.length)] + ' ' : x < 0.85 ? '世界' : x < 0.95 ? emoji[Math.floor(rnd() * emoji.length)] + ' ' : 'é';
    },
  };
  const enc = new TextEncoder();
  const rows = [];
  for (const [name, gen] of Object.entries(corpora)) {
    let s = '';
    while (s.length < (1 << 19)) s += gen();
    const bytes = enc.encode(s);
    for (const size of [64, 16384]) {
      const pieces = reads(bytes, size);
      const d = new m.Utf8Decoder();
      const td = new TextDecoder('utf-8', { fatal: true });
      const ours = () => { let n = 0; for (const p of pieces) n += d.push(p).length; return n + d.flush().length; };
      const peer = () => { let n = 0; for (const p of pieces) n += td.decode(p, { stream: true }).length; return n + td.decode().length; };
      if (ours() !== peer()) throw new Error('outputs differ');
      const [a, b] = race([ours, peer], rounds);
      rows.push({ corpus: name, chunk: readName(size), bytes: bytes.length, ms: { seam: a, peer: b } });
    }
  }
  return rows;
}

/** The peer's reading of a stream: each event's data and type through `onEvent`. */
function peerRead(createParser, chunks, onEvent) {
  const td = new TextDecoder();
  const p = createParser({ onEvent });
  for (const c of chunks) p.feed(td.decode(c, { stream: true }));
  p.feed(td.decode());
}

function sseRows(builds, createParser, bytes, rounds) {
  const rows = [];
  for (const size of [0, 64, 1024, 65536, 2 << 20]) {
    const chunks = reads(bytes, size);
    const parsers = builds.map((b) => new b.m.SseParser());
    const run = (p, sink) => {
      let n = 0;
      for (const c of chunks) for (const e of p.push(c)) { n += e.data.length; if (sink) sink.push(e.type, e.data, e.id); }
      for (const e of p.flush()) { n += e.data.length; if (sink) sink.push(e.type, e.data, e.id); }
      return n;
    };
    const peer = (sink) => {
      let n = 0;
      peerRead(createParser, chunks, (e) => { n += e.data.length; if (sink) sink.push(e.event ?? 'message', e.data, e.id ?? ''); });
      return n;
    };
    const want = [];
    peer(want);
    for (let i = 0; i < builds.length; i++) {
      const got = [];
      run(parsers[i], got);
      same(`SseParser (${builds[i].name}) at ${readName(size)}`, got, want);
    }
    // TextDecoder alone: the strings the peer's parser starts from (the ceiling for string events)
    const decodeOnly = () => {
      const td = new TextDecoder();
      let n = 0;
      for (const c of chunks) n += td.decode(c, { stream: true }).length;
      return n + td.decode().length;
    };
    const ms = race([...parsers.map((p) => () => run(p, null)), () => peer(null), decodeOnly], rounds);
    const row = { corpus: 'OpenAI-shaped', chunk: readName(size), bytes: bytes.length, events: want.length / 3, ms: {} };
    builds.forEach((b, i) => { row.ms[b.name] = ms[i]; });
    row.ms.peer = ms[builds.length];
    row.ms.decode = ms[builds.length + 1];
    rows.push(row);
  }
  return rows;
}

/** The delta text of an OpenAI event's data, as a page reads it. */
const textOf = (data) => (data === '[DONE]' ? '' : (JSON.parse(data).choices?.[0]?.delta?.content ?? ''));

/** The peer's text layer over OpenAI events: each event's delta held back at its last cluster, NFC per commit. */
function peerCommit(segmenter) {
  const text = holdBack(segmenter);
  return { event: (data) => text.push(textOf(data)), end: text.end };
}

function modelRows(builds, createParser, bytes, rounds) {
  const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  const rows = [];
  for (const size of [0, 64, 1024, 65536, 2 << 20]) {
    const chunks = reads(bytes, size);
    const seam = (m) => {
      const s = new m.ModelStream({ format: 'openai' });
      let out = '';
      for (const c of chunks) out += s.push(c);
      out += s.flush();
      return s.finish().sha256 ? out : '';
    };
    const peer = () => {
      const text = peerCommit(segmenter);
      peerRead(createParser, chunks, (e) => text.event(e.data));
      return text.end();
    };
    const want = peer();
    for (const b of builds) if (seam(b.m) !== want) throw new Error(`ModelStream (${b.name}) at ${readName(size)}: text differs`);
    const ms = race([...builds.map((b) => () => seam(b.m)), peer], rounds);
    const row = { corpus: 'OpenAI-shaped', chunk: readName(size), bytes: bytes.length, ms: {} };
    builds.forEach((b, i) => { row.ms[b.name] = ms[i]; });
    row.ms.peer = ms[builds.length];
    rows.push(row);
  }
  return rows;
}

/** The `fetch` section: whole runs over fetch() of /corpus/big.sse, interleaved, medians. */
async function fetchRows(m, rounds) {
  const { EventSourceParserStream } = await import('/peer/stream.js');
  const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  let bytes = 0;
  let events = 0;
  const plain = async () => {
    const r = (await fetch('/corpus/big.sse')).body.getReader();
    let n = 0;
    for (;;) {
      const { done, value } = await r.read();
      if (done) break;
      n += value.length;
    }
    bytes = n;
    return '';
  };
  const seam = async () => {
    const r = (await fetch('/corpus/big.sse')).body.getReader();
    const s = new m.ModelStream({ format: 'openai' });
    let out = '';
    for (;;) {
      const { done, value } = await r.read();
      if (done) break;
      out += s.push(value);
    }
    out += s.flush();
    const report = s.finish();
    events = report.events;
    return report.sha256 ? out : '';
  };
  const peer = async () => {
    const body = (await fetch('/corpus/big.sse')).body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
    const r = body.getReader();
    const text = peerCommit(segmenter);
    for (;;) {
      const { done, value } = await r.read();
      if (done) break;
      text.event(value.data);
    }
    return text.end();
  };
  if ((await seam()) !== (await peer())) throw new Error('over fetch: the texts differ');
  await plain();
  const contenders = { fetch: plain, seam, peer };
  const names = Object.keys(contenders);
  const times = Object.fromEntries(names.map((k) => [k, []]));
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(k + round) % names.length];
      const t0 = performance.now();
      await contenders[name]();
      times[name].push(performance.now() - t0);
    }
  }
  return { bytes, events, rounds, ms: Object.fromEntries(names.map((k) => [k, median(times[k])])) };
}

/** A loop of seam's SseParser.push alone at one read size, for the profiler. */
export async function profileLoop(size, ms) {
  const m = await import('/dist/index.js');
  const bytes = new Uint8Array(await (await fetch('/corpus/openai.bin')).arrayBuffer());
  const chunks = reads(bytes, size);
  const p = new m.SseParser();
  const t0 = performance.now();
  let n = 0;
  while (performance.now() - t0 < ms) {
    for (const c of chunks) for (const e of p.push(c)) n += e.data.length;
    for (const e of p.flush()) n += e.data.length;
  }
  return n;
}

export async function run({ sections = ['utf8', 'sse', 'model'], base = false, rounds = 11, warm = 300 } = {}) {
  warmMs = warm;
  const m = await import('/dist/index.js');
  const builds = [{ name: 'seam', m }];
  if (base) builds.push({ name: 'base', m: await import('/base/index.js') });
  const { createParser } = await import('/peer/eventsource-parser.js');
  const bytes = new Uint8Array(await (await fetch('/corpus/openai.bin')).arrayBuffer());
  const out = { backend: m.wasmBackend(), ua: navigator.userAgent, rounds, builds: builds.map((b) => b.name) };
  if (sections.includes('utf8')) out.utf8 = utf8Rows(m, rounds);
  if (sections.includes('sse')) out.sse = sseRows(builds, createParser, bytes, rounds);
  if (sections.includes('model')) out.model = modelRows(builds, createParser, bytes, rounds);
  if (sections.includes('fetch')) out.fetch = await fetchRows(m, Math.min(rounds, 5));
  return out;
}
