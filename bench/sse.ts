// Layer 2 benchmarks: SseParser (string events, and the byte-level path) against TextDecoder
// (stream: true) + eventsource-parser's createParser, the usual JS pipeline, on seeded corpora:
// an OpenAI-shaped stream (small `data:` chat.completion.chunk events, ~85% with non-ASCII
// content), an Anthropic-shaped stream (`event:` types) and one 8 MiB event; at 16 B, 64 B,
// 1 KiB and 16 KiB chunks. Both sides' events are checked equal before timing.
//
// Alone (its own output directory: the CLI bench build cleans build/bench):
//   npx tsup bench/sse.ts --format esm --out-dir build/bench-sse --platform node \
//     --external benchmark --external eventsource-parser && node build/bench-sse/sse.js [--full]
//     [--corpus OpenAI,Anthropic,one] [--chunk event,3events,16,64,1024,16384]
import type { EventSourceMessage } from 'eventsource-parser';
import { createParser } from './peers.js';
import { SseParser, Utf8Decoder, Utf8Validator } from '../bindings/index.js';
import { forceStringRoute } from '../bindings/core/strings.js';
import { chunked, perEvent, prng } from './corpus.js';
import { type BenchOptions, FULL, QUICK, type Row, assertSame, compare, compareRates, table } from './harness.js';

const enc = new TextEncoder();
const PEER = 'TextDecoder + eventsource-parser';

const latin = ('the of and to in is that for it as with was on be by this are or from at an which but not have '
  + 'model stream token response delta content chunk network boundary character event line server').split(' ');
const nonAscii = [
  () => '的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可里后小么心多然于',
  () => 'héllo wörld ñandú garçon smørrebrød straße à côté',
  () => 'Привет мир, как дела сегодня',
  () => 'こんにちは世界、今日はいい天気ですね',
  () => '😀🚀✨ 👍🏻 🤖🧠',
  () => 'مرحبا بالعالم',
];

/** A delta of text: ~85% of them carry non-ASCII characters. */
export function delta(r: () => number): string {
  let s = '';
  const n = 1 + Math.floor(r() * 4);
  for (let k = 0; k < n; k++) s += latin[Math.floor(r() * latin.length)] + ' ';
  if (r() < 0.85) {
    const src = nonAscii[Math.floor(r() * nonAscii.length)]();
    const chars = Array.from(src);
    const a = Math.floor(r() * chars.length);
    s += chars.slice(a, a + 2 + Math.floor(r() * 10)).join('');
  }
  return s;
}

/** OpenAI chat.completion.chunk events, ~4 MiB. */
export function openaiStream(bytes = 4 << 20, seed = 11): Uint8Array {
  const r = prng(seed);
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const e = `data: ${JSON.stringify({
      id: 'chatcmpl-9x8Yz', object: 'chat.completion.chunk', created: 1732900000 + (i >> 6), model: 'gpt-4o-2024-08-06',
      system_fingerprint: 'fp_d28bcae782', choices: [{ index: 0, delta: { content: delta(r) }, logprobs: null, finish_reason: null }],
    })}\n\n`;
    parts.push(e);
    size += e.length * 1.15;
  }
  parts.push('data: [DONE]\n\n');
  return enc.encode(parts.join(''));
}

/** Anthropic Messages events (`event:` types, mostly content_block_delta), ~4 MiB. */
export function anthropicStream(bytes = 4 << 20, seed = 12): Uint8Array {
  const r = prng(seed);
  const ev = (type: string, data: unknown) => `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
  const parts: string[] = [ev('message_start', { type: 'message_start', message: { id: 'msg_01', type: 'message', role: 'assistant', model: 'claude-sonnet-4', content: [], stop_reason: null, usage: { input_tokens: 25, output_tokens: 1 } } })];
  let size = 0;
  for (let block = 0; size < bytes; block++) {
    parts.push(ev('content_block_start', { type: 'content_block_start', index: block, content_block: { type: 'text', text: '' } }));
    parts.push(ev('ping', { type: 'ping' }));
    for (let k = 0; k < 200 && size < bytes; k++) {
      const e = ev('content_block_delta', { type: 'content_block_delta', index: block, delta: { type: 'text_delta', text: delta(r) } });
      parts.push(e);
      size += e.length * 1.15;
    }
    parts.push(ev('content_block_stop', { type: 'content_block_stop', index: block }));
  }
  parts.push(ev('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 15 } }));
  parts.push(ev('message_stop', { type: 'message_stop' }));
  return enc.encode(parts.join(''));
}

/**
 * One event of ~8 MiB: a JSON array of the OpenAI-shaped stream's chunk objects, so that its bytes
 * have the same mix of ASCII and non-ASCII as the small events and per-byte costs compare.
 */
export function bigEvent(bytes = 8 << 20, seed = 13): Uint8Array {
  const r = prng(seed);
  const items: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const j = JSON.stringify({
      id: 'chatcmpl-9x8Yz', object: 'chat.completion.chunk', created: 1732900000 + (i >> 6), model: 'gpt-4o-2024-08-06',
      system_fingerprint: 'fp_d28bcae782', choices: [{ index: 0, delta: { content: delta(r) }, logprobs: null, finish_reason: null }],
    });
    items.push(j);
    size += j.length * 1.15;
  }
  return enc.encode(`event: result\ndata: [${items.join(',')}]\n\n`);
}

interface Ev { type: string; data: string }

function seamEvents(chunks: Uint8Array[], p: SseParser): Ev[] {
  const out: Ev[] = [];
  for (const c of chunks) for (const e of p.push(c)) out.push({ type: e.type, data: e.data });
  for (const e of p.flush()) out.push({ type: e.type, data: e.data });
  return out;
}

function seamByteEvents(chunks: Uint8Array[], p: SseParser): Ev[] {
  const out: Ev[] = [];
  const dec = new TextDecoder('utf-8', { ignoreBOM: true });
  for (const c of chunks) {
    const b = p.pushBytes(c);
    for (let i = 0; i < b.length; i++) out.push({ type: b.type(i), data: dec.decode(b.data(i)) });
  }
  return out;
}

function peerEvents(chunks: Uint8Array[]): Ev[] {
  const out: Ev[] = [];
  const dec = new TextDecoder();
  const parser = createParser({ onEvent: (e: EventSourceMessage) => out.push({ type: e.event ?? 'message', data: e.data }) });
  for (const c of chunks) parser.feed(dec.decode(c, { stream: true }));
  parser.feed(dec.decode());
  return out;
}

/** A stream in reads of `size` bytes, or of −size events. */
const cut = (bytes: Uint8Array, size: number): Uint8Array[] => (size < 0 ? perEvent(bytes, -size) : chunked(bytes, size));
/** A read size's name in the tables. */
const readName = (size: number): string => (size === -1 ? '1 event' : size < 0 ? `${-size} events` : size >= 1024 ? `${size >> 10} KiB` : `${size} B`);

/** Runs the SSE rows; `log` sees each row as it completes. */
export function runSseBench(opts: BenchOptions, log: (r: Row) => void = () => {}, filter?: { corpus?: string[]; chunk?: number[] }): Row[] {
  const corpora = [
    { name: 'OpenAI-shaped 4 MiB', bytes: openaiStream() },
    { name: 'Anthropic-shaped 4 MiB', bytes: anthropicStream() },
    { name: 'one 8 MiB event', bytes: bigEvent() },
  ].filter((c) => !filter?.corpus || filter.corpus.some((f) => c.name.startsWith(f)));
  // read sizes: −1 and −3 are one and three events per read (what real APIs flush)
  const sizes = filter?.chunk ?? [-1, -3, 16, 64, 1024, 16384];
  const rows: Row[] = [];
  const parser = new SseParser();
  const bytesParser = new SseParser();
  for (const { name, bytes } of corpora) {
    for (const size of sizes) {
      if (size < 0 && name.startsWith('one')) continue; // (one event: one read)
      const chunks = cut(bytes, size);
      const theirs = peerEvents(chunks);
      assertSame(`sse ${name} ${size}`, seamEvents(chunks, parser), theirs);
      assertSame(`sse bytes ${name} ${size}`, seamByteEvents(chunks, bytesParser), theirs);
      let sink = 0;
      const seam = () => {
        for (const c of chunks) sink += parser.push(c).length;
        sink += parser.flush().length;
      };
      const seamBytes = () => {
        for (const c of chunks) sink += bytesParser.pushBytes(c).length;
        sink += bytesParser.flushBytes().byteLength;
      };
      const peer = () => {
        const dec = new TextDecoder();
        const p = createParser({ onEvent: () => { sink++; } });
        for (const c of chunks) p.feed(dec.decode(c, { stream: true }));
        p.feed(dec.decode());
      };
      // On the same chunks: the floor of any parser in this design, which must copy each chunk
      // into the core and validate it (Utf8Validator: that and nothing else, so the byte-level
      // path cannot beat its ratio: on the core route, where runtimes that have buffer.isUtf8
      // take it for long reads); and for reference, the same plus a UTF-16 string per chunk
      // (Utf8Decoder), what turning the bytes into text costs before any framing.
      forceStringRoute('core');
      const validator = new Utf8Validator();
      forceStringRoute(undefined);
      const floor = () => {
        for (const c of chunks) validator.push(c);
        validator.flush();
      };
      const decoder = new Utf8Decoder();
      const stringFloor = () => {
        for (const c of chunks) sink += decoder.push(c).length;
        decoder.flush();
      };
      const chunk = readName(size);
      const variants = [['SseParser.push (string events)', seam], ['SseParser.pushBytes (byte-level)', seamBytes]] as [string, () => void][];
      if (name.startsWith('OpenAI')) {
        variants.push(['floor: copy + validate, no framing (Utf8Validator.push)', floor]);
        variants.push(['reference: copy + validate + a string per chunk, no framing (Utf8Decoder.push)', stringFloor]);
      }
      for (const [variant, fn] of variants) {
        const row = compare({ layer: 'sse', case: variant, corpus: name, chunk, peerName: PEER }, bytes.length, fn, peer, opts);
        rows.push(row);
        log(row);
      }
      if (!name.startsWith('one')) {
        // what a gateway that forwards the events does: the byte path and encode(), against a
        // forwarder that frames with eventsource-parser and writes `data: …` (no JSON)
        const fwd = new SseParser();
        const forward = () => {
          for (const c of chunks) sink += fwd.pushBytes(c).encode().length;
          sink += fwd.flushBytes().encode().length;
        };
        const enc = new TextEncoder();
        const plain = () => {
          const dec = new TextDecoder();
          const p = createParser({ onEvent: (e) => { sink += enc.encode(e.event ? `event: ${e.event}\ndata: ${e.data}\n\n` : `data: ${e.data}\n\n`).length; } });
          for (const c of chunks) p.feed(dec.decode(c, { stream: true }));
          p.feed(dec.decode());
        };
        const row = compare({ layer: 'sse', case: 'SseParser.pushBytes + encode() (forwarding)', corpus: name, chunk, peerName: 'plain forwarder (eventsource-parser + `data: …` + TextEncoder)' },
          bytes.length, forward, plain, opts);
        rows.push(row);
        log(row);
        fwd.dispose();
      }
      validator.dispose();
      decoder.dispose();
      if (sink < 0) console.log(sink);
    }
  }
  parser.dispose();
  bytesParser.dispose();
  if (!filter?.corpus || filter.corpus.some((f) => 'one 8 MiB event'.startsWith(f) || 'OpenAI'.startsWith(f))) rows.push(...perByteRows(opts, log, sizes.filter((n) => n > 0)));
  return rows;
}

/**
 * Whether one 8 MiB event costs more per byte than small events: the same path of the same
 * library on both, at the same read size, interleaved. Ratio = MB/s on the 8 MiB event over MB/s
 * on the OpenAI-shaped stream; at least 1 means no more per byte.
 */
function perByteRows(opts: BenchOptions, log: (r: Row) => void, sizes: number[]): Row[] {
  const big = bigEvent();
  const small = openaiStream();
  const rows: Row[] = [];
  for (const size of sizes) {
    const cb = chunked(big, size);
    const cs = chunked(small, size);
    const chunk = size >= 1024 ? `${size >> 10} KiB` : `${size} B`;
    for (const bytesPath of [false, true]) {
      const pb = new SseParser();
      const ps = new SseParser();
      let sink = 0;
      const run = (p: SseParser, chunks: Uint8Array[]) => bytesPath
        ? () => { for (const c of chunks) sink += p.pushBytes(c).length; sink += p.flushBytes().length; }
        : () => { for (const c of chunks) sink += p.push(c).length; sink += p.flush().length; };
      const row = compareRates(
        { layer: 'sse', case: `per byte: one 8 MiB event against small events (${bytesPath ? 'pushBytes' : 'push'})`, corpus: 'one 8 MiB event', chunk, peerName: 'the same on OpenAI-shaped 4 MiB' },
        big.length, run(pb, cb), small.length, run(ps, cs), opts);
      rows.push(row);
      log(row);
      pb.dispose();
      ps.dispose();
      if (sink < 0) console.log(sink);
    }
  }
  return rows;
}

// Run only as its own entry (build/bench-sse/sse.js), not when bundled into bench/run.ts.
const isMain = process.argv[1] !== undefined && /[\\/]sse\.js$/.test(process.argv[1]) && import.meta.url === new URL(`file://${process.argv[1]}`).href;
if (isMain) {
  const argv = process.argv.slice(2);
  const opts = argv.includes('--full') ? FULL : QUICK;
  const arg = (k: string) => { const i = argv.indexOf(k); return i >= 0 ? argv[i + 1].split(',') : undefined; };
  const rows = runSseBench(opts, (r) => console.error(`  ${r.case} | ${r.corpus} | ${r.chunk}: ${r.seam.toFixed(0)} vs ${r.peer.toFixed(0)} MB/s (${r.ratio.toFixed(2)}x)`),
    { corpus: arg('--corpus'), chunk: arg('--chunk')?.map((c) => (c === 'event' ? -1 : c === '3events' ? -3 : Number(c))) });
  console.log(`Node ${process.version}; ${opts === FULL ? 'full' : 'quick'} run (${opts.rounds} rounds × ${opts.maxTime} s)\n\n${table(rows)}`);
}
