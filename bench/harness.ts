// Interleaved measurement with the `benchmark` package: each round times seam and its peer back
// to back on the same input, so that drift on a shared machine hits both. The result is the
// median over rounds of MB/s, and the median of the per-round ratios.
import Benchmark from 'benchmark';

export interface Row {
  layer: string;
  case: string;
  corpus: string;
  chunk: string;
  seam: number; // MB/s (10^6 bytes per second), median over rounds
  peer: number; // MB/s
  peerName: string;
  ratio: number; // median of per-round seam/peer
  /** Set when the row was left out by the run's row gate (see `setRowGate`): nothing was timed. */
  skipped?: boolean;
}

/** What a row is before it is timed. */
export type RowMeta = Omit<Row, 'seam' | 'peer' | 'ratio' | 'skipped'>;

/**
 * Decides, before any timing, whether a row is measured: the bench command sets it for its
 * --corpus and --chunk filters and to count the rows of a run (a gate that skips every row makes
 * the layer functions do their setup and checks only). A skipped row comes back with `skipped`
 * set and NaN rates, and the caller drops it.
 */
let gate: ((meta: RowMeta) => boolean) | undefined;

export function setRowGate(f: ((meta: RowMeta) => boolean) | undefined): void {
  gate = f;
}

export interface BenchOptions {
  rounds: number;
  /** Seconds each contender is sampled per round. */
  maxTime: number;
}

export const QUICK: BenchOptions = { rounds: 3, maxTime: 0.15 };
export const FULL: BenchOptions = { rounds: 9, maxTime: 0.4 };

export function median(xs: number[]): number {
  const a = [...xs].sort((x, y) => x - y);
  const m = a.length >> 1;
  return a.length % 2 ? a[m] : (a[m - 1] + a[m]) / 2;
}

/** Median seconds per call of `fn`, from one `benchmark` run. */
function secondsPerOp(fn: () => void, maxTime: number): number {
  const b = new Benchmark(fn, { maxTime, minSamples: 5, initCount: 1 });
  b.run({ async: false });
  if (b.error) throw b.error;
  return median(b.stats.sample);
}

/**
 * Times `seam` against `peer`, both processing `bytes` bytes per call, interleaved over rounds.
 */
export function compare(
  meta: RowMeta,
  bytes: number,
  seam: () => void,
  peer: () => void,
  opts: BenchOptions,
): Row {
  return compareRates(meta, bytes, seam, bytes, peer, opts);
}

/** `compare` for two inputs of different sizes: the ratio is of their rates (bytes per second). */
export function compareRates(
  meta: RowMeta,
  seamBytes: number,
  seam: () => void,
  peerBytes: number,
  peer: () => void,
  opts: BenchOptions,
): Row {
  if (gate !== undefined && !gate(meta)) return { ...meta, seam: NaN, peer: NaN, ratio: NaN, skipped: true };
  const s: number[] = [];
  const p: number[] = [];
  const ratios: number[] = [];
  for (let r = 0; r < opts.rounds; r++) {
    const a = seamBytes / secondsPerOp(seam, opts.maxTime) / 1e6;
    const b = peerBytes / secondsPerOp(peer, opts.maxTime) / 1e6;
    s.push(a);
    p.push(b);
    ratios.push(a / b);
  }
  return { ...meta, seam: median(s), peer: median(p), ratio: median(ratios) };
}

/** Fails loudly when a benchmark would time wrong output. */
export function assertSame<T>(what: string, ours: T, theirs: T): void {
  const a = JSON.stringify(ours);
  const b = JSON.stringify(theirs);
  if (a !== b) throw new Error(`benchmark ${what}: outputs differ before timing (${a.slice(0, 120)} vs ${b.slice(0, 120)})`);
}

const fmt = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));

/** A Markdown table of rows. */
export function table(rows: Row[]): string {
  const head = '| layer | case | corpus | chunk | seam MB/s | peer | peer MB/s | ratio |\n|---|---|---|---:|---:|---|---:|---:|\n';
  return head + rows.map((r) =>
    `| ${r.layer} | ${r.case} | ${r.corpus} | ${r.chunk} | ${fmt(r.seam)} | ${r.peerName} | ${fmt(r.peer)} | **${r.ratio.toFixed(2)}×** |`).join('\n') + '\n';
}

/**
 * A layer's benchmark as a command, when `url` (the file's import.meta.url) is the file Node
 * started, built as build/bench/<name>.js: `--full` for the full mode, `--corpus a,b` and
 * `--chunk x,y` to keep some rows; each row logged as it comes, the table printed at the end.
 */
export function runIfMain(url: string, name: string, run: (opts: BenchOptions, log: (r: Row) => void, filter: { corpus?: string[]; chunk?: string[] }) => Row[]): void {
  const file = process.argv[1];
  if (file === undefined || !file.endsWith(`${name}.js`) || url !== new URL(`file://${file}`).href) return;
  const argv = process.argv.slice(2);
  const arg = (n: string) => { const i = argv.indexOf(n); return i >= 0 ? argv[i + 1]?.split(',') : undefined; };
  const rows = run(argv.includes('--full') ? FULL : QUICK, (r) => console.error(`${r.corpus} ${r.chunk} ${r.case} vs ${r.peerName}: ${r.ratio.toFixed(2)}×`),
    { corpus: arg('--corpus'), chunk: arg('--chunk') });
  console.log(table(rows));
}
