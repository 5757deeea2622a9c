// seam's ESM build in headless Chromium or Firefox ESR (Debian's, launched by scripts/browsers.ts
// as the browser tests launch them), against what a page does
// without it; the page's code is bench/browser-page.mjs. The corpus is bench/sse.ts's OpenAI-shaped
// stream (4 MiB), served on loopback and read in memory.
//   npm run build && node build/bench/browser.js [--only utf8,sse,model,fetch] [--rounds 11]
//     [--browser chromium|firefox] [--warm MS]
//     --warm MS               each contender runs MS ms (in three turns) before a row's rounds; 0: none (default 300);
//                             the fetch rows are not warmed: each of their rounds is a whole run of seconds
//     [--base DIR]            also run DIR/index.js (another commit's dist) in the same rounds
//     [--profile SIZE]        (Chromium) profile SseParser.push alone at SIZE-byte reads (0: one event per read)
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { launchBrowser } from '../scripts/browsers.js';
import { openaiStream } from './sse.js';

interface Row { corpus: string; chunk: string; bytes: number; events?: number; ms: Record<string, number> }
interface Out {
  backend: string; ua: string; rounds: number; builds: string[]; utf8?: Row[]; sse?: Row[]; model?: Row[];
  fetch?: { bytes: number; events: number; rounds: number; ms: Record<string, number> };
}

const argv = process.argv.slice(2);
const arg = (name: string): string | undefined => { const i = argv.indexOf(name); return i >= 0 ? argv[i + 1] : undefined; };
const base = arg('--base');
const sections = (arg('--only') ?? 'utf8,sse,model,fetch').split(',');
const rounds = Number(arg('--rounds') ?? 11);
const warm = Number(arg('--warm') ?? 300);
if (!(warm >= 0)) throw new Error(`--warm: milliseconds, got ${arg('--warm')}`);
const profile = arg('--profile');
const which = arg('--browser') ?? 'chromium';
if (which !== 'chromium' && which !== 'firefox') throw new Error(`--browser: chromium or firefox, got ${which}`);
if (profile !== undefined && which !== 'chromium') throw new Error('--profile needs Chromium (its DevTools profiler)');

const root = process.cwd();
const PEER = join(root, 'node_modules', 'eventsource-parser-4', 'dist');
const PEER_VERSION = (JSON.parse(readFileSync(join(PEER, '..', 'package.json'), 'utf8')) as { version: string }).version;
const corpus = openaiStream(4 << 20);
const files: Record<string, string> = {
  '/page.mjs': join(root, 'bench', 'browser-page.mjs'),
  '/peer-commit.mjs': join(root, 'bench', 'peer-commit.mjs'),
  // (the peer's current release, eventsource-parser 4: its modules as they ship)
  '/peer/eventsource-parser.js': join(PEER, 'index.js'),
  ...Object.fromEntries(['index', 'parse', 'errors', 'stream', 'types'].map((m) => [`/peer/${m}.js`, join(PEER, `${m}.js`)])),
};
/** The `fetch` section's stream: 50 MB OpenAI-shaped, written to the socket 16 KiB at a time. */
const big = sections.includes('fetch') ? openaiStream(57.5e6, 21) : new Uint8Array(0);
const server = createServer((req, res) => {
  const url = req.url ?? '/';
  if (url === '/') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>seam bench</title>');
  if (url === '/corpus/openai.bin') return void res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(corpus);
  if (url === '/corpus/big.sse') {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    let i = 0;
    const pump = (): void => {
      while (i < big.length) {
        const piece = big.subarray(i, i + 16384);
        i += piece.length;
        if (!res.write(piece)) return void res.once('drain', pump);
      }
      res.end();
    };
    return pump();
  }
  const m = /^\/(dist|base)\/((?:chunks\/)?[\w.-]+\.js)$/.exec(url);
  const file = files[url] ?? (m ? join(m[1] === 'dist' ? join(root, 'dist') : base ?? '/nonexistent', m[2]) : undefined);
  if (file === undefined) return void res.writeHead(404).end();
  try {
    const body = readFileSync(file);
    res.writeHead(200, { 'content-type': 'text/javascript' }).end(body);
  } catch {
    res.writeHead(404).end();
  }
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const pageUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
const browser = await launchBrowser(which);
const page = await browser.newPage();
await page.goto(pageUrl);
const chromiumPage = page.chromium;

const mbps = (r: Row, who: string) => r.bytes / r.ms[who] / 1e3;
const fmt = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));

function printTable(title: string, rows: Row[], builds: string[], seamName: string, peerName: string): void {
  const hasBase = builds.includes('base');
  const hasDecode = rows[0].ms.decode !== undefined;
  console.log(`\n${title}\n`);
  console.log(`| corpus | reads | ${seamName} MB/s |${hasBase ? ' base MB/s |' : ''} ${peerName} MB/s | ratio |${hasBase ? ' base ratio |' : ''}${hasDecode ? ' TextDecoder alone (ceiling) |' : ''}`);
  console.log(`|---|---|---:|${hasBase ? '---:|' : ''}---:|---:|${hasBase ? '---:|' : ''}${hasDecode ? '---:|' : ''}`);
  for (const r of rows) {
    const ratio = r.ms.peer / r.ms.seam;
    const b = hasBase ? ` ${fmt(mbps(r, 'base'))} |` : '';
    const br = hasBase ? ` ${(r.ms.peer / r.ms.base).toFixed(2)}× |` : '';
    const dr = hasDecode ? ` ${(r.ms.peer / r.ms.decode).toFixed(2)}× |` : '';
    console.log(`| ${r.corpus} | ${r.chunk} | ${fmt(mbps(r, 'seam'))} |${b} ${fmt(mbps(r, 'peer'))} | **${ratio.toFixed(2)}×** |${br}${dr}`);
  }
}

try {
  if (profile !== undefined && chromiumPage !== undefined) {
    const cdp = await chromiumPage.context().newCDPSession(chromiumPage);
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: 100 });
    await page.evaluate(`import('/page.mjs').then((p) => p.profileLoop(${Number(profile)}, 300))`); // warm up
    await cdp.send('Profiler.start');
    await page.evaluate(`import('/page.mjs').then((p) => p.profileLoop(${Number(profile)}, 3000))`);
    const { profile: prof } = await cdp.send('Profiler.stop') as { profile: { nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[]; samples: number[] } };
    const self = new Map<string, number>();
    const byId = new Map(prof.nodes.map((n) => [n.id, n]));
    for (const id of prof.samples) {
      const f = byId.get(id)!.callFrame;
      const key = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\//, '')}:${f.lineNumber + 1}`;
      self.set(key, (self.get(key) ?? 0) + 1);
    }
    const total = prof.samples.length;
    console.log(`SseParser.push at ${profile} B reads: self time of ${total} samples`);
    for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`${(100 * v / total).toFixed(1).padStart(5)}%  ${k}`);
  } else {
    const out = (await page.evaluate(`import('/page.mjs').then((p) => p.run(${JSON.stringify({ sections, base: base !== undefined, rounds, warm })}))`)) as Out;
    console.log(`${out.ua.replace(/^.*((?:Chrome|Firefox)\/[\d.]+).*$/, '$1')} (headless), core: ${out.backend}; ${out.rounds} interleaved rounds, medians;`
      + ` every sample ≥ 10 ms of work, after ${warm} ms of each contender; ratio = peer's time / seam's; eventsource-parser ${PEER_VERSION}${base ? '; base = ' + base : ''}`);
    if (out.utf8) printTable('UTF-8', out.utf8, ['seam'], 'Utf8Decoder', 'TextDecoder fatal, stream');
    if (out.sse) printTable(`SSE string events (${out.sse[0].events} events)`, out.sse, out.builds, 'SseParser.push', 'TextDecoder + eventsource-parser');
    if (out.model) printTable('Model stream: bytes → committed text', out.model, out.builds, 'ModelStream (defaults)', 'TextDecoder + eventsource-parser + JSON.parse + Intl.Segmenter hold-back + NFC');
    if (out.fetch) {
      const f = out.fetch;
      console.log(`\nOver fetch: ${(f.bytes / 1e6).toFixed(0)} MB OpenAI-shaped stream (${f.events} events) served on loopback in 16 KiB writes, fetch() to the last text, ${f.rounds} interleaved rounds, medians\n`);
      console.log('| pipeline | seconds | MB/s | ratio |');
      console.log('|---|---:|---:|---:|');
      console.log(`| fetch + a reader loop, no decoding (the ceiling) | ${(f.ms.fetch / 1e3).toFixed(2)} | ${fmt(f.bytes / f.ms.fetch / 1e3)} | |`);
      console.log(`| ModelStream (defaults) in a reader loop, and finish() | ${(f.ms.seam / 1e3).toFixed(2)} | ${fmt(f.bytes / f.ms.seam / 1e3)} | **${(f.ms.peer / f.ms.seam).toFixed(2)}×** |`);
      console.log(`| TextDecoderStream + EventSourceParserStream + JSON.parse + Intl.Segmenter hold-back + NFC | ${(f.ms.peer / 1e3).toFixed(2)} | ${fmt(f.bytes / f.ms.peer / 1e3)} | 1 |`);
    }
  }
} finally {
  await browser.close();
  server.close();
}
