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
    clean: true,
    splitting: false,
    treeshake: true,
    // Bundled so that the ESM build runs in a browser as is, with no bundler or import map.
    noExternal: [/^@noble\/hashes/],
  },
  {
    // The `seam` command: demo, bench and decode.
    entry: { cli: 'bindings/cli.ts' },
    format: ['esm'],
    target: 'node20',
    platform: 'node',
    banner: { js: '#!/usr/bin/env node' },
    splitting: false,
    external: ['seam'],
  },
]);
