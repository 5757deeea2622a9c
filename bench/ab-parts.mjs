// An app's parts, one build against another in one process, interleaved: ModelPartReader.push over
// a ModelStream with its defaults, a read per event and 16 KiB reads, on the Gemini stream of
// bench/providers.ts and the same deltas as OpenAI-shaped events; then ModelPartStream at one event
// per read (a ReadableStream through pipeThrough, read to its end). Medians of ns per event over
// ROUNDS rounds (15 unless set), the order of the two builds alternated from round to round; the
// two builds' parts counted equal first. Not part of the suite.
//
//   npm run build && [ROUNDS=n] node bench/ab-parts.mjs <the other build's dist/index.js> [this build's dist/index.js]
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { geminiStream } from '../build/bench/providers.js';
const A = await import(pathToFileURL(resolve(process.argv[2])).href);
const B = await import(pathToFileURL(resolve(process.argv[3] ?? 'dist/index.js')).href);
const ROUNDS = Number(process.env.ROUNDS ?? 15);
const enc = new TextEncoder(), dec = new TextDecoder();
const gemini = geminiStream(1 << 19).events;
const openai = gemini.map((e) => {
  const d = JSON.parse(dec.decode(e).slice(6));
  const c = d.candidates[0];
  return enc.encode(`data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: c.content.parts[0].text }, finish_reason: c.finishReason ? 'stop' : null }] })}\n\n`);
});
openai.push(enc.encode('data: [DONE]\n\n'));
/** The stream's events joined and cut into reads of `size` bytes. */
function reads(events, size) {
  const all = new Uint8Array(events.reduce((a, e) => a + e.length, 0));
  let p = 0;
  for (const e of events) { all.set(e, p); p += e.length; }
  const out = [];
  for (let i = 0; i < all.length; i += size) out.push(all.subarray(i, i + size));
  return out;
}
const reader = (format, list) => (L) => {
  const r = new L.ModelPartReader(new L.ModelStream({ format }));
  let n = 0;
  for (const c of list) n += r.push(c).length;
  return n + r.flush().length;
};
const stream = (format, list) => async (L) => {
  let i = 0;
  const source = new ReadableStream({ pull(c) { if (i < list.length) c.enqueue(list[i++]); else c.close(); } }, { highWaterMark: 0 });
  const r = source.pipeThrough(new L.ModelPartStream({ format })).getReader();
  let n = 0;
  while (!(await r.read()).done) n++;
  return n;
};
const rows = [
  ['ModelPartReader Gemini 1 event/read', reader('gemini', gemini), gemini.length],
  ['ModelPartReader OpenAI-shaped 1 event/read', reader('openai', openai), openai.length],
  ['ModelPartReader Gemini 16 KiB reads', reader('gemini', reads(gemini, 16384)), gemini.length],
  ['ModelPartReader OpenAI-shaped 16 KiB reads', reader('openai', reads(openai, 16384)), openai.length],
  ['ModelPartStream Gemini 1 event/read', stream('gemini', gemini), gemini.length],
  ['ModelPartStream OpenAI-shaped 1 event/read', stream('openai', openai), openai.length],
];
for (const [name, run] of rows) {
  const [a, b] = [await run(A), await run(B)];
  if (a !== b) throw new Error(`${name}: the builds give ${a} and ${b} parts`);
}
const times = new Map(rows.map(([name]) => [name, { a: [], b: [] }]));
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, run, events] of rows) {
    for (const [k, L] of round % 2 ? [['a', A], ['b', B]] : [['b', B], ['a', A]]) {
      const t0 = performance.now();
      let n = 0;
      while (performance.now() - t0 < 40) { await run(L); n++; }
      times.get(name)[k].push((performance.now() - t0) * 1e6 / n / events);
    }
  }
}
const median = (v) => [...v].sort((x, y) => x - y)[v.length >> 1];
console.log(`${process.release.name} ${process.version}, ${ROUNDS} rounds; ns per event, medians`);
console.log('| row | other build | this build | this ÷ other speed |\n|---|---:|---:|---:|');
for (const [name] of rows) {
  const { a, b } = times.get(name);
  console.log(`| ${name} | ${median(a).toFixed(0)} | ${median(b).toFixed(0)} | **${(median(a) / median(b)).toFixed(3)}×** |`);
}
