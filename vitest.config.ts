import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['__test__/**/*.test.ts'],
    exclude: ['**/node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Real Codex children are heavy on a 2-core machine; files run one after another.
    fileParallelism: false,
    reporters: ['default'],
    // Marks every process of the run; at its end, fails it for any such process left.
    globalSetup: ['__test__/support/leftovers.ts'],
  },
})
