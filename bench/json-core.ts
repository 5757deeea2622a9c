// The core's JSON reader on OpenAI-shaped events already in WebAssembly memory: read (validate in
// full) + locate choices[0].delta.content with the OpenAI Chat path program, against
// JSON.parse(str).choices[0].delta.content on the same events as strings. Interleaved rounds,
// medians of ns per event. Not part of the suite.
//
//   npx esbuild bench/json-core.ts --bundle --platform=node --format=esm --outfile=build/bench-json/json-core.js \
//     --log-level=warning && node build/bench-json/json-core.js [events] [rounds]
//
// Rows:
//   JSON.parse(str).choices[0].delta.content   the peer, on the decoded event strings
//   read + locate                              jsonRead of each event, then its records searched for
//                                              the content of choice 0 (a span, no string)
//   read + locate + string                     and the content's JS string by the bindings' routes
//                                              (latin1Slice; jsonUtf16 + ucs2Slice; jsonUnescape + ucs2Slice)
import { getCore } from '../bindings/core/wasm.js';
import { JF_ASCII, JF_ESCAPED, compilePaths, jx } from '../test/helpers/json-core.js';
import { median } from './harness.js';
import { openaiStream } from './sse.js';

const N = Number(process.argv[2] ?? 20000);
const ROUNDS = Number(process.argv[3] ?? 9);
const PASSES = 3;

const OPENAI = [
  'choices[*].index', 'choices[*].delta.content', 'choices[*].delta.reasoning_content', 'choices[*].delta.reasoning',
  'choices[*].delta.tool_calls', 'choices[*].finish_reason', 'usage', 'error', 'error.message',
];
const CONTENT = 1;

// The events: the JSON of the `data:` lines of the SSE benchmark's OpenAI stream.
const dec = new TextDecoder();
const strs = dec.decode(openaiStream(N * 330)).split('\n\n').filter((e) => e.startsWith('data: {')).map((e) => e.slice(6)).slice(0, N);
if (strs.length < N) throw new Error(`only ${strs.length} events`);
const enc = new TextEncoder();
const bytes = strs.map((s) => enc.encode(s));
const total = bytes.reduce((n, b) => n + b.length, 0);

// Memory past the module's current end holds the events back to back (the module allocates
// nothing here, so its heap never reaches them), with zeroed slack after the last one.
const core = getCore();
const x = core.x;
const pagesBefore = x.memory.buffer.byteLength >> 16;
x.memory.grow(Math.ceil((total + 64) / 65536) + 1);
core.sync();
const addr = new Int32Array(N), len = new Int32Array(N);
let at = pagesBefore << 16;
for (let i = 0; i < N; i++) {
  core.u8.set(bytes[i], at);
  addr[i] = at;
  len[i] = bytes[i].length;
  at += bytes[i].length;
}
const J = jx();
const prog = J.JSON_PROG_PTR.value as number;
core.u8.set(compilePaths(OPENAI), prog);
const out = J.JSON_REC_PTR.value as number;
const o32 = out >> 2;

/** Offset of choices[0].delta.content's record in the record area, or −1. */
function locate(n: number): number {
  const i32 = core.i32;
  for (let r = 0; r < n; r++) {
    const w = o32 + 4 * r;
    if ((i32[w] & 0xffff) === CONTENT && i32[w + 1] === 0) return w;
  }
  return -1;
}

function contentString(i: number, w: number): string {
  const i32 = core.i32;
  const p = addr[i] + i32[w + 2], n = i32[w + 3] - i32[w + 2], flags = i32[w] >>> 24;
  if (flags & JF_ESCAPED) return core.utf16(core.outPtr, J.jsonUnescape(p, n, core.outPtr));
  if (flags & JF_ASCII) return core.latin1(p, n);
  return core.utf16(core.outPtr, J.jsonUtf16(p, n, core.outPtr));
}

// Same answers first.
for (let i = 0; i < N; i++) {
  const n = J.jsonRead(prog, addr[i], len[i], out, 64);
  const w = locate(n);
  const want = JSON.parse(strs[i]).choices[0].delta.content;
  if (n < 0 || w < 0 || contentString(i, w) !== want) throw new Error(`event ${i} differs: ${strs[i]}`);
}

let sink = 0;
const contenders: Record<string, () => void> = {
  'JSON.parse(str).choices[0].delta.content': () => {
    for (let i = 0; i < N; i++) sink += JSON.parse(strs[i]).choices[0].delta.content.length;
  },
  'read + locate': () => {
    for (let i = 0; i < N; i++) sink += locate(J.jsonRead(prog, addr[i], len[i], out, 64));
  },
  'read + locate + string': () => {
    for (let i = 0; i < N; i++) sink += contentString(i, locate(J.jsonRead(prog, addr[i], len[i], out, 64))).length;
  },
};

const times: Record<string, number[]> = {};
for (const name in contenders) times[name] = [];
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, fn] of Object.entries(contenders)) {
    fn(); // warm
    const t = performance.now();
    for (let k = 0; k < PASSES; k++) fn();
    times[name].push(((performance.now() - t) * 1e6) / (PASSES * N));
  }
}

console.log(`${N} OpenAI-shaped events, ${(total / N).toFixed(0)} B on average, ${core.backend} core, ${ROUNDS} interleaved rounds`);
const peer = median(times['JSON.parse(str).choices[0].delta.content']);
for (const [name, t] of Object.entries(times)) {
  const m = median(t);
  console.log(`${name.padEnd(44)} ${m.toFixed(1).padStart(7)} ns/event  ${(m / (total / N)).toFixed(3)} ns/byte  ×${(peer / m).toFixed(2)}`);
}
if (sink === 0.5) console.log(sink);
