// Bedrock, one build against another in one process, interleaved: ModelStream raw, with its
// defaults, and SseRelay → openai on a ConverseStream and on Claude's InvokeModelWithResponseStream
// (`bedrock-invoke`: Anthropic's events, each a chunk's base64) at one message per read, and
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
const chunk = (event) => msg('chunk', { bytes: Buffer.from(JSON.stringify(event)).toString('base64'), p: 'abcdefghijklmnop' });
const inv = [chunk({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude', content: [], stop_reason: null, usage: { input_tokens: 1, output_tokens: 1 } } }),
  chunk({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } })];
for (let i = 0; i < 4000; i++) inv.push(chunk({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: W[i % 13] + W[(i * 7) % 13] } }));
inv.push(chunk({ type: 'content_block_stop', index: 0 }), chunk({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 4000 } }), chunk({ type: 'message_stop' }));
const model = (format, list, raw) => (L) => {
  const m = new L.ModelStream({ format, raw });
  let n = 0;
  for (const e of list) n += m.push(e).length;
  m.flush();
  if (!raw) m.finish();
  m.dispose();
  return n;
};
const relay = (from, list) => (L) => { const r = new L.SseRelay({ from }); let n = 0; for (const e of list) n += r.push(e).length; n += r.flush().length; r.dispose(); return n; };
const jobs = {
  'ModelStream raw': model('bedrock', ev, true),
  'ModelStream (defaults)': model('bedrock', ev, false),
  'SseRelay → openai': relay('bedrock', ev),
  'EventStreamDecoder.push': (L) => { const d = new L.EventStreamDecoder(); let n = 0; for (const e of ev) for (const x of d.push(e)) n += x.payload.length; d.dispose(); return n; },
  'invoke: ModelStream raw': model('bedrock-invoke', inv, true),
  'invoke: ModelStream (defaults)': model('bedrock-invoke', inv, false),
  'invoke: SseRelay → openai': relay('bedrock-invoke', inv),
};
const ROUNDS = Number(process.env.ROUNDS ?? 21);
const med = (a) => { const s = [...a].sort((x, y) => x - y); return s[s.length >> 1]; };
for (const [name, f] of Object.entries(jobs)) {
  if (f(A) !== f(B)) throw new Error(`${name}: outputs differ`);
  const a = [], b = [];
  const per = name.startsWith('invoke') ? inv.length : ev.length;
  const time = (L, into) => { const t = performance.now(); f(L); into.push((performance.now() - t) * 1e6 / per); };
  for (let r = 0; r < ROUNDS; r++) {
    if (r & 1) { time(B, b); time(A, a); } else { time(A, a); time(B, b); }
  }
  console.log(`${name.padEnd(30)} other ${med(a).toFixed(0)} ns, this ${med(b).toFixed(0)} ns per message: ${(med(a) / med(b)).toFixed(2)}×`);
}
