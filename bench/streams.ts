// The TransformStreams against a reader loop over `push`: the OpenAI-shaped stream of bench/sse.ts
// (2 MiB) fed through a ReadableStream (one chunk per pull), read to its end by each contender:
//   push loop      a reader loop over the source calling SseParser#push / LineDecoder#push
//   hop + push     the same loop behind source.pipeThrough(new TransformStream()): the floor of any
//                  TransformStream, what the stream machinery costs per chunk with no work in it
//   per item       source.pipeThrough(new SseDecoderStream()) (LineDecoderStream), read one item at a time
//   batch          source.pipeThrough(new SseBatchDecoderStream()) (LineBatchDecoderStream), read an array at a time
// Rounds interleave the contenders (rotating who goes first); the result is the median over rounds
// of each one's time divided by the push loop's in the same round. Every contender's output (the
// count and total length of the events' data, or of the lines) is checked equal before timing.
//
//   npm run bench:streams   (or, once built: node build/bench/streams.js [--rounds 15] [--chromium])
// --chromium runs the same in headless Chromium (/usr/bin/chromium), this file bundled for it.
import {
  LineBatchDecoderStream, LineDecoder, LineDecoderStream, SseBatchDecoderStream, SseDecoderStream, SseParser,
} from '../bindings/index.js';
import { chunked, perEvent } from './corpus.js';
import { median } from './harness.js';
import { openaiStream } from './sse.js';

/** What a contender read: a count and a total length, compared across contenders. */
interface Tally { n: number; len: number }

function source(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(c) {
      if (i < chunks.length) c.enqueue(chunks[i++]);
      else c.close();
    },
  }, { highWaterMark: 0 });
}

async function pushLoop(chunks: Uint8Array[], hop: boolean, decoder: { push(c: Uint8Array): Array<{ data: string } | string>; flush(): Array<{ data: string } | string> }): Promise<Tally> {
  const t: Tally = { n: 0, len: 0 };
  const add = (xs: Array<{ data: string } | string>) => {
    for (const x of xs) { t.n++; t.len += typeof x === 'string' ? x.length : x.data.length; }
  };
  const src = source(chunks);
  const reader = (hop ? src.pipeThrough(new TransformStream<Uint8Array, Uint8Array>()) : src).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    add(decoder.push(value));
  }
  add(decoder.flush());
  return t;
}

async function perItem<T extends { data: string } | string>(chunks: Uint8Array[], stream: TransformStream<Uint8Array, T>): Promise<Tally> {
  const t: Tally = { n: 0, len: 0 };
  const reader = source(chunks).pipeThrough(stream).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    t.n++;
    t.len += typeof value === 'string' ? value.length : value.data.length;
  }
  return t;
}

async function batches<T extends { data: string } | string>(chunks: Uint8Array[], stream: TransformStream<Uint8Array, T[]>): Promise<Tally> {
  const t: Tally = { n: 0, len: 0 };
  const reader = source(chunks).pipeThrough(stream).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    for (const x of value) { t.n++; t.len += typeof x === 'string' ? x.length : x.data.length; }
  }
  return t;
}

type Contender = (chunks: Uint8Array[]) => Promise<Tally>;
const SSE: Record<string, Contender> = {
  'push loop': (c) => pushLoop(c, false, new SseParser()),
  'hop + push': (c) => pushLoop(c, true, new SseParser()),
  'per item': (c) => perItem(c, new SseDecoderStream()),
  batch: (c) => batches(c, new SseBatchDecoderStream()),
};
const LINES: Record<string, Contender> = {
  'push loop': (c) => pushLoop(c, false, new LineDecoder()),
  'hop + push': (c) => pushLoop(c, true, new LineDecoder()),
  'per item': (c) => perItem(c, new LineDecoderStream()),
  batch: (c) => batches(c, new LineBatchDecoderStream()),
};

async function timeOnce(f: Contender, chunks: Uint8Array[]): Promise<number> {
  const t0 = performance.now();
  await f(chunks);
  return performance.now() - t0;
}

export async function runStreamsBench(rounds: number): Promise<string[]> {
  const bytes = openaiStream(2 << 20);
  const cases: Array<[string, Uint8Array[]]> = [
    ['one event per read', perEvent(bytes, 1)],
    ['1 KiB', chunked(bytes, 1024)],
    ['16 KiB', chunked(bytes, 16384)],
    ['128 KiB', chunked(bytes, 131072)],
  ];
  const out = [
    '| decoder | reads | items per read | per item / push loop | batch / push loop | hop + push / push loop | batch / hop + push |',
    '|---|---|---:|---:|---:|---:|---:|',
  ];
  for (const [kind, set] of [['SSE', SSE], ['lines', LINES]] as const) {
    for (const [name, chunks] of cases) {
      const names = Object.keys(set);
      const tallies = await Promise.all(names.map((n) => set[n](chunks)));
      for (const t of tallies) {
        if (t.n !== tallies[0].n || t.len !== tallies[0].len) {
          throw new Error(`${kind} ${name}: the contenders disagree: ${JSON.stringify(tallies)}`);
        }
      }
      for (const n of names) await set[n](chunks); // warm-up
      const ratios: Record<string, number[]> = { 'per item': [], batch: [], hop: [], floor: [] };
      for (let r = 0; r < rounds; r++) {
        const order = names.map((_, i) => names[(i + r) % names.length]);
        const ms: Record<string, number> = {};
        for (const n of order) ms[n] = await timeOnce(set[n], chunks);
        ratios['per item'].push(ms['per item'] / ms['push loop']);
        ratios.batch.push(ms.batch / ms['push loop']);
        ratios.hop.push(ms['hop + push'] / ms['push loop']);
        ratios.floor.push(ms.batch / ms['hop + push']);
      }
      const f = (x: number) => `${x.toFixed(2)}×`;
      const m = (k: string) => f(median(ratios[k]));
      out.push(`| ${kind} | ${name} | ${(tallies[0].n / chunks.length).toFixed(1)} | ${m('per item')} | ${m('batch')} | ${m('hop')} | ${m('floor')} |`);
    }
  }
  return out;
}

/** Runs the table in headless Chromium (Debian's): this file bundled for the browser, served on loopback. */
async function inChromium(rounds: number): Promise<string[]> {
  const [{ build }, { createServer }, { launchBrowser }, { fileURLToPath }] = await Promise.all([
    import('esbuild'), import('node:http'), import('../scripts/browsers.js'), import('node:url'),
  ]);
  // from a source checkout: build/bench/streams.js -> bench/streams.ts
  const source = fileURLToPath(new URL('../../bench/streams.ts', import.meta.url));
  // (the Node-only imports of this function stay imports: the page never calls it)
  const code = (await build({
    entryPoints: [source], bundle: true, format: 'esm', platform: 'browser', write: false, logLevel: 'error',
    external: ['node:*', 'esbuild', '*/scripts/browsers.js'],
    define: { 'process.argv': '[]' }, // bench/sse.ts looks at its command line at import
  })).outputFiles[0].text;
  const server = createServer((req, res) => {
    if (req.url === '/streams.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(code);
    else res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>streams</title>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const browser = await launchBrowser('chromium');
  try {
    const page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${(server.address() as { port: number }).port}/`);
    const ua = await page.evaluate('navigator.userAgent') as string;
    const lines = await page.evaluate(`import('/streams.js').then((m) => m.runStreamsBench(${rounds}))`) as string[];
    return [`${/(HeadlessChrome|Chrome)\/[\d.]+/.exec(ua)?.[0] ?? ua}, ${rounds} rounds, time relative to a reader loop over push (lower is faster)`, ...lines];
  } finally {
    await browser.close();
    server.close();
  }
}

const argv: string[] = (globalThis as { process?: { argv: string[] } }).process?.argv ?? [];
if (argv[1] !== undefined && /streams\.[jt]s$/.test(argv[1])) {
  const i = argv.indexOf('--rounds');
  const rounds = i > 0 ? Number(argv[i + 1]) : 15;
  if (argv.includes('--chromium')) {
    for (const line of await inChromium(rounds)) console.log(line);
  } else {
    console.log(`Node ${process.version}, ${rounds} rounds, time relative to a reader loop over push (lower is faster)`);
    for (const line of await runStreamsBench(rounds)) console.log(line);
  }
}
