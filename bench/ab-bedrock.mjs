// Bedrock, one build against another in one process, interleaved: ModelStream raw, with its
// defaults, and SseRelay → openai on a ConverseStream at one message per read, and
// EventStreamDecoder.push. Medians of ns per message over ROUNDS rounds (21 unless set), the order
// of the two builds alternated from round to round. Not part of the suite.
//
//   npm run build && [ROUNDS=n] node bench/ab-bedrock.mjs <the other build's dist/index.js> [this build's dist/index.js]
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
const A = await import(pathToFileURL(resolve(process.argv[2])).href);
const B = await import(pathToFileURL(resolve(process.argv[3] ?? 'dist/index.js')).href);
import { EventStreamCodec } from '@smithy/eventstream-codec';
const enc = new TextEncoder(), dec = new TextDecoder();
const codec = new EventStreamCodec((b) => dec.decode(b), (s) => enc.encode(s));
const msg = (type, body) => codec.encode({ headers: { ':event-type': { type: 'string', value: type }, ':content-type': { type: 'string', value: 'application/json' }, ':message-type': { type: 'string', value: 'event' } }, body: enc.encode(JSON.stringify(body)) });
const W = ['The', ' quick', ' brown', ' fox', ' — ', '東京', ' 🚀', ' jumps', ' over', ' the', ' lazy', ' dog', '.\n'];
const ev = [msg('messageStart', { p: 'abc', role: 'assistant' })];
for (let i = 0; i < 4000; i++) ev.push(msg('contentBlockDelta', { contentBlockIndex: 0, delta: { text: W[i % 13] + W[(i * 7) % 13] }, p: 'abcdefghijklmnop'.slice(0, i % 16) }));
ev.push(msg('contentBlockStop', { contentBlockIndex: 0 }), msg('messageStop', { stopReason: 'end_turn' }), msg('metadata', { usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 }, metrics: { latencyMs: 1 } }));
const jobs = {
  'ModelStream raw': (L) => { const m = new L.ModelStream({ format: 'bedrock', raw: true }); let n = 0; for (const e of ev) n += m.push(e).length; m.flush(); m.dispose(); return n; },
  'ModelStream (defaults)': (L) => { const m = new L.ModelStream({ format: 'bedrock' }); let n = 0; for (const e of ev) n += m.push(e).length; m.flush(); m.finish(); m.dispose(); return n; },
  'SseRelay → openai': (L) => { const r = new L.SseRelay({ from: 'bedrock' }); let n = 0; for (const e of ev) n += r.push(e).length; n += r.flush().length; r.dispose(); return n; },
  'EventStreamDecoder.push': (L) => { const d = new L.EventStreamDecoder(); let n = 0; for (const e of ev) for (const x of d.push(e)) n += x.payload.length; d.dispose(); return n; },
};
const ROUNDS = Number(process.env.ROUNDS ?? 21);
const med = (a) => { const s = [...a].sort((x, y) => x - y); return s[s.length >> 1]; };
for (const [name, f] of Object.entries(jobs)) {
  if (f(A) !== f(B)) throw new Error(`${name}: outputs differ`);
  const a = [], b = [];
  const time = (L, into) => { const t = performance.now(); f(L); into.push((performance.now() - t) * 1e6 / ev.length); };
  for (let r = 0; r < ROUNDS; r++) {
    if (r & 1) { time(B, b); time(A, a); } else { time(A, a); time(B, b); }
  }
  console.log(`${name.padEnd(24)} other ${med(a).toFixed(0)} ns, this ${med(b).toFixed(0)} ns per message: ${(med(a) / med(b)).toFixed(2)}×`);
}
