// Many decoders share one WebAssembly instance. One stream's bytes reaching another's output
// would leak data between a gateway's users, so interleave hundreds of them and compare each
// with what it produces alone.
import { describe, expect, it, vi } from 'vitest';
import { LineDecoder, ModelStream, ModelStreamError, NdjsonDecoder, SseParser, SseRelay, Utf8DecodeError, Utf8Decoder } from '../../bindings/index.js';
import { getCore } from '../../bindings/core/wasm.js';
import { FIXTURES } from '../helpers/model-fixtures.js';
import { unclocked } from '../helpers/model-streams.js';
import { SEED, concat, cut, randomCuts, rng } from '../helpers/random.js';
import { type Outcome, decodeWith } from '../helpers/utf8-oracle.js';

const enc = new TextEncoder();
const alphabet = ['a', 'Z', ' ', 'é', 'ж', '世', '界', '😀', '🇯🇵', '\uFEFF', '\n'];

interface Stream {
  id: number;
  bytes: Uint8Array;
  pieces: Uint8Array[];
  decoder: Utf8Decoder;
  next: number;
  text: string;
  error?: { code: string; offset: number };
  resetAt: number; // piece index at which the stream is reset and restarted from there, or -1
  restarted: boolean;
}

function makeStream(id: number, next: () => number): Stream {
  let s = `<${id}>`;
  const n = 20 + Math.floor(next() * 400);
  for (let i = 0; i < n; i++) s += alphabet[Math.floor(next() * alphabet.length)];
  const bytes = Uint8Array.from(enc.encode(s));
  if (id % 5 === 0) bytes[Math.floor(bytes.length / 2 + next() * (bytes.length / 2))] = 0xc0; // some fail
  const pieces = cut(bytes, randomCuts(bytes, next, 9));
  const fatal = id % 7 !== 0;
  return {
    id, bytes, pieces, decoder: new Utf8Decoder({ fatal }), next: 0, text: '',
    resetAt: id % 3 === 0 ? Math.floor(pieces.length / 2) : -1, restarted: false,
  };
}

describe('one shared instance, many streams', () => {
  it('300 interleaved decoders (some failing, some reset midway) each equal a lone decoder', () => {
    const next = rng(SEED);
    const streams = Array.from({ length: 300 }, (_, i) => makeStream(i, next));
    let live = streams.filter((s) => s.pieces.length > 0);
    while (live.length > 0) {
      const s = live[Math.floor(next() * live.length)];
      if (s.next === s.resetAt && !s.restarted) {
        s.decoder.reset();
        s.restarted = true;
        s.text = '';
        s.error = undefined;
      }
      if (!s.error) {
        try {
          s.text += s.decoder.push(s.pieces[s.next]);
          if (s.next === s.pieces.length - 1) s.text += s.decoder.flush();
        } catch (e) {
          const err = e as { code: string; offset: number; text: string };
          s.text += err.text;
          s.error = { code: err.code, offset: err.offset };
        }
      }
      s.next++;
      if (s.next === s.pieces.length) live = live.filter((x) => x !== s);
    }
    for (const s of streams) {
      const from = s.restarted ? s.resetAt : 0;
      const alone = decodeWith(new Utf8Decoder({ fatal: s.decoder.fatal }), s.pieces.slice(from));
      const got: Outcome = s.error ? { text: s.text, error: s.error } : { text: s.text };
      expect(got, `stream ${s.id}`).toEqual(alone);
      if (!s.restarted) expect(got.text.startsWith(`<${s.id}>`) || got.text === '', `stream ${s.id}`).toBe(true);
    }
  });

  it('relays to OpenAI and to Anthropic clients, interleaved read by read, each write what they write alone', () => {
    // The core writes a quiet event's text between the heads of the relay's client format, which
    // the relays of a realm take turns to put in its head area: a relay must never write between
    // another's heads (an OpenAI client reading Anthropic's events, or another stream's id).
    const r = rng(SEED);
    const norm = (parts: Uint8Array[]) => unclocked(new TextDecoder().decode(concat(parts)));
    const relayOf = (f: (typeof FIXTURES)[number], to: 'openai' | 'anthropic') => new SseRelay({ from: f.format, to, ...(f.choice === undefined ? {} : { choice: f.choice }) });
    const runs = Array.from({ length: 160 }, (_, i) => {
      const f = FIXTURES[Math.floor(r() * FIXTURES.length)];
      const to = i % 2 === 0 ? 'openai' as const : 'anthropic' as const;
      return { f, to, chunks: cut(f.bytes, randomCuts(f.bytes, r, 1 + Math.floor(r() * 200))), next: 0, parts: [] as Uint8Array[], relay: relayOf(f, to) };
    });
    const alone = runs.map(({ f, to, chunks }) => {
      const relay = relayOf(f, to);
      const parts = chunks.map((c) => relay.push(c).slice());
      parts.push(relay.flush().slice());
      return norm(parts);
    });
    for (let left = runs.length; left > 0;) {
      const x = runs[Math.floor(r() * runs.length)];
      if (x.next > x.chunks.length) continue;
      x.parts.push((x.next === x.chunks.length ? x.relay.flush() : x.relay.push(x.chunks[x.next])).slice());
      if (++x.next > x.chunks.length) left--;
    }
    runs.forEach((x, i) => expect(norm(x.parts), `relay ${i}: ${x.f.name} to ${x.to}, seed ${SEED}`).toBe(alone[i]));
  });

  it("a relay never writes its client's text between the heads another relay left in the core", async () => {
    // Relays take turns to put their client format's heads in the core's head area, and skip that
    // when theirs are there already. The writers for OpenAI and for Anthropic once numbered their
    // heads apart, and a relay whose first heads had the number of the other client's last ones
    // took those for its own: its client read its first deltas in the other client's format. In
    // fresh modules (the numbering from the start), each sequence below was such a case: the last
    // relay must write what it writes alone.
    const enc = new TextEncoder();
    const fromOpenAi = enc.encode(['Hel', 'lo'].map((t) => `data: {"choices":[{"index":0,"delta":{"content":"${t}"}}]}\n\n`).join('')
      + 'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n');
    const fromAnthropic = enc.encode([
      ['message_start', '{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"c","content":[],"usage":{"input_tokens":1,"output_tokens":1}}}'],
      ['content_block_start', '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}'],
      ['content_block_delta', '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}'],
      ['content_block_delta', '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo"}}'],
      ['content_block_stop', '{"type":"content_block_stop","index":0}'],
      ['message_delta', '{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}'],
      ['message_stop', '{"type":"message_stop"}'],
    ].map(([t, d]) => `event: ${t}\ndata: ${d}\n\n`).join(''));
    type Step = 'openai' | 'anthropic' | 'a comment to openai' | 'a comment to anthropic';
    const play = async (steps: Step[]): Promise<string> => {
      vi.resetModules();
      const { SseRelay: Relay } = await import('../../bindings/index.js');
      let out = '';
      for (const step of steps) {
        const to = step.endsWith('anthropic') ? 'anthropic' as const : 'openai' as const;
        const relay = new Relay({ from: to === 'openai' ? 'anthropic' : 'openai', to });
        const body = step.startsWith('a comment') ? enc.encode(': keep-alive\n\n') : to === 'openai' ? fromAnthropic : fromOpenAi;
        out = '';
        for (let i = 0; i < body.length; i += 50) out += new TextDecoder().decode(relay.push(body.subarray(i, i + 50)));
        out += new TextDecoder().decode(relay.flush());
      }
      return unclocked(out);
    };
    for (const steps of [['a comment to openai', 'anthropic', 'openai'], ['a comment to anthropic', 'openai', 'anthropic']] as Step[][]) {
      const last = steps[steps.length - 1];
      const alone = await play([last]);
      expect(alone).toContain(last === 'openai' ? '"delta":{"content":"Hel"}' : '"delta":{"type":"text_delta","text":"Hel"}');
      expect(await play(steps), steps.join(', then ')).toBe(alone);
    }
  });

  it("an invalid byte's error shows this stream's bytes only, never what another stream left in the input window", () => {
    // Another stream's read fills the shared input window with a secret; then a read that ends
    // with (or one byte after) a bad byte fails. The error's bytes (and its message, which a
    // gateway may forward to its client) come from this read and the bytes carried into it.
    const secret = enc.encode(`data: ${'SECRET-'.repeat(200)}\n\n`);
    const fill = () => { const p = new SseParser(); p.push(secret); p.dispose(); };
    const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).toUpperCase().padStart(2, '0')).join(' ');
    const cases: [string, Uint8Array[], number, number[]][] = [
      ['a bad byte ending the read', [enc.encode('data: abc'), Uint8Array.of(0x80)], 9, [0x80]],
      ['a bad byte and one more', [Uint8Array.of(...enc.encode('data: x'), 0x80, 0x41)], 7, [0x80, 0x41]],
      ['a character cut by a byte that cannot continue it', [Uint8Array.of(...enc.encode('data: '), 0xe2, 0x82), Uint8Array.of(0x41)], 6, [0xe2, 0x82, 0x41]],
    ];
    const makers: [string, () => { push(c: Uint8Array): unknown }][] = [
      ['SseParser', () => { const p = new SseParser(); return { push: (c) => p.push(c) }; }],
      ['SseParser bytes', () => { const p = new SseParser(); return { push: (c) => p.pushBytes(c) }; }],
      ['LineDecoder', () => new LineDecoder()],
      ['NdjsonDecoder', () => new NdjsonDecoder()],
    ];
    for (const [what, reads, offset, bytes] of cases) {
      for (const [name, make] of makers) {
        const d = make();
        let err: unknown;
        try {
          for (const r of reads) { fill(); d.push(r); }
        } catch (e) { err = e; }
        expect(err, `${name}, ${what}`).toBeInstanceOf(Utf8DecodeError);
        const u = err as Utf8DecodeError;
        expect([u.offset, Array.from(u.bytes)], `${name}, ${what}`).toEqual([offset, bytes]);
        expect(u.message, `${name}, ${what}`).toBe(`Invalid UTF-8 at byte offset ${offset} (bytes from there: ${hex(Uint8Array.from(bytes))})`);
      }
      // the model layer and the relay write the same message (the relay to its client)
      const m = new ModelStream({ format: 'openai' });
      let err: unknown;
      try {
        for (const r of reads) { fill(); m.push(r); }
      } catch (e) { err = e; }
      expect(err, `ModelStream, ${what}`).toBeInstanceOf(ModelStreamError);
      expect((err as ModelStreamError).message, `ModelStream, ${what}`).toContain(`(bytes from there: ${hex(Uint8Array.from(bytes))})`);
      const relay = new SseRelay({ from: 'openai', to: 'anthropic' });
      let out = '';
      for (const r of reads) { fill(); out += new TextDecoder().decode(relay.push(r)); }
      out += new TextDecoder().decode(relay.flush());
      expect(out, `SseRelay, ${what}`).toContain(`(bytes from there: ${hex(Uint8Array.from(bytes))})`);
      expect(out, `SseRelay, ${what}`).not.toContain('53 45 43');
    }
  });
});

describe('memory budget', () => {
  const gc = (globalThis as { gc?: () => void }).gc;

  it('an idle decoder costs at most 512 bytes; 10,000 holding a partial character fit in 16 MiB', () => {
    expect(gc, 'tests run with --expose-gc').toBeTypeOf('function');
    const core = getCore();
    new Utf8Decoder(); // instantiate the core and warm up first
    gc!();
    const wasm0 = core.x.memory.buffer.byteLength;
    const heap0 = process.memoryUsage().heapUsed;
    const keep: Utf8Decoder[] = [];
    for (let i = 0; i < 10_000; i++) keep.push(new Utf8Decoder());
    gc!();
    // The records live in memory the core grew up front, so growth alone would not show them:
    // take their spacing on the heap (record + allocator overhead) instead.
    const addrs = keep.map((d) => (d as unknown as { st: number }).st).sort((a, b) => a - b);
    const perRecord = (addrs[addrs.length - 1] - addrs[0]) / (addrs.length - 1);
    expect(perRecord).toBeLessThanOrEqual(32);
    const wasmUsed = () => Math.max(core.x.memory.buffer.byteLength - wasm0, perRecord * 10_000);
    const idle = (process.memoryUsage().heapUsed - heap0 + wasmUsed()) / 10_000;
    for (const d of keep) expect(d.push(enc.encode('a😀').subarray(0, 3))).toBe('a');
    gc!();
    const heap1 = process.memoryUsage().heapUsed;
    const total = heap1 - heap0 + wasmUsed();
    console.log(`idle decoder: ${idle.toFixed(0)} B (state record ${perRecord} B of it); 10,000 decoders holding 2 bytes each: ${(total / 2 ** 20).toFixed(2)} MiB`);
    expect(keep.every((d) => d.pendingBytes === 2)).toBe(true);
    expect(idle).toBeLessThanOrEqual(512);
    expect(total).toBeLessThanOrEqual(16 * 2 ** 20);
  });

  it('state records of collected decoders return to the core (FinalizationRegistry)', async () => {
    const core = getCore();
    const round = () => {
      for (let i = 0; i < 100_000; i++) new Utf8Decoder().push(enc.encode('é').subarray(0, 1));
    };
    const settle = async () => {
      // (the registry's callbacks run as tasks after a collection, later on a loaded machine: give
      // them 20 collections and 0.4 s, which costs nothing when they come at once)
      for (let i = 0; i < 20; i++) {
        gc!();
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    round();
    await settle();
    const after1 = core.x.memory.buffer.byteLength;
    for (let k = 0; k < 4; k++) {
      round();
      await settle();
    }
    // 400,000 more records of 16 bytes (6.4 MB) were made; reused memory means no growth
    expect(core.x.memory.buffer.byteLength).toBe(after1);
  });

  it('dispose() returns a record at once; a disposed decoder stays disposed, even through reset()', () => {
    const d = new Utf8Decoder();
    const st = (d as unknown as { st: number }).st;
    d.dispose();
    expect(() => d.push(enc.encode('x'))).toThrow('The decoder was disposed');
    d.reset();
    expect(() => d.push(enc.encode('x'))).toThrow('The decoder was disposed');
    expect(d.pendingBytes).toBe(0);
    const next = new Utf8Decoder();
    expect((next as unknown as { st: number }).st).toBe(st); // the freed record is the next one handed out
    const lines = new LineDecoder();
    lines.dispose();
    lines.reset(); // must not touch the core's memory
    expect(() => lines.push(enc.encode('a\n'))).toThrow('The decoder was disposed');
    // the core's tables are intact: every decoder kind still works
    expect(next.push(enc.encode('é世😀')) + next.flush()).toBe('é世😀');
    expect(new LineDecoder().push(enc.encode('é\r\n世\n'))).toEqual(['é', '世']);
    expect(() => next.push(new Uint8Array([0xed, 0xa0, 0x80]))).toThrow('Invalid UTF-8 at byte offset 0');
  });
});

