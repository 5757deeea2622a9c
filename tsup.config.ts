import { defineConfig } from 'tsup';

export default defineConfig([
  {
    // The library: ESM for browsers and bundlers, CommonJS for require(), types for both.
    entry: { index: 'bindings/index.ts' },
    format: ['esm', 'cjs'],
    dts: true,
    target: 'es2022',
    platform: 'neutral',
    sourcemap: true,
    // Cleans dist/ but for the command, which the other entry builds at the same time.
    clean: ['!cli.js'],
    splitting: false,
    treeshake: true,
    // Bundled so that the ESM build runs in a browser as is, with no bundler or import map.
    noExternal: [/^@noble\/hashes/],
    // Inlines the contract's constants (bindings/generated/abi.ts) where they are used: a
    // module-level binding is a context load on every use in V8, a literal is free.
    esbuildOptions(options) {
      options.minifySyntax = true;
    },
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
