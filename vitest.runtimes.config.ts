import { defineConfig } from 'vitest/config';

// The tests of test/runtimes/ that serve the built package from other runtimes (workerd, Deno, Bun),
// run by `npm run test:runtimes` (scripts/test-runtimes.mjs) after it installs the pinned runtimes.
export default defineConfig({
  test: { include: ['test/runtimes/**/*.test.ts'], testTimeout: 120_000, hookTimeout: 120_000, pool: 'forks' },
});
