import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'tsup';

// Every module of bindings/ is an entry of the ESM build, so that code splitting gives each its own
// chunk (a chunk holds the modules reached by the same set of entries, and a module is the only
// one reached by itself and its importers). A bundler then keeps only the chunks a program's
// imports reach ("sideEffects": false in package.json): importing SseParser leaves out the Unicode
// tables, importing TextAssembler leaves out the WebAssembly. The entries other than the public
// ones (dist/index.js, dist/worker.js) are re-exports of their chunk that nothing imports, and are
// deleted after the build.
const PUBLIC = { index: 'index', worker: 'worker/worker' } as const;
const modules = (dir: string, prefix = ''): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) Object.assign(out, modules(join(dir, e.name), `${prefix}${e.name}/`));
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) out[`${prefix}${e.name.slice(0, -3)}`] = join(dir, e.name);
  }
  return out;
};
// (bindings/entries/: the workerd and edge entries, built apart by tsup.edge.config.ts)
const entries = Object.fromEntries(Object.entries(modules('bindings')).filter(([name]) => !name.startsWith('entries/')));
const internal = Object.keys(entries).filter((name) => !(Object.values(PUBLIC) as string[]).includes(name));

const common = {
  target: 'es2022',
  platform: 'neutral',
  sourcemap: true,
  // Bundled so that the ESM build runs in a browser as is, with no bundler or import map.
  noExternal: [/^@noble\/hashes/],
  // Inlines the contract's constants (bindings/core/generated/abi.ts) where they are used: a
  // module-level binding is a context load on every use in V8, a literal is free.
  esbuildOptions(options: { minifySyntax?: boolean; chunkNames?: string }) {
    options.minifySyntax = true;
    options.chunkNames = 'chunks/[name]-[hash]';
  },
} as const;

export default defineConfig([
  {
    // The library for browsers and bundlers: ESM, one chunk per module (see above).
    ...common,
    entry: Object.fromEntries([...Object.entries(PUBLIC).map(([out, n]) => [out, entries[n]]), ...internal.map((n) => [`internal/${n}`, entries[n]])]),
    format: ['esm'],
    dts: { entry: { index: 'bindings/index.ts' } },
    // Cleans dist/ but for the command, which the last entry builds at the same time.
    clean: ['!cli.js'],
    splitting: true,
    async onSuccess() {
      rmSync(join('dist', 'internal'), { recursive: true, force: true });
    },
  },
  {
    // The library for require() and Node: one CommonJS file (Node's import entry re-exports it; its
    // types, dist/index.d.cts, are a copy of dist/index.d.ts made by scripts/gen-node-entry.mjs).
    ...common,
    entry: { index: 'bindings/index.ts' },
    format: ['cjs'],
    splitting: false,
    treeshake: true,
  },
  {
    // The `seam-stream` command: demo, bench and decode. It loads the library by its package name
    // at run time (the package references itself through its exports map), so dist/ holds the
    // library once and this entry only the command.
    entry: { cli: 'cli/main.ts' },
    format: ['esm'],
    target: 'node20',
    platform: 'node',
    banner: { js: '#!/usr/bin/env node' },
    splitting: false,
    external: ['seam-stream'],
  },
]);
