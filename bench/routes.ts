// The string routes on the runtime that runs this (bindings/core/strings.ts), against the peer in
// the same process, interleaved: where the split route's threshold goes, which SSE route wins, and
// from which read size the validator hands reads to buffer.isUtf8. Each row times one route of
// seam and its peer; the table has one ratio column per route.
//   node build/bench/routes.js [--only utf8,sse,validate] [--rounds N] [--max-time S]
//   bun build/bench/routes.js; deno run -A build/bench/routes.js
import { createParser, eventsourceParserVersion } from './peers.js';
import { isUtf8 } from 'node:buffer';
import { SseParser, Utf8Decoder, Utf8Validator } from '../bindings/index.js';
import { runtimeName } from '../bindings/core/runtime.js';
import { forceStringRoute, stringRoutes } from '../bindings/core/strings.js';
import { chunked, perEvent } from './corpus.js';
import { type BenchOptions, assertSame, compare } from './harness.js';
import { anthropicStream, openaiStream } from './sse.js';
import { utf8Corpora } from './utf8.js';

type Route = 'core' | 'platform' | 'textdecoder';
let sink = 0;

function utf8Rows(opts: BenchOptions, sizes: number[], routes: Route[]): string[] {
  const lines: string[] = [];
  for (const { name, bytes } of utf8Corpora()) {
    for (const size of sizes) {
      const pieces = chunked(bytes, size);
      const td = new TextDecoder('utf-8', { fatal: true });
      const peer = () => { for (const p of pieces) td.decode(p, { stream: true }); td.decode(); };
      const want = pieces.map((p) => td.decode(p, { stream: true })).join('') + td.decode();
      const cells: string[] = [];
      for (const route of routes) {
        forceStringRoute(route);
        const d = new Utf8Decoder();
        forceStringRoute(undefined);
        assertSame(`routes utf8 ${route} ${name} ${size}`, pieces.map((p) => d.push(p)).join('') + d.flush(), want);
        const row = compare({ layer: 'UTF-8', case: route, corpus: name, chunk: `${size} B`, peerName: 'TextDecoder' },
          bytes.length, () => { for (const p of pieces) d.push(p); d.flush(); }, peer, opts);
        cells.push(`${row.ratio.toFixed(2)}×`);
        d.dispose();
      }
      const line = `| ${name} | ${size} | ${cells.join(' | ')} |`;
      console.error(line);
      lines.push(line);
    }
  }
  return lines;
}

function sseRows(opts: BenchOptions, routes: Route[]): string[] {
  const lines: string[] = [];
  const corpora = [{ name: 'OpenAI-shaped', bytes: openaiStream() }, { name: 'Anthropic-shaped', bytes: anthropicStream() }];
  for (const { name, bytes } of corpora) {
    for (const size of [-1, 64, 1024, 16384]) {
      const chunks = size < 0 ? perEvent(bytes, 1) : chunked(bytes, size);
      const peer = () => {
        const dec = new TextDecoder();
        const p = createParser({ onEvent: () => { sink++; } });
        for (const c of chunks) p.feed(dec.decode(c, { stream: true }));
        p.feed(dec.decode());
      };
      const cells: string[] = [];
      for (const route of routes) {
        forceStringRoute(route === 'platform' ? 'core' : route);
        const parser = new SseParser();
        forceStringRoute(undefined);
        const row = compare({ layer: 'sse', case: route, corpus: name, chunk: String(size), peerName: 'TextDecoder + eventsource-parser' },
          bytes.length, () => { for (const c of chunks) sink += parser.push(c).length; sink += parser.flush().length; }, peer, opts);
        cells.push(`${row.ratio.toFixed(2)}×`);
        parser.dispose();
      }
      const line = `| ${name} | ${size < 0 ? 'one event' : `${size} B`} | ${cells.join(' | ')} |`;
      console.error(line);
      lines.push(line);
    }
  }
  return lines;
}

/** Utf8Validator on the core route and on the platform's, against buffer.isUtf8 on the same reads (no carry). */
function validateRows(opts: BenchOptions, sizes: number[]): string[] {
  const lines: string[] = [];
  for (const { name, bytes } of utf8Corpora()) {
    for (const size of sizes) {
      const pieces = chunked(bytes, size);
      const peer = () => { for (const p of pieces) sink += isUtf8(p) ? 1 : 0; };
      const cells: string[] = [];
      for (const route of ['core', 'platform'] as const) {
        forceStringRoute(route);
        const v = new Utf8Validator();
        forceStringRoute(undefined);
        const row = compare({ layer: 'UTF-8', case: `validate ${route}`, corpus: name, chunk: `${size} B`, peerName: 'buffer.isUtf8' },
          bytes.length, () => { for (const p of pieces) v.push(p); v.flush(); }, peer, opts);
        cells.push(`${row.ratio.toFixed(2)}×`);
        v.dispose();
      }
      const line = `| ${name} | ${size} | ${cells.join(' | ')} |`;
      console.error(line);
      lines.push(line);
    }
  }
  return lines;
}

const argv = process.argv.slice(2);
const arg = (k: string) => { const i = argv.indexOf(k); return i >= 0 ? argv[i + 1] : undefined; };
const only = (arg('--only') ?? 'utf8,sse,validate').split(',');
const opts: BenchOptions = { rounds: Number(arg('--rounds') ?? 5), maxTime: Number(arg('--max-time') ?? 0.1) };
const sizes = (arg('--sizes') ?? '64,256,1024,2048,4096,16384').split(',').map(Number);
const { name, version } = runtimeName();
const detected = stringRoutes();
console.log(`${name} ${version}: detected routes: Utf8Decoder ${detected.utf8}${detected.utf8 === 'split' ? ` (platform from ${detected.utf8PlatformFrom} B)` : ''}, frames ${detected.frames}, Utf8Validator by buffer.isUtf8 from ${detected.validateFrom} B; eventsource-parser ${eventsourceParserVersion()}; `
  + `${opts.rounds} interleaved rounds × ${opts.maxTime} s; ratio = median of per-round seam/peer\n`);
if (only.includes('utf8')) {
  const routes: Route[] = ['core', 'platform', 'textdecoder'];
  console.log(`| Utf8Decoder.push (strict) / TextDecoder fatal, stream | read B | ${routes.join(' | ')} |\n|---|---:|${routes.map(() => '---:').join('|')}|`);
  console.log(`${utf8Rows(opts, sizes, routes).join('\n')}\n`);
}
if (only.includes('sse')) {
  const routes: Route[] = ['core', 'textdecoder'];
  console.log(`| SseParser.push / TextDecoder + eventsource-parser | reads | ${routes.join(' | ')} |\n|---|---|${routes.map(() => '---:').join('|')}|`);
  console.log(`${sseRows(opts, routes).join('\n')}\n`);
}
if (only.includes('validate')) {
  console.log(`| Utf8Validator.push / buffer.isUtf8 (no carry) | read B | core | platform |\n|---|---:|---:|---:|`);
  console.log(`${validateRows(opts, sizes).join('\n')}\n`);
}
if (sink < 0) console.log(sink);
