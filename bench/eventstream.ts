// Bedrock's binary event stream: the core's framing (both CRC32s, the headers) against AWS's own
// codec (@smithy/eventstream-codec, what AWS's SDKs for JavaScript decode it with), one message
// per read as an upstream sends them; then bytes → text of a ConverseStream against the codec +
// JSON.parse. Interleaved rounds, medians of ns per message. Not part of the suite.
//
//   npx esbuild bench/eventstream.ts --bundle --platform=node --format=esm --outfile=build/bench-es/eventstream.js \
//     --external:@smithy/eventstream-codec --log-level=warning && node build/bench-es/eventstream.js [messages] [rounds]
//
// Rows:
//   framing              EventStreamDecoder.push per message (headers as objects, payload copied)
//                        against codec.decode per message (the SDK splits by the prelude first: that split included)
//   ConverseStream text  ModelStream({ format: 'bedrock', raw: true }).push per message
//                        against codec.decode + JSON.parse + delta.text
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { EventStreamDecoder, ModelStream } from '../bindings/index.js';
import { median } from './harness.js';

const N = Number(process.argv[2] ?? 20000);
const ROUNDS = Number(process.argv[3] ?? 9);
const enc = new TextEncoder();
const dec = new TextDecoder();
const codec = new EventStreamCodec((b: Uint8Array) => dec.decode(b), (s: string) => enc.encode(s));

const WORDS = ['The', ' quick', ' brown', ' fox', ' — ', '東京', ' 🚀', ' jumps', ' over', ' the', ' lazy', ' dog', '.\n'];
const headers = (type: string) => ({ ':event-type': { type: 'string' as const, value: type }, ':content-type': { type: 'string' as const, value: 'application/json' }, ':message-type': { type: 'string' as const, value: 'event' } });
const msgs: Uint8Array[] = [codec.encode({ headers: headers('messageStart'), body: enc.encode('{"p":"abcdefghij","role":"assistant"}') })];
for (let i = 1; i < N; i++) {
  msgs.push(codec.encode({ headers: headers('contentBlockDelta'), body: enc.encode(`{"contentBlockIndex":0,"delta":{"text":${JSON.stringify(WORDS[i % WORDS.length])}},"p":"${'abcdefghijklmnopqrstuvwxyz'.slice(0, i % 26)}"}`) }));
}
const bytes = msgs.reduce((n, m) => n + m.length, 0);

function peerFrames(): number {
  let n = 0;
  for (const m of msgs) {
    const len = new DataView(m.buffer, m.byteOffset).getUint32(0);
    n += codec.decode(m.subarray(0, len)).body.length;
  }
  return n;
}
function seamFrames(): number {
  const d = new EventStreamDecoder();
  let n = 0;
  for (const m of msgs) for (const x of d.push(m)) n += x.payload.length;
  d.dispose();
  return n;
}
function peerText(): string {
  let s = '';
  for (const m of msgs) {
    const e = codec.decode(m);
    if (e.headers[':event-type']?.value !== 'contentBlockDelta') continue;
    const v = JSON.parse(dec.decode(e.body)) as { delta?: { text?: string } };
    if (typeof v.delta?.text === 'string') s += v.delta.text;
  }
  return s;
}
function seamText(): string {
  const m = new ModelStream({ format: 'bedrock', raw: true, eof: 'allow' });
  let s = '';
  for (const x of msgs) s += m.push(x);
  m.dispose();
  return s;
}

if (peerFrames() !== seamFrames() || peerText() !== seamText()) throw new Error('the outputs differ');
for (const [name, peer, seam] of [['framing', peerFrames, seamFrames], ['ConverseStream text', peerText, seamText]] as const) {
  const a: number[] = [];
  const b: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    let t = performance.now();
    peer();
    a.push(((performance.now() - t) * 1e6) / N);
    t = performance.now();
    seam();
    b.push(((performance.now() - t) * 1e6) / N);
  }
  const pa = median(a);
  const pb = median(b);
  console.log(`${name.padEnd(22)} peer ${pa.toFixed(0)} ns/message, seam ${pb.toFixed(0)} ns/message: ${(pa / pb).toFixed(2)}× (${N} messages, ${(bytes / N).toFixed(0)} B each)`);
}
