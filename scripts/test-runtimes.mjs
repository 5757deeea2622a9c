#!/usr/bin/env node
// `npm run test:runtimes`: the built package on every runtime users run, each step a child process.
//
//   node24     the whole test suite (vitest, every project) on Node 24, the active LTS
//   node22, node26, bun, deno
//              the portable suites (build/runtimes/suites.js: the conformance suites, the model
//              fixtures, the core's public unit and property suites) with nothing but the runtime,
//              against the built package; each must pass and make as many checks as Node 20 does
//   workerd    test/runtimes/: a Worker relaying and decoding through the package's workerd entry,
//              and examples/edge/gateway.mjs on workerd, Deno and Bun (vitest on this Node)
//   chromium, firefox
//              the browser tests (test/browser/) in Debian's Chromium and Firefox ESR
//
//   node scripts/test-runtimes.mjs [--only a,b] [--skip a,b]
//
// A vitest step whose tests fail runs the files that failed once more: a test that passes then is
// reported as flaky at the end, with its first error; one that fails again fails the step. The end
// names every failed test with the start of its error.
//
// Installs the pinned runtimes first (scripts/runtimes.mjs, from the npm registry), builds the
// package when dist/ lacks an entry, and ends with "N passed, N failed" (steps).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync, lstatSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { install } from './runtimes.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? undefined : new Set(process.argv[i + 1].split(','));
};
const only = arg('--only');
const skip = arg('--skip') ?? new Set();
const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
const suites = join(root, 'build', 'runtimes', 'suites.js');

function sh(cmd, args, env = {}) {
  const t0 = Date.now();
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } });
  return { ok: r.status === 0, seconds: (Date.now() - t0) / 1000, why: r.error?.message ?? (r.status === 0 ? '' : `exit ${r.status ?? r.signal}`) };
}

/**
 * A vitest run as a step. Its JSON report (build/runtimes/<name>.json) names the tests that failed,
 * with the start of each one's error, for the summary at the end: a CI log that keeps only its tail
 * still says which test failed and why.
 */
function vitestStep(name, cmd, args, env = {}) {
  const report = join(root, 'build', 'runtimes', `${name}.json`);
  const run = (extra) => {
    rmSync(report, { force: true });
    return sh(cmd, [...args, ...extra, '--reporter=default', '--reporter=json', `--outputFile.json=${report}`], env);
  };
  const r = run([]);
  if (r.ok) return r;
  const first = failuresIn(report);
  // A test that fails once on a loaded machine and passes when its file runs again is named in the
  // summary as flaky, and the step passes; one that fails again fails the step.
  if (first.files.length === 0) return { ...r, failures: first.lines };
  console.log(`\n=== ${name}: rerunning the files that failed: ${first.files.join(' ')}`);
  const again = run(first.files);
  if (!again.ok) return { ...again, seconds: r.seconds + again.seconds, failures: failuresIn(report).lines };
  return { ok: true, seconds: r.seconds + again.seconds, flaky: first.lines };
}

/** The failed tests in a vitest JSON report, a few lines each, and their files. */
function failuresIn(report) {
  let json;
  try { json = JSON.parse(readFileSync(report, 'utf8')); } catch (e) { return { lines: [`(no report: ${e.message})`], files: [] }; }
  const out = [];
  const files = new Set();
  for (const file of json.testResults ?? []) {
    const at = file.name.startsWith(root) ? file.name.slice(root.length + 1) : file.name;
    const failed = (file.assertionResults ?? []).filter((t) => t.status === 'failed');
    if (failed.length > 0 || file.status === 'failed') files.add(at);
    if (failed.length === 0 && file.status === 'failed') out.push(`${at}: ${(file.message ?? '').split('\n').slice(0, 4).join(' | ')}`);
    for (const t of failed) {
      const why = (t.failureMessages ?? []).join('\n').split('\n').filter((l) => l.trim() !== '').slice(0, 4).join(' | ');
      out.push(`${at} > ${t.fullName}: ${why.slice(0, 600)}`);
    }
  }
  return { lines: out, files: [...files] };
}

/** The portable suites on `exe`, checking their count of checks against Node 20's (this process's). */
function portable(exe, args, reference) {
  const t0 = Date.now();
  // (SEAM_WASM=simd: the build the suites check they run, as vitest's simd project does)
  const env = { ...process.env, NO_COLOR: '1', SEAM_WASM: 'simd' };
  const r = spawnSync(exe, [...args, suites], { cwd: root, encoding: 'utf8', env, maxBuffer: 64 << 20 });
  process.stdout.write(r.stdout ?? '');
  process.stderr.write(r.stderr ?? '');
  const seconds = (Date.now() - t0) / 1000;
  const m = /: (\d+) checks in [\d.]+ s\n(\d+) passed, (\d+) failed\s*$/.exec(r.stdout ?? '');
  if (r.status !== 0 || m === null) return { ok: false, seconds, why: r.error?.message ?? `exit ${r.status ?? r.signal}` };
  const counts = `${m[2]} tests, ${m[1]} checks`;
  if (reference !== undefined && counts !== reference) return { ok: false, seconds, why: `${counts}, Node ${process.versions.node} made ${reference}` };
  // (without the node20 step, as with --only, there are no counts to compare with: said, not hidden)
  return { ok: true, seconds, counts: reference === undefined && exe !== process.execPath ? `${counts} (not compared: the node20 step did not run)` : counts };
}

const steps = [];
const step = (name, what, run) => {
  if ((only === undefined || only.has(name)) && !skip.has(name)) steps.push({ name, what, run });
};

// ---- setup ----------------------------------------------------------------------------------------
for (const f of ['dist/index.js', 'dist/index.cjs', 'dist/index.node.js', 'dist/workerd.js', 'dist/seam.simd.wasm']) {
  if (!existsSync(join(root, f))) {
    console.log(`test:runtimes: ${f} is missing: npm run build`);
    if (!sh('npm', ['run', 'build']).ok) process.exit(1);
    break;
  }
}
const wanted = ['node22', 'node24', 'node26', 'bun', 'deno', 'workerd'];
const exe = Object.fromEntries(wanted.map((n) => [n, install(n)]));
if (!sh(process.execPath, [join(root, 'test', 'runtimes', 'build.mjs')]).ok) process.exit(1);
// the suites load the package as a user's project does, from node_modules/seam-stream (this checkout)
const link = join(root, 'build', 'runtimes', 'node_modules', 'seam-stream');
mkdirSync(dirname(link), { recursive: true });
if (!existsSync(link) && !(() => { try { return lstatSync(link).isSymbolicLink(); } catch { return false; } })()) symlinkSync(root, link, 'dir');

// ---- the steps ------------------------------------------------------------------------------------
let reference;
step('node20', `portable suites on Node ${process.versions.node} (the reference counts)`, () => {
  const r = portable(process.execPath, ['--expose-gc']);
  reference = r.counts;
  return r;
});
step('node24', 'the whole test suite (vitest) on Node 24', () => vitestStep('node24', exe.node24, [vitest, 'run']));
step('node22', 'portable suites on Node 22', () => portable(exe.node22, ['--expose-gc'], reference));
step('node26', 'portable suites on Node 26', () => portable(exe.node26, ['--expose-gc'], reference));
step('bun', 'portable suites on Bun', () => portable(exe.bun, [], reference));
step('deno', 'portable suites on Deno', () => portable(exe.deno, ['run', '--allow-read', '--allow-env', '--v8-flags=--expose-gc'], reference));
step('workerd', 'workerd (the workerd entry) and examples/edge on workerd, Deno and Bun', () => vitestStep('workerd', process.execPath, [vitest, 'run', '--config', 'vitest.runtimes.config.ts']));
step('chromium', 'browser tests in Chromium', () => vitestStep('chromium', process.execPath, [vitest, 'run', '--config', 'vitest.browser.config.ts'], { SEAM_BROWSER: 'chromium' }));
step('firefox', 'browser tests in Firefox ESR', () => vitestStep('firefox', process.execPath, [vitest, 'run', '--config', 'vitest.browser.config.ts'], { SEAM_BROWSER: 'firefox' }));

const results = [];
for (const s of steps) {
  console.log(`\n=== test:runtimes ${s.name}: ${s.what}`);
  const r = s.run();
  results.push({ ...s, ...r });
  console.log(`=== ${s.name}: ${r.ok ? 'passed' : `FAILED (${r.why})`} in ${r.seconds.toFixed(0)} s${r.counts ? ` (${r.counts})` : ''}`);
}
console.log('\ntest:runtimes');
for (const r of results) console.log(`  ${r.ok ? 'ok  ' : 'FAIL'} ${r.name.padEnd(9)} ${r.seconds.toFixed(0).padStart(4)} s  ${r.what}${r.counts ? `: ${r.counts}` : ''}${r.ok ? '' : `: ${r.why}`}`);
for (const r of results) for (const f of r.flaky ?? []) console.log(`  ${r.name}: flaky (failed, then passed when its file ran again): ${f}`);
for (const r of results) for (const f of r.failures ?? []) console.log(`  ${r.name}: failed: ${f}`);
const failed = results.filter((r) => !r.ok).length;
console.log(`${results.length - failed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
