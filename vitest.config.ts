import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['__test__/**/*.test.ts'],
    // src/discovery is not compiled into the addon yet (issue 4 is open): its suite waits for it.
    exclude: ['__test__/discovery/**', '**/node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Real Codex children are heavy on a 2-core machine; files run one after another.
    fileParallelism: false,
    reporters: ['default'],
  },
})
