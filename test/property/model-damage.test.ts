// Damaged streams. Every model fixture (test/helpers/model-fixtures.ts), the Anthropic ones also
// as Claude on Bedrock sends them, and the Bedrock fixtures, with one to three random damages (a
// bit flipped, a byte replaced, bytes inserted, removed or repeated, the stream cut short), read
// whole and again dripped or cut at random:
// - ModelStream (with its defaults, raw, without NFC, allowing a cut end, replacing bad UTF-8, or
//   with small limits of event, argument, held and text bytes) gives the same outcome for every
//   cutting: the text (what the pushes returned and the error's), the error's code and offset, the
//   status, tool calls, reasoning, finish reason, usage and the report; and it throws nothing but a
//   ModelStreamError, whose offset lies in the stream;
// - SseRelay, to an OpenAI or an Anthropic client, writes the same events for every cutting (the
//   ids and times it makes aside, and the bytes an invalid byte's message shows, which stop at the
//   read's end), always well-formed UTF-8, and throws nothing; also with reasoning dropped, with
//   comments not forwarded and with small event limits;
// - the same streams, 300 at a time, read and relayed interleaved push by push, each give what
//   they give alone (the streams of a realm share one core);
// - ModelTextStream and SseRelayStream give what ModelStream and SseRelay give for the same reads.
// - a reader or relay reset anywhere in a damaged stream, then given another stream, gives what a
//   new one gives.
// Seeded: the seed and the damaged stream are printed on failure.
import { createParser } from 'eventsource-parser';
import { expect, test } from 'vitest';
import { ModelStream, ModelStreamError, ModelTextStream, SseRelay, SseRelayStream, coreMemoryUsed } from '../../bindings/index.js';
import { SOURCES, type Source, damage } from '../helpers/damaged-streams.js';
import { unclocked } from '../helpers/model-streams.js';
import { SEED, concat, cut, randomCuts, rng } from '../helpers/random.js';

const dec = new TextDecoder();

/** Whole, then dripped (short streams) or cut at random. */
function cuttings(r: () => number, bytes: Uint8Array): [string, Uint8Array[]][] {
  const out: [string, Uint8Array[]][] = [['cut at random', cut(bytes, randomCuts(bytes, r, 1 + Math.floor(r() * 64)))]];
  if (bytes.length <= 2500 && r() < 0.3) out.push(['dripped', Array.from({ length: bytes.length }, (_, i) => bytes.subarray(i, i + 1))]);
  return out;
}

const VARIANTS = [{}, { raw: true }, { normalize: false }, { eof: 'allow' }, { fatal: false }, { fatal: false, raw: true }, { maxEventBytes: 200 }, { maxArgumentBytes: 16 }, { maxPendingBytes: 8 },
  { maxTextBytes: 24 }, { raw: true, maxTextBytes: 24 }, { fatal: false, maxTextBytes: 60 }, { maxTextBytes: 7, maxPendingBytes: 8 }] as const;

/** A stream's reading, a push at a time: `step` feeds the next chunk (or ends the stream) and says whether there is more. */
interface Run { step(): boolean; result(): string; bytes?(): Uint8Array }

function reader(src: Source, variant: number, chunks: Uint8Array[], length: number): Run {
  return readerOf(new ModelStream({ format: src.format as 'openai', ...(src.choice === undefined ? {} : { choice: src.choice }), ...VARIANTS[variant] }), chunks, length);
}

/** The reading of `chunks` (of a stream of `length` bytes) by the model stream `m`. */
function readerOf(m: ModelStream, chunks: Uint8Array[], length: number): Run {
  let text = '';
  let error = '';
  let k = 0;
  return {
    step() {
      if (error !== '' || k > chunks.length) return false;
      try {
        text += k < chunks.length ? m.push(chunks[k]) : m.flush();
      } catch (e) {
        if (!(e instanceof ModelStreamError)) throw e;
        if (!(Number.isInteger(e.offset) && e.offset >= 0 && e.offset <= length)) throw new Error(`${e.code} at offset ${e.offset}, outside the ${length} bytes`);
        text += e.text;
        error = `${e.code} at ${e.offset}`;
      }
      return ++k <= chunks.length && error === '';
    },
    result() {
      const r = m.finish();
      return JSON.stringify({
        text, error, status: m.status, calls: m.toolCalls, reasoning: m.reasoning, finish: m.finishReason ?? null, usage: m.usage ?? null,
        report: [r.text, r.status, r.utf8Bytes, r.codePoints, r.graphemes, r.sha256, r.finishReason ?? null, r.toolCalls],
      });
    },
  };
}

/** The relay's options besides its client: the defaults, reasoning dropped, comments not forwarded, small event limits. */
const RELAY_VARIANTS = [{}, { reasoning: 'drop' }, { comments: false }, { maxEventBytes: 200 }, { maxEventBytes: 120, reasoning: 'drop' }] as const;

function relayer(src: Source, to: 'openai' | 'anthropic', chunks: Uint8Array[], variant = 0): Run {
  const rl = new SseRelay({ from: src.format as 'openai', to, ...(src.choice === undefined ? {} : { choice: src.choice }), ...RELAY_VARIANTS[variant] });
  const parts: Uint8Array[] = [];
  let k = 0;
  return {
    step() {
      if (k > chunks.length) return false;
      parts.push((k < chunks.length ? rl.push(chunks[k]) : rl.flush()).slice());
      return ++k <= chunks.length;
    },
    bytes: () => concat(parts),
    result() {
      const events: string[] = [];
      const p = createParser({
        onEvent: (e) => {
          if (e.event === 'ping') return;
          events.push(`${e.event ?? ''} ${unclocked(e.data.replace(/ \(bytes from there: [0-9A-F ]+\)/, ''))}`);
        },
      });
      p.feed(new TextDecoder('utf-8', { fatal: true }).decode(concat(parts)));
      return JSON.stringify([rl.status, events]);
    },
  };
}

const relayedBytes = (run: Run): Uint8Array => run.bytes!();
const complete = (run: Run): string => {
  while (run.step());
  return run.result();
};
const read = (src: Source, variant: number, chunks: Uint8Array[], length: number) => complete(reader(src, variant, chunks, length));
const relay = (src: Source, to: 'openai' | 'anthropic', chunks: Uint8Array[], variant: number) => complete(relayer(src, to, chunks, variant));

const show = (src: Source, bytes: Uint8Array, how: string, k: number) =>
  `seed ${SEED}, case ${k}: ${src.name} (${src.format}) damaged, ${how}: ${JSON.stringify(dec.decode(bytes)).slice(0, 4000)}`;

test(`ModelStream on damaged streams: the same outcome for every cutting, and typed errors only (seed ${SEED})`, () => {
  const r = rng(SEED);
  const before = coreMemoryUsed();
  for (let k = 0; k < 4000; k++) {
    const src = SOURCES[Math.floor(r() * SOURCES.length)];
    const bytes = damage(r, src.bytes);
    const variant = Math.floor(r() * VARIANTS.length);
    const whole = read(src, variant, [bytes], bytes.length);
    for (const [how, chunks] of cuttings(r, bytes)) {
      const got = read(src, variant, chunks, bytes.length);
      if (got !== whole) expect(JSON.parse(got), show(src, bytes, `${how}, ${JSON.stringify(VARIANTS[variant])}`, k)).toEqual(JSON.parse(whole));
    }
  }
  // every stream gave its core memory back at its end (failed or done)
  expect(coreMemoryUsed(), `seed ${SEED}`).toBe(before);
});

test(`SseRelay on damaged streams: the same client events for every cutting (seed ${SEED})`, () => {
  const r = rng(SEED + 1);
  const before = coreMemoryUsed();
  for (let k = 0; k < 3000; k++) {
    const src = SOURCES[Math.floor(r() * SOURCES.length)];
    const bytes = damage(r, src.bytes);
    const to = r() < 0.5 ? 'openai' as const : 'anthropic' as const;
    const variant = Math.floor(r() * RELAY_VARIANTS.length);
    const whole = relay(src, to, [bytes], variant);
    for (const [how, chunks] of cuttings(r, bytes)) {
      const got = relay(src, to, chunks, variant);
      if (got !== whole) expect(JSON.parse(got), show(src, bytes, `${how}, to ${to} ${JSON.stringify(RELAY_VARIANTS[variant])}`, k)).toEqual(JSON.parse(whole));
    }
  }
  expect(coreMemoryUsed(), `seed ${SEED}`).toBe(before);
});

test(`damaged streams of every format, read and relayed interleaved push by push, each as it reads alone (seed ${SEED})`, () => {
  // The streams of a realm share one core: its input window, its head area, its scratch. 300 at a
  // time, of every format and both clients, are pushed in a random order.
  const r = rng(SEED + 2);
  const before = coreMemoryUsed();
  const runs = Array.from({ length: 300 }, (_, k) => {
    const src = SOURCES[Math.floor(r() * SOURCES.length)];
    const bytes = r() < 0.5 ? src.bytes : damage(r, src.bytes);
    const chunks = cut(bytes, randomCuts(bytes, r, 1 + Math.floor(r() * 200)));
    const variant = Math.floor(r() * (VARIANTS.length + 2));
    const what = variant < VARIANTS.length ? `read ${JSON.stringify(VARIANTS[variant])}` : `relayed to ${variant === VARIANTS.length ? 'openai' : 'anthropic'}`;
    const make = () => (variant < VARIANTS.length ? reader(src, variant, chunks, bytes.length) : relayer(src, variant === VARIANTS.length ? 'openai' : 'anthropic', chunks));
    return { name: `${src.name} (${src.format}), ${what}, stream ${k}`, bytes, alone: complete(make()), run: make(), live: true };
  });
  for (let live = runs.length; live > 0;) {
    const x = runs[Math.floor(r() * runs.length)];
    if (!x.live) continue;
    if (!x.run.step()) { x.live = false; live--; }
  }
  for (const x of runs) {
    const got = x.run.result();
    if (got !== x.alone) expect(JSON.parse(got), `seed ${SEED}, ${x.name}: ${JSON.stringify(dec.decode(x.bytes)).slice(0, 4000)}`).toEqual(JSON.parse(x.alone));
  }
  expect(coreMemoryUsed(), `seed ${SEED}`).toBe(before);
});

test(`damaged streams through the fetch handlers' TransformStreams: what ModelStream and SseRelay give for the same reads (seed ${SEED})`, async () => {
  const r = rng(SEED + 3);
  const source = (chunks: Uint8Array[]) => new ReadableStream<Uint8Array>({ start(c) { for (const x of chunks) c.enqueue(x); c.close(); } });
  const before = coreMemoryUsed();
  for (let k = 0; k < 300; k++) {
    const src = SOURCES[Math.floor(r() * SOURCES.length)];
    const bytes = damage(r, src.bytes);
    const chunks = cut(bytes, randomCuts(bytes, r, 1 + Math.floor(r() * 64)));
    const options = { format: src.format as 'openai', ...(src.choice === undefined ? {} : { choice: src.choice }) };
    // ModelTextStream: the committed text, then the report or ModelStream's error
    const want = JSON.parse(read(src, 0, chunks, bytes.length)) as { text: string; error: string; report: unknown[] };
    const ts = new ModelTextStream(options);
    let got = '';
    let gotError = '';
    try {
      const reader = source(chunks).pipeThrough(ts).getReader();
      for (let x = await reader.read(); !x.done; x = await reader.read()) got += x.value;
    } catch (e) {
      gotError = e instanceof ModelStreamError ? `${e.code} at ${e.offset}` : String(e);
    }
    const what = show(src, bytes, 'ModelTextStream', k);
    expect([got, gotError], what).toEqual([want.text, want.error]);
    if (want.error === '') expect((await ts.report).sha256, what).toBe(want.report[5]);
    else await expect(ts.report, what).rejects.toBeInstanceOf(ModelStreamError);
    // SseRelayStream: SseRelay's bytes for the same reads
    const to = r() < 0.5 ? 'openai' as const : 'anthropic' as const;
    const out = await new Response(source(chunks).pipeThrough(new SseRelayStream({ from: src.format as 'openai', to, ...(src.choice === undefined ? {} : { choice: src.choice }) }))).arrayBuffer();
    const relayed = relayer(src, to, chunks);
    while (relayed.step());
    expect(unclocked(dec.decode(out)), show(src, bytes, `SseRelayStream to ${to}`, k)).toBe(unclocked(dec.decode(relayedBytes(relayed))));
  }
  expect(coreMemoryUsed(), `seed ${SEED}`).toBe(before);
});

test(`reset() anywhere in a damaged stream, then another stream: what a new reader or relay gives (seed ${SEED})`, () => {
  const r = rng(SEED + 4);
  const before = coreMemoryUsed();
  for (let k = 0; k < 1500; k++) {
    const a = SOURCES[Math.floor(r() * SOURCES.length)];
    const kin = SOURCES.filter((s) => s.format === a.format && s.choice === a.choice);
    const b = kin[Math.floor(r() * kin.length)];
    const broken = damage(r, a.bytes);
    const first = cut(broken, randomCuts(broken, r, 1 + Math.floor(r() * 64)));
    const second = r() < 0.5 ? b.bytes : damage(r, b.bytes);
    const chunks = cut(second, randomCuts(second, r, 1 + Math.floor(r() * 64)));
    const stop = Math.floor(r() * (first.length + 2)); // (past the last read: after flush() too)
    const what = `seed ${SEED}, case ${k}: ${a.name} reset after ${stop} of ${first.length} reads, then ${b.name} (${a.format})`;
    const options = { format: a.format as 'openai', ...(a.choice === undefined ? {} : { choice: a.choice }), ...VARIANTS[Math.floor(r() * VARIANTS.length)] };
    const m = new ModelStream(options);
    try {
      for (const c of first.slice(0, stop)) m.push(c);
      if (stop > first.length) m.flush();
    } catch (e) {
      if (!(e instanceof ModelStreamError)) throw e; // (a failed stream: reset() starts it again)
    }
    if (r() < 0.3) m.finish();
    m.reset();
    expect(complete(readerOf(m, chunks, second.length)), what).toBe(complete(readerOf(new ModelStream(options), chunks, second.length)));
    const to = r() < 0.5 ? 'openai' as const : 'anthropic' as const;
    const relayOf = () => new SseRelay({ from: a.format as 'openai', to, ...(a.choice === undefined ? {} : { choice: a.choice }) });
    const rl = relayOf();
    for (const c of first.slice(0, stop)) rl.push(c);
    if (stop > first.length) rl.flush();
    rl.reset();
    const fresh = relayOf();
    expect(unclocked(dec.decode(concat([...chunks.map((c) => rl.push(c).slice()), rl.flush().slice()]))), `${what}, relayed to ${to}`)
      .toBe(unclocked(dec.decode(concat([...chunks.map((c) => fresh.push(c).slice()), fresh.flush().slice()]))));
  }
  expect(coreMemoryUsed(), `seed ${SEED}`).toBe(before);
});
