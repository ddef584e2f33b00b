import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Slow tests (real corpora) opt in with VLT_SLOW=1; they are tagged by file name.
    exclude: process.env.VLT_SLOW ? [] : ['test/**/*.slow.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
