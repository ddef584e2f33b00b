import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Fixture repositories contain their own *.test.ts files; they are corpora, not tests.
    exclude: ['**/node_modules/**', 'test/fixtures/**'],
    // Real-corpus quality tests (test/quality) run whenever the Debian corpora are installed,
    // as they are in CI; elsewhere they are skipped with the corpus path in the test name.
    testTimeout: 30_000,
    hookTimeout: 300_000,
    pool: 'forks',
  },
});
