import { defineConfig } from 'vitest/config';

// `npm run test:browser`: the ESM build in headless Chromium (needs /usr/bin/chromium).
export default defineConfig({
  test: { include: ['test/browser/**/*.test.ts'], testTimeout: 120_000, hookTimeout: 120_000 },
});
