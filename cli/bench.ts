// `seam-stream bench`: the benchmark suite as a command, from a source checkout (the benchmarks
// are built into build/bench, not shipped in the package): a progress bar on standard error, each
// row printed once, a table of medians and ratios at the end; JSON, an SVG chart, and the table
// section of BENCHMARKS.md rewritten in place.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Row } from '../bench/harness.js';
import type { RunOptions, RunResult } from '../bench/run.js';
import { type Values, parseBytes } from './args.js';
import { EXIT, InputError, UsageError } from './errors.js';
import { checkSavable, saveAtomically } from './io.js';
import { formatSeconds, plural } from './status.js';
import { ratioChart } from './svg.js';

export const MARK_START = '<!-- seam-stream bench: the table below is generated (npm run bench); edit around it -->';
export const MARK_END = '<!-- seam-stream bench: end of the generated table -->';


function fmtRate(x: number): string {
  return x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2);
}

export function rowLabel(r: Row): string {
  return `${r.layer} · ${r.case} · ${r.corpus} · ${r.chunk}`;
}

/** The chart of a run. */
export function benchChart(res: RunResult): string {
  const m = res.meta;
  return ratioChart(
    res.rows.map((r) => ({ label: `${r.layer} ${r.case} · ${r.corpus} · ${r.chunk} vs ${r.peerName}`, group: r.layer, ratio: r.ratio })),
    'seam-stream bench: each row against its peer, measured in the same run',
    `${m.mode} run, ${m.rounds} round${m.rounds === 1 ? '' : 's'} × ${m.maxTime} s; ${m.runtime ?? `Node ${m.node}`}, ${m.cpus} × ${m.cpu}, core ${m.core}; ${m.date.slice(0, 10)}`,
  );
}

/** The marks of a runtime's own section (`node24`, `bun`, `deno`: scripts/runtimes.mjs's names). */
export function runtimeMarks(key: string): { start: string; end: string } {
  return {
    start: `<!-- seam-stream bench ${key}: the table below is generated (seam-stream bench on that runtime); edit around it -->`,
    end: `<!-- seam-stream bench ${key}: end of the generated table -->`,
  };
}

/** This runtime's key for its section: `node24` (by major version), `bun`, `deno`. */
export function runtimeKey(): string {
  const v = process.versions as Record<string, string | undefined>;
  if (v.bun !== undefined) return 'bun';
  if ((globalThis as { Deno?: unknown }).Deno !== undefined) return 'deno';
  return `node${process.versions.node.split('.')[0]}`;
}

/**
 * A Markdown file with its generated section replaced: the section of runtime `key` where the file
 * has one, else the file's main section.
 */
export function replaceSection(doc: string, section: string, file: string, key?: string): string {
  let start = MARK_START;
  let end = MARK_END;
  if (key !== undefined) {
    const m = runtimeMarks(key);
    if (doc.includes(m.start)) ({ start, end } = m);
  }
  const a = doc.indexOf(start);
  const b = doc.indexOf(end);
  if (a < 0 || b < a) throw new InputError(`cannot rewrite ${file}: it has no generated section (the lines ${start} and ${end})`);
  return `${doc.slice(0, a + start.length)}\n\n${section.trim()}\n\n${doc.slice(b)}`;
}

/** The runtime running this command and its version (Bun and Deno also report a Node version). */
export function runtimeLabel(): string {
  const v = process.versions as Record<string, string | undefined>;
  const deno = (globalThis as { Deno?: { version?: { deno?: string } } }).Deno?.version?.deno;
  return v.bun !== undefined ? `Bun ${v.bun}` : deno !== undefined ? `Deno ${deno}` : `Node ${process.versions.node}`;
}

export async function bench(values: Values): Promise<void> {
  if (values.quick === true && values.full === true) throw new UsageError('--quick and --full are two modes: give one');
  const chunk = (values.chunk as string[] | undefined)?.map((c) => {
    const n = parseBytes(c);
    if (n === undefined) throw new UsageError(`--chunk takes read sizes in bytes (as 64, 1KiB, 16384), got ${JSON.stringify(c)}`);
    return n;
  });
  const write = values.write as string | undefined;
  if (write !== undefined) {
    // before anything is timed: the file is there and has its generated section
    if (!existsSync(write)) throw new InputError(`cannot rewrite ${write}: no such file`);
    replaceSection(readFileSync(write, 'utf8'), '', write, runtimeKey());
  }
  // (and the files the results go to can be written: a run takes minutes, its results were lost at its end)
  for (const f of [values.json, values.svg]) if (f !== undefined) checkSavable(f as string);
  const here = dirname(fileURLToPath(import.meta.url));
  const runner = join(here, '..', 'build', 'bench', 'run.js');
  if (!existsSync(runner)) {
    throw new InputError('seam-stream bench runs from a source checkout, after npm run build (build/bench/run.js is missing): npm ci && npm run bench');
  }
  const { runBenchmarks } = (await import(pathToFileURL(runner).href)) as { runBenchmarks(o: RunOptions): Promise<RunResult> };
  const tty = process.stderr.isTTY === true;
  let t0 = 0;
  let shown = false;
  const clear = () => {
    if (shown) process.stderr.write('\r\x1b[K');
    shown = false;
  };
  const left = (done: number, total: number) => {
    const elapsed = performance.now() - t0;
    if (done === total) return 'done';
    return done === 0 ? 'time left not known yet' : `about ${formatSeconds((elapsed / done) * (total - done))} left`;
  };
  const barLine = (done: number, total: number) => {
    const w = 24;
    const full = total ? Math.round((done / total) * w) : 0;
    return `[${'█'.repeat(full)}${'░'.repeat(w - full)}] ${done}/${total} rows · ${total - done} to go · ${left(done, total)}`;
  };
  const mode = values.full === true ? 'full' : 'quick';
  process.stderr.write(`seam-stream bench: ${mode} mode on ${runtimeLabel()}; counting the rows (each layer builds its corpora and checks both outputs agree)…\n`);
  const res = await runBenchmarks({
    mode,
    rounds: values.rounds as number | undefined,
    maxTime: values['max-time'] as number | undefined,
    only: values.only as RunOptions['only'],
    corpus: values.corpus as string[] | undefined,
    chunk,
    onStart(total) {
      if (total === 0) {
        throw new UsageError('no benchmark rows match these options (--corpus names: ascii, chinese, emoji, mixed, openai, anthropic, one, english; --chunk: 16, 64, 1KiB, 16KiB)');
      }
      t0 = performance.now();
      process.stderr.write(`seam-stream bench: ${plural(total, 'row')} to time\n`);
      if (tty) {
        process.stderr.write(barLine(0, total));
        shown = true;
      }
    },
    onRow(r, done, total) {
      clear();
      const line = `  [${String(done).padStart(String(total).length)}/${total}] ${rowLabel(r)}: ${r.ratio.toFixed(2)}× ${r.peerName} (${fmtRate(r.seam)} vs ${fmtRate(r.peer)} MB/s)`;
      process.stderr.write(tty ? `${line}\n${barLine(done, total)}` : `${line} · ${plural(total - done, 'row')} left, ${left(done, total)}\n`);
      shown = tty;
    },
  });
  clear();
  process.stderr.write(`seam-stream bench: ${plural(res.rows.length, 'row')} in ${formatSeconds(res.meta.seconds * 1000)}\n`);
  process.stdout.write(`${res.markdown}\n`);
  if (values.json !== undefined) {
    saveAtomically(values.json as string, `${JSON.stringify({ meta: res.meta, rows: res.rows }, null, 2)}\n`);
    process.stderr.write(`seam-stream bench: results written to ${values.json}\n`);
  }
  if (values.svg !== undefined) {
    saveAtomically(values.svg as string, benchChart(res));
    process.stderr.write(`seam-stream bench: chart written to ${values.svg}\n`);
  }
  if (write !== undefined) {
    const section = `${res.header}\n\n${res.markdown.slice(res.header.length).trim()}`;
    const doc = readFileSync(write, 'utf8');
    const key = runtimeKey();
    saveAtomically(write, replaceSection(doc, section, write, key));
    const own = doc.includes(runtimeMarks(key).start);
    process.stderr.write(`seam-stream bench: the ${own ? `${key} ` : ''}table section of ${write} rewritten\n`);
  }
  process.exitCode = EXIT.OK;
}
