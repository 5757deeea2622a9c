// The benchmark CLI: runs every layer's comparison and prints one Markdown table.
//   node build/bench/run.js [--full] [--only utf8,sse,text] [--write BENCHMARKS.md]
import { cpus } from 'node:os';
import { FULL, QUICK, type Row, table } from './harness.js';
import { runSseBench } from './sse.js';
import { runTextBench } from './text.js';
import { runUtf8Bench } from './utf8.js';
import { wasmBackend } from '../bindings/index.js';

export async function runBenchmarks(argv: string[]): Promise<{ rows: Row[]; markdown: string }> {
  const full = argv.includes('--full');
  const onlyArg = argv.indexOf('--only');
  const only = onlyArg >= 0 ? argv[onlyArg + 1].split(',') : ['utf8', 'sse', 'text'];
  const opts = full ? FULL : QUICK;
  const rows: Row[] = [];
  const log = (r: Row) => console.error(`  ${r.layer} ${r.case} ${r.corpus} ${r.chunk}: ${r.seam.toFixed(0)} vs ${r.peer.toFixed(0)} MB/s (${r.ratio.toFixed(2)}x)`);
  if (only.includes('utf8')) rows.push(...runUtf8Bench(opts, log));
  if (only.includes('sse')) rows.push(...runSseBench(opts, log, full ? undefined : { chunk: [64, 1024] }));
  if (only.includes('text')) rows.push(...runTextBench(opts, log));
  const header = `Node ${process.version}, V8 ${process.versions.v8}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, core: ${wasmBackend()}; `
    + `${full ? 'full' : 'quick'} run (${opts.rounds} interleaved rounds × ${opts.maxTime} s per contender); MB/s = 10^6 bytes/s of input, medians; ratio = median of per-round seam/peer.\n\n`;
  return { rows, markdown: header + table(rows) };
}

const isMain = process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href;
if (isMain) {
  const { markdown } = await runBenchmarks(process.argv.slice(2));
  console.log(markdown);
}
