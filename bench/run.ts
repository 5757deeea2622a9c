// The benchmark suite: runs every layer's comparison and returns its rows and one Markdown table.
// The `seam-stream bench` command (cli/bench.ts) drives it with a progress bar, JSON and SVG;
// alone:
//   node build/bench/run.js [--full] [--only utf8,sse,text]
import { cpus } from 'node:os';
import { FULL, QUICK, type BenchOptions, type Row, type RowMeta, setRowGate, table } from './harness.js';
import { runSseBench } from './sse.js';
import { runTextBench } from './text.js';
import { runUtf8Bench } from './utf8.js';
import { wasmBackend } from '../bindings/index.js';
import { runtimeName } from '../bindings/core/runtime.js';
import { stringRoutes } from '../bindings/core/strings.js';
import { eventsourceParserVersion } from './peers.js';

export const LAYERS = ['utf8', 'sse', 'text'] as const;
export type Layer = (typeof LAYERS)[number];

export interface RunOptions {
  /** quick: 3 rounds × 0.15 s, SSE at one event per read, 64 B and 1 KiB; full: 9 rounds × 0.4 s, SSE at every read size. */
  mode?: 'quick' | 'full';
  /** Overrides the mode's rounds. */
  rounds?: number;
  /** Overrides the mode's seconds per contender and round. */
  maxTime?: number;
  only?: readonly Layer[];
  /** Keep rows whose corpus name starts with one of these (case-insensitive). */
  corpus?: readonly string[];
  /** Keep rows read in these sizes, in bytes; rows of text deltas (no read size) are kept. */
  chunk?: readonly number[];
  /** Called once before timing starts, with the number of rows the run will time. */
  onStart?(total: number): void;
  /** Called as each row completes. */
  onRow?(row: Row, done: number, total: number): void;
}

export interface RunResult {
  rows: Row[];
  markdown: string;
  /** The run's header line (machine, mode), also the first paragraph of `markdown`. */
  header: string;
  meta: RunMeta;
}

export interface RunMeta {
  /** The runtime that ran the benchmarks and its version: `Node 24.22.3`, `Bun 1.4.5`, `Deno 2.9.6`. */
  runtime: string;
  /** Its JavaScript engine: `V8 13.6.233.17`, `JavaScriptCore (WebKit d6375c7)`. */
  engine: string;
  /** The string routes seam chose on it (bindings/core/strings.ts). */
  routes: string;
  /** The SSE peer's version (eventsource-parser 4 where the runtime allows, bench/peers.ts). */
  eventsourceParser: string;
  /** The Node version the runtime reports (Bun and Deno report the Node API level they implement). */
  node: string;
  v8: string;
  cpus: number;
  cpu: string;
  core: string;
  mode: 'quick' | 'full';
  rounds: number;
  maxTime: number;
  date: string;
  seconds: number;
}

/** The read size of a row in bytes ('64 B', '1 KiB', '16384 B'), or undefined (text deltas). */
export function rowChunkBytes(chunk: string): number | undefined {
  const m = /^(\d+) (B|KiB|MiB)$/.exec(chunk);
  if (!m) return undefined;
  return Number(m[1]) * (m[2] === 'B' ? 1 : m[2] === 'KiB' ? 1024 : 1024 * 1024);
}

function keeps(o: RunOptions): (m: RowMeta) => boolean {
  const corpus = o.corpus?.map((c) => c.toLowerCase());
  return (m) => {
    if (corpus && !corpus.some((c) => m.corpus.toLowerCase().startsWith(c))) return false;
    if (o.chunk) {
      const b = rowChunkBytes(m.chunk);
      if (b !== undefined && !o.chunk.includes(b)) return false;
    }
    return true;
  };
}

function runLayers(o: RunOptions, opts: BenchOptions, log: (r: Row) => void): Row[] {
  const only = o.only ?? LAYERS;
  const full = o.mode === 'full';
  const rows: Row[] = [];
  if (only.includes('utf8')) rows.push(...runUtf8Bench(opts, log));
  if (only.includes('sse')) {
    // sse.ts filters its own corpora and read sizes before building them
    const sseCorpora = o.corpus ? ['OpenAI', 'Anthropic', 'one'].filter((n) => o.corpus!.some((c) => n.toLowerCase().startsWith(c.toLowerCase()) || c.toLowerCase().startsWith(n.toLowerCase()))) : undefined;
    const chunk = o.chunk ? [...o.chunk] : full ? undefined : [-1, 64, 1024];
    if (sseCorpora === undefined || sseCorpora.length > 0) rows.push(...runSseBench(opts, log, { corpus: sseCorpora, chunk }));
  }
  if (only.includes('text')) rows.push(...runTextBench(opts, log));
  return rows.filter((r) => !r.skipped);
}

/** Runs the suite. `argv` (the standalone form): [--full] [--only utf8,sse,text]. */
export async function runBenchmarks(arg: string[] | RunOptions = {}): Promise<RunResult> {
  const o: RunOptions = Array.isArray(arg)
    ? {
        mode: arg.includes('--full') ? 'full' : 'quick',
        only: arg.includes('--only') ? (arg[arg.indexOf('--only') + 1].split(',') as Layer[]) : undefined,
      }
    : arg;
  const base = o.mode === 'full' ? FULL : QUICK;
  const opts: BenchOptions = { rounds: o.rounds ?? base.rounds, maxTime: o.maxTime ?? base.maxTime };
  const keep = keeps(o);
  const t0 = performance.now();
  // Count the rows first: every layer does its setup and its output checks, nothing is timed.
  let total = 0;
  setRowGate((m) => {
    if (keep(m)) total++;
    return false;
  });
  try {
    runLayers(o, opts, () => {});
  } finally {
    setRowGate(undefined);
  }
  o.onStart?.(total);
  let done = 0;
  setRowGate(keep);
  let rows: Row[];
  try {
    rows = runLayers(o, opts, (r) => {
      if (!r.skipped) o.onRow?.(r, ++done, total);
    });
  } finally {
    setRowGate(undefined);
  }
  const mode = o.mode ?? 'quick';
  const rt = runtimeName();
  const label = { node: 'Node', bun: 'Bun', deno: 'Deno' }[rt.name as string] ?? rt.name;
  const webkit = (process.versions as Record<string, string | undefined>).webkit;
  const r = stringRoutes();
  const meta: RunMeta = {
    runtime: `${label} ${rt.version}`,
    engine: rt.name === 'bun' ? `JavaScriptCore${webkit ? ` (WebKit ${webkit.slice(0, 7)})` : ''}` : `V8 ${process.versions.v8}`,
    routes: `Utf8Decoder ${r.utf8}${r.utf8 === 'split' ? ` (the platform from ${r.utf8PlatformFrom} B${r.utf8Platform === 'buffer' ? `: isUtf8 + utf8Slice${r.utf8DecoderFrom === Infinity ? '' : `, TextDecoder from ${r.utf8DecoderFrom} B`}` : ''})` : ''}, lines and SSE ${r.frames}${r.frames === 'textdecoder' ? ` (SSE data ${r.sseData}${r.sseCoreTo > 0 ? `, SSE reads up to ${r.sseCoreTo} B by the core` : ''})` : ''}, Utf8Validator ${r.validateFrom === Infinity ? 'core' : `by buffer.isUtf8 from ${r.validateFrom} B`}, SSE reads validated ${r.sseValidFrom === Infinity ? 'by the core' : `by the platform from ${r.sseValidFrom} B`}, short strings to ${r.shortUnits} units`,
    eventsourceParser: eventsourceParserVersion(),
    node: process.version, v8: process.versions.v8, cpus: cpus().length, cpu: cpus()[0]?.model ?? 'cpu', core: wasmBackend(),
    mode, rounds: opts.rounds, maxTime: opts.maxTime, date: new Date().toISOString(), seconds: (performance.now() - t0) / 1000,
  };
  const header = `${meta.runtime}, ${meta.engine}, ${meta.cpus} × ${meta.cpu}, core: ${meta.core}, string routes: ${meta.routes}; eventsource-parser ${meta.eventsourceParser}; `
    + `${mode} run (${opts.rounds} interleaved rounds × ${opts.maxTime} s per contender); MB/s = 10^6 bytes/s of input, medians; ratio = median of per-round seam/peer.`;
  return { rows, header, meta, markdown: `${header}\n\n${table(rows)}` };
}

const isMain = process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href;
if (isMain) {
  const { markdown } = await runBenchmarks(process.argv.slice(2));
  console.log(markdown);
}
