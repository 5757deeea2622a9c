// A change against the build before it, in one process: two built packages (each with its own
// core instance) run the same workloads, interleaved round by round, and each row reports the
// median over rounds of the new build's rate divided by the base build's.
//
//   npm run build                                   # this checkout: dist/
//   (build the base revision's dist/ somewhere, e.g. a git worktree)
//   node build/bench/ab.js --base ../base/dist/index.js [--new dist/index.js] [--rounds 9] [--only sse,encode,model,agents,text,lines,utf8]
//     [--match 'raw Anthropic 1 event'] [--window 30 --rounds 201]
// --match keeps the workloads whose name holds that text. --window times each build for that many
// milliseconds a round (a loop of calls, no `benchmark` sampling), for many short rounds. Either
// way a build against a copy of itself has read 0.92–1.04× in one run (BENCHMARKS.md, eleventh
// session): a difference under about 8% needs several runs to be told from that. Which build has
// which role counts too: against its own copy, the build given as --new read 0.91–0.95× on the SSE
// rows at 64-byte reads (thirteenth session), loaded first or second. Run once as is and once with
// --base and --new swapped, and take the geometric mean of new/base and the inverse of the other.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { anthropicAgent, openaiAgent } from './agents.js';
import { asciiSse, chinese, chunked, mixed, perEvent } from './corpus.js';
import { type BenchOptions, FULL, median } from './harness.js';
import Benchmark from 'benchmark';
import { bedrockStream, geminiStream } from './providers.js';
import { anthropicStream, openaiStream } from './sse.js';

type Lib = typeof import('../bindings/index.js');

interface Work {
  name: string;
  bytes: number;
  make(lib: Lib): () => unknown;
}

function works(only: Set<string> | null, lib: Lib): Work[] {
  const enc = new TextEncoder();
  const list: Work[] = [];
  const add = (layer: string, name: string, pieces: Uint8Array[], make: (lib: Lib, pieces: Uint8Array[]) => () => unknown) => {
    if (only && !only.has(layer)) return;
    list.push({ name: `${layer} ${name}`, bytes: pieces.reduce((n, p) => n + p.length, 0), make: (lib) => make(lib, pieces) });
  };
  const openai = openaiStream(1 << 20);
  const anthropic = anthropicStream(1 << 20);
  const sizes: [string, number][] = [['64 B', 64], ['1 KiB', 1024], ['16 KiB', 16384]];
  const reads: [string, (b: Uint8Array) => Uint8Array[]][] = [
    ['1 event/read', (b) => perEvent(b, 1)], ['3 events/read', (b) => perEvent(b, 3)],
    ...sizes.map(([n, s]) => [n, (b: Uint8Array) => chunked(b, s)] as [string, (b: Uint8Array) => Uint8Array[]]),
  ];
  // Gemini's events end in CRLF CRLF, which perEvent does not split: its events come whole.
  const gemini = geminiStream(1 << 20);
  const bedrock = bedrockStream(1 << 20).events;
  for (const [rn, cut] of reads) {
    add('sse', `push OpenAI ${rn}`, cut(openai), (lib, ps) => {
      const p = new lib.SseParser();
      return () => { let n = 0; for (const c of ps) n += p.push(c).length; n += p.flush().length; return n; };
    });
    add('sse', `pushBytes OpenAI ${rn}`, cut(openai), (lib, ps) => {
      const p = new lib.SseParser();
      return () => { let n = 0; for (const c of ps) n += p.pushBytes(c).length; n += p.flushBytes().length; return n; };
    });
    add('sse', `pushBytes Anthropic ${rn}`, cut(anthropic), (lib, ps) => {
      const p = new lib.SseParser();
      return () => { let n = 0; for (const c of ps) n += p.pushBytes(c).length; n += p.flushBytes().length; return n; };
    });
    add('encode', `pushBytes + encode() OpenAI ${rn}`, cut(openai), (lib, ps) => {
      const p = new lib.SseParser();
      return () => { let n = 0; for (const c of ps) n += p.pushBytes(c).encode().length; n += p.flushBytes().encode().length; return n; };
    });
    const models = [['OpenAI', cut(openai), 'openai'], ['Anthropic', cut(anthropic), 'anthropic'],
      ['Gemini', rn === '1 event/read' ? gemini.events : rn.endsWith('B') ? cut(gemini.bytes) : null, 'gemini']] as const;
    for (const [cn, pieces, format] of models) {
      if (pieces === null) continue;
      add('model', `ModelStream raw ${cn} ${rn}`, pieces, (lib, ps) => () => {
        const m = new lib.ModelStream({ format, raw: true });
        let s = '';
        for (const c of ps) s += m.push(c);
        return s + m.flush();
      });
      add('model', `ModelStream ${cn} ${rn}`, pieces, (lib, ps) => () => {
        const m = new lib.ModelStream({ format });
        let s = '';
        for (const c of ps) s += m.push(c);
        s += m.flush();
        return s + m.finish().sha256;
      });
      add('model', `SseRelay ${cn} → openai ${rn}`, pieces, (lib, ps) => () => {
        const r = new lib.SseRelay({ from: format, id: 'chatcmpl-1', model: 'm' });
        let n = 0;
        for (const c of ps) n += r.push(c).length;
        return n + r.flush().length;
      });
    }
  }
  // Bedrock's messages, one per read (as the API flushes them): raw and with the text layer.
  for (const raw of [true, false]) {
    add('model', `ModelStream${raw ? ' raw' : ''} Bedrock 1 message/read`, bedrock, (lib, ps) => () => {
      const m = new lib.ModelStream({ format: 'bedrock', raw });
      let s = '';
      for (const c of ps) s += m.push(c);
      s += m.flush();
      return raw ? s : s + m.finish().sha256;
    });
  }
  // Agents' turns (text, reasoning, tool calls), one event per read and one relay or stream per
  // turn, as a gateway makes one per upstream response: what a stream's making and ending cost.
  const agentTurns = (turns: Uint8Array[]) => turns.map((t) => perEvent(t, 1));
  const anthropicTurns = agentTurns(anthropicAgent(40));
  const openaiTurns = agentTurns(openaiAgent(40));
  for (const [from, to, turns] of [['anthropic', 'openai', anthropicTurns], ['openai', 'anthropic', openaiTurns]] as const) {
    if (only && !only.has('agents')) break;
    list.push({
      name: `agents SseRelay ${from} → ${to} 1 event/read`, bytes: turns.flat().reduce((n, c) => n + c.length, 0), make: (lib) => () => {
        let n = 0;
        for (const chunks of turns) {
          const r = new lib.SseRelay({ from, to, id: 'chatcmpl-1', model: 'm' });
          for (const c of chunks) n += r.push(c).length;
          n += r.flush().length;
        }
        return n;
      },
    });
  }
  if (!only || only.has('agents')) {
    list.push({
      name: 'agents ModelStream raw OpenAI 1 event/read', bytes: openaiTurns.flat().reduce((n, c) => n + c.length, 0), make: (lib) => () => {
        let s = '';
        for (const chunks of openaiTurns) {
          const m = new lib.ModelStream({ format: 'openai', raw: true });
          for (const c of chunks) s += m.push(c);
          s += m.flush();
          s += JSON.stringify(m.toolCalls);
        }
        return s;
      },
    });
  }
  // The text layer alone: the OpenAI corpus's deltas, as ModelStream hands them to it.
  for (const [cn, events, format] of [['OpenAI', perEvent(openai, 1), 'openai'], ['Gemini', gemini.events, 'gemini']] as const) {
    const deltas: string[] = [];
    const m = new lib.ModelStream({ format, raw: true });
    for (const c of events) deltas.push(m.push(c));
    const size = deltas.reduce((n, d) => n + enc.encode(d).length, 0);
    if (!only || only.has('text')) {
      list.push({
        name: `text TextAssembler ${cn}'s deltas`, bytes: size, make: (lib) => () => {
          const a = new lib.TextAssembler();
          let s = '';
          for (const d of deltas) s += a.push(d);
          return s + a.finish().sha256;
        },
      });
    }
  }
  const lines = enc.encode(asciiSse(1 << 20));
  for (const [sn, s] of sizes) {
    add('lines', `LineDecoder ASCII ${sn}`, chunked(lines, s), (lib, ps) => {
      const d = new lib.LineDecoder();
      return () => { let n = 0; for (const c of ps) n += d.push(c).length; n += d.flush().length; return n; };
    });
  }
  for (const [cn, text] of [['mixed', mixed(1 << 19)], ['Chinese', chinese(1 << 18)]] as const) {
    const bytes = enc.encode(text);
    for (const [sn, s] of sizes) {
      add('utf8', `Utf8Decoder ${cn} ${sn}`, chunked(bytes, s), (lib, ps) => {
        const d = new lib.Utf8Decoder();
        return () => { let n = 0; for (const c of ps) n += d.push(c).length; n += d.flush().length; return n; };
      });
    }
  }
  return list;
}

/** Seconds per call of `fn` over a window of `ms` milliseconds (at least one call). */
function windowed(fn: () => unknown, ms: number): number {
  const t0 = performance.now();
  let n = 0;
  do {
    fn();
    n++;
  } while (performance.now() - t0 < ms);
  return (performance.now() - t0) / 1000 / n;
}

function secondsPerOp(fn: () => unknown, maxTime: number): number {
  const b = new Benchmark(fn, { maxTime, minSamples: 5, initCount: 1 });
  b.run({ async: false });
  if (b.error) throw b.error;
  return median(b.stats.sample);
}

async function main(argv: string[]): Promise<void> {
  const arg = (name: string) => { const i = argv.indexOf(name); return i >= 0 ? argv[i + 1] : undefined; };
  const basePath = arg('--base');
  if (!basePath) throw new Error('usage: node build/bench/ab.js --base <base dist/index.js> [--new dist/index.js] [--rounds N] [--only sse,lines,utf8]');
  const base = (await import(pathToFileURL(resolve(basePath)).href)) as Lib;
  const next = (await import(pathToFileURL(resolve(arg('--new') ?? 'dist/index.js')).href)) as Lib;
  if (base.SseParser === next.SseParser) throw new Error('the two builds are the same module');
  const opts: BenchOptions = { ...FULL, rounds: Number(arg('--rounds') ?? FULL.rounds) };
  const only = arg('--only') ? new Set(arg('--only')!.split(',')) : null;
  const match = arg('--match');
  const windowMs = arg('--window') !== undefined ? Number(arg('--window')) : 0;
  const time = (fn: () => unknown) => (windowMs > 0 ? windowed(fn, windowMs) : secondsPerOp(fn, opts.maxTime));
  console.log(`| workload | base MB/s | new MB/s | new / base |\n|---|---:|---:|---:|`);
  for (const w of works(only, next)) {
    if (match !== undefined && !w.name.includes(match)) continue;
    const fb = w.make(base);
    const fn = w.make(next);
    let same: boolean;
    try {
      same = JSON.stringify(fb()) === JSON.stringify(fn());
    } catch (e) {
      // (a base from before a format or an option: the row is not one to compare)
      console.log(`| ${w.name} | – | – | not compared: ${(e as Error).message.split('\n')[0].slice(0, 80)} |`);
      continue;
    }
    if (!same) {
      // a change of what the row writes (a relay's new output) is not a speed to compare
      console.log(`| ${w.name} | – | – | outputs differ: not compared |`);
      continue;
    }
    const a: number[] = [];
    const b: number[] = [];
    const ratios: number[] = [];
    for (let r = 0; r < opts.rounds; r++) {
      // alternate which build goes first, so that neither always runs on a warmer or cooler machine
      const first = r % 2 === 0;
      const tb = first ? time(fb) : 0;
      const tn = time(fn);
      const tb2 = first ? tb : time(fb);
      a.push(w.bytes / tb2 / 1e6);
      b.push(w.bytes / tn / 1e6);
      ratios.push(tb2 / tn);
    }
    console.log(`| ${w.name} | ${median(a).toFixed(0)} | ${median(b).toFixed(0)} | **${median(ratios).toFixed(3)}×** |`);
  }
}

await main(process.argv.slice(2));
