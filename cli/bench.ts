// `seam-stream bench`: launches the benchmarks, which are built from a source checkout into
// build/bench (they are not part of the package).
import { existsSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export async function bench(argv: string[]): Promise<void> {
  const here = dirname(fileURLToPath(import.meta.url));
  const runner = join(here, '..', 'build', 'bench', 'run.js');
  if (!existsSync(runner)) {
    console.error('seam-stream bench runs from a source checkout: npm ci && npm run bench');
    process.exitCode = 1;
    return;
  }
  const { runBenchmarks } = (await import(pathToFileURL(runner).href)) as {
    runBenchmarks(argv: string[]): Promise<{ markdown: string }>;
  };
  console.error('Running benchmarks (each row: seam and its peer, interleaved; --full for more rounds)…');
  const { markdown } = await runBenchmarks(argv);
  console.log(markdown);
  const w = argv.indexOf('--write');
  if (w >= 0) {
    const file = argv[w + 1] ?? 'BENCHMARKS.md';
    writeFileSync(file, markdown);
    console.error(`written to ${file}`);
  }
}
