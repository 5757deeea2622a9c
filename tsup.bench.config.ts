import { defineConfig } from 'tsup';

// Benchmarks are built for Node from source (they import the bindings directly) into build/bench.
export default defineConfig({
  entry: { run: 'bench/run.ts', browser: 'bench/browser.ts', floor: 'bench/floor.ts', ab: 'bench/ab.ts', model: 'bench/model.ts', streams: 'bench/streams.ts', 'model-floor': 'bench/model-floor.ts', agents: 'bench/agents.ts', providers: 'bench/providers.ts', routes: 'bench/routes.ts' },
  outDir: 'build/bench',
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  splitting: false,
  clean: true,
  // the peers and the harness come from node_modules at run time, as users would load them
  external: ['benchmark', 'eventsource-parser', 'eventsource-parser-4', '@smithy/eventstream-codec', 'unicode-segmenter', 'fast-check', 'playwright-core', 'puppeteer-core', 'esbuild'],
});
