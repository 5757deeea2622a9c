// The portable suites: run by `npm run test:runtimes` on Node 22 and 26, Bun and Deno against the
// built package, with nothing but the runtime (test/runtimes/build.mjs bundles this file; `vitest`
// is a small shim). Each runtime must pass every test and make the same number of checks, so the
// results are the same everywhere. The last line is "N passed, N failed".
import { wasmBackend } from 'seam-stream';
import { run } from './vitest-shim.js';

// the conformance suites: Unicode 17.0 (GraphemeBreakTest, NormalizationTest) and the WHATWG event stream
import '../conformance/unicode-data.test.js';
import '../conformance/grapheme-break.test.js';
import '../conformance/normalization.test.js';
import '../conformance/sse-wpt.test.js';
// the core's suites that use the public names only
import './public-suites.js';
// the model fixtures and the model layer's suites
import './model-suites.js';

// (Bun has no global gc(); the memory tests ask for one: Bun's own collector. seam never reads it)
const bun = (globalThis as { Bun?: { gc(sync: boolean): void } }).Bun;
if (bun && typeof (globalThis as { gc?: unknown }).gc !== 'function') (globalThis as { gc?: () => void }).gc = () => bun.gc(true);

const g = globalThis as { Deno?: { version: { deno: string } }; Bun?: { version: string }; process?: { versions?: { node?: string }; exitCode?: number } };
const runtime = g.Deno ? `Deno ${g.Deno.version.deno}` : g.Bun ? `Bun ${g.Bun.version}` : `Node ${g.process?.versions?.node ?? '?'}`;
const t0 = Date.now();
const out = await run((line) => console.log(line));
console.log(`${runtime}, core ${wasmBackend()}: ${out.assertions} checks in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
console.log(`${out.passed} passed, ${out.failed} failed`);
if (out.failed !== 0) {
  if (g.Deno) (g.Deno as unknown as { exit(c: number): void }).exit(1);
  else if (g.process) g.process.exitCode = 1;
}
