import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// The core's tests run twice: against the SIMD build and against the scalar reference build;
// the UTF-8, line and SSE tests once more on the browsers' string route (as Chromium takes it),
// and the SSE tests once more as Firefox takes it (SSE data decoded whole).
// The text layer is plain TypeScript and runs once.
const coreTests = [
  'test/unit/utf8*.test.ts',
  'test/unit/shared*.test.ts',
  'test/unit/lines*.test.ts',
  'test/unit/sse*.test.ts',
  'test/unit/edges*.test.ts',
  'test/unit/model*.test.ts',
  'test/unit/relay*.test.ts',
  'test/conformance/sse*.test.ts',
  'test/property/utf8*.test.ts',
  'test/property/frames*.test.ts',
  'test/unit/json-core*.test.ts',
  'test/property/json-core*.test.ts',
  'test/property/model*.test.ts',
  'test/property/sse-encode*.test.ts',
  'test/unit/model*.test.ts',
  'test/unit/relay*.test.ts',
  'test/unit/eventstream*.test.ts',
  'test/unit/bedrock*.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // expect.poll waits for what happens in its own time (a gateway's slot freed, a socket closed);
    // its default second is too short on a loaded 2-core machine. A condition that never holds still fails.
    expect: { poll: { timeout: 15_000 } },
    pool: 'forks',
    // A file a worker, as many workers as cores: vitest's default (cores - 1) runs the suite one file
    // at a time on a 2-core machine, where two workers take 0.7 of the time (628 s against 896 s).
    maxWorkers: Math.max(2, availableParallelism()),
    execArgv: ['--expose-gc'],
    projects: [
      {
        extends: true,
        test: { name: 'simd', include: ['test/**/*.test.ts'], exclude: ['test/browser/**', 'test/runtimes/**'], env: { SEAM_WASM: 'simd' } },
      },
      {
        extends: true,
        test: { name: 'scalar', include: coreTests, env: { SEAM_WASM: 'scalar' } },
      },
      {
        // The browsers' string routes, run in Node: Utf8Decoder (short reads through the core, long
        // ones by TextDecoder, the core keeping the carry and placing errors), lines and SSE (one
        // TextDecoder call per push, sliced at UTF-16 offsets)
        extends: true,
        test: {
          name: 'textdecoder-route',
          include: [
            'test/unit/utf8*.test.ts', 'test/property/utf8*.test.ts', 'test/unit/shared-instance.test.ts',
            'test/unit/lines*.test.ts', 'test/unit/sse*.test.ts', 'test/unit/edges*.test.ts', 'test/conformance/sse*.test.ts',
            'test/property/frames*.test.ts', 'test/property/sse*.test.ts',
          ],
          env: { SEAM_WASM: 'simd', SEAM_STRINGS: 'textdecoder' },
        },
      },
      {
        // ... as Firefox takes it: SSE data decoded whole, not in pieces
        extends: true,
        test: {
          name: 'textdecoder-whole',
          include: ['test/unit/sse*.test.ts', 'test/conformance/sse*.test.ts', 'test/property/frames*.test.ts', 'test/property/sse*.test.ts'],
          env: { SEAM_WASM: 'simd', SEAM_STRINGS: 'textdecoder-whole' },
        },
      },
      {
        // ... and the scalar core's UTF-16 count and split data on that route
        extends: true,
        test: {
          name: 'textdecoder-route-scalar',
          include: ['test/property/frames*.test.ts', 'test/conformance/sse*.test.ts', 'test/unit/lines*.test.ts', 'test/unit/sse-split.test.ts'],
          env: { SEAM_WASM: 'scalar', SEAM_STRINGS: 'textdecoder' },
        },
      },
    ],
  },
});
